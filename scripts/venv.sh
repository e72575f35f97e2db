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
# ...unless PYTHONDONTWRITEBYTECODE is set (as in many container images): then Python never writes it, and every
# command would compile numpy, scipy, numba and loglin from source at each start (docs/decisions/0053). Compile
# once here instead; files already compiled are skipped. A dependency's file that does not compile (test data
# in another Python's syntax) is not ours to fix, so its error does not stop the set-up.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
    "$VENV/bin/python" -m compileall -q -j 0 "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" src/loglin > /dev/null 2>&1 || true
fi
