#!/usr/bin/env bash
# Install headless Chromium (the Debian package `chromium`) for the HTML report tests, which open
# the report the way a person does and check that it renders without console errors and with its
# plots. Needs root (or passwordless sudo) and Debian/Ubuntu's apt. Does nothing when a Chromium
# is already on PATH or PERFGATE_CHROMIUM names one. Prints where it is on success.
set -euo pipefail

log() { printf 'install-browser: %s\n' "$*" >&2; }

find_chromium() {
    if [[ -n "${PERFGATE_CHROMIUM:-}" && -x "${PERFGATE_CHROMIUM}" ]]; then
        printf '%s\n' "$PERFGATE_CHROMIUM"
        return 0
    fi
    local c
    for c in chromium chromium-browser google-chrome-stable google-chrome; do
        if command -v "$c" >/dev/null 2>&1; then
            command -v "$c"
            return 0
        fi
    done
    return 1
}

if path=$(find_chromium); then
    log "chromium already installed: $path"
    printf '%s\n' "$path"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    log "error: no chromium on PATH and no apt-get to install it; set PERFGATE_CHROMIUM"
    exit 1
fi
sudo=()
if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        log "error: installing chromium needs root (or passwordless sudo)"
        exit 1
    fi
fi

start=$(date +%s)
aptlog=$(mktemp)
trap 'rm -f "$aptlog"' EXIT
apt() {
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "$@" >"$aptlog" 2>&1; then
        tail -n 30 "$aptlog" >&2
        log "error: apt-get $* failed"
        exit 1
    fi
}
log "apt-get update"
apt update -qq
# Debian names it `chromium`; Ubuntu's `chromium` is a snap shim, so on Ubuntu prefer
# `chromium-browser` only when `chromium` is not available.
pkg=chromium
if ! apt-cache show chromium >/dev/null 2>&1; then
    pkg=chromium-browser
fi
log "apt-get install $pkg"
apt install -y -qq --no-install-recommends "$pkg" fonts-dejavu-core
path=$(find_chromium) || { log "error: $pkg installed but no chromium on PATH"; exit 1; }
log "installed $pkg in $(( $(date +%s) - start )) s: $path"
printf '%s\n' "$path"
