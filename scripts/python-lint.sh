#!/usr/bin/env bash
# Lints the Python client (clients/python): `ruff check`, `ruff format --check` and `mypy --strict`
# (configured in clients/python/pyproject.toml: src, tests and examples), from the same virtual
# environment as its tests (clients/python/.venv, made by scripts/python-tests.sh with the `lint`
# extra: ruff and mypy). Needs no build and no server. Exits non-zero on the first failing check.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pkg="$root/clients/python"
AIRLOCK_PY_SETUP_ONLY=1 AIRLOCK_PY_EXTRAS=test,lint bash "$root/scripts/python-tests.sh"
cd "$pkg"
bin="$pkg/.venv/bin"
"$bin/ruff" check --no-cache .
"$bin/ruff" format --no-cache --check .
"$bin/mypy" --cache-dir "$pkg/.venv/.mypy_cache"
echo "python-lint: ruff and mypy --strict passed"
