#!/usr/bin/env bash
# Record a corpus of real engine launches for the gate's decision-quality work (replay, simulator):
# N launches of the unchanged engine, N of a uniformly slowed one and N of one slowed in a single
# scenario, each a fresh `perfgate check` live launch of the engine's CPU suite, interleaved
# (same, slow-all, slow-one, same, …) so that slow drifts of the machine hit every variant alike.
#
#   scripts/record-corpus.sh ENGINE LAUNCHES [OUT_DIR]
#     ENGINE     vllm (suites/cpu-vllm.toml) or llama.cpp (suites/cpu-llamacpp.toml)
#     LAUNCHES   launches per variant in this session
#     OUT_DIR    default tests/data/cpu-ENGINE; files are added, never replaced
#
# Run it again in another session (another day, a rebooted or otherwise quiet machine) to add
# launches: the session is part of the file names, and the gate's statistics treat the session
# as a level of its own. Each launch becomes OUT_DIR/SESSION-VARIANT-lN.jsonl (perfgate's records,
# `launch_id` set to that name) and a line in OUT_DIR/launches.tsv (file, engine, variant,
# session, start time, seconds, exit code, load average before the launch, perfgate version).
#
# Variants:
#   same      the suite's engine, unchanged
#   slow-all  the same engine sharing its compute core (core 0) with a duty-cycled busy loop
#             (busy 1 ms of every 10, DUTY to change it): every scenario a little slower. It is
#             another process on the machine, and perfgate's loop on every CPU sees it
#             (`calibration_all_ms`, since 2026-12-08): a stored check of such launches can say
#             the machine was loaded (tests/data/cpu-vllm-neighbour/), where slow-one cannot
#   slow-one  fewer concurrent sequences (vLLM --max-num-seqs 2, llama.cpp --parallel 2): only the
#             concurrency-4 scenario queues; the others are unchanged
# Environment: SESSION (default: UTC date and time), VARIANTS (default "same slow-all slow-one"),
# RUNS (runs per launch, default 1), PERFGATE_BIN (default: a debug build in CARGO_TARGET_DIR),
# SUITE (default: the engine's suite above; a corpus's own `suite.toml` to add a session to a
# corpus recorded with an earlier suite, so that every launch ran the same scenarios).
# Record only on a quiet machine: another build on the cores shows up as noise in every number.
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=${1:?usage: record-corpus.sh vllm|llama.cpp LAUNCHES [OUT_DIR]}
LAUNCHES=${2:?usage: record-corpus.sh vllm|llama.cpp LAUNCHES [OUT_DIR]}
SESSION=${SESSION:-$(date -u +%Y%m%dT%H%MZ)}
VARIANTS=${VARIANTS:-same slow-all slow-one}
RUNS=${RUNS:-1}
log() { printf 'record-corpus: %s\n' "$*" >&2; }

# shellcheck source=/dev/null
source .cache/env.sh
# A busy loop that holds core 0 for DUTY of every 10 ms (default 1 ms: about a 10 % slowdown of
# an engine on that core; 10 ms: the whole core, as the quickstart's slowed engine).
DUTY=${DUTY:-1}
HOG="taskset -c 0 python3 -c 'import time
while True:
    t = time.perf_counter()
    while time.perf_counter() - t < $DUTY / 1000: pass
    time.sleep(max(0.0, (10 - $DUTY) / 1000))'"
BUSY="$HOG & exec taskset -c 0"
case "$ENGINE" in
    vllm)
        SUITE=${SUITE:-suites/cpu-vllm.toml}
        # The suite's command; {extra_args} carries its served name and CPU flags.
        BASE='"$PERFGATE_VLLM" serve "$PERFGATE_VLLM_MODEL" --host 127.0.0.1 --port {port}{extra_args}'
        # vLLM's worker runs on core 0 (its API server keeps core 1), so the busy loop shares it.
        SLOW_ALL="$HOG & exec $BASE"
        SLOW_ONE="exec $BASE --max-num-seqs 2"
        ;;
    llama.cpp | llamacpp)
        ENGINE=llama.cpp
        SUITE=${SUITE:-suites/cpu-llamacpp.toml}
        BASE='"$PERFGATE_LLAMACPP_PYTHON" "$PERFGATE_LLAMACPP_LAUNCHER" --model "$PERFGATE_MODEL" --alias {served_model_name} --host 127.0.0.1 --port {port} --ctx 4096 --threads 1 --metrics{extra_args}'
        # Every variant on core 0, so that only the variant differs.
        SLOW_ALL="$BUSY $BASE --parallel 4"
        SLOW_ONE="exec taskset -c 0 $BASE --parallel 2"
        ;;
    *) log "unknown engine $ENGINE (vllm, llama.cpp)"; exit 2 ;;
esac
OUT=${3:-tests/data/cpu-$ENGINE}
BIN=${PERFGATE_BIN:-}
if [[ -z "$BIN" ]]; then
    cargo build --quiet --bin perfgate
    BIN="${CARGO_TARGET_DIR:-target}/debug/perfgate"
fi
VERSION=$("$BIN" --version | awk '{print $2}')
mkdir -p "$OUT"
[[ -f "$OUT/launches.tsv" ]] || printf 'file\tengine\tvariant\tsession\tstarted\tseconds\texit\tloadavg\tperfgate\n' >"$OUT/launches.tsv"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for ((i = 1; i <= LAUNCHES; i++)); do
    for variant in $VARIANTS; do
        name="$SESSION-$variant-l$i"
        if [[ -e "$OUT/$name.jsonl" ]]; then
            log "$name exists; skipped"
            continue
        fi
        args=()
        case "$variant" in
            same) ;;
            slow-all) args=(--engine-cmd "$SLOW_ALL") ;;
            slow-one) args=(--engine-cmd "$SLOW_ONE") ;;
            *) log "unknown variant $variant"; exit 2 ;;
        esac
        [[ "$ENGINE" == llama.cpp && "$variant" == same ]] && args=(--engine-cmd "exec taskset -c 0 $BASE --parallel 4")
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        load=$(cut -d' ' -f1-3 /proc/loadavg)
        started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
        t0=$(date +%s)
        log "$name: perfgate check --baseline $SUITE --runs $RUNS (load $load)"
        rc=0
        # Every launch of this sitting is one recording session for the gate.
        NO_COLOR=1 PERFGATE_SESSION="$SESSION" "$BIN" check --baseline "$SUITE" --runs "$RUNS" --port "$port" \
            --output-dir "$work/$name" "${args[@]}" >"$work/$name.out" 2>"$work/$name.err" || rc=$?
        secs=$(($(date +%s) - t0))
        if [[ $rc -gt 1 || ! -s "$work/$name/results.jsonl" ]]; then
            log "$name: exit $rc, no results; last lines:"
            tail -n 20 "$work/$name.err" >&2
            exit 1
        fi
        # The file is the launch: every record says so.
        python3 - "$work/$name/results.jsonl" "$OUT/$name.jsonl" "$name" <<'PY'
import json, sys
src, dst, launch = sys.argv[1:4]
with open(src) as f, open(dst + ".part", "w") as out:
    for line in f:
        if line.strip():
            rec = json.loads(line)
            rec["launch_id"] = launch
            out.write(json.dumps(rec) + "\n")
import os
os.replace(dst + ".part", dst)
PY
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name.jsonl" "$ENGINE" "$variant" "$SESSION" \
            "$started" "$secs" "$rc" "$load" "$VERSION" >>"$OUT/launches.tsv"
        log "$name: ${secs} s, exit $rc -> $OUT/$name.jsonl"
    done
done
log "done: $(($(wc -l <"$OUT/launches.tsv") - 1)) launches in $OUT/launches.tsv"
