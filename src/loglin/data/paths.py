"""Where the shared real data sets live (used by experiments, tests and benchmarks)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import DataUnavailable

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


def require_shared(*parts, data_dir=None) -> Path:
    """The path ``<data root>/<parts...>``, which must exist, else :class:`DataUnavailable`.

    The data root is ``data_dir`` when given, else :func:`shared_data_dir`; with no parts the
    root itself is returned (and must exist).
    """
    if data_dir is not None:
        root = Path(data_dir)
    else:
        root = shared_data_dir()
        if root is None:
            configured = os.environ.get(ENV_VAR)
            raise DataUnavailable(Path(configured).expanduser() if configured else None,
                                  f"{ENV_VAR} names no directory" if configured else
                                  f"{ENV_VAR} is unset and there is no shared/data beside the repository "
                                  "or above the working directory")
    path = root.joinpath(*(str(p) for p in parts))
    if not path.exists():
        raise DataUnavailable(path)
    return path
