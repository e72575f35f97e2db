"""Shared fixtures: small random problems and the location of the real data."""
import os
import re

import numba
import numpy as np
import pytest
import scipy.sparse as sp

os.environ.setdefault("NUMBA_NUM_THREADS", "2")


# ---------------------------------------------------------------- missing data sets become skips
# A test (or fixture, or the experiment it calls) that needs a data set this machine does not have
# raises loglin.errors.DataUnavailable; these hooks report it as a skip naming the missing path.
# Tests that go through the CLI (which prints the error and exits 2) declare their data up front:
# @pytest.mark.needs_data("a9a", "a9a").

def _data_unavailable_is_a_skip(outcome):
    from loglin.errors import DataUnavailable
    if isinstance(outcome.exception, DataUnavailable):
        outcome.force_exception(pytest.skip.Exception(str(outcome.exception), _use_item_location=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    from loglin.data import require_shared
    outcome = yield
    if outcome.exception is None:
        try:
            for mark in item.iter_markers("needs_data"):
                require_shared(*mark.args)
        except Exception as exc:  # noqa: BLE001  (only DataUnavailable becomes a skip, below)
            outcome.force_exception(exc)
    _data_unavailable_is_a_skip(outcome)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    outcome = yield
    _data_unavailable_is_a_skip(outcome)


# a few CoNLL-2000-style chunked sentences (word, POS, chunk) for small chain problems
CHUNK_SENTENCES = [
    [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"), ("deficit", "NN", "I-NP")],
    [("The", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("runs", "VBZ", "B-VP"), ("fast", "RB", "B-ADVP")],
    [("A", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sleeps", "VBZ", "B-VP")],
    [("Prices", "NNS", "B-NP"), ("rose", "VBD", "B-VP"), ("in", "IN", "B-PP"), ("March", "NNP", "B-NP"),
     ("again", "RB", "B-ADVP")],
    [("It", "PRP", "B-NP"), ("was", "VBD", "B-VP"), ("the", "DT", "B-NP"), ("best", "JJS", "I-NP"),
     ("year", "NN", "I-NP")],
    [("The", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("was", "VBD", "B-VP"), ("fast", "RB", "B-ADVP")],
]


def random_sparse(n, d, density, seed, nonneg=True, binary=False):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr")
    if binary:
        X.data[:] = 1.0
    elif not nonneg:
        X.data = rng.normal(size=X.nnz)
    return X


def gumbel_multiclass(n, d, density, classes=3, seed=0):
    """(X, y): sparse positive features, labels from a random linear model with Gumbel noise."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=seed, format="csr")
    X.data = rng.uniform(0.2, 2.0, len(X.data))
    truth = rng.normal(size=(d, classes))
    y = np.argmax(X @ truth + rng.gumbel(size=(n, classes)), axis=1)
    return X, y


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
    from loglin.data import read_svmlight, require_shared
    X, y = read_svmlight(require_shared("a9a", "a9a"), n_features=123)
    return X[:rows], y[:rows]


def data_file(*parts):
    """A file under the shared data directory (skips the test without it)."""
    from loglin.data import require_shared
    return require_shared(*parts)


def at(path, line, message=""):
    """Regex for a DataFormatError message: 'path:line: ...message...'."""
    return re.escape(f"{path}:{line}: ") + ".*" + message


def write(tmp_path, text, name="data.txt"):
    """Write text (or bytes) to tmp_path/name and return the path."""
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.fixture(scope="module")
def client():
    """A 2-worker Dask LocalCluster (one thread, one process each) for the scale-out tests of one module."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        yield c
