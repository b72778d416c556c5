#!/usr/bin/env bash
# The Python client's tests (clients/python) against a real `airlock serve` built from this checkout
# (run `npm ci && npm run build` first). Makes a virtual environment under clients/python/.venv (no
# global install), installs the package with its `test` extra (pytest) into it, and runs pytest,
# whose closing line is the last line of output. Exits with pytest's code.
# AIRLOCK_PY_SETUP_ONLY=1 only makes (or refreshes) the environment, and AIRLOCK_PY_EXTRAS=test,lint
# adds ruff and mypy: scripts/python-lint.sh uses both, so the linters and the tests run from the
# same environment (installed once: a later run of either reuses it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pkg="$root/clients/python"
venv="$pkg/.venv"
python="${PYTHON:-python3}"
# An index that cannot be reached is given up at once rather than retried for minutes (the packages
# may come from a local index or wheel folder configured for pip); set PIP_RETRIES to change it.
export PIP_RETRIES="${PIP_RETRIES:-0}"

setup_only="${AIRLOCK_PY_SETUP_ONLY:-}"
if [ -z "$setup_only" ] && [ ! -f "$root/dist/src/cli/main.js" ] && [ -z "${AIRLOCK_SERVE_CMD:-}" ]; then
  echo "python-tests: dist/src/cli/main.js is missing; run \`npm ci && npm run build\` first" >&2
  exit 2
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# Installed once per environment: later runs reuse it unless the package's metadata changed. An
# environment made with more extras (test,lint) serves a run that needs fewer.
extras="${AIRLOCK_PY_EXTRAS:-test}"
fresh() { [ -f "$1" ] && [ ! "$pkg/pyproject.toml" -nt "$1" ]; }
if ! fresh "$venv/.airlock-installed-$extras" && ! fresh "$venv/.airlock-installed-test,lint"; then
  log="$venv/install.log"
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check -q \
      -e "$pkg[$extras]" >"$log" 2>&1; then
    tail -30 "$log" >&2
    echo "python-tests: installing the package with its [$extras] extras failed (log: $log)" >&2
    exit 2
  fi
  touch "$venv/.airlock-installed-$extras"
fi

[ -n "$setup_only" ] && exit 0

cd "$pkg"
set +e
"$venv/bin/python" -m pytest -p no:cacheprovider "$@"
status=$?
exit $status
