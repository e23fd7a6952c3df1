#!/usr/bin/env bash
# Regenerate docs/compare-seeds.png, docs/report.md's picture of the sign-off page: the seed
# baselines side by side, rendered by headless Chromium (scripts/install-browser.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
chrome=${PERFGATE_CHROMIUM:-$(./scripts/install-browser.sh)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo run --quiet -- compare baselines/v0.10.1.toml baselines/sglang-v0.5.1.toml \
    baselines/lmdeploy-v0.10.0.toml --html "$tmp/compare.html"
mkdir -p docs
"$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/profile" --window-size=1280,1800 \
    --screenshot="$PWD/docs/compare-seeds.png" "file://$tmp/compare.html" 2>/dev/null
echo "wrote docs/compare-seeds.png"
