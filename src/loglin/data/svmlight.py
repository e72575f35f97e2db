"""svmlight / LIBSVM sparse format: ``label [qid:N] index:value ... [# comment]``.

The reader is a tight pure-Python loop working on ``bytes`` (no decoding unless
labels turn out to be strings); all checks that can be done on whole arrays
(index range, finiteness, ordering, duplicates) run once, vectorized, after the
loop, and map a bad entry back to its line only when one is found.
"""

from __future__ import annotations

import math
import re
from array import array

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, InvalidInputError
from ..limits import MAX_FEATURES
from ._files import (PathLike, ascii_bytes, field_encoding, fields, open_text_for_write, read_bytes, show, split_lines,
                     takes_encoding)

_INT32_MAX = np.iinfo(np.int32).max
# What an index and a value may look like. Only used to explain a failure:
# the fast path relies on int()/float(), which accept the same texts plus
# underscores ("1_0"), which is why lines containing "_" are checked here too.
_INDEX_RE = re.compile(rb"[+-]?\d+")
# A multi-label line (LIBSVM's multilabel format): comma-separated numbers.
_MULTI_LABEL_RE = re.compile(rb"[+-]?[\d.]+(?:[eE][+-]?\d+)?(?:,[+-]?[\d.]+(?:[eE][+-]?\d+)?)+")
_VALUE_RE = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.I)


@takes_encoding
def read_svmlight(path: PathLike, n_features: int | None = None, zero_based: bool = False,
                  dtype=np.float64, drop_beyond: int | None = None, multi_label: bool = True):
    """Read an svmlight/LIBSVM file into ``(X, y)``.

    Parameters
    ----------
    path : str or path-like
        File to read; ``.gz``, ``.bz2`` and ``.xz`` files are decompressed.
    n_features : int, optional
        Number of columns of ``X``. Default: the largest index seen (+1 if 0-based),
        at most :data:`loglin.limits.MAX_FEATURES`. An index beyond it is an error.
    zero_based : bool
        Whether indices start at 0. Default False: LIBSVM's 1-based indices,
        where index 0 is an error.
    dtype : numpy dtype
        dtype of ``X.data`` (float64 by default).
    drop_beyond : int, optional
        Drop the features whose (0-based) column is ``>= drop_beyond`` before sizing
        anything: prediction input, where features unseen in training carry no weight.
    multi_label : bool
        Whether multi-label lines (``1,3 1:0.5``) are read, their label lists kept as
        strings (default); False (the labels of a classifier being trained) makes them an error, and numeric
        labels that are not all whole numbers too (a regression target).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Sorted indices, no duplicates; index arrays are int32 unless nnz or
        n_features needs int64.
    y : numpy.ndarray
        int64 if every label is an integer, else float64 if every label is a
        (finite) number, else an object array of ``str``.

    ``encoding=`` (keyword): the text encoding of string labels (default UTF-8, or the CLI's ``--encoding``;
    UTF-16 / UTF-32 files are transcoded first). The optional ``qid:N`` token after the label is checked and
    ignored; ``#`` starts a comment; blank lines are skipped. Every malformed input raises
    :class:`~loglin.errors.DataFormatError` naming file and line.
    """
    if n_features is not None and (not isinstance(n_features, (int, np.integer)) or n_features < 0):
        raise InvalidInputError(f"n_features must be a non-negative integer, got {n_features!r}")
    X, labels, rows = parse_svmlight(ascii_bytes(read_bytes(path), path), path, n_features, zero_based, dtype,
                                     drop_beyond)
    return X, labels_to_array(path, labels, rows, multi_label)


def parse_svmlight(content: bytes, path: PathLike, n_features: int | None = None, zero_based: bool = False,
                   dtype=np.float64, drop_beyond: int | None = None):
    """(X, raw label texts, source line of every row) of svmlight ``content`` (what :func:`read_svmlight`
    reads from ``path``, which names it in errors): a shard's byte range is parsed the same way."""
    if content.startswith(b"\xef\xbb\xbf"):      # a UTF-8 byte-order mark is not part of the first label
        content = content[3:]
    lines = split_lines(content)

    labels: list[bytes] = []
    row_lines = array("q")       # source line of every row, to locate errors found later
    indptr = array("q", [0])
    indices = array("q")
    values = array("d")
    add_index, add_value = indices.append, values.append

    for lineno, line in enumerate(lines, 1):
        if b"#" in line:
            line = line[: line.index(b"#")]
        parts = line.split()
        if not parts:
            continue
        if b":" in parts[0]:  # most likely a line whose label was forgotten
            raise DataFormatError(path, lineno, f"expected a label before the features, got {show(parts[0])}")
        start = 1
        if len(parts) > 1 and parts[1].startswith(b"qid:"):
            if not _INDEX_RE.fullmatch(parts[1][4:]):
                raise DataFormatError(path, lineno, f"expected 'qid:<integer>', got {show(parts[1])}")
            start = 2
        try:
            for token in parts[start:]:
                index, _, value = token.partition(b":")
                add_index(int(index))
                add_value(float(value))
        except (ValueError, OverflowError):
            _explain_bad_tokens(path, lineno, parts[start:])
            raise DataFormatError(path, lineno, "expected 'index:value' features") from None  # not reached
        if b"_" in line:
            _explain_bad_tokens(path, lineno, parts[start:])
        labels.append(parts[0])
        row_lines.append(lineno)
        indptr.append(len(indices))

    indptr_a = np.frombuffer(indptr, dtype=np.int64)
    index_a = np.frombuffer(indices, dtype=np.int64)
    data = np.frombuffer(values, dtype=np.float64)
    rows = np.frombuffer(row_lines, dtype=np.int64)

    def fail(position: int, message: str):
        row = int(np.searchsorted(indptr_a, position, side="right")) - 1
        raise DataFormatError(path, int(rows[row]), message)

    base = 0 if zero_based else 1
    if index_a.size:
        low = int(np.argmin(index_a))
        if index_a[low] < base:
            hint = (" (indices are 1-based; 0-based files: loglin train --zero-based, or zero_based=True)"
                    if index_a[low] == 0 else "")
            fail(low, f"expected feature index >= {base}, got {index_a[low]}{hint}")
    index_a = index_a - base
    if drop_beyond is not None and index_a.size and index_a.max() >= drop_beyond:
        keep = index_a < drop_beyond
        kept_before = np.concatenate(([0], np.cumsum(keep)))
        index_a, data, indptr_a = index_a[keep], data[keep], kept_before[indptr_a]
    n_seen = int(index_a.max()) + 1 if index_a.size else 0
    if n_features is None:
        if n_seen > MAX_FEATURES:       # weights are dense, one per index: refuse before anything is sized by it
            high = int(np.argmax(index_a))
            fail(high, f"feature index {index_a[high] + base} is beyond the supported {MAX_FEATURES:,} (models keep "
                       f"one weight per index: renumber the features)")
        n_features = n_seen
    elif n_seen > n_features:
        high = int(np.argmax(index_a))
        fail(high, f"expected feature index <= {n_features - 1 + base} (n_features={n_features}), "
                   f"got {index_a[high] + base}")
    if not np.isfinite(data).all():
        bad = int(np.flatnonzero(~np.isfinite(data))[0])
        fail(bad, f"expected a finite value for feature {index_a[bad] + base}, got {data[bad]}")

    index_a, data = _sort_rows(index_a, data, indptr_a, fail, base)

    # Keep int32 indices whenever they fit: half the memory and what most
    # sparse kernels expect.
    big = max(int(indptr_a[-1]), n_features) > _INT32_MAX
    idx_dtype = np.int64 if big else np.int32
    X = sp.csr_matrix(
        (data.astype(dtype, copy=False), index_a.astype(idx_dtype), indptr_a.astype(idx_dtype)),
        shape=(len(labels), n_features),
    )
    X.has_sorted_indices = True
    return X, labels, rows


def _explain_bad_tokens(path, lineno: int, tokens: list[bytes]) -> None:
    """Raise a precise error for the first malformed ``index:value`` token of a line."""
    for token in tokens:
        index, colon, value = token.partition(b":")
        if not colon:
            raise DataFormatError(path, lineno, f"expected 'index:value', got {show(token)} (missing ':')")
        if not _INDEX_RE.fullmatch(index):
            raise DataFormatError(path, lineno, f"expected an integer feature index, got {show(index)} in {show(token)}")
        if not _VALUE_RE.fullmatch(value):
            raise DataFormatError(path, lineno, f"expected a numeric value, got {show(value)} in {show(token)}")
    # Only reached through the cheap "_" pre-check when the underscore was in
    # the label (legitimate for string labels): nothing to report.


def _sort_rows(index_a, data, indptr_a, fail, base):
    """Sort indices within every row (files may list them in any order) and reject duplicates."""
    if index_a.size < 2:
        return index_a, data
    # A step that is not strictly increasing inside a row means unsorted or duplicate.
    steps = np.diff(index_a)
    inside = np.ones(steps.size, dtype=bool)
    starts = indptr_a[1:-1]
    inside[starts[(starts > 0) & (starts <= steps.size)] - 1] = False
    if (steps[inside] > 0).all():
        return index_a, data
    row_of = np.repeat(np.arange(indptr_a.size - 1), np.diff(indptr_a))
    order = np.lexsort((index_a, row_of))
    index_a, data = index_a[order], data[order]
    dup = np.flatnonzero((np.diff(index_a) == 0) & (np.diff(row_of) == 0))
    if dup.size:
        fail(int(dup[0]), f"expected each feature index at most once per line, got {index_a[dup[0]] + base} twice")
    return index_a, data


def labels_to_array(path, labels: list[bytes], rows, multi_label: bool = True) -> np.ndarray:
    """int64 if all labels are ints, else float64 if all are numbers, else str objects (decoded as the file's
    text: ``--encoding`` when it is ASCII-compatible, :func:`~loglin.data._files.field_encoding`).

    ``multi_label=False`` reads the labels of a single-label classifier's training data: a multi-label line, and
    numeric labels that are not all whole numbers (a regression target, which would train one class per value),
    are errors, as scikit-learn's classifiers refuse them. ``rows``: the source line of every label, or None
    (labels gathered from several parts of the file: an error names the file only)."""
    def line(i):
        return None if rows is None else int(rows[i])
    # int()/float() accept "1_000": such labels are kept as strings.
    numeric = not any(b"_" in label for label in labels)
    if numeric:
        try:
            return np.array([int(label) for label in labels], dtype=np.int64)
        except (ValueError, OverflowError):
            pass
        try:
            y = np.array([float(label) for label in labels], dtype=np.float64)
        except ValueError:
            pass
        else:
            if not np.isfinite(y).all():
                bad = int(np.flatnonzero(~np.isfinite(y))[0])
                raise DataFormatError(path, line(bad), f"expected a finite numeric label, got {show(labels[bad])}")
            if not multi_label and np.any(y != np.round(y)):
                bad = int(np.flatnonzero(y != np.round(y))[0])
                raise DataFormatError(path, line(bad), f"expected class labels, got the number {show(labels[bad])}: "
                                                       "non-integral labels are a regression target, and loglin "
                                                       "trains classifiers (give whole-number or string classes)")
            return y
    for i, label in enumerate([] if multi_label else labels):     # else silently a class named "1,2"
        if b"," in label and _MULTI_LABEL_RE.fullmatch(label):
            raise DataFormatError(path, line(i), f"expected one label per line, got the multi-label "
                                                 f"{show(label)} (loglin trains single-label models)")
    encoding = field_encoding()
    y = np.empty(len(labels), dtype=object)
    for i, label in enumerate(labels):
        try:
            y[i] = label.decode(encoding)
        except UnicodeDecodeError:
            raise DataFormatError(path, line(i), f"expected a {encoding.upper()} label, got {show(label)} (give "
                                                 "the file's encoding with --encoding, e.g. latin-1)") from None
    return y


def write_svmlight(path: PathLike, X, y, zero_based: bool = False) -> None:
    """Write ``X`` (dense or sparse, shape (n, d)) and labels ``y`` in svmlight format.

    Zeros are skipped, indices are written in increasing order (1-based unless
    ``zero_based``), and values use ``repr`` so that reading back gives the
    same floats. Compression follows the extension, as for the reader.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    X.eliminate_zeros()
    X.sort_indices()
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise InvalidInputError(f"y must be 1-D with {X.shape[0]} labels (one per row of X), got shape {y.shape}")
    if not np.isfinite(X.data).all():
        raise InvalidInputError("X contains non-finite values, which svmlight files cannot hold")
    label_texts = [_label_text(label) for label in y]
    base = 0 if zero_based else 1
    indptr, indices, data = X.indptr, X.indices, X.data
    with open_text_for_write(path) as out:
        for row, label in enumerate(label_texts):
            lo, hi = indptr[row], indptr[row + 1]
            features = " ".join(
                f"{j + base}:{_number_text(v)}" for j, v in zip(indices[lo:hi].tolist(), data[lo:hi].tolist())
            )
            out.write(f"{label} {features}\n" if features else f"{label}\n")


def _number_text(value: float) -> str:
    """Shortest round-tripping text; "1" rather than "1.0" keeps files LIBSVM-like."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _label_text(label) -> str:
    if isinstance(label, (bool, np.bool_)):
        raise InvalidInputError("boolean labels are ambiguous in svmlight files; convert them to int")
    if isinstance(label, (float, np.floating)):
        if not math.isfinite(label):
            raise InvalidInputError(f"labels must be finite, got {label!r}")
        return _number_text(float(label))
    if isinstance(label, (int, np.integer)):
        return str(int(label))
    text = str(label)
    if not text or fields(text) != [text] or "#" in text or ":" in text:
        raise InvalidInputError(f"label {text!r} cannot be written: it must be non-empty, without whitespace, '#' or ':'")
    return text
