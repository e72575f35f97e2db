"""Multi-class classification as a structure (one node, K labels): its CRF and M3N optima, reached by the
structured solvers, equal the core Maxent model's optimum and the multi-class hinge's (independent code)."""
import numpy as np
import pytest

import loglin.structured.cutting_plane  # noqa: F401  (register the structured solvers)
import loglin.structured.eg  # noqa: F401
import loglin.structured.sgd  # noqa: F401
from loglin.problem import problem_from_matrix
from loglin.solvers.base import minimize
from loglin.structured.multiclass import MaxMarginObjective
from loglin.structured.node import NodeProblem


def data(seed, n=40, d=6, K=3):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d)) * (rng.random((n, d)) < 0.6)
    y = rng.integers(0, K, size=n)
    return X, y


def test_losses_and_gradient_match_definitions():
    X, y = data(0, n=12)
    p = NodeProblem.from_matrix(X, y)
    rng = np.random.default_rng(1)
    w = rng.normal(size=p.n_features)
    W = np.zeros((X.shape[1], 3))        # all pairs: the weight of (attribute a, label k), read off the map
    for a in range(X.shape[1]):
        for j in range(p.map_ptr[a], p.map_ptr[a + 1]):
            W[a, p.map_label[j]] = w[p.map_feat[j]]
    assert p.n_features == W.size
    scores = X @ W
    gold = scores[np.arange(len(y)), y]
    ll = np.sum(np.logaddexp.reduce(scores, axis=1) - gold)
    mm = np.sum(np.max(scores + (np.arange(3) != y[:, None]), axis=1) - gold)
    assert p.objective(0.6).fun(w) == pytest.approx(0.5 * w @ w + 0.6 * ll, rel=1e-12)
    assert p.objective(0.6, "mm").fun(w) == pytest.approx(0.5 * w @ w + 0.6 * mm, rel=1e-12)
    obj = p.objective(0.6)
    g = obj.fun_grad(w)[1]
    h = 1e-6
    fd = np.array([(obj.fun(w + h * e) - obj.fun(w - h * e)) / (2 * h) for e in np.eye(p.n_features)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_crf_solvers_reach_the_maxent_optimum(serial_numba):
    X, y = data(2)
    C = 1.5
    ref = minimize(problem_from_matrix(X, y).objective(C), "lbfgs", tol=1e-10, max_iter=2000)
    obj = NodeProblem.from_matrix(X, y).objective(C)
    for solver, options, rel in (("lbfgs", dict(tol=1e-10), 1e-9), ("chain-eg", dict(gap_tol=1e-9), 1e-7),
                                 ("chain-eg-batch", dict(gap_tol=1e-7), 1e-5), ("chain-sgd", {}, 2e-2)):
        res = minimize(obj, solver, max_iter=2000 if solver != "chain-sgd" else 300, random_state=0,
                       **({"tol": 0.0} | options))
        assert res.f == pytest.approx(ref.f, rel=rel), solver
        assert res.f >= ref.f - 1e-9 * ref.f


def test_m3n_solvers_reach_the_multiclass_hinge_optimum(serial_numba):
    X, y = data(3)
    C = 0.8
    ref = minimize(MaxMarginObjective(problem_from_matrix(X, y), C), "eg-mm", tol=0.0, gap_tol=1e-7,
                   max_iter=20000, random_state=0)
    obj = NodeProblem.from_matrix(X, y).objective(C, "mm")
    eg = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-6, max_iter=20000, random_state=0)
    cp = minimize(obj, "chain-cutting-plane", tol=0.0, max_iter=500)
    last = eg.trace.records[-1]
    assert 0 <= last["duality_gap"] <= 1e-6 * abs(last["objective"])
    assert eg.f == pytest.approx(ref.f, rel=1e-5)
    assert cp.f == pytest.approx(ref.f, rel=1e-4)


def test_each_structure_reports_its_own_kind():
    from loglin import solvers
    from loglin.errors import InvalidInputError
    from loglin.structured.chain2 import SecondOrderChainObjective
    X, y = data(4, n=10)
    obj = NodeProblem.from_matrix(X, y).objective(1.0)
    assert obj.kind == "node" and SecondOrderChainObjective.kind == "chain2"
    assert solvers.resolve("eg", obj).__name__ == "structured_eg"        # the structure-generic implementation
    with pytest.raises(InvalidInputError, match="does not serve node models"):
        solvers.resolve("tron", obj)
    assert "node" in solvers.TABLE["lbfgs"].kinds and "chain2" in solvers.TABLE["cutting-plane"].kinds


def test_maxent_events_as_nodes_keep_the_problem_and_its_counts():
    from loglin.structured.multiclass import multiclass_state, node_view
    X, y = data(5, n=30)
    X = np.vstack([X, X[:5]])                    # repeated contexts: several events per merged context
    y = np.concatenate([y, (y[:5] + 1) % 3])
    p = problem_from_matrix(X, y)
    view = node_view(p)
    assert view is node_view(p) and view.source is p
    assert view.n_sentences == len(p.obs_label) < len(y) + 1
    np.testing.assert_allclose(view.emp, p.emp, rtol=1e-12, atol=1e-12)
    st = multiclass_state(p, "mm")
    w = np.random.default_rng(0).normal(size=p.n_features)
    ref = NodeProblem.from_matrix(X, np.searchsorted(p.labels, y), n_labels=len(p.labels)).objective(0.7, "mm")
    assert MaxMarginObjective(p, 0.7).fun(w) == pytest.approx(ref.fun(w), rel=1e-12)
    assert st.problem is view
