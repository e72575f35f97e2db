"""Shared fixtures: small random problems and the location of the real data."""
import os

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
