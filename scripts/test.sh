#!/usr/bin/env bash
# The project's test command: installs what the tests need from the package registries
# (cached under .cache/), then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --all-targets
