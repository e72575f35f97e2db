"""Shared fixtures: small random problems and the location of the real data."""
import os

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
