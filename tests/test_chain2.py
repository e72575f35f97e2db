"""The second-order chain structure against brute force, finite differences, and every structured solver.

It is defined in one file (loglin.structured.chain2) and trained by the solvers written for
first-order chains with no change to them: the structure contract is all they use.
"""
import itertools

import numpy as np
import pytest

import loglin.structured.cutting_plane  # noqa: F401  (register the chain solvers)
import loglin.structured.eg  # noqa: F401
import loglin.structured.sgd  # noqa: F401
from loglin.solvers.base import minimize
from loglin.structured import chain2
from loglin.structured.dual import PartDualState
from loglin.structured.chain2 import SecondOrderChainProblem
from test_structured import random_chain_problem


def labellings(n, K):
    return np.array(list(itertools.product(range(K), repeat=n)))


def brute_scores(U, E, T, ys):
    n = U.shape[0]
    sc = U[np.arange(n), ys].sum(axis=1)
    for t in range(1, n):
        sc += E[ys[:, t - 1], ys[:, t]]
    for t in range(2, n):
        sc += T[ys[:, t - 2], ys[:, t - 1], ys[:, t]]
    return sc


def run_inference(U, E, T):
    n, K = U.shape
    alpha, beta = np.empty((n, K, K)), np.empty((n, K, K))
    tmp = np.empty(K)
    log_z = chain2.forward2(U, n, E, T, alpha, tmp)
    chain2.backward2(U, n, E, T, beta, tmp)
    mu, edge, tri = np.empty((n, K)), np.empty((K, K)), np.empty((K, K, K))
    chain2.marginals2(U, n, E, T, alpha, beta, log_z, mu, edge, tri)
    labels = np.empty(n, dtype=np.int32)
    best = chain2.viterbi2(U, n, E, T, np.empty((n, K, K)), np.empty((n, K, K), dtype=np.int64), labels)
    return log_z, mu, edge, tri, labels, best


@pytest.mark.parametrize("n,K,scale,seed", [(1, 3, 1.0, 0), (2, 2, 1.0, 1), (3, 3, 2.0, 2), (4, 3, 1.0, 3),
                                            (5, 2, 1.0, 4), (4, 4, 30.0, 5)])
def test_log_partition_marginals_and_viterbi_match_enumeration(n, K, scale, seed):
    rng = np.random.default_rng(seed)
    U, E, T = (scale * rng.normal(size=shape) for shape in ((n, K), (K, K), (K, K, K)))
    ys = labellings(n, K)
    sc = brute_scores(U, E, T, ys)
    log_z = np.logaddexp.reduce(sc)
    p = np.exp(sc - log_z)
    mu, edge, tri = np.zeros((n, K)), np.zeros((K, K)), np.zeros((K, K, K))
    for py, y in zip(p, ys):
        mu[np.arange(n), y] += py
        for t in range(1, n):
            edge[y[t - 1], y[t]] += py
        for t in range(2, n):
            tri[y[t - 2], y[t - 1], y[t]] += py
    got_z, got_mu, got_edge, got_tri, labels, best = run_inference(U, E, T)
    assert got_z == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(got_mu, mu, atol=1e-12)
    np.testing.assert_allclose(got_edge, edge, atol=1e-12)
    np.testing.assert_allclose(got_tri, tri, atol=1e-12)
    assert best == pytest.approx(sc.max(), rel=1e-12)
    assert brute_scores(U, E, T, labels[None, :])[0] == pytest.approx(sc.max(), rel=1e-12)


def second_order(seed, n_sent=6, K=3, n_attr=8, max_len=4, weights=None):
    return SecondOrderChainProblem.from_chain(random_chain_problem(n_sent=n_sent, K=K, n_attr=n_attr,
                                                                   max_len=max_len, seed=seed, weights=weights))


def features(p, i, y):
    """f(x_i, y) as a dense vector, straight from the definition (state, bigram, trigram indicators)."""
    f = np.zeros(p.n_features)
    lo, K, o = p.seq_ptr[i], p.n_labels, p.n_state
    for t, lab in enumerate(y):
        for k in range(p.tok_ptr[lo + t], p.tok_ptr[lo + t + 1]):
            a = p.tok_attr[k]
            for j in range(p.map_ptr[a], p.map_ptr[a + 1]):
                if p.map_label[j] == lab:
                    f[p.map_feat[j]] += 1.0
        if t > 0:
            f[o + y[t - 1] * K + lab] += 1.0
        if t > 1:
            f[o + K * K + (y[t - 2] * K + y[t - 1]) * K + lab] += 1.0
    return f


def test_problem_losses_and_dual_match_enumeration():
    p = second_order(seed=1, weights=np.linspace(0.5, 2.0, 6))
    assert p.n_features == p.n_state + 9 + 27
    rng = np.random.default_rng(2)
    w = rng.normal(size=p.n_features)
    s = rng.normal(size=int(p.part_ptr[-1]))
    C = 0.7
    ll = mm = 0.0
    wu = {"ll": np.zeros(p.n_features), "mm": np.zeros(p.n_features)}
    terms = {"ll": 0.0, "mm": 0.0}
    emp = np.zeros(p.n_features)
    for i in range(p.n_sentences):
        lo, hi = p.seq_ptr[i], p.seq_ptr[i + 1]
        gold = p.gold[lo:hi]
        ys = labellings(hi - lo, p.n_labels)
        F = np.array([features(p, i, y) for y in ys])
        fg = features(p, i, gold)
        emp += p.weight[i] * fg
        scores, gs, loss = F @ w, fg @ w, (ys != gold).sum(axis=1)
        ll += p.weight[i] * (np.logaddexp.reduce(scores) - gs)
        mm += p.weight[i] * np.max(scores + loss - gs)
        # u_i = p(s_i): the part variables score a labelling like a weight vector scores its features
        block = s[p.part_ptr[i]:p.part_ptr[i + 1]]
        su = np.array([_part_score(block, y, p.n_labels) for y in ys])
        u = np.exp(su - np.logaddexp.reduce(su))
        for loss_name in ("ll", "mm"):
            wu[loss_name] += p.weight[i] * (fg - u @ F)
            terms[loss_name] += p.weight[i] * (u @ np.log(u) if loss_name == "ll" else -(u @ loss))
    np.testing.assert_allclose(p.emp, emp, atol=1e-12)
    assert p.objective(C).fun(w) == pytest.approx(0.5 * w @ w + C * ll, rel=1e-12)
    assert p.objective(C, "mm").fun(w) == pytest.approx(0.5 * w @ w + C * mm, rel=1e-12)
    for loss_name in ("ll", "mm"):
        state = PartDualState(p, loss_name, s=s)
        np.testing.assert_allclose(state.wu, wu[loss_name], atol=1e-10)
        assert state.Q(C) == pytest.approx(terms[loss_name] + 0.5 * C * wu[loss_name] @ wu[loss_name], rel=1e-10)


def _part_score(block, y, K):
    n = len(y)
    U, E, T = block[:n * K].reshape(n, K), block[n * K:n * K + K * K].reshape(K, K), block[n * K + K * K:]
    return brute_scores(U, E, T.reshape(K, K, K), np.asarray(y)[None, :])[0]


def test_gradient_matches_finite_differences():
    p = second_order(seed=3)
    obj = p.objective(1.3)
    w = np.random.default_rng(4).normal(size=p.n_features)
    _, g = obj.fun_grad(w)
    h = 1e-6
    fd = np.array([(obj.fun(w + h * e) - obj.fun(w - h * e)) / (2 * h) for e in np.eye(p.n_features)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


def test_every_crf_solver_reaches_the_lbfgs_optimum(serial_numba):
    p = second_order(seed=7, n_sent=30, K=3, n_attr=12, max_len=5)
    obj = p.objective(1.0)
    ref = minimize(obj, "lbfgs", tol=1e-10, max_iter=3000)
    online = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-9, max_iter=600, random_state=0)
    batch = minimize(obj, "chain-eg-batch", tol=0.0, gap_tol=1e-7, max_iter=3000)
    sgd = minimize(obj, "chain-sgd", tol=0.0, max_iter=300, random_state=3)
    assert online.f == pytest.approx(ref.f, rel=1e-6)
    last = online.trace.records[-1]
    assert abs(last["duality_gap"]) <= 1e-9 * abs(last["objective"])
    np.testing.assert_allclose(online.w, ref.w, atol=1e-3 * max(1.0, np.abs(ref.w).max()))
    assert batch.f == pytest.approx(ref.f, rel=1e-4)
    assert sgd.f == pytest.approx(ref.f, rel=2e-2)        # eta0 / (1 + k/n) closes the gap only like 1/k
    assert min(online.f, batch.f, sgd.f) >= ref.f - 1e-9 * abs(ref.f)


def test_eg_and_cutting_plane_agree_on_the_m3n_optimum(serial_numba):
    p = second_order(seed=10, n_sent=20, K=3, n_attr=10, max_len=4)
    obj = p.objective(0.5, "mm")
    cp = minimize(obj, "chain-cutting-plane", tol=0.0, max_iter=500)
    eg = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-4, max_iter=5000, random_state=2)
    batch = minimize(obj, "chain-eg-batch", tol=0.0, gap_tol=1e-3, max_iter=5000)
    lower = max(cp.trace.records[-1]["dual_objective"], eg.trace.records[-1]["dual_objective"])
    assert cp.f >= lower - 1e-9 and eg.f >= lower - 1e-9 and batch.f >= lower - 1e-9
    assert cp.f == pytest.approx(eg.f, rel=2e-4)
    last = eg.trace.records[-1]
    assert 0 <= last["duality_gap"] <= 1e-4 * abs(last["objective"])
    assert batch.f == pytest.approx(eg.f, rel=2e-3)
