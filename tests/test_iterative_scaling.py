"""GIS, IIS, SCGIS and the Table 1 surrogates of Huang et al. (2010).

Every check compares against something computed independently: the exact
objective f(w + z e_t) - f(w), TRON's optimum, SciPy's scalar minimizer.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

from loglin.errors import InvalidInputError
from loglin.problem import MaxentProblem, problem_from_matrix
from loglin.solvers import minimize
from loglin.solvers.iterative_scaling import (cd_upper_bound, surrogate_cd, surrogate_gis, surrogate_iis,
                                              surrogate_scgis)
from conftest import random_sparse

ALL = ["gis", "iis", "scgis", "cd", "cdd"]


def _problem(kind, seed=0, n=90, d=15, K=3):
    X = random_sparse(n, d, 0.3, seed=seed, binary=(kind == "binary"))
    if kind == "real":
        X.data = 0.2 + 2.0 * X.data            # non-negative real values, f_t^# != 1
    y = np.random.default_rng(seed + 1).integers(0, K, size=n)
    weight = np.random.default_rng(seed + 2).integers(1, 4, size=n).astype(float)
    return problem_from_matrix(X, y, sample_weight=weight, all_pairs=(seed % 2 == 0))


def _optimum(obj):
    return minimize(obj, "tron", tol=1e-12, max_iter=300).f


def _run_to(obj, solver, f_star, rel=1e-7, max_iter=4000, **kw):
    stop = lambda rec: (rec["objective"] - f_star) / abs(f_star) <= rel
    return minimize(obj, solver, tol=0, max_iter=max_iter, callback=stop, **kw)


def _monotone(r):
    f = r.trace.column("objective")
    return all(b <= a + 1e-12 * abs(a) for a, b in zip(f, f[1:]))


@pytest.mark.parametrize("kind", ["binary", "real"])
@pytest.mark.parametrize("solver", ALL)
def test_every_method_reaches_the_tron_optimum_monotonically(kind, solver):
    obj = _problem(kind).objective(2.0)
    f_star = _optimum(obj)
    r = _run_to(obj, solver, f_star)
    assert (r.f - f_star) / f_star <= 1e-6, r.stop_reason
    assert _monotone(r)
    last = r.trace.records[-1]
    for name in ("n_exp", "n_log", "newton_steps", "line_search_steps", "upper_bound_skips"):
        assert name in last


@pytest.mark.parametrize("kind", ["binary", "real"])
def test_surrogates_bound_the_function_difference_in_the_order_33(kind):
    prob = _problem(kind, seed=4)
    C = 1.5
    obj = prob.objective(C)
    rng = np.random.default_rng(7)
    zs = np.concatenate([rng.normal(scale=0.7, size=12), [-3.0, 2.5, 1e-3]])
    for trial in range(4):
        w = rng.normal(scale=0.5, size=prob.n_features)
        f_w = obj.fun(w)
        for t in rng.choice(prob.n_features, size=5, replace=False):
            true = np.empty(len(zs))
            for i, z in enumerate(zs):
                e = w.copy()
                e[t] += z
                true[i] = obj.fun(e) - f_w
            cd, gis = surrogate_cd(prob, C, w, t, zs), surrogate_gis(prob, C, w, t, zs)
            iis, scgis = surrogate_iis(prob, C, w, t, zs), surrogate_scgis(prob, C, w, t, zs)
            bound = cd_upper_bound(prob, C, w, t, zs)
            tol = 1e-9 * (1 + np.abs(true))
            np.testing.assert_allclose(cd, true, rtol=1e-8, atol=1e-8)      # eq. (8): A^CD is exact
            assert np.all(cd <= scgis + tol) and np.all(scgis <= gis + tol)  # (33), first line
            assert np.all(cd <= iis + tol) and np.all(iis <= gis + tol)      # (33), second line
            assert np.all(cd <= bound + tol) and np.all(bound <= scgis + tol)  # (39) and section 3.2.1
            for A in (surrogate_gis, surrogate_iis, surrogate_scgis, surrogate_cd):
                assert A(prob, C, w, t, 0.0) == pytest.approx(0.0, abs=1e-12)   # (7)


def test_surrogates_share_the_gradient_at_zero():
    """A_t^s'(0) = grad_t f(w) for every s (footnote 9)."""
    prob = _problem("real", seed=6)
    C = 0.7
    w = np.random.default_rng(1).normal(scale=0.3, size=prob.n_features)
    _, g = prob.objective(C).fun_grad(w, keep_cache=False)
    h = 1e-5
    for t in (0, 7, prob.n_features - 1):
        for A in (surrogate_gis, surrogate_iis, surrogate_scgis, surrogate_cd):
            slope = (A(prob, C, w, t, h) - A(prob, C, w, t, -h)) / (2 * h)
            assert slope == pytest.approx(g[t], rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("solver,surrogate", [("gis", surrogate_gis), ("iis", surrogate_iis)])
def test_one_parallel_iteration_minimizes_every_surrogate(solver, surrogate):
    """Algorithm 2: z_t = argmin A_t(z_t) for all t at the same w (Newton to |A'| <= 1e-5 C N)."""
    prob = _problem("real", seed=8)
    C = 1.0
    w0 = np.random.default_rng(2).normal(scale=0.2, size=prob.n_features)
    r = minimize(prob.objective(C), solver, w0=w0, tol=0, max_iter=1, newton_tol=1e-13)
    for t in range(0, prob.n_features, 5):
        best = minimize_scalar(lambda z: surrogate(prob, C, w0, t, z), bracket=(-1, 1), tol=1e-12).x
        assert r.w[t] - w0[t] == pytest.approx(best, abs=1e-7)


def test_scgis_first_sub_problem_is_the_argmin_of_its_surrogate():
    prob = _problem("real", seed=10)
    C = 1.0
    w0 = np.random.default_rng(3).normal(scale=0.2, size=prob.n_features)
    best = minimize_scalar(lambda z: surrogate_scgis(prob, C, w0, 0, z), bracket=(-1, 1), tol=1e-12).x
    # stop after one outer iteration and look only at w_0 (solved first, at w0)
    r = minimize(prob.objective(C), "scgis", w0=w0, tol=0, max_iter=1, newton_tol=1e-13)
    assert r.w[0] - w0[0] == pytest.approx(best, abs=1e-7)


@pytest.mark.parametrize("solver", ["gis", "iis", "scgis"])
def test_iterative_scaling_rejects_negative_feature_values(solver):
    X = random_sparse(40, 6, 0.5, seed=1, nonneg=False)
    prob = problem_from_matrix(X, np.arange(40) % 2)
    with pytest.raises(InvalidInputError, match=r"non-negative.*\(5\)"):
        minimize(prob.objective(1.0), solver, max_iter=2)


def test_features_under_several_pairs_work_for_parallel_methods():
    """GIS/IIS accept any non-negative f_t(x,y) given by the map; sequential ones say why they cannot."""
    base = _problem("real", seed=12, K=3)
    rng = np.random.default_rng(5)
    # tie features together: feature t of the new map = old feature t // 2
    new_feat = (base.map_feat // 2).astype(np.int64)
    prob = MaxentProblem(ctx_ptr=base.ctx_ptr, ctx_pred=base.ctx_pred, ctx_val=base.ctx_val,
                         map_ptr=base.map_ptr, map_label=base.map_label, map_feat=new_feat,
                         ctx_count=base.ctx_count, obs_ptr=base.obs_ptr, obs_label=base.obs_label,
                         obs_count=base.obs_count, n_features=int(new_feat.max()) + 1, labels=base.labels)
    obj = prob.objective(1.0)
    f_star = _optimum(obj)
    for solver in ("gis", "iis"):
        r = _run_to(obj, solver, f_star, max_iter=6000)
        assert (r.f - f_star) / f_star <= 1e-6
        assert _monotone(r)
    w = rng.normal(scale=0.3, size=prob.n_features)
    e = w.copy()
    e[3] += 0.4
    true = obj.fun(e) - obj.fun(w)
    assert surrogate_cd(prob, 1.0, w, 3, 0.4) == pytest.approx(true, rel=1e-9)
    assert surrogate_iis(prob, 1.0, w, 3, 0.4) >= true - 1e-9
    for solver in ("scgis", "cd"):
        with pytest.raises(InvalidInputError, match="predicate x label"):
            minimize(obj, solver, max_iter=1)


def test_gis_handles_an_unregularized_bias():
    X = random_sparse(80, 10, 0.3, seed=14, binary=True)
    y = np.random.default_rng(0).integers(0, 3, size=80)
    prob = problem_from_matrix(X, y, bias=1.0, regularize_bias=False)
    obj = prob.objective(1.0)
    f_star = _optimum(obj)
    for solver in ("gis", "scgis", "cd"):
        r = _run_to(obj, solver, f_star, max_iter=8000)
        assert (r.f - f_star) / f_star <= 1e-6, solver


@pytest.mark.parametrize("surrogate", [surrogate_gis, surrogate_iis, surrogate_scgis])
def test_surrogate_slopes_bound_the_surrogate(surrogate):
    """The certificates minimize_surrogate uses in place of evaluating A_t^IIS (slopes by central
    differences): A_t(z) <= z A_t'(z) (convexity) and, as the third derivative of A_t is
    non-negative for non-negative features, A_t(z) <= z (A_t'(0) + A_t'(z)) / 2 for z > 0."""
    prob = _problem("real", seed=16)
    C, h = 1.3, 1e-6
    rng = np.random.default_rng(4)
    w = rng.normal(scale=0.8, size=prob.n_features)
    slope = lambda t, z: (surrogate(prob, C, w, t, z + h) - surrogate(prob, C, w, t, z - h)) / (2 * h)
    for t in rng.choice(prob.n_features, size=6, replace=False):
        for z in (-2.0, -0.3, 0.05, 0.7, 2.5):
            A = surrogate(prob, C, w, t, z)
            slack = 1e-6 * (1 + abs(A))
            assert A <= z * slope(t, z) + slack
            if z > 0:
                assert A <= z * (slope(t, 0.0) + slope(t, z)) / 2 + slack


def test_iis_steps_never_increase_their_surrogate_from_a_far_start():
    """The descent safeguard shared with GIS and SCGIS: A_t^IIS(z_t) <= A_t^IIS(0) = 0 for every t."""
    prob = _problem("real", seed=18)
    C = 1.0
    w0 = np.random.default_rng(6).normal(scale=4.0, size=prob.n_features)
    r = minimize(prob.objective(C), "iis", w0=w0, tol=0, max_iter=1, warn=False)
    z = r.w - w0
    assert np.any(z != 0.0)
    for t in range(prob.n_features):
        assert surrogate_iis(prob, C, w0, t, z[t]) <= 1e-9 * C * prob.total_count
