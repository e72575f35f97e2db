"""Output files: checked before any work, written atomically.

``check_writable`` runs at the start of a command, so a bad ``-o`` path costs a second, not a
training run. ``atomic_write`` writes to a temporary file in the target's directory and
renames it over the target (``os.replace``), so an interrupted write never leaves a
half-written file under the real name.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import LoglinError


def check_writable(*paths) -> None:
    """Raise LoglinError naming the path unless a file can be created or replaced at each of
    ``paths`` (None entries are skipped: an optional output not asked for).

    Special files (``/dev/null``, ``/dev/stdout``, ``/dev/full``) are written in place: they are
    opened for writing and one byte is flushed to them (``/dev/full`` then fails)."""
    for path in paths:
        if path is not None:
            _check_one(Path(path), "output file")


def _check_one(path, what):
    if path.is_dir():
        raise LoglinError(f"{path}: cannot write the {what}: it is a directory")
    if path.exists() and not path.is_file():
        _check_special(path, what)
        return
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        existing = parent if parent.exists() else next((a for a in parent.parents if a.exists()), None)
        if existing is not None and not existing.is_dir():
            raise LoglinError(f"{path}: cannot write the {what}: {existing} is not a directory")
        raise LoglinError(f"{path}: cannot write the {what}: directory {parent} does not exist")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".check", dir=parent)
    except OSError as exc:
        raise LoglinError(f"{path}: cannot write the {what}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)
    if path.exists() and not os.access(path, os.W_OK) and not os.access(parent, os.W_OK):
        raise LoglinError(f"{path}: cannot write the {what}: permission denied")


def _check_special(path, what):
    try:
        with open(path, "wb", buffering=0) as fh:
            if str(path) == "/dev/full" or os.path.realpath(path) == "/dev/full":
                fh.write(b"\n")         # the one device that refuses writes: make it say so now
    except OSError as exc:
        raise LoglinError(f"{path}: cannot write the {what}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb", **open_kwargs):
    """``with atomic_write(p) as fh:`` writes a temporary sibling of ``p`` and renames it to ``p`` on
    success (removed on failure). A special file (a device, a pipe) is written directly."""
    path = Path(path)
    if path.exists() and not path.is_file():
        with open(path, mode, **open_kwargs) as fh:
            yield fh
        return
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, mode, **open_kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _copy_mode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _copy_mode(path, tmp):
    """Keep an existing file's permissions; a new file gets the usual 0666 & ~umask (mkstemp uses 0600)."""
    if path.exists():
        mode = path.stat().st_mode & 0o7777
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(tmp, mode)
