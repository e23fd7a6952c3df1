#!/usr/bin/env bash
# Regenerate the committed baselines (baselines/*.toml) from the seed logs in tests/data/seeds/.
#
#   scripts/regen-baselines.sh                         # builds and runs perfgate with cargo
#   PERFGATE=target/debug/perfgate OUT=/tmp/b scripts/regen-baselines.sh
#
# tests/it/baselines.rs runs this script into a temporary directory and fails if the result
# differs from the committed files by a single byte.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-baselines}
if [ -n "${PERFGATE:-}" ]; then
    pg() { "$PERFGATE" "$@"; }
else
    pg() { cargo run --quiet --bin perfgate -- "$@"; }
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

NOTES="Imported from the seed log by scripts/regen-baselines.sh: one run per scenario; the logs do not record the hardware."

# regen SEED NAME [baseline record flags...]
regen() {
    local seed=$1 name=$2
    shift 2
    pg import "tests/data/seeds/$seed" -o "$WORK/$name.jsonl"
    pg baseline record "$WORK/$name.jsonl" -o "$OUT/$name.toml" --notes "$NOTES" "$@"
}

regen 000_91a68daabf788996.txt v0.10.1 \
    --engine vllm --engine-version v0.10.1 \
    --image vllm/vllm-openai:v0.10.1 --preset vllm-docker
regen 001_6333425655433de6.txt sglang-v0.5.1 \
    --engine sglang --engine-version v0.5.1 \
    --image lmsysorg/sglang:v0.5.1-cu126 --preset sglang-docker
regen 002_888d5a41793063a3.txt lmdeploy-v0.10.0 \
    --engine lmdeploy --engine-version v0.10.0 \
    --install "python3 -m pip install lmdeploy==0.10.0" --preset lmdeploy
