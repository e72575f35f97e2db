"""Dual objectives, w(alpha) and the duality gap (loglin.duality), against independent computations."""
import functools

import numpy as np
import pytest
import scipy.sparse as sp

from loglin import duality
from loglin.errors import InvalidInputError
from loglin.problem import problem_from_matrix
from loglin.solvers import minimize
import conftest
from conftest import random_binary_lr


pytestmark = pytest.mark.usefixtures("serial_numba")


random_binary = functools.partial(random_binary_lr, l=60, n=8, C=2.0, noise=0.5)


def merged_maxent(seed=0, contexts=40, preds=12, labels=4):
    """Contexts repeated with different labels, so c(x, y) spreads over several labels."""
    rng = np.random.default_rng(seed)
    X = sp.random(contexts, preds, density=0.3, random_state=seed, format="csr")
    X.data[:] = rng.normal(size=X.nnz)
    y = rng.integers(0, labels, size=contexts)
    X = sp.vstack([X, X[:15], X[:8]]).tocsr()
    y = np.concatenate([y, rng.integers(0, labels, 15), rng.integers(0, labels, 8)])
    w = rng.uniform(0.5, 2.0, size=X.shape[0])
    return problem_from_matrix(X, y, sample_weight=w, all_pairs=True)


def shared_feature_maxent(seed=1):
    """A predicate map where labels 0 and 1 share a feature, so (48) fails."""
    return conftest.shared_feature_maxent(seed, contexts=40, predicates=10)


def dense_features(problem):
    """F[x, y, t] = f_t(x, y) by brute force from the map definition."""
    F = np.zeros((problem.n_contexts, problem.n_labels, problem.n_features))
    phi = problem.context_matrix().toarray()
    for p in range(problem.n_predicates):
        for j in range(problem.map_ptr[p], problem.map_ptr[p + 1]):
            F[:, problem.map_label[j], problem.map_feat[j]] += phi[:, p]
    return F


def brute_maxent_dual(problem, C, beta):
    """D(beta) of the duality module docstring, written out with dense arrays."""
    F = dense_features(problem)
    cxy = np.zeros((problem.n_contexts, problem.n_labels))
    for x in range(problem.n_contexts):
        for o in range(problem.obs_ptr[x], problem.obs_ptr[x + 1]):
            cxy[x, problem.obs_label[o]] += problem.obs_count[o]
    w = np.einsum("xy,xyt->t", C * cxy - beta, F)
    total = C * problem.ctx_count[:, None]
    ent = -np.sum(beta * np.log(beta / total))
    return -0.5 * w @ w + ent, w


def tron(objective):
    return minimize(objective, "tron", tol=1e-12, max_iter=500)


# ---------------------------------------------------------------- LR
def test_lr_weak_duality_for_random_feasible_points():
    p = random_binary()
    obj = p.objective()
    rng = np.random.default_rng(3)
    for _ in range(5):
        alpha = p.cost * rng.uniform(0.01, 0.99, size=len(p.cost))
        w = duality.lr_w_of_alpha(p, alpha)
        assert np.allclose(w, p.X.T @ (p.y * alpha))
        D = duality.lr_dual_objective(p, alpha)
        for cand in (w, np.zeros(p.n_features), rng.normal(size=p.n_features)):
            assert obj.fun(cand) >= D - 1e-9 * abs(D)


def test_lr_no_gap_at_the_primal_optimum_with_instance_weights():
    rng = np.random.default_rng(1)
    p = random_binary(sample_weight=rng.uniform(0.2, 3.0, size=60), class_weight={1: 2.0, -1: 0.5})
    obj = p.objective()
    res = tron(obj)
    alpha, alpha_c = duality.lr_alpha_from_w(p, res.w)
    assert np.allclose(alpha + alpha_c, p.cost)
    # stationarity: w* = sum_i y_i alpha_i x_i (the optimality condition of the dual)
    assert np.allclose(duality.lr_w_of_alpha(p, alpha), res.w, atol=1e-8)
    gap, rel = duality.duality_gap(obj, res.w, duality.lr_dual_objective(p, alpha, alpha_c))
    assert abs(rel) < 1e-10


def test_lr_dual_equals_papers_D_LR_up_to_constant():
    """Our D = sum C_i log C_i - D^LR of the paper's eq. (3)."""
    p = random_binary(C=3.0)
    alpha = p.cost * np.random.default_rng(5).uniform(0.05, 0.95, size=len(p.cost))
    X, y, C = p.X.toarray(), p.y, p.cost
    Q = (y[:, None] * X) @ (y[:, None] * X).T
    d_lr = 0.5 * alpha @ Q @ alpha + np.sum(alpha * np.log(alpha) + (C - alpha) * np.log(C - alpha))
    assert np.isclose(duality.lr_dual_objective(p, alpha), np.sum(C * np.log(C)) - d_lr, rtol=1e-12)


def test_lr_initial_alpha_is_eq_36():
    alpha, alpha_c = duality.lr_initial_alpha(np.array([1e-7, 1.0, 1e5]))
    assert np.allclose(alpha, [1e-10, 1e-8, 1e-8])
    assert np.all(alpha_c > 0) and np.allclose(alpha + alpha_c, [1e-7, 1.0, 1e5])


# ---------------------------------------------------------------- Maxent
@pytest.mark.parametrize("builder", [merged_maxent, shared_feature_maxent])
def test_maxent_dual_matches_brute_force(builder):
    p = builder()
    C = 1.7
    beta = duality.maxent_initial_beta(p, C)
    rng = np.random.default_rng(2)
    beta = beta * rng.uniform(0.5, 1.5, size=beta.shape)
    beta *= (C * p.ctx_count / beta.sum(axis=1))[:, None]
    D_brute, w_brute = brute_maxent_dual(p, C, beta)
    assert np.allclose(duality.maxent_w_of_beta(p, C, beta), w_brute, atol=1e-10)
    assert np.isclose(duality.maxent_dual_objective(p, C, beta), D_brute, rtol=1e-12)
    obj = p.objective(C)
    assert obj.fun(w_brute) >= D_brute


@pytest.mark.parametrize("builder", [merged_maxent, shared_feature_maxent])
def test_maxent_no_gap_at_the_primal_optimum(builder):
    """beta = C c(x) P_w*(y|x) closes the gap, also with merged contexts of several labels."""
    p = builder()
    obj = p.objective(2.0)
    res = tron(obj)
    beta = duality.maxent_beta_from_w(p, 2.0, res.w)
    assert np.allclose(beta.sum(axis=1), 2.0 * p.ctx_count)
    assert np.allclose(duality.maxent_w_of_beta(p, 2.0, beta), res.w, atol=1e-7)
    gap, rel = duality.duality_gap(obj, res.w, duality.maxent_dual_objective(p, 2.0, beta))
    assert abs(rel) < 1e-10


def test_maxent_initial_beta_is_eq_51():
    p = merged_maxent()
    C, eps = 3.0, 1e-10
    beta = duality.maxent_initial_beta(p, C, eps)
    assert np.all(beta > 0)
    assert np.allclose(beta.sum(axis=1), C * p.ctx_count)
    for x in range(p.n_contexts):
        seen = {}
        for o in range(p.obs_ptr[x], p.obs_ptr[x + 1]):
            seen[p.obs_label[o]] = seen.get(p.obs_label[o], 0.0) + p.obs_count[o]
        unseen = p.n_labels - len(seen)
        for y in range(p.n_labels):
            if y in seen:
                expect = C * seen[y] * (1 - eps if unseen else 1.0)
            else:
                expect = eps * C * p.ctx_count[x] / unseen
            assert np.isclose(beta[x, y], expect, rtol=1e-12)


def test_label_orthogonal_against_brute_force():
    for p, expected in ((merged_maxent(), True), (shared_feature_maxent(), False)):
        F = dense_features(p)
        K = np.einsum("xyt,xzt->xyz", F, F)
        off = K - np.einsum("xyy->xy", K)[:, :, None] * np.eye(p.n_labels)
        assert (np.abs(off).max() == 0) == expected
        assert duality.label_orthogonal(p) == expected
    assert duality.single_entry_features(merged_maxent())
    assert not duality.single_entry_features(shared_feature_maxent())


def test_unregularized_bias_is_refused_with_a_clear_message():
    p = random_binary(bias=1.0, regularize_bias=False)
    with pytest.raises(InvalidInputError, match="tron"):
        duality.require_regularized(p.objective(), "cddual")
    duality.require_regularized(random_binary(bias=1.0).objective(), "cddual")   # regularized bias is fine
