#!/usr/bin/env bash
# Check that vLLM's own result tooling reads perfgate's `--save-result` JSON: runs perfgate twice
# against the fake server (two "builds"), lays the results out as vLLM's perf CI does
# (`serving_*.json` plus a `.commands` file each), then runs vLLM's
# `convert-results-json-to-markdown.py` on each folder and `compare-json-results.py` on the two
# `benchmark_results.json` files. Any exception in either script fails this check.
#
#   VLLM_DIR=/path/to/a/vllm/checkout [PYTHON=python3.12] scripts/vllm-scripts-check.sh
#
# vLLM's scripts are not part of this repository: point VLLM_DIR at a vLLM checkout (the scripts
# live under .buildkite/performance-benchmarks/scripts/ or .buildkite/nightly-benchmarks/scripts/).
# Their Python dependencies (pandas, tabulate, psutil, regex, plotly) come from PyPI into a venv under .cache/
# made with $PYTHON (default python3; vLLM 0.11's scripts need Python 3.12 or newer).
# The keys they read are also checked, without Python, by `cargo test --test it compat`.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${VLLM_DIR:?set VLLM_DIR to a vLLM checkout}"
scripts=""
for d in .buildkite/performance-benchmarks/scripts .buildkite/nightly-benchmarks/scripts; do
    if [ -f "$VLLM_DIR/$d/convert-results-json-to-markdown.py" ]; then scripts="$VLLM_DIR/$d"; fi
done
[ -n "$scripts" ] || { echo "vllm-scripts-check: no convert-results-json-to-markdown.py under $VLLM_DIR/.buildkite" >&2; exit 2; }

python="${PYTHON:-python3}"
venv=".cache/vllm-scripts-venv-$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [ ! -f "$venv/.installed" ]; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "pandas==2.2.3" "tabulate==0.9.0" "psutil==7.0.0" "regex==2024.11.6" "plotly==5.24.1"
    touch "$venv/.installed"
fi

cargo build --quiet --bin perfgate
bin=target/debug/perfgate
work="$(mktemp -d)"
trap 'kill "$server_pid" 2>/dev/null || true; [ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
"$bin" fake-server --ttft-ms 5 --itl-ms 1 > "$work/url" &
server_pid=$!
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url="$(cat "$work/url")"
port="${url##*:}"

for build in a b; do
    out="$work/$build/results"
    mkdir -p "$out"
    for rate in inf 20; do
        name="serving_fake_tp1_random_qps_$rate"
        client="vllm bench serve --save-result --result-dir $out --result-filename $name.json --request-rate $rate --metadata tensor_parallel_size=1 --model fake-model --backend vllm --dataset-name random --random-input-len 32 --random-output-len 8 --num-prompts 20 --port $port"
        # The same command line vLLM's CI runs, with `vllm bench serve` → `perfgate run`.
        # shellcheck disable=SC2086
        "$bin" run ${client#vllm bench serve} --disable-tqdm > /dev/null
        python3 - "$out/$name.commands" "$client" <<'EOF'
import json, sys
json.dump({"server_command": "vllm serve fake-model --tensor-parallel-size 1",
           "client_command": sys.argv[2], "gpu_type": "fake"}, open(sys.argv[1], "w"))
EOF
    done
    # Both the older (fixed `results/`) and newer (`-r results`, the default) versions read ./results.
    (cd "$work/$build" && "$OLDPWD/$venv/bin/python" "$scripts/convert-results-json-to-markdown.py")
    test -s "$out/benchmark_results.json"
done
(cd "$work" && "$OLDPWD/$venv/bin/python" "$scripts/compare-json-results.py" \
    -f a/results/benchmark_results.json -f b/results/benchmark_results.json)
# Not only no exception: every converted row has finite numbers in the columns the compare script
# reads (only the unset max concurrency may be null), and the comparison page has its tables.
"$venv/bin/python" - "$work" <<'PY'
import json, math, pathlib, sys
work = pathlib.Path(sys.argv[1])
for build in ("a", "b"):
    rows = json.loads((work / build / "results" / "benchmark_results.json").read_text())
    assert len(rows) == 2, f"{build}: {len(rows)} rows, expected 2"
    for row in rows:
        for col in ("Tput (req/s)", "Output Tput (tok/s)", "Median TTFT (ms)", "P99 TTFT (ms)",
                    "Median", "P99", "Median ITL (ms)"):
            v = row.get(col)
            assert isinstance(v, (int, float)) and math.isfinite(v) and v > 0, \
                f"{build}/{row['Test name']}: {col!r} = {v!r}"
html = (work / "perf_comparison.html").read_text()
assert html.count("<table") == 3, f"perf_comparison.html has {html.count('<table')} tables, expected 3"
print("vllm-scripts-check: 2 x 2 converted rows with finite values, 3 comparison tables")
PY
echo "vllm-scripts-check: ok (convert and compare read perfgate's result JSON)"
