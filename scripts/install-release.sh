#!/usr/bin/env bash
# Install the perfgate release binary for this machine into ROOT/bin/perfgate, checked against the
# release's published SHA-256. Used by action.yml before it falls back to building from source.
#
#   scripts/install-release.sh ROOT        install; exit 1 (nothing installed) when there is no
#                                          binary to use, so the caller builds from source
#   scripts/install-release.sh --source-hash   print the fingerprint of the sources (Cargo.toml,
#                                          Cargo.lock, src/) that a release publishes as SOURCE_HASH
#
# Which release: $PG_VERSION (e.g. v1.2.0; `source` means never a binary), else `v` + the version in
# Cargo.toml next to this script — and then only when that release's SOURCE_HASH equals these
# sources' fingerprint, so an action pinned to an unreleased commit builds that commit instead of
# running an older binary. Where from: $PG_DOWNLOAD_URL (a directory holding the assets), else
# https://github.com/$PG_REPO/releases/download/VERSION. A checksum mismatch is an error (exit 2),
# never a silent fallback.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"

source_hash() {
    (cd "$here" && find Cargo.toml Cargo.lock src -type f -print0 | sort -z | xargs -0 sha256sum |
        sha256sum | cut -c1-16)
}

if [ "${1:-}" = --source-hash ]; then
    source_hash
    exit 0
fi
root="${1:?usage: install-release.sh ROOT | --source-hash}"

say() { echo "install-release: $*" >&2; }

case "$(uname -s)-$(uname -m)" in
    Linux-x86_64 | Linux-amd64) target=x86_64-unknown-linux-musl ;;
    Linux-aarch64 | Linux-arm64) target=aarch64-unknown-linux-musl ;;
    *)
        say "no release binary for $(uname -s) $(uname -m)"
        exit 1
        ;;
esac

version="${PG_VERSION:-}"
if [ "$version" = source ]; then
    say "version: source requested"
    exit 1
fi
explicit=1
if [ -z "$version" ]; then
    explicit=0
    version="v$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/Cargo.toml" | head -n1)"
fi
base="${PG_DOWNLOAD_URL:-}"
if [ -z "$base" ]; then
    if [ -z "${PG_REPO:-}" ]; then
        say "no repository to download from (a local action); building from source"
        exit 1
    fi
    base="https://github.com/$PG_REPO/releases/download/$version"
fi
base="${base%/}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fetch() { curl --fail --silent --show-error --location --retry 3 --connect-timeout 10 -o "$2" "$1"; }

if [ "$explicit" = 0 ]; then
    if ! fetch "$base/SOURCE_HASH" "$tmp/SOURCE_HASH" 2>/dev/null; then
        say "no release $version at $base"
        exit 1
    fi
    want="$(tr -d '[:space:]' < "$tmp/SOURCE_HASH")"
    have="$(source_hash)"
    if [ "$want" != "$have" ]; then
        say "release $version was built from other sources ($want, these are $have)"
        exit 1
    fi
fi

asset="perfgate-$target.tar.gz"
if ! fetch "$base/$asset" "$tmp/$asset" || ! fetch "$base/$asset.sha256" "$tmp/$asset.sha256"; then
    say "cannot download $asset of $version"
    exit 1
fi
if ! (cd "$tmp" && sha256sum --check --strict --status "$asset.sha256"); then
    say "checksum mismatch for $asset of $version: refusing to install it"
    exit 2
fi
tar -C "$tmp" -xzf "$tmp/$asset"
mkdir -p "$root/bin"
install -m 0755 "$tmp/perfgate-$target/perfgate" "$root/bin/perfgate"
say "installed perfgate $version ($target) to $root/bin, sha256 verified"
"$root/bin/perfgate" --version >&2
