#!/usr/bin/env bash
# Set everything up in a fresh virtual environment and run the demo on the bundled data.
set -euo pipefail
source "$(dirname "$0")/venv.sh" ""   # no extras
exec "$VENV/bin/loglin" demo "$@"
