#!/usr/bin/env bash
# Set everything up in a fresh virtual environment and run the test suite.
# Usage: bash scripts/test.sh [extra pytest arguments]
set -euo pipefail
source "$(dirname "$0")/venv.sh" test
# Compiled kernels are cached next to the sources (numba cache=True); both cores are used.
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$@"
