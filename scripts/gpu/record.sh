#!/usr/bin/env bash
# perfgate on a real GPU engine, one file per launch: the unchanged engine (same) and the same engine
# with CUDA graphs off (b1), interleaved launch by launch so that drifts hit both alike, in each of the
# sessions in turn. Each launch lands in WORKDIR/res/SESSION-VARIANT-lN.jsonl as it ends, so a lease
# that ends early keeps every finished launch.
#   record.sh WORKDIR
# Environment: FA (on), SESSIONS ("g1 g2"), LAUNCHES (per variant and session, 5), VARIANTS ("same b1";
# also b2: 24 slots instead of 32, the H100 corpus's changed engine, which queues the two
# concurrency-32 scenarios and leaves the Poisson one alone).
set -u
W=$1; cd $W; PG=$W/perfgate
FA=${FA:-on}; SESSIONS=${SESSIONS:-g1 g2}; LAUNCHES=${LAUNCHES:-5}; VARIANTS=${VARIANTS:-same b1}
log() { echo "$(date +%T) $*"; }
SRV="$W/build/bin/llama-server -m $W/model.gguf --alias {served_model_name} -ngl 99 -c 131072 -np 32 -fa $FA -t 8 --host 127.0.0.1 --port {port} --metrics --no-webui"
cat > suite.toml <<TOML
schema_version = 1
[engine]
name = "llama.cpp"
version = "b11434-cuda-fa-$FA"
[engine.launch]
preset = "custom"
command = "$SRV"
port = 8080
start_timeout_s = 300.0
[[models]]
name = "qwen3-1.7b-random"
tensor_parallel_size = 1
tokenizer = "$W/tok/tokenizer.json"
[[models.scenarios]]
id = "random-in1024-out32-n128-c32"
[models.scenarios.params]
dataset_name = "random"
num_prompts = 128
random_input_len = 1024
random_output_len = 32
random_range_ratio = 0.0
range_convention = "vllm"
request_rate = "inf"
max_concurrency = 32
[[models.scenarios]]
id = "random-in128-out128-n64-c32"
[models.scenarios.params]
dataset_name = "random"
num_prompts = 64
random_input_len = 128
random_output_len = 128
random_range_ratio = 0.0
range_convention = "vllm"
request_rate = "inf"
max_concurrency = 32
[[models.scenarios]]
id = "random-in256-out64-n64-r8"
[models.scenarios.params]
dataset_name = "random"
num_prompts = 64
random_input_len = 256
random_output_len = 64
random_range_ratio = 0.0
range_convention = "vllm"
request_rate = 8.0
TOML
cp suite.toml res/suite.toml
printf 'file\tvariant\tsession\tstarted\tseconds\texit\n' > res/launches.tsv
launch() { # SESSION VARIANT N
  local name="$1-$2-l$3" args=() rc=0 t0
  case "$2" in
    same) ;;
    b1) args=(--engine-cmd "env GGML_CUDA_DISABLE_GRAPHS=1 $SRV") ;;
    b2) args=(--engine-cmd "${SRV/ -np 32 / -np 24 }") ;;
    *) log "unknown variant $2 (same, b1, b2)"; return 1 ;;
  esac
  t0=$(date +%s); log "$name"
  NO_COLOR=1 PERFGATE_SESSION=$1 $PG check --baseline suite.toml --runs 1 --output-dir out/$name "${args[@]}" > res/$name.txt 2>&1 || rc=$?
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$2" "$1" "$(date -u -d @$t0 +%FT%TZ)" $(( $(date +%s) - t0 )) $rc >> res/launches.tsv
  [ -s out/$name/results.jsonl ] || { log "$name: no results"; return 0; }
  python3 - out/$name/results.jsonl res/$name.jsonl $name <<'PY'
import json, sys
src, dst, launch = sys.argv[1:4]
with open(src) as f, open(dst, "w") as out:
    for line in f:
        if line.strip():
            rec = json.loads(line); rec["launch_id"] = launch; out.write(json.dumps(rec) + "\n")
PY
  log "$name exit $rc"
}
for s in $SESSIONS; do
  for ((i = 1; i <= LAUNCHES; i++)); do
    for v in $VARIANTS; do launch "$s" "$v" "$i"; done
  done
done
log "experiments done"
