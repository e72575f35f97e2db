"""The sharded objective (loglin.scale): loss parts sum to the full objective; every backend, Dask
included, gives the same iterates for the same shards; 1, 2 and 3 shards reach the same optimum; a
lost worker and an unreachable scheduler give clear errors in bounded time."""
import os
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.errors import InvalidInputError
from loglin.problem import problem_from_matrix
from loglin.scale import SchedulerUnreachable, ShardError, shard_bounds, sharded
from loglin.solvers.base import minimize
from loglin.training import train

from conftest import gumbel_multiclass


def _data(n=500, d=30, classes=3, seed=0):
    return gumbel_multiclass(n, d, 0.15, classes, seed)


@pytest.fixture(scope="module")
def maxent():
    X, y = _data()
    return problem_from_matrix(X, y, all_pairs=True, bias=1.0, regularize_bias=False)


@pytest.fixture(scope="module")
def binary():
    X, y = _data(classes=2, seed=1)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    return binary_problem(X, y, 0.7, sample_weight=weights, bias=1.0)


def _full(problem, C):
    return problem.objective(C) if hasattr(problem, "ctx_ptr") else problem.objective()


@pytest.mark.parametrize("name", ["maxent", "binary"])
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_loss_parts_sum_to_the_full_objective(request, name, shards):
    problem = request.getfixturevalue(name)
    full = _full(problem, 2.0)
    rng = np.random.default_rng(3)
    w, v = 0.3 * rng.normal(size=full.n), rng.normal(size=full.n)
    with sharded(problem, 2.0, shards) as objective:
        assert objective.n_shards == shards and objective.kind == full.kind
        f, g = full.fun_grad(w)
        fs, gs = objective.fun_grad(w)
        assert fs == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(gs, g, rtol=0, atol=1e-12 * np.abs(g).max())
        assert objective.fun(w) == pytest.approx(full.fun(w), rel=1e-12)
        full.accept()
        objective.accept()
        hv, hvs = full.hess_vec(v), objective.hess_vec(v)
        np.testing.assert_allclose(hvs, hv, rtol=0, atol=1e-12 * np.abs(hv).max())
        np.testing.assert_allclose(objective.hess_diag(), full.hess_diag(), rtol=1e-12)


def test_shard_bounds_balance_nonzeros_and_keep_every_shard_non_empty(maxent):
    bounds = shard_bounds(maxent, 3)
    assert bounds[0] == 0 and bounds[-1] == maxent.n_contexts and np.all(np.diff(bounds) >= 1)
    nnz = np.diff(maxent.ctx_ptr[bounds])
    assert nnz.max() - nnz.min() <= 2 * np.diff(maxent.ctx_ptr).max()
    tiny = problem_from_matrix(sp.identity(3, format="csr"), [0, 1, 0])
    assert list(shard_bounds(tiny, 3)) == [0, 1, 2, 3]
    with pytest.raises(InvalidInputError):
        shard_bounds(tiny, 4)


def _tight(problem, solver, **scale):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train(problem, 2.0, solver, tol=1e-11, max_iter=500, **scale)[1]


@pytest.mark.parametrize("name", ["maxent", "binary"])
def test_one_two_three_shards_reach_the_single_process_optimum(request, name):
    """TRON's weights agree to 1e-10; L-BFGS's line search tests f, which stops resolving w near
    sqrt(machine epsilon), so its optimum is checked by the objective, against TRON's."""
    problem = request.getfixturevalue(name)
    reference = _tight(problem, "tron")
    for shards in (1, 2, 3):
        tron = _tight(problem, "tron", shards=shards)
        assert np.linalg.norm(tron.w - reference.w) <= 1e-10 * np.linalg.norm(reference.w), shards
        lbfgs = _tight(problem, "lbfgs", shards=shards)
        assert lbfgs.f == pytest.approx(reference.f, rel=1e-10), shards
        assert np.linalg.norm(lbfgs.w - reference.w) <= 1e-6 * np.linalg.norm(reference.w), shards


def test_thread_backend_gives_the_in_process_iterates(maxent):
    runs = []
    for backend in ("inprocess", "threads"):
        with sharded(maxent, 2.0, 3, backend) as objective:
            runs.append(minimize(objective, "tron", tol=1e-8, warn=False))
    assert np.array_equal(runs[0].w, runs[1].w)
    assert [r["objective"] for r in runs[0].trace.records] == [r["objective"] for r in runs[1].trace.records]


def test_train_refuses_what_it_cannot_shard(maxent):
    with pytest.raises(InvalidInputError, match="solvers"):
        train(maxent, 1.0, "cd", shards=2)


# ------------------------------------------------------------------ Dask

distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize("name", ["maxent", "binary"])
@pytest.mark.parametrize("solver", ["tron", "lbfgs"])
def test_dask_gives_bitwise_the_in_process_iterates(request, client, name, solver):
    problem = request.getfixturevalue(name)
    runs = []
    for backend in ("inprocess", client):
        with sharded(problem, 2.0, 2, backend, timeout=60) if backend != "inprocess" else \
                sharded(problem, 2.0, 2) as objective:
            runs.append(minimize(objective, solver, tol=1e-9, warn=False))
    local, dask = runs
    assert local.iterations == dask.iterations > 2
    assert [r["objective"] for r in local.trace.records] == [r["objective"] for r in dask.trace.records]
    assert [r["grad_norm"] for r in local.trace.records] == [r["grad_norm"] for r in dask.trace.records]
    assert np.array_equal(local.w, dask.w)


def test_dask_shards_default_to_one_per_worker(client, maxent):
    with sharded(maxent, 1.0, backend=client) as objective:
        assert objective.n_shards == 2


def test_unreachable_scheduler_is_a_clear_error_before_any_work():
    from loglin.scale import DaskBackend
    started = time.monotonic()
    with pytest.raises(SchedulerUnreachable, match="127.0.0.1:9"):
        DaskBackend(address="tcp://127.0.0.1:9", connect_timeout=2)
    assert time.monotonic() - started < 30


def test_cli_workers_writes_the_single_process_model(tmp_path, maxent):
    from loglin.cli import main
    from loglin.data.svmlight import write_svmlight
    from loglin.model import LinearModel
    X, y = _data(n=300, seed=4)
    write_svmlight(tmp_path / "train.svm", X, y)
    common = ["train", str(tmp_path / "train.svm"), "-C", "2", "--tol", "1e-8", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "one.npz")]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--workers", "2"]) == 0
    one, two = LinearModel.load(tmp_path / "one.npz"), LinearModel.load(tmp_path / "two.npz")
    assert np.array_equal(one.labels, two.labels)
    assert np.linalg.norm(two.w - one.w) <= 1e-10 * np.linalg.norm(one.w)


def _exit_soon():
    """Kill this worker process a moment after answering (as a crash would, without a goodbye)."""
    import threading
    threading.Timer(0.2, os._exit, (1,)).start()


def test_a_killed_worker_is_a_clear_error_naming_the_shard_within_the_timeout(maxent):
    timeout = 5.0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        with sharded(maxent, 1.0, 2, c, timeout=timeout) as objective:
            w = np.zeros(objective.n)
            objective.fun_grad(w)
            victim = objective.backend.workers[1]
            c.run(_exit_soon, workers=[victim])
            started = time.monotonic()
            with pytest.raises(ShardError, match="shard 1") as caught:
                for _ in range(100):        # the first round may still be answered before the worker goes
                    objective.fun_grad(w)
                    time.sleep(0.05)
            assert caught.value.shard == 1 and victim in str(caught.value)
            assert time.monotonic() - started < timeout + 10


def test_a_killed_worker_in_a_reduction_tree_round_names_its_shard(maxent):
    """Three shards, the tree's root on shard 0's worker: the error names shard 1 and its (killed) worker."""
    timeout = 5.0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        with sharded(maxent, 1.0, 3, c, timeout=timeout, reduction="tree") as objective:
            w = np.zeros(objective.n)
            objective.fun_grad(w)
            victim = objective.backend.workers[1]
            assert objective.backend.workers[0] != victim and objective.backend.workers[2] != victim
            c.run(_exit_soon, workers=[victim])
            started = time.monotonic()
            with pytest.raises(ShardError, match="shard 1") as caught:
                for _ in range(100):        # the first round may still be answered before the worker goes
                    objective.fun_grad(w)
                    time.sleep(0.05)
            assert caught.value.shard == 1 and victim in str(caught.value) and "reduction tree" in str(caught.value)
            assert time.monotonic() - started < timeout + 10


def test_a_stuck_worker_in_a_reduction_tree_round_names_its_shard(maxent):
    import signal
    timeout = 3.0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        with sharded(maxent, 1.0, 3, c, timeout=timeout, reduction="tree") as objective:
            w = np.zeros(objective.n)
            objective.fun_grad(w)
            victim = objective.backend.workers[1]
            pid = c.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                with pytest.raises(ShardError, match="shard 1") as caught:
                    objective.fun_grad(w)
                assert caught.value.shard == 1 and victim in str(caught.value)
                assert time.monotonic() - started < timeout + 10
            finally:
                os.kill(pid, signal.SIGKILL)


def test_a_stuck_root_worker_in_a_reduction_tree_round_names_its_shard(maxent):
    """The round's data and the tree's root are on shard 0's worker: stopping it names shard 0, in time."""
    import signal
    timeout = 3.0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        with sharded(maxent, 1.0, 3, c, timeout=timeout, reduction="tree") as objective:
            w = np.zeros(objective.n)
            objective.fun_grad(w)
            victim = objective.backend.workers[0]
            pid = c.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                with pytest.raises(ShardError, match="shard 0") as caught:
                    objective.fun_grad(w)
                assert caught.value.shard == 0 and victim in str(caught.value)
                assert time.monotonic() - started < timeout + 10
            finally:
                os.kill(pid, signal.SIGKILL)


def test_a_stuck_worker_is_a_clear_error_after_the_timeout_never_a_hang(maxent):
    import signal
    timeout = 3.0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as c:
        with sharded(maxent, 1.0, 2, c, timeout=timeout) as objective:
            w = np.zeros(objective.n)
            objective.fun_grad(w)
            victim = objective.backend.workers[0]
            pid = c.run(os.getpid, workers=[victim])[victim]
            os.kill(pid, signal.SIGSTOP)            # alive to the scheduler, silent to the driver
            try:
                started = time.monotonic()
                with pytest.raises(ShardError, match="shard 0.*within") as caught:
                    objective.fun_grad(w)
                assert caught.value.shard == 0 and victim in str(caught.value)
                assert timeout - 0.5 <= time.monotonic() - started < timeout + 10
            finally:
                os.kill(pid, signal.SIGKILL)
