"""Where the shared real data sets live (used by tests and benchmarks)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "LOGLIN_DATA"


def shared_data_dir() -> Path | None:
    """Return the shared data directory, or None when it cannot be found.

    Looked up in order: the ``LOGLIN_DATA`` environment variable (used as is:
    None if it does not name a directory); ``shared/data`` next to the
    repository holding this source file (``<repo>/../shared/data``); then
    ``shared/data`` in the current directory or any of its parents.
    """
    configured = os.environ.get(ENV_VAR)
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_dir() else None
    # this file is <repo>/src/loglin/data/paths.py
    repo = Path(__file__).resolve().parents[3]
    cwd = Path.cwd().resolve()
    for base in (repo.parent, cwd, *cwd.parents):
        candidate = base / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None
