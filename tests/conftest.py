"""Shared fixtures: small random problems and the location of the real data."""
import os
import re

import numba
import numpy as np
import pytest
import scipy.sparse as sp

os.environ.setdefault("NUMBA_NUM_THREADS", "2")


def random_sparse(n, d, density, seed, nonneg=True, binary=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    if binary:
        X.data[:] = 1.0
    elif not nonneg:
        X.data = rng.normal(size=X.nnz)
    return X


@pytest.fixture
def small_multiclass():
    X = random_sparse(120, 25, 0.25, seed=3)
    y = np.random.default_rng(4).choice(["DT", "NN", "VB", "JJ"], size=120)
    return X, y


@pytest.fixture
def small_binary():
    X = random_sparse(150, 20, 0.3, seed=5, nonneg=False)
    w = np.random.default_rng(6).normal(size=20)
    y = np.where(X @ w + 0.3 * np.random.default_rng(7).normal(size=150) > 0, 1, -1)
    return X, y


@pytest.fixture(scope="module")
def serial_numba():
    """Tiny problems: on a loaded machine, waking the thread pool for every
    objective evaluation (the driver evaluates each iterate) costs far more than the work."""
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(before)


def random_binary_lr(seed=0, l=80, n=10, C=1.0, noise=0.7, **kw):
    """A noisy linearly generated binary LR problem (dense Gaussian features)."""
    from loglin.binary import binary_problem
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, n))
    y = np.where(X @ rng.normal(size=n) + noise * rng.normal(size=l) > 0, 1, -1)
    return binary_problem(X, y, C, **kw)


def shared_feature_maxent(seed=1, contexts=50, predicates=12):
    """Real-valued Maxent data where one feature is shared by two labels of a predicate,
    so the label-orthogonality property (48) of Yu et al. does not hold."""
    from loglin.problem import MaxentProblem, problem_from_matrix
    rng = np.random.default_rng(seed)
    X = sp.random(contexts, predicates, density=0.35, random_state=seed, format="csr")
    X.data[:] = rng.normal(size=X.nnz)
    q = problem_from_matrix(X, rng.integers(0, 3, size=contexts), all_pairs=True)
    feat = q.map_feat.copy()
    for p in range(0, q.n_predicates, 2):
        feat[q.map_ptr[p] + 1] = feat[q.map_ptr[p]]
    return MaxentProblem(ctx_ptr=q.ctx_ptr, ctx_pred=q.ctx_pred, ctx_val=q.ctx_val, map_ptr=q.map_ptr,
                         map_label=q.map_label, map_feat=feat, ctx_count=q.ctx_count, obs_ptr=q.obs_ptr,
                         obs_label=q.obs_label, obs_count=q.obs_count, n_features=q.n_features, labels=q.labels)


def a9a_rows(rows):
    """The first ``rows`` instances of the shared a9a training file (skips without the data)."""
    from loglin.data import read_svmlight, shared_data_dir
    root = shared_data_dir()
    path = None if root is None else root / "a9a" / "a9a"
    if path is None or not path.exists():
        pytest.skip("shared a9a data not available")
    X, y = read_svmlight(path, n_features=123)
    return X[:rows], y[:rows]


def data_file(*parts):
    """A file under the shared data directory (skips the test without it)."""
    from loglin.data import shared_data_dir
    root = shared_data_dir()
    path = root.joinpath(*parts) if root is not None else None
    if path is None or not path.exists():
        pytest.skip("shared data not available (set LOGLIN_DATA)")
    return path


def at(path, line, message=""):
    """Regex for a DataFormatError message: 'path:line: ...message...'."""
    return re.escape(f"{path}:{line}: ") + ".*" + message


def write(tmp_path, text, name="data.txt"):
    """Write text (or bytes) to tmp_path/name and return the path."""
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path
