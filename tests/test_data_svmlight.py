"""Tests of loglin.data.svmlight: parsing rules, every error case, round trips, real LIBSVM files."""

import bz2
import gzip
import lzma
import re

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.data import read_svmlight, shared_data_dir, write_svmlight
from loglin.errors import DataFormatError, InvalidInputError
from conftest import at, data_file, write






# ---------------------------------------------------------------- parsing


def test_basic_file(tmp_path):
    path = write(tmp_path, "1 1:0.5 3:2\n-1 2:1\n+1 3:-1.5e-3\n")
    X, y = read_svmlight(path)
    assert isinstance(X, sp.csr_matrix)
    assert X.shape == (3, 3) and X.dtype == np.float64
    assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, 2], [0, 1, 0], [0, 0, -1.5e-3]])
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y, [1, -1, 1])


def test_qid_comments_blank_lines_and_crlf(tmp_path):
    text = "# header comment\n\n2 qid:7 1:1 # trailing comment 9:9\r\n   \n3 qid:8 2:4\r\n"
    X, y = read_svmlight(write(tmp_path, text))
    np.testing.assert_array_equal(X.toarray(), [[1, 0], [0, 4]])
    np.testing.assert_array_equal(y, [2, 3])


def test_row_without_features_and_empty_file(tmp_path):
    X, y = read_svmlight(write(tmp_path, "1\n2 2:1\n"))
    np.testing.assert_array_equal(X.toarray(), [[0, 0], [0, 1]])
    X, y = read_svmlight(write(tmp_path, "", name="empty.svm"))
    assert X.shape == (0, 0) and y.shape == (0,)
    X, y = read_svmlight(write(tmp_path, "# only a comment\n", name="c.svm"), n_features=5)
    assert X.shape == (0, 5)


def test_unsorted_indices_are_sorted(tmp_path):
    X, _ = read_svmlight(write(tmp_path, "1 5:5 2:2 4:4\n1 3:3 1:1\n"))
    assert X.has_sorted_indices
    np.testing.assert_array_equal(X.indices, [1, 3, 4, 0, 2])
    np.testing.assert_array_equal(X.data, [2, 4, 5, 1, 3])


def test_zero_based_and_n_features(tmp_path):
    path = write(tmp_path, "1 0:1 2:3\n")
    X, _ = read_svmlight(path, zero_based=True)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 3]])
    X, _ = read_svmlight(path, zero_based=True, n_features=10)
    assert X.shape == (1, 10)


def test_dtype_and_int64_indices(tmp_path):
    path = write(tmp_path, "1 1:0.25 7:1\n")
    X, _ = read_svmlight(path, dtype=np.float32)
    assert X.dtype == np.float32
    X, _ = read_svmlight(path, n_features=2**31)
    assert X.shape == (1, 2**31) and X.indices.dtype == np.int64


@pytest.mark.parametrize(
    "labels, dtype, expected",
    [
        (["1", "-1", "+1"], np.int64, [1, -1, 1]),
        (["0.5", "2", "-1e3"], np.float64, [0.5, 2.0, -1000.0]),
        (["cat", "2", "dog_1"], object, ["cat", "2", "dog_1"]),
        (["1,2", "3"], object, ["1,2", "3"]),   # multi-label lists stay strings
        (["1_0", "2"], object, ["1_0", "2"]),   # int() would accept "1_0"; we do not
        (["99999999999999999999", "1"], np.float64, [1e20, 1.0]),  # beyond int64
    ],
)
def test_label_types(tmp_path, labels, dtype, expected):
    path = write(tmp_path, "".join(f"{label} 1:1\n" for label in labels))
    _, y = read_svmlight(path)
    assert y.dtype == dtype
    assert list(y) == expected


@pytest.mark.parametrize("label", ["1,2", "2,-1.5", "0,1,7"])
def test_multi_label_lines_can_be_refused(tmp_path, label):
    path = write(tmp_path, f"1 1:1\n\n{label} 1:1\n3 2:1\n")
    assert list(read_svmlight(path)[1]) == ["1", label, "3"]
    with pytest.raises(DataFormatError, match=at(path, 3, "multi-label")):
        read_svmlight(path, multi_label=False)
    assert list(read_svmlight(write(tmp_path, "a,b 1:1\n", name="s.svm"), multi_label=False)[1]) == ["a,b"]


def test_shared_data_dir_env_override(monkeypatch, tmp_path):
    monkeypatch.setenv("LOGLIN_DATA", str(tmp_path))
    assert shared_data_dir() == tmp_path
    monkeypatch.setenv("LOGLIN_DATA", str(tmp_path / "missing"))
    assert shared_data_dir() is None


def test_invalid_arguments(tmp_path):
    path = write(tmp_path, "1 1:1\n")
    with pytest.raises(InvalidInputError):
        read_svmlight(path, n_features=-1)
    with pytest.raises(FileNotFoundError):
        read_svmlight(tmp_path / "missing.svm")


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("1 3", "missing ':'"),
        ("1 a:1", "integer feature index"),
        ("1 :1", "integer feature index"),
        ("1 1.5:1", "integer feature index"),
        ("1 1_0:1", "integer feature index"),
        ("1 3:x", "numeric value"),
        ("1 3:", "numeric value"),
        ("1 3:1:2", "numeric value"),
        ("1 3:1_0", "numeric value"),
        ("1 3:nan", "finite value"),
        ("1 3:inf", "finite value"),
        ("1 3:-Infinity", "finite value"),
        ("1 2:1 2:5", "at most once"),
        ("1 4:1 2:1 4:5", "at most once"),
        ("1 0:1", r"index >= 1.*zero_based=True"),
        ("1 -3:1", "index >= 1"),
        ("1 qid:x 1:1", "qid"),
        ("3:1 4:1", "label before the features"),
        ("qid:1 4:1", "label before the features"),
        ("nan 1:1", "finite numeric label"),
        (b"1 3:\xff", "numeric value"),
        (b"\xe9t\xe9 1:1", "UTF-8 label"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, bad_line, message):
    # good lines, a comment and a blank line first: the bad line is line 5
    bad = bad_line if isinstance(bad_line, bytes) else bad_line.encode()
    path = write(tmp_path, b"1 1:1\n# comment\n\n2 2:2\n" + bad + b"\n3 1:1\n")
    with pytest.raises(DataFormatError, match=at(path, 5, message)):
        read_svmlight(path)


def test_index_beyond_n_features(tmp_path):
    path = write(tmp_path, "1 1:1\n1 2:1 9:1\n")
    with pytest.raises(DataFormatError, match=at(path, 2, r"<= 4 \(n_features=4\), got 9")):
        read_svmlight(path, n_features=4)
    with pytest.raises(DataFormatError, match=at(path, 2, "<= 3")):
        read_svmlight(path, n_features=4, zero_based=True)


def test_index_zero_zero_based_negative(tmp_path):
    path = write(tmp_path, "1 0:1\n1 -1:1\n")
    with pytest.raises(DataFormatError, match=at(path, 2, "index >= 0, got -1")):
        read_svmlight(path, zero_based=True)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_corrupt_compressed_file(tmp_path, suffix):
    path = write(tmp_path, b"this is not compressed data at all\n", name="bad" + suffix)
    with pytest.raises(DataFormatError, match=re.escape(str(path)) + ".*compressed"):
        read_svmlight(path)


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("suffix, opener", [("", open), (".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_round_trip_compressed(tmp_path, suffix, opener):
    rng = np.random.default_rng(0)
    X = sp.random(40, 30, density=0.2, format="csr", random_state=1)
    X.data = rng.normal(size=X.nnz) * 10.0 ** rng.integers(-20, 20, size=X.nnz)
    y = rng.integers(-3, 3, size=40)
    path = tmp_path / ("rt.svm" + suffix)
    write_svmlight(path, X, y)
    with opener(path, "rb") as f:       # the file really is compressed
        assert f.read().startswith(str(y[0]).encode())
    X2, y2 = read_svmlight(path, n_features=30)
    assert (X2 != X).nnz == 0            # exact: repr precision
    np.testing.assert_array_equal(y2, y)


def test_round_trip_dense_floats_strings_zero_based(tmp_path):
    X = np.array([[0.0, 1 / 3, 0.0], [2.0, 0.0, -1e-300], [0.0, 0.0, 0.0]])
    path = tmp_path / "dense.svm"
    write_svmlight(path, X, np.array([0.5, -2.25, 3.0]))
    X2, y2 = read_svmlight(path, n_features=3)
    np.testing.assert_array_equal(X2.toarray(), X)
    assert y2.dtype == np.float64 and list(y2) == [0.5, -2.25, 3.0]
    assert path.read_text().splitlines()[0] == "0.5 2:0.3333333333333333"

    write_svmlight(path, X, ["a", "b", "c"], zero_based=True)
    assert path.read_text().splitlines()[1] == "b 0:2 2:-1e-300"
    X2, y2 = read_svmlight(path, zero_based=True, n_features=3)
    np.testing.assert_array_equal(X2.toarray(), X)
    assert list(y2) == ["a", "b", "c"]


def test_write_skips_explicit_zeros(tmp_path):
    X = sp.csr_matrix((np.array([0.0, 5.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
    write_svmlight(tmp_path / "z.svm", X, [1])
    assert (tmp_path / "z.svm").read_text() == "1 2:5\n"


@pytest.mark.parametrize(
    "X, y",
    [
        (np.eye(2), [1]),                     # wrong number of labels
        (np.eye(2), ["a b", "c"]),            # whitespace in label
        (np.eye(2), ["a#", "c"]),             # comment char in label
        (np.eye(2), ["a:b", "c"]),            # would read back as a feature
        (np.eye(2), ["", "c"]),               # empty label
        (np.eye(2), [np.nan, 1.0]),           # non-finite label
        (np.eye(2), [True, False]),           # ambiguous label
        (np.array([[np.inf, 0], [0, 1]]), [1, 2]),
    ],
)
def test_write_rejects_bad_input(tmp_path, X, y):
    with pytest.raises(InvalidInputError):
        write_svmlight(tmp_path / "bad.svm", X, y)


# ---------------------------------------------------------------- real data


def test_a9a_matches_published_statistics():
    X, y = read_svmlight(data_file("a9a", "a9a"))
    assert X.shape == (32561, 123)
    assert X.nnz == 451592
    assert set(np.unique(X.data)) == {1.0}
    assert y.dtype == np.int64 and set(np.unique(y)) == {-1, 1}
    Xt, yt = read_svmlight(data_file("a9a", "a9a.t"), n_features=123)
    assert Xt.shape == (16281, 123)


def test_news20_bz2():
    X, y = read_svmlight(data_file("news20", "news20.bz2"))
    assert X.shape == (15935, 62061)
    assert X.nnz == 1272569
    assert len(np.unique(y)) == 20
    assert np.isfinite(X.data).all() and X.has_sorted_indices
