#!/usr/bin/env bash
# Set everything up in a fresh virtual environment and run the test suite.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${LOGLIN_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e ".[test]"
# Compiled kernels are cached next to the sources (numba cache=True); both cores are used.
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
