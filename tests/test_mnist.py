"""IDX reader: synthetic files (always) and the shared MNIST copy (when present)."""
import gzip

import numpy as np
import pytest

from loglin.data.mnist import RECONSTRUCTED_NOTE, load_mnist, read_idx_images, read_idx_labels
from loglin.data.paths import shared_data_dir
from loglin.errors import DataFormatError


def write_idx(path, magic, arr):
    head = np.array([magic, *arr.shape], dtype=">i4").tobytes()
    with gzip.open(path, "wb") as fh:
        fh.write(head + arr.astype(np.uint8).tobytes())


def test_round_trip_and_errors(tmp_path):
    imgs = np.random.default_rng(0).integers(0, 256, size=(5, 3, 4))
    write_idx(tmp_path / "a.gz", 2051, imgs)
    np.testing.assert_array_equal(read_idx_images(tmp_path / "a.gz"), imgs)
    write_idx(tmp_path / "l.gz", 2049, np.arange(5))
    np.testing.assert_array_equal(read_idx_labels(tmp_path / "l.gz"), np.arange(5))
    with pytest.raises(DataFormatError):
        read_idx_labels(tmp_path / "a.gz")          # wrong magic
    raw = gzip.open(tmp_path / "a.gz").read()[:-3]
    with gzip.open(tmp_path / "short.gz", "wb") as fh:
        fh.write(raw)
    with pytest.raises(DataFormatError):
        read_idx_images(tmp_path / "short.gz")


def test_shared_mnist():
    base = shared_data_dir()
    if base is None or not (base / "mnist").is_dir():
        pytest.skip("shared MNIST not available")
    X, y, Xt, yt, info = load_mnist(base / "mnist", n_train=1000)
    assert X.shape == (1000, 784) and Xt.shape == (10000, 784)
    assert 0.0 <= X.min() and X.max() <= 1.0
    assert np.bincount(yt, minlength=10).tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
    assert info["reconstructed"] and info["note"] == RECONSTRUCTED_NOTE
