"""A shard's part of a data file: the byte range [cut(i), cut(i + 1)) of shard i of n, cut on line
boundaries (one row per line: svmlight, events) or on blank lines (one sentence per block: CoNLL).

Every worker computes its own two cuts from the file itself, so the driver never reads the data: the
cuts are the first boundary at or after i/n of the file's size. A compressed file cannot be entered in
the middle: each worker then decompresses the whole file and keeps its range of the decompressed bytes.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from ..data._files import _DECOMPRESSORS, read_bytes

LINE = re.compile(rb"\n")
BLANK_LINE = re.compile(rb"\n[ \t\r]*\n")      # a CoNLL sentence ends at a line holding nothing but blanks
CHUNK = 1 << 20
_LOOK_BEHIND = {True: 1, False: 64}     # a line boundary at the target; a blank line reaching over it


def is_compressed(path) -> bool:
    return Path(path).suffix.lower() in _DECOMPRESSORS


def shard_bytes(path, index: int, n: int, sentences: bool = False) -> bytes:
    """The bytes of shard ``index`` of ``n`` of ``path`` (decompressed), cut on lines or, with
    ``sentences``, on blank lines; the shards of 0..n-1 put together are the whole file."""
    separator = BLANK_LINE if sentences else LINE
    if is_compressed(path):
        data = read_bytes(path)
        lo, hi = (_cut_in_bytes(data, k, n, separator) for k in (index, index + 1))
        return data[lo:hi]
    size = os.path.getsize(path)
    with open(path, "rb") as stream:
        lo, hi = (_cut_in_file(stream, size, k, n, separator) for k in (index, index + 1))
        stream.seek(lo)
        return stream.read(hi - lo)


def _target(size, k, n):
    return size * k // n


def _cut_in_bytes(data: bytes, k: int, n: int, separator) -> int:
    if k <= 0:
        return 0
    if k >= n:
        return len(data)
    start = _target(len(data), k, n)
    found = separator.search(data, start - min(start, _LOOK_BEHIND[separator is LINE]))
    while found is not None and found.end() < start:      # a boundary that ends before the target: next one
        found = separator.search(data, found.end())
    return len(data) if found is None else found.end()


def _cut_in_file(stream, size: int, k: int, n: int, separator) -> int:
    """:func:`_cut_in_bytes` reading only from the target on (with a little look-behind)."""
    if k <= 0:
        return 0
    if k >= n:
        return size
    start = _target(size, k, n)
    back = min(start, _LOOK_BEHIND[separator is LINE])
    offset = start - back
    stream.seek(offset)
    window = b""
    while True:
        chunk = stream.read(CHUNK)
        window += chunk
        found = separator.search(window)
        while found is not None and offset + found.end() < start:
            found = separator.search(window, found.end())
        if found is not None and (found.end() < len(window) or not chunk):
            return offset + found.end()
        if not chunk:
            return size
        keep = 64                            # a separator may straddle two chunks
        offset += max(0, len(window) - keep)
        window = window[-keep:] if len(window) > keep else window
