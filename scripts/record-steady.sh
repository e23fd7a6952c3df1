#!/usr/bin/env bash
# Record launches of llama.cpp or vLLM for the steady-window and noise-per-minute measurements
# (docs/steady.md): per launch a fresh engine (llama.cpp as scripts/record-corpus.sh starts it:
# core 0, 1 thread, 4 slots, no prompt cache; vLLM as suites/cpu-vllm.toml does: eager, bf16,
# 2048-token context, 2 GiB KV cache), 4 warm-up requests, then `perfgate run` of each size in
# turn (random, 32 tokens in, 32 out, ignore_eos, concurrency 4, seed 0), with the result JSON and
# the per-request rows (--save-detailed-format jsonl) of each.
#
#   scripts/record-steady.sh OUT_DIR LAUNCHES "SIZE…"
#     SIZE   nN: N prompts; dS: a time budget of S seconds (--duration-s, from 64 prompts)
# Environment: ENGINE (llama.cpp, the default, or vllm), PERFGATE_BIN (default: a debug build in
# CARGO_TARGET_DIR). Needs
# scripts/install-engine.sh (.cache/env.sh). Analyse with scripts/steady-noise.py OUT_DIR.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: record-steady.sh OUT_DIR LAUNCHES SIZES}
LAUNCHES=${2:?usage: record-steady.sh OUT_DIR LAUNCHES SIZES}
SIZES=${3:?usage: record-steady.sh OUT_DIR LAUNCHES SIZES}
# shellcheck source=/dev/null
source .cache/env.sh
BIN=${PERFGATE_BIN:-}
if [[ -z "$BIN" ]]; then
    cargo build --quiet --bin perfgate || exit 1
    BIN="${CARGO_TARGET_DIR:-target}/debug/perfgate"
fi
mkdir -p "$OUT"
epid=
trap '[[ -n "$epid" ]] && kill -TERM -- "-$epid" 2>/dev/null' EXIT
for ((i = 1; i <= LAUNCHES; i++)); do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    if [[ "${ENGINE:-llama.cpp}" == vllm ]]; then
        VLLM_CPU_KVCACHE_SPACE=2 HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 setsid "$PERFGATE_VLLM" serve \
            "$PERFGATE_VLLM_MODEL" --served-model-name smol --host 127.0.0.1 --port "$port" \
            --enforce-eager --dtype bfloat16 --max-model-len 2048 >"$OUT/engine-l$i.log" 2>&1 &
    else
        setsid taskset -c 0 "$PERFGATE_LLAMACPP_PYTHON" "$PERFGATE_LLAMACPP_LAUNCHER" --model "$PERFGATE_MODEL" \
            --alias smol --host 127.0.0.1 --port "$port" --ctx 4096 --threads 1 --metrics --parallel 4 \
            --no-prompt-cache >"$OUT/engine-l$i.log" 2>&1 &
    fi
    epid=$!
    t_start=$(date +%s.%N)
    for _ in $(seq 1 1200); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
        sleep 0.5
    done
    # The launch's cost: seconds from the start command to a healthy engine.
    printf 'l%s\tstart\t%s\t%s\n' "$i" "$(python3 -c "print(round($(date +%s.%N)-$t_start,1))")" "$load" >>"$OUT/launches.tsv"
    common=(--port "$port" --model smol --tokenizer server --dataset-name random --random-input-len 32
        --random-output-len 32 --max-concurrency 4 --ignore-eos)
    NO_COLOR=1 "$BIN" run "${common[@]}" --num-prompts 4 --seed 99 >/dev/null 2>&1
    for size in $SIZES; do
        case "$size" in
            n*) count=(--num-prompts "${size#n}") ;;
            d*) count=(--num-prompts 64 --duration-s "${size#d}") ;;
            *) echo "record-steady: unknown size $size (nN or dS)" >&2; exit 2 ;;
        esac
        t0=$(date +%s.%N)
        NO_COLOR=1 "$BIN" run "${common[@]}" "${count[@]}" --seed 0 --save-result --result-dir "$OUT" \
            --result-filename "l$i-$size.json" --save-detailed-format jsonl >"$OUT/l$i-$size.out" 2>&1
        t1=$(date +%s.%N)
        printf 'l%s\t%s\t%s\t%s\n' "$i" "$size" "$(python3 -c "print(round($t1-$t0,1))")" "$load" >>"$OUT/launches.tsv"
    done
    kill -TERM -- "-$epid" 2>/dev/null
    wait "$epid" 2>/dev/null
    epid=
done
