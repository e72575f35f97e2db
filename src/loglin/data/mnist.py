"""MNIST in IDX format (LeCun et al.), as used by Collins et al. (2008), section 7.1.

Reads ``{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]``. The shared copy
of the training images is a *reconstruction* (``train-images-idx3-ubyte.RECONSTRUCTED.gz``,
pixels within +-1 grey level of the original; see its SOURCE.txt): results on
it must be reported as "MNIST (train pixels reconstructed)"; ``load_mnist``
returns that note in ``info["note"]``.
"""
from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from ..errors import DataFormatError, InvalidInputError

IMAGE_MAGIC, LABEL_MAGIC = 2051, 2049
RECONSTRUCTED_NOTE = "MNIST (train pixels reconstructed)"


def _open(path):
    path = Path(path)
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def _header(path, raw, magic, dims):
    need = 4 * (1 + dims)
    if len(raw) < need:
        raise DataFormatError(path, None, "file too short for an IDX header")
    head = np.frombuffer(raw[:need], dtype=">i4")
    if head[0] != magic:
        raise DataFormatError(path, None, f"bad IDX magic number {int(head[0])} (expected {magic})")
    shape = tuple(int(v) for v in head[1:])
    # Python ints: np.prod of three int32 dimensions can wrap around to the file size
    if any(v < 0 for v in shape) or len(raw) != need + math.prod(shape):
        raise DataFormatError(path, None, f"IDX size mismatch: header says {shape}, file has {len(raw) - need} bytes")
    return shape, need


def read_idx_images(path) -> np.ndarray:
    """uint8 array (n, rows, cols)."""
    with _open(path) as fh:
        raw = fh.read()
    shape, off = _header(path, raw, IMAGE_MAGIC, 3)
    return np.frombuffer(raw, dtype=np.uint8, offset=off).reshape(shape)


def read_idx_labels(path) -> np.ndarray:
    """uint8 array (n,)."""
    with _open(path) as fh:
        raw = fh.read()
    shape, off = _header(path, raw, LABEL_MAGIC, 1)
    return np.frombuffer(raw, dtype=np.uint8, offset=off).reshape(shape)


def _find(directory, stem):
    for name in (f"{stem}.gz", stem, f"{stem}.RECONSTRUCTED.gz"):
        if (directory / name).is_file():
            return directory / name
    raise InvalidInputError(f"{directory}: no file {stem}[.gz]")


def load_mnist(directory, *, scale=True, n_train=None):
    """(X_train, y_train, X_test, y_test, info): pixels as float64 in [0, 1] (``scale``) or 0..255.

    ``n_train`` keeps the first n training images (Collins et al. train on 59k).
    """
    directory = Path(directory)
    train_images = _find(directory, "train-images-idx3-ubyte")
    X_tr = read_idx_images(train_images)
    y_tr = read_idx_labels(_find(directory, "train-labels-idx1-ubyte"))
    X_te = read_idx_images(_find(directory, "t10k-images-idx3-ubyte"))
    y_te = read_idx_labels(_find(directory, "t10k-labels-idx1-ubyte"))
    if len(X_tr) != len(y_tr) or len(X_te) != len(y_te):
        raise InvalidInputError(f"{directory}: numbers of images and labels differ")
    if n_train is not None:
        X_tr, y_tr = X_tr[:n_train], y_tr[:n_train]
    div = 255.0 if scale else 1.0
    flat = lambda X: X.reshape(len(X), -1).astype(np.float64) / div  # noqa: E731
    reconstructed = "RECONSTRUCTED" in train_images.name
    info = {"train_file": train_images.name, "reconstructed": reconstructed,
            "note": RECONSTRUCTED_NOTE if reconstructed else "MNIST"}
    return flat(X_tr), y_tr.astype(np.int64), flat(X_te), y_te.astype(np.int64), info
