"""eg-acc: EG passes on proximal-point problems with Nesterov momentum outside (solvers/accelerated.py)."""
import numpy as np
import pytest
import scipy.sparse as sp

from loglin.errors import InvalidInputError
from loglin.problem import problem_from_matrix
from loglin.solvers import minimize
from loglin.solvers.accelerated import default_kappa
from conftest import random_binary_lr, shared_feature_maxent
from test_eg import f_star, merged_maxent, rel

pytestmark = pytest.mark.usefixtures("serial_numba")


def all_pairs_maxent(seed=3, n=300, d=30, K=5):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    X.data[:] = 1.0
    y = (np.asarray(X[:, :K].argmax(axis=1)).ravel() + rng.integers(0, 2, n)) % K
    return problem_from_matrix(X, y, all_pairs=True)


@pytest.mark.parametrize("kind", ["all-pairs", "merged", "shared-feature", "binary"])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_eg_acc_reaches_the_tron_optimum(kind, C):
    """Every kind of problem (dense all-pairs kernel, map kernel, general K^i kernel, LR) ends at TRON's f*."""
    build = {"all-pairs": all_pairs_maxent, "merged": merged_maxent, "shared-feature": shared_feature_maxent}
    obj = random_binary_lr(C=C).objective() if kind == "binary" else build[kind]().objective(C)
    ref = f_star(obj)
    res = minimize(obj, "eg-acc", tol=1e-6, max_iter=3000, random_state=0)
    assert rel(res.f, ref) < 1e-9
    assert res.converged


@pytest.mark.parametrize("kind", ["maxent", "binary"])
def test_eg_acc_with_kappa_0_and_one_pass_is_eg_over_blocks(kind):
    """kappa = 0: no center, no momentum, C' = C; with one pass per iteration that is EG with order="blocks",
    step for step (same shuffle, same blocks, same rates), including EG's periodic recomputation of w."""
    obj = all_pairs_maxent().objective(2.0) if kind == "maxent" else random_binary_lr(C=2.0).objective()
    a = minimize(obj, "eg-acc", kappa=0.0, passes=1, tol=0, max_iter=25, random_state=4)
    b = minimize(obj, "eg", order="blocks", tol=0, max_iter=25, random_state=4)
    np.testing.assert_allclose(a.trace.column("objective"), b.trace.column("objective"), rtol=1e-12)
    assert all(r["momentum"] == 0.0 for r in a.trace.records[1:])


def test_eg_acc_needs_fewer_passes_than_eg_on_an_ill_conditioned_problem():
    """The point of the method: with C ||phi||^2 large, EG's tail is slow and the accelerated loop is not."""
    obj = all_pairs_maxent(n=400, d=60).objective(50.0)
    ref = f_star(obj)
    acc = minimize(obj, "eg-acc", tol=0, max_iter=60, random_state=0)          # 120 passes
    eg = minimize(obj, "eg", order="blocks", tol=0, max_iter=120, random_state=0)
    assert acc.trace.records[-1]["kappa"] > 1
    assert rel(acc.f, ref) < 1e-3 * rel(eg.f, ref)


def test_eg_acc_warm_starts_from_a_given_w():
    """A non-zero w0 is x_0 = y_0: the dual point is built from it and the first center is kappa/(1+kappa) w0,
    so the first iterate improves on w0 (from 0 the first iterate is worse than this w0)."""
    obj = merged_maxent().objective(5.0)
    ref = f_star(obj)
    w0 = minimize(obj, "lbfgs", tol=0, max_iter=5).w
    warm = minimize(obj, "eg-acc", w0=w0, tol=1e-6, max_iter=3000, random_state=1)
    cold = minimize(obj, "eg-acc", tol=1e-6, max_iter=3000, random_state=1)
    assert rel(warm.f, ref) < 1e-9
    assert warm.trace.records[1]["objective"] < obj.fun(w0) < cold.trace.records[1]["objective"]
    assert warm.iterations < cold.iterations
    assert all(r["passes"] == 2 for r in warm.trace.records[1:])


def test_default_kappa_follows_the_context_curvature():
    p = all_pairs_maxent()
    phi_sq = np.diff(p.ctx_ptr) * p.ctx_count              # 0/1 predicates: ||phi(x)||^2 c(x)
    assert default_kappa(p.objective(10.0), False) == pytest.approx(max(0.0, 10.0 * np.median(phi_sq) / 16 - 1))
    assert default_kappa(p.objective(1e-3), False) == 0.0  # well-conditioned: plain EG
    X = sp.vstack([sp.random(30, 8, density=0.5, random_state=2, format="csr"), sp.csr_matrix((2, 8))]).tocsr()
    empty_last = problem_from_matrix(X, np.arange(32) % 3, all_pairs=False)   # contexts without predicates
    assert np.diff(empty_last.ctx_ptr)[-1] == 0
    res = minimize(empty_last.objective(100.0), "eg-acc", tol=1e-6, max_iter=2000, random_state=0)
    assert res.converged and rel(res.f, f_star(empty_last.objective(100.0))) < 1e-9


def test_eg_acc_options_are_checked():
    obj = merged_maxent().objective(1.0)
    for bad in ({"kappa": -1.0}, {"kappa": float("nan")}, {"passes": 0}, {"eta": 0.0}, {"order": "random"}):
        with pytest.raises(InvalidInputError):
            minimize(obj, "eg-acc", max_iter=1, **bad)
    X = sp.random(40, 6, density=0.5, random_state=1, format="csr")
    free_bias = problem_from_matrix(X, np.arange(40) % 3, bias=1.0, regularize_bias=False).objective(1.0)
    with pytest.raises(InvalidInputError, match="eg-acc"):
        minimize(free_bias, "eg-acc")


def test_the_gradient_restart_rescues_too_much_momentum():
    """With kappa far above the default the momentum overshoots; the restart test (momentum against the proximal
    gradient kappa (y - x)) sets it to 0 at those iterations, and the run ends closer to f*."""
    obj = all_pairs_maxent(n=400, d=60).objective(5.0)
    ref = f_star(obj)
    on = minimize(obj, "eg-acc", kappa=200.0, tol=0, max_iter=40, random_state=0)
    off = minimize(obj, "eg-acc", kappa=200.0, restart=False, tol=0, max_iter=40, random_state=0)
    restarted = [r for r in on.trace.records[1:] if r["restart"]]
    assert restarted and all(r["momentum"] == 0.0 for r in restarted)
    assert not any(r["restart"] for r in off.trace.records[1:])
    assert rel(on.f, ref) < 0.5 * rel(off.f, ref)
