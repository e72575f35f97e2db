"""Offsets of row layouts (rows of variable length, CSR style), shared by the problem and feature builders."""
from __future__ import annotations

import numpy as np


def offsets(lengths) -> np.ndarray:
    """The (len(lengths) + 1,) int64 start offsets of rows of these lengths: 0, l0, l0 + l1, ..."""
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def gather_rows(ptr, rows):
    """(new_ptr, entries): the offsets of rows ``rows`` (in that order) of a layout with offsets ``ptr``, and
    the indices of their entries, row after row."""
    rows = np.asarray(rows, dtype=np.int64)
    lengths = np.diff(ptr)[rows]
    new_ptr = offsets(lengths)
    entries = np.repeat(ptr[rows] - new_ptr[:-1], lengths) + np.arange(new_ptr[-1], dtype=np.int64)
    return new_ptr, entries
