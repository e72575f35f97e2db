#!/usr/bin/env bash
# Source with one argument, a pip extra or "" for none: make (or reuse) the project's virtual environment and install loglin
# into it. Sets VENV. Used by demo.sh and test.sh so both Quickstart commands set up the same way.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${LOGLIN_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet -e ".${1:+[$1]}"
