#!/usr/bin/env bash
# Time the action's install step (scripts/install-release.sh: download, sha256 check, unpack) against
# a local release artifact served on 127.0.0.1, as the release workflow would publish it.
#
#   scripts/measure-install.sh [BINARY]     default: target/release/perfgate
#
# Also checks the refusals: a tampered archive (exit 2) and a release built from other sources
# (exit 1, so the action builds from source).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/perfgate}"
[ -x "$bin" ] || { echo "measure-install: no binary at $bin (cargo build --release)" >&2; exit 2; }

case "$(uname -m)" in
    x86_64 | amd64) target=x86_64-unknown-linux-musl ;;
    aarch64 | arm64) target=aarch64-unknown-linux-musl ;;
    *) echo "measure-install: unsupported machine $(uname -m)" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
pkg="$work/dist/perfgate-$target"
mkdir -p "$pkg"
cp "$bin" README.md "$pkg/"
strip "$pkg/perfgate" 2>/dev/null || true
(cd "$work/dist" && tar -czf "perfgate-$target.tar.gz" "perfgate-$target" &&
    sha256sum "perfgate-$target.tar.gz" > "perfgate-$target.tar.gz.sha256")
./scripts/install-release.sh --source-hash > "$work/dist/SOURCE_HASH"
echo "measure-install: binary $(du -h "$pkg/perfgate" | cut -f1), archive $(du -h "$work/dist/perfgate-$target.tar.gz" | cut -f1)"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$work/dist" && exec python3 -m http.server "$port" --bind 127.0.0.1 > /dev/null 2>&1) &
server=$!
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/SOURCE_HASH" > /dev/null && break; sleep 0.1; done
export PG_DOWNLOAD_URL="http://127.0.0.1:$port"

for i in 1 2 3; do
    rm -rf "$work/root"
    start=$(date +%s.%N)
    ./scripts/install-release.sh "$work/root" 2> /dev/null
    end=$(date +%s.%N)
    echo "measure-install: run $i: $(echo "$end - $start" | bc) s (download + sha256 + unpack + --version)"
done

# A tampered archive is refused (exit 2), never installed.
cp "$work/dist/perfgate-$target.tar.gz" "$work/good.tgz"
echo tampered >> "$work/dist/perfgate-$target.tar.gz"
rc=0; ./scripts/install-release.sh "$work/root2" 2> /dev/null || rc=$?
[ "$rc" = 2 ] && [ ! -e "$work/root2/bin/perfgate" ] || { echo "measure-install: tampered archive not refused (rc $rc)" >&2; exit 1; }
cp "$work/good.tgz" "$work/dist/perfgate-$target.tar.gz"
# A release of other sources is not used (exit 1: the action builds from source).
echo 0000000000000000 > "$work/dist/SOURCE_HASH"
rc=0; ./scripts/install-release.sh "$work/root3" 2> /dev/null || rc=$?
[ "$rc" = 1 ] || { echo "measure-install: foreign release not refused (rc $rc)" >&2; exit 1; }
echo "measure-install: ok (tampered archive refused, foreign release skipped)"
