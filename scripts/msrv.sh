#!/usr/bin/env bash
# The minimum supported Rust version, kept true: `rust-version` in Cargo.toml must equal the
# highest `rust-version` among the locked dependencies that a build of perfgate compiles (normal
# and build dependencies; dev-dependencies are for the tests only), and the crate must build with
# exactly that toolchain. Installs the toolchain with rustup (minimal profile) if it is missing.
# Usage: scripts/msrv.sh [--no-build]   (--no-build: only compare the declared and needed versions)
set -euo pipefail
cd "$(dirname "$0")/.."

declared=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
[ -n "$declared" ] || { echo "msrv.sh: Cargo.toml has no rust-version" >&2; exit 1; }

# The packages a plain build compiles: walk the resolve graph from perfgate over normal and build
# edges only, then take the highest rust-version they declare.
needed=$(cargo metadata --locked --format-version 1 | python3 -c '
import json, sys
m = json.load(sys.stdin)
pkgs = {p["id"]: p for p in m["packages"]}
nodes = {n["id"]: n for n in m["resolve"]["nodes"]}
root = m["resolve"]["root"]
seen, todo = set(), [root]
while todo:
    i = todo.pop()
    if i in seen:
        continue
    seen.add(i)
    for d in nodes[i]["deps"]:
        if any(k["kind"] in (None, "build") for k in d["dep_kinds"]):
            todo.append(d["pkg"])
def key(v):
    return tuple(int(x) for x in v.split("."))
best, who = "0", "nothing"
for i in seen - {root}:
    v = pkgs[i].get("rust_version")
    if v and key(v) > key(best):
        best, who = v, pkgs[i]["name"] + " " + pkgs[i]["version"]
print(best, who)
')
need=${needed%% *}
echo "msrv.sh: declared rust-version $declared; the locked dependencies need $need (${needed#* })" >&2
norm() { python3 -c 'import sys; v=[int(x) for x in sys.argv[1].split(".")]; print(".".join(map(str,(v+[0,0])[:3])))' "$1"; }
if [ "$(norm "$declared")" != "$(norm "$need")" ]; then
    echo "msrv.sh: rust-version $declared is not the true minimum: the dependencies need $need" >&2
    exit 1
fi
[ "${1:-}" = "--no-build" ] && exit 0

toolchain="$declared"
rustup toolchain list | grep -q "^$toolchain" ||
    rustup toolchain install "$toolchain" --profile minimal >&2
CARGO_TARGET_DIR=${MSRV_TARGET_DIR:-target/msrv} cargo "+$toolchain" check --locked --lib --bins
echo "msrv.sh: perfgate builds with Rust $toolchain" >&2
