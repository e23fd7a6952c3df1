#!/usr/bin/env bash
# Copies what a release archive carries beside the binary into DEST: the README and every page it
# links (docs/, CHANGELOG, ARCHITECTURE, CONTRIBUTING, the example workflows the docs point at),
# the shell completions and man pages. The release workflow runs it; tests/it/files.rs checks that
# every relative link in the copied pages resolves inside DEST.
set -euo pipefail
dest=${1:?usage: scripts/package-docs.sh DEST}
cd "$(dirname "$0")/.."
mkdir -p "$dest/.github/workflows"
cp README.md CHANGELOG.md ARCHITECTURE.md CONTRIBUTING.md "$dest/"
cp -r docs contrib "$dest/"
cp .github/workflows/perf-gate.yml .github/workflows/perf-gate-fork.yml "$dest/.github/workflows/"
