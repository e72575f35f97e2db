#!/usr/bin/env bash
# Source with one argument, a pip extra or "" for none: make (or reuse) the project's virtual environment and install loglin
# into it. Sets VENV. Used by demo.sh and test.sh so both Quickstart commands set up the same way.
cd "$(dirname "${BASH_SOURCE[0]}")/.."
VENV="${LOGLIN_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
# an editable install of a pyproject package needs pip >= 21.3 (PEP 660): upgrade only an older pip
if ! "$VENV/bin/python" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (21, 3))'; then
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
# --no-compile: Python writes the bytecode of the modules a run imports when it first imports them, instead of pip
# compiling every file of every dependency up front
"$VENV/bin/python" -m pip install --quiet --no-compile -e ".${1:+[$1]}"
