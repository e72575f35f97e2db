#!/usr/bin/env bash
# Set everything up in a fresh virtual environment and run the demo on the bundled data.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${LOGLIN_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e .
exec "$VENV/bin/loglin" demo "$@"
