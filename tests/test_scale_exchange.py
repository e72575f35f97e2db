"""Sparse exchange: Maxent shards that read a small share of w send and receive only those coordinates, with
bitwise the iterates of whole vectors."""
import warnings

import numpy as np
import pytest

from loglin.problem import problem_from_matrix
from loglin.scale import sharded
from loglin.scale.shards import ShardPart, shard_arrays, shard_bounds
from loglin.solvers.base import minimize
from conftest import gumbel_multiclass


@pytest.fixture(scope="module")
def problem():
    return problem_from_matrix(*gumbel_multiclass(400, 300, 0.01, classes=4, seed=4), all_pairs=False)


def test_a_shard_reads_only_its_touched_coordinates(problem):
    bounds = shard_bounds(problem, 3)
    part = ShardPart("maxent", shard_arrays(problem, bounds[1], bounds[2])[1], 2.0)
    idx = part.touched_coordinates()
    assert 0 < len(idx) < problem.n_features
    rng = np.random.default_rng(1)
    w = rng.normal(size=problem.n_features)
    f, g = part.fun_grad(w, False)
    assert np.all(g[np.setdiff1d(np.arange(problem.n_features), idx)] == 0.0)
    w_other = w.copy()
    w_other[np.setdiff1d(np.arange(problem.n_features), idx)] = rng.normal(size=problem.n_features - len(idx))
    assert part.fun(w_other) == f                       # the others do not enter the loss
    f_t, g_t = part.fun_grad_touched(w[idx], False)
    assert f_t == f and np.array_equal(g_t, g[idx])
    v = rng.normal(size=problem.n_features)
    part.fun_grad(w, True)
    part.accept()
    assert np.array_equal(part.hess_vec_touched(v[idx]), part.hess_vec(v)[idx])
    assert np.array_equal(part.hess_diag_touched(), part.hess_diag()[idx])


def _runs(problem, backend, solver):
    out = []
    for share in (0.0, 1.0):
        with sharded(problem, 2.0, 3, backend, sparse_share=share) as objective:
            assert (objective.touched is None) == (share == 0.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(minimize(objective, solver, tol=0, max_iter=12, warn=False))
    return out


@pytest.mark.parametrize("solver", ["lbfgs", "tron"])
def test_sparse_exchange_gives_the_dense_iterates(problem, solver):
    dense, sparse = _runs(problem, "inprocess", solver)
    assert np.array_equal(dense.w, sparse.w) and dense.f == sparse.f
    assert [r["objective"] for r in dense.trace.records] == [r["objective"] for r in sparse.trace.records]


def test_sparse_share_threshold(problem):
    with sharded(problem, 2.0, 3, "inprocess", sparse_share=1e-6) as objective:
        assert objective.touched is None         # no shard reads so little: whole vectors


def test_sparse_exchange_on_dask(problem, client):
    dense, sparse = _runs(problem, client, "tron")
    local = _runs(problem, "inprocess", "tron")[1]
    assert np.array_equal(dense.w, sparse.w) and np.array_equal(sparse.w, local.w)


def test_tree_sum_order():
    from loglin.scale.backends import tree_pairs, tree_sum
    assert tree_pairs(5) == [[(0, 1), (2, 3), (4, None)], [(0, 1), (2, None)], [(0, 1)]]
    parts = [1e16, 1.0, -1e16, 1.0, 3.0]
    assert tree_sum(parts) == ((parts[0] + parts[1]) + (parts[2] + parts[3])) + parts[4]
    pairs = [(float(i), np.full(2, i + 0.5)) for i in range(3)]
    f, g = tree_sum(pairs)
    assert f == 3.0 and np.array_equal(g, np.full(2, 4.5))


def _tree_runs(problem, backend, solver, shards=3):
    with sharded(problem, 2.0, shards, backend, reduction="tree") as objective:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return minimize(objective, solver, tol=0, max_iter=12, warn=False)


@pytest.mark.parametrize("solver", ["lbfgs", "tron"])
def test_tree_reduction_on_dask_gives_the_in_process_tree_bitwise(problem, client, solver):
    local = _tree_runs(problem, "inprocess", solver)
    dask = _tree_runs(problem, client, solver)
    assert np.array_equal(local.w, dask.w) and local.f == dask.f
    gather = _runs(problem, "inprocess", solver)[0]          # another summation order: equal to rounding
    assert np.linalg.norm(local.w - gather.w) <= 1e-10 * np.linalg.norm(gather.w)
