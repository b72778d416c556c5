#!/usr/bin/env bash
# The Python client's tests (clients/python) against a real `airlock serve` built from this checkout
# (run `npm ci && npm run build` first). Makes a virtual environment under clients/python/.venv (no
# global install), installs the package and pytest into it, and runs pytest, whose closing line is
# the last line of output. Exits with pytest's code.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pkg="$root/clients/python"
venv="$pkg/.venv"
python="${PYTHON:-python3}"
# An index that cannot be reached is given up at once rather than retried for minutes (the packages
# may come from a local index or wheel folder configured for pip); set PIP_RETRIES to change it.
export PIP_RETRIES="${PIP_RETRIES:-0}"

if [ ! -f "$root/dist/src/cli/main.js" ] && [ -z "${AIRLOCK_SERVE_CMD:-}" ]; then
  echo "python-tests: dist/src/cli/main.js is missing; run \`npm ci && npm run build\` first" >&2
  exit 2
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# Installed once per environment: later runs reuse it unless the package's metadata changed.
stamp="$venv/.airlock-installed"
if [ ! -f "$stamp" ] || [ "$pkg/pyproject.toml" -nt "$stamp" ]; then
  log="$venv/install.log"
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check -q \
      -e "$pkg" pytest pytest-asyncio >"$log" 2>&1; then
    tail -30 "$log" >&2
    echo "python-tests: installing the package and pytest failed (log: $log)" >&2
    exit 2
  fi
  touch "$stamp"
fi

cd "$pkg"
set +e
"$venv/bin/python" -m pytest -p no:cacheprovider "$@"
status=$?
exit $status
