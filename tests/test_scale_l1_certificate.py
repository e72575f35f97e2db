"""The pure-L1 duality gap of sharded CRF chains and parsers (docs/decisions/0051): each shard returns its part of
the dual terms, the driver joins them in shard order, so the sharded bound is the one-process bound of
loglin.structured.l1_dual, a sharded OWL-QN run converges on the same gap test as one process and reaches the
independent optimum (SciPy's L-BFGS-B on the split formulation), and a run that cannot certify warns."""
import warnings

import numpy as np
import pytest

from loglin import training
from loglin.errors import ConvergenceWarning
from loglin.penalty import penalized
from loglin.scale import sharded
from test_l1_struct_certificate import _reference, problems

C = 2.0


@pytest.mark.parametrize("reduction", ["gather", "tree"])
@pytest.mark.parametrize("kind", ["chain", "tree"])
def test_the_sharded_bound_is_the_one_process_bound(kind, reduction, serial_numba):
    p = problems()[kind]                       # instance weights 1, 0, 2.5, 1, 0.5: a zero weight in a shard
    one = penalized(p.objective(C), "l1")
    rng = np.random.default_rng(3)
    for shards in (2, 3):
        with sharded(p, C, shards, "inprocess", reduction=reduction) as objective:
            F = penalized(objective, "l1")
            for w in (np.zeros(p.n_features), rng.normal(size=p.n_features)):
                f, g = F.fun_grad(w)                          # keeps the terms of this pass
                f_one, g_one = one.fun_grad(w)
                assert f == pytest.approx(f_one, rel=1e-12) and np.allclose(g, g_one, rtol=1e-10, atol=1e-12)
                kept, fresh = F.dual_bound(w), F.dual_bound(w + 0.5)      # the kept terms, then a fresh round
                assert kept == pytest.approx(one.dual_bound(w), rel=1e-10)
                assert fresh == pytest.approx(one.dual_bound(w + 0.5), rel=1e-10)
                assert kept <= f                                          # weak duality


@pytest.mark.parametrize("kind", ["chain", "tree"])
def test_a_sharded_l1_run_converges_on_the_gap_and_reaches_the_optimum(kind, serial_numba):
    tol = 1e-4
    problem, _, f_ref, _ = _reference(kind, 1.0, C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, one = training.train(problem, C, "owlqn", penalty="l1", tol=tol, max_iter=2000)
        _, two = training.train(problem, C, "owlqn", penalty="l1", tol=tol, max_iter=2000, shards=2)
    gap = two.trace.records[-1]["duality_gap"]
    assert gap is not None and two.converged and one.converged, (two.stop_reason, gap)
    assert gap <= tol * abs(two.f)
    assert two.f - f_ref <= tol * abs(two.f) and one.f - f_ref <= tol * abs(one.f)
    assert two.f == pytest.approx(one.f, rel=tol)
    # the certificate of one process at the sharded run's point says the same
    F = penalized(problem.objective(C), "l1")
    assert F.fun(two.w) - F.dual_bound(two.w) <= tol * abs(two.f)


def test_a_sharded_l1_run_that_cannot_certify_warns_with_its_gap(serial_numba):
    problem, _, _, _ = _reference("chain", 1.0, C)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, result = training.train(problem, C, "owlqn", penalty="l1", tol=1e-4, max_iter=3, shards=2)
    assert not result.converged and [w.category for w in caught] == [ConvergenceWarning]
    assert "relative duality gap" in result.advice and "gap_tol = 0.0001" in result.advice


def test_dask_shards_give_the_same_bound(serial_numba):
    distributed = pytest.importorskip("distributed")
    p = problems()["chain"]
    one = penalized(p.objective(C), "l1")
    w = np.random.default_rng(4).normal(size=p.n_features)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        with sharded(p, C, 2, client) as objective:
            F = penalized(objective, "l1")
            F.fun_grad(w)
            assert F.dual_bound(w) == pytest.approx(one.dual_bound(w), rel=1e-10)
            assert F.dual_bound(w - 0.3) == pytest.approx(one.dual_bound(w - 0.3), rel=1e-10)
