"""Dual coordinate descent (Yu, Huang & Lin 2011): sub-problem solvers and whole solvers vs TRON."""
import functools

import mpmath
import numpy as np
import pytest
import scipy.sparse as sp

from loglin import duality
from loglin.binary import binary_problem
from loglin.errors import InvalidInputError
from loglin.kernels import dual_cd as dk
from loglin.problem import problem_from_matrix
from loglin.solvers import minimize
from conftest import a9a_rows, random_binary_lr, shared_feature_maxent

DUAL_LR = ["cddual", "cddual-ls", "bn"]


pytestmark = pytest.mark.usefixtures("serial_numba")


# ---------------------------------------------------------------- problems
random_binary = random_binary_lr


def wide_binary_with_duplicates_and_zeros(C, seed=0):
    """n > l plus duplicated and all-zero instances.

    Dual CD is well conditioned here even at C = 1e5. (A point repeated with
    both labels is not: its two alphas sit near C/2 on a ridge of curvature
    ~1/C, which coordinate descent crosses very slowly - LIBLINEAR falls back
    to a primal solver after 300 passes for the same reason.)
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 40))
    y = np.where(X @ rng.normal(size=40) + rng.normal(size=25) > 0, 1, -1)
    X = np.vstack([X, X[:4], X[:2], np.zeros((3, 40))])
    y = np.concatenate([y, y[:4], y[:2], [1, -1, 1]])
    return binary_problem(X, y, C)


def outlier_binary(C):
    """A point misclassified at margin about -49 at the optimum: C_i - alpha_i ~ 1e-21 C_i.

    Instance A = e_1 (weight 250) and B = -20 e_1, both labelled +1: the
    optimum balances 250 sigma(-w_1) = 20 sigma(-20 w_1), so w_1 ~ log(12.5).
    """
    rng = np.random.default_rng(0)
    n = 40
    Xr = rng.normal(size=(30, n))
    yr = np.where(Xr @ rng.normal(size=n) + rng.normal(size=30) > 0, 1, -1)
    e1 = np.eye(n)[0]
    X = np.vstack([e1, -20 * e1, Xr, np.zeros((2, n)), Xr[:3]])
    y = np.concatenate([[1, 1], yr, [1, -1], yr[:3]])
    weight = np.concatenate([[250.0, 1.0], np.ones(35)])
    return binary_problem(X, y, C, sample_weight=weight)


def merged_maxent(seed=0, contexts=50, preds=15, labels=4):
    rng = np.random.default_rng(seed)
    X = sp.random(contexts, preds, density=0.3, random_state=seed, format="csr")
    X.data[:] = rng.normal(size=X.nnz)
    y = rng.integers(0, labels, size=contexts)
    X = sp.vstack([X, X[:20], X[:10], sp.csr_matrix((2, preds))]).tocsr()
    y = np.concatenate([y, rng.integers(0, labels, 20), rng.integers(0, labels, 10), [0, 1]])
    return problem_from_matrix(X, y, all_pairs=False)


def binary_01_maxent(seed=3):
    """0/1 predicates (no value array), as in the NLP data sets."""
    rng = np.random.default_rng(seed)
    X = sp.random(70, 25, density=0.2, random_state=seed, format="csr")
    X.data[:] = 1.0
    return problem_from_matrix(X, rng.integers(0, 5, size=70), all_pairs=True)


def a9a_slice(rows=1000):
    return a9a_rows(rows)


def reference(objective):
    return minimize(objective, "tron", tol=1e-12, max_iter=500)


@functools.lru_cache(maxsize=None)
def case(name, C=1.0):
    """(objective, TRON's optimal value) of a named test problem, built once per session."""
    if name == "a9a":
        X, y = a9a_slice()
        obj = binary_problem(X, y, C).objective()
    elif name == "random":
        obj = random_binary(C=C).objective()
    elif name == "wide":
        obj = wide_binary_with_duplicates_and_zeros(C).objective()
    else:
        obj = {"merged": merged_maxent, "binary01": binary_01_maxent, "shared": shared_feature_maxent}[name]().objective(C)
    return obj, reference(obj).f


def run(objective, solver, **kw):
    kw.setdefault("eps", 1e-9)
    return minimize(objective, solver, tol=0, max_iter=kw.pop("max_iter", 2000), random_state=0, **kw)


def rel(f, f_star):
    return abs(f - f_star) / abs(f_star)


def assert_gap_closes(result, f_star, tol=1e-6):
    gaps = np.array(result.trace.column("duality_gap")[1:], dtype=float)
    duals = np.array(result.trace.column("dual_objective")[1:], dtype=float)
    assert np.all(np.isfinite(gaps))
    assert gaps[-1] <= tol * abs(f_star)
    assert np.all(gaps >= -1e-9 * abs(f_star))                       # weak duality
    # coordinate descent decreases the dual D^LR / D^ME, i.e. our D rises
    assert np.all(np.diff(duals) >= -1e-9 * abs(f_star))


# ---------------------------------------------------------------- the sub-problem (18)
def mp_root(a, b, c1, c2, s):
    """High-precision (Z1*, Z2*) of (18), by bisection on log Z of the side nearer the bound."""
    mpmath.mp.dps = 60
    a, b, c1, c2 = (mpmath.mpf(v) for v in (a, b, c1, c2))
    total = c1 + c2

    def g1(Z1):                     # g'(z) at z = Z1 - c1, increasing in Z1
        return a * (Z1 - c1) + b + mpmath.log(Z1 / (total - Z1))

    def g2(Z2):                     # g'(z) at z = c2 - Z2, decreasing in Z2
        return a * (c2 - Z2) + b + mpmath.log((total - Z2) / Z2)
    nearer_lower = a * (c2 - c1) / 2 + b >= 0       # (34)
    g, sign = (g1, 1) if nearer_lower else (g2, -1)
    lo, hi = mpmath.mpf(-2000), mpmath.log(total / 2)
    for _ in range(400):
        mid = (lo + hi) / 2
        if sign * g(mpmath.exp(mid)) < 0:
            lo = mid
        else:
            hi = mid
    Z = mpmath.exp(lo)
    return (float(Z), float(total - Z)) if nearer_lower else (float(total - Z), float(Z))


def naive_algorithm3(a, b, c1, c2, eps=1e-8, xi=0.1, max_iter=100):
    """Algorithm 3 on z itself: logs of c1 + z and c2 - z, i.e. of cancelled differences."""
    a, b, c1, c2 = (np.float64(v) for v in (a, b, c1, c2))      # IEEE semantics: x/0 = inf, not an exception
    z = np.float64(0.0)
    with np.errstate(all="ignore"):
        for _ in range(max_iter):
            gp = a * z + b + np.log((c1 + z) / (c2 - z))
            if not abs(gp) > eps:              # converged, or NaN
                break
            zn = z - gp / (a + (c1 + c2) / ((c1 + z) * (c2 - z)))
            z = xi * z + (1 - xi) * (-c1) if zn <= -c1 else (xi * z + (1 - xi) * c2 if zn >= c2 else zn)
    return z


@pytest.mark.parametrize("variant", [dk.ALG4, dk.LINE_SEARCH, dk.BISECTION, dk.LOG_ODDS])
def test_subproblem_solvers_reach_the_root(variant):
    rng = np.random.default_rng(7)
    out = np.empty(3)
    for _ in range(40):
        s = 10.0 ** rng.uniform(-3, 5)
        c1 = s * rng.uniform(0.001, 0.999)
        c2 = s - c1
        a, b = 10.0 ** rng.uniform(-2, 2), rng.normal() * 5
        g0 = b + np.log(c1 / c2)
        Z1s, Z2s = mp_root(a, b, c1, c2, s)
        if variant == dk.LINE_SEARCH:              # one damped Newton step: only a decrease
            def g(Z1):
                return Z1 * np.log(Z1) + (s - Z1) * np.log(s - Z1) + a / 2 * (Z1 - c1) ** 2 + b * (Z1 - c1)
            for _ in range(30):
                dk.solve_subproblem(a, b, c1, c2, s, g0, 1e-12, 0.1, 1, variant, out)
                assert g(out[0]) <= g(c1) + 1e-12 * abs(g(c1))
                # the same problem seen from the new point: g(Z1) keeps its a, b and origin c1
                b, c1, c2 = b + a * (out[0] - c1), out[0], out[1]
                g0 = b + np.log(c1 / c2)
            assert np.isclose(c1, Z1s, rtol=1e-6)  # damped Newton steps converge to the root
            continue
        steps = dk.solve_subproblem(a, b, c1, c2, s, g0, 1e-10, 0.1, 100, variant, out)
        assert 0 < steps <= 100
        assert out[0] > 0 and out[1] > 0 and np.isclose(out[0] + out[1], s, rtol=1e-15)
        assert np.isclose(out[0], Z1s, rtol=1e-8) and np.isclose(out[1], Z2s, rtol=1e-8)


def test_each_subproblem_solver_is_its_own_function():
    """Algorithm 4, Algorithm 9 and CDdual-ls, called by name, solve what the variant code dispatches."""
    rng = np.random.default_rng(3)
    by_code, by_name = np.empty(3), np.empty(3)
    for _ in range(20):
        s = 10.0 ** rng.uniform(-3, 3)
        c1 = s * rng.uniform(0.001, 0.999)
        c2 = s - c1
        a, b = 10.0 ** rng.uniform(-2, 2), rng.normal() * 5
        g0 = b + np.log(c1 / c2)
        for code, call in ((dk.ALG4, lambda out: dk.modified_newton(a, b, c1, c2, s, g0, 1e-10, 0.1, 100, out)),
                           (dk.BISECTION, lambda out: dk.bisection_newton(a, b, c1, c2, s, g0, 1e-10, 0.1, 100, out)),
                           (dk.LINE_SEARCH, lambda out: dk.newton_line_search(a, b, c1, c2, s, g0, out)),
                           (dk.LOG_ODDS, lambda out: dk.log_odds_newton(a, b, c1, c2, s, g0, 1e-10, 0.1, 100, out))):
            steps = dk.solve_subproblem(a, b, c1, c2, s, g0, 1e-10, 0.1, 100, code, by_code)
            assert call(by_name) == steps
            assert np.allclose(by_name[:2], by_code[:2], rtol=1e-12, atol=0)


def test_naive_newton_fails_where_the_Z1_Z2_form_does_not():
    """C = 1e5 and an optimum 1e-25 away from the upper bound (section 3.3)."""
    s = 1e5
    c1 = c2 = s / 2
    a = 1.0
    Z2_target = 1e-25
    z_star = c2 - Z2_target
    b = -a * z_star - np.log((s - Z2_target) / Z2_target)
    Z1s, Z2s = mp_root(a, b, c1, c2, s)
    out = np.empty(3)
    dk.solve_subproblem(a, b, c1, c2, s, b + np.log(c1 / c2), 1e-8, 0.1, 100, dk.ALG4, out)
    assert np.isclose(out[1], Z2s, rtol=1e-6) and np.isclose(out[0], Z1s, rtol=1e-15)
    z = naive_algorithm3(a, b, c1, c2)
    upper_gap = c2 - z            # what the naive method would carry as C - alpha
    assert not np.isfinite(z) or upper_gap <= 0 or abs(upper_gap - Z2s) > 1e3 * Z2s


def test_naive_algorithm3_stalls_at_C_1e5_while_cddual_is_exact():
    p = outlier_binary(1e5)
    obj = p.objective()
    f_star = reference(obj).f
    start = minimize(obj, "tron", tol=1e-2).w               # near the optimum: C - alpha_B ~ 1e-16
    ours = run(obj, "cddual", w0=start, max_iter=1500)
    assert np.all(np.isfinite(ours.w)) and rel(ours.f, f_star) < 1e-6

    # the same passes with alpha alone and C - alpha recomputed by subtraction
    alpha, _ = duality.lr_alpha_from_w(p, start)
    Xd = p.X.toarray()
    w = Xd.T @ (p.y * alpha)
    order_rng = np.random.default_rng(0)
    with np.errstate(all="ignore"):
        for _ in range(200):
            for i in order_rng.permutation(len(alpha)):
                x = Xd[i]
                c1 = alpha[i]
                z = naive_algorithm3(x @ x, p.y[i] * (w @ x), c1, p.cost[i] - c1)
                alpha[i] = c1 + z
                w += z * p.y[i] * x
        f_naive = obj.fun(w)
    assert not np.isfinite(f_naive) or rel(f_naive, f_star) > 1e-3


# ---------------------------------------------------------------- LR solvers
@pytest.mark.parametrize("solver", DUAL_LR)
def test_lr_dual_solvers_reach_tron_optimum(solver):
    obj, f_star = case("random")
    res = run(obj, solver, eps=1e-6)
    assert res.stop_reason == "solver finished" and rel(res.f, f_star) < 1e-6
    assert_gap_closes(res, f_star)
    rec = res.trace.records[-1]
    assert rec["newton_steps"] >= 0 and rec["inner_eps"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("solver", DUAL_LR)
def test_lr_dual_solvers_on_a9a_slice(solver):
    obj, f_star = case("a9a", 4.0)
    res = run(obj, solver, eps=1e-5, max_iter=800)
    assert rel(res.f, f_star) < 1e-6
    assert_gap_closes(res, f_star)


def test_per_instance_costs_from_sample_and_class_weights():
    rng = np.random.default_rng(4)
    p = random_binary(sample_weight=rng.uniform(0, 3, size=80), class_weight={1: 3.0, -1: 0.5})
    p.cost[:3] = 0.0                                    # zero-weight instances drop out of the dual
    obj = p.objective()
    f_star = reference(obj).f
    res = run(obj, "cddual")
    assert rel(res.f, f_star) < 1e-6
    assert_gap_closes(res, f_star)


@pytest.mark.parametrize("C", [1e-3, 1.0, 1e5])
def test_extreme_C_with_duplicate_and_zero_instances(C):
    obj, f_star = case("wide", C)
    for solver in DUAL_LR:
        res = run(obj, solver, eps=1e-8, max_iter=3000)
        assert np.all(np.isfinite(res.w))
        assert rel(res.f, f_star) < 1e-6, solver


@pytest.mark.parametrize("C", [1e-3, 1.0, 1e5])
def test_log_odds_and_algorithm4_subproblems_reach_the_same_optimum(C):
    """cddual's default sub-problem solver (Newton on the log-odds) and the paper's Algorithm 4: TRON's optimum."""
    obj, f_star = case("wide", C)
    results = {sub: run(obj, "cddual", eps=1e-8, max_iter=3000, subproblem=sub) for sub in ("log-odds", "alg4")}
    for sub, res in results.items():
        assert np.all(np.isfinite(res.w)) and rel(res.f, f_star) < 1e-8, sub
        assert_gap_closes(res, f_star)
    first_pass = {sub: res.trace.records[1]["newton_steps"] for sub, res in results.items()}
    assert first_pass["log-odds"] < first_pass["alg4"]       # from alpha = 1e-8 (36), the point of the variant


def test_own_stopping_rule_and_tolerance_schedule():
    obj = random_binary(C=2.0).objective()
    res = minimize(obj, "cddual", tol=0, eps=1e-3, max_iter=1000, random_state=1)
    assert res.stop_reason == "solver finished"
    viol = res.trace.column("max_violation")
    assert viol[-1] <= 1e-3 and all(v > 1e-3 for v in viol[1:-1])
    inner = res.trace.column("inner_eps")[1:]
    assert inner[0] == 1e-2 and min(inner) >= 1e-8
    assert all(b <= a for a, b in zip(inner, inner[1:]))


def test_same_seed_same_trace_and_warm_start():
    obj, f_star = case("random")
    r1 = run(obj, "cddual", max_iter=5)
    r2 = run(obj, "cddual", max_iter=5)
    assert np.array_equal(r1.w, r2.w)
    warm = run(obj, "cddual", w0=r1.w, eps=1e-7)
    assert rel(warm.f, f_star) < 1e-6


def test_unregularized_bias_raises():
    obj = random_binary(bias=1.0, regularize_bias=False).objective()
    for solver in DUAL_LR + ["eg"]:
        with pytest.raises(InvalidInputError, match="primal solver"):
            minimize(obj, solver, max_iter=2)
    obj = random_binary(bias=1.0).objective()          # a regularized bias is only a feature
    assert rel(run(obj, "cddual", eps=1e-7).f, reference(obj).f) < 1e-6


# ---------------------------------------------------------------- Maxent
@pytest.mark.parametrize("builder", ["merged", "binary01", "shared"])
@pytest.mark.parametrize("C", [1e-3, 1.0, 5.0])
def test_maxent_cddual_reaches_tron_optimum(builder, C):
    obj, f_star = case(builder, C)
    p = obj.problem
    res = run(obj, "cddual", eps=1e-7, max_iter=3000)
    assert rel(res.f, f_star) < 1e-6
    assert_gap_closes(res, f_star)
    assert res.trace.records[-1]["general_k"] == int(not duality.single_entry_features(p))


def test_maxent_gap_stopping_through_the_driver():
    obj = merged_maxent(seed=5).objective(1.0)
    res = minimize(obj, "cddual", tol=0, eps=0, gap_tol=1e-8, max_iter=2000, random_state=0)
    assert res.stop_reason == "duality gap tolerance"
    assert res.trace.records[-1]["duality_gap"] <= 1e-8 * abs(res.f)


def test_maxent_unregularized_bias_raises():
    rng = np.random.default_rng(0)
    p = problem_from_matrix(rng.normal(size=(20, 3)), rng.integers(0, 3, 20), bias=1.0, regularize_bias=False)
    with pytest.raises(InvalidInputError, match="unregularized bias"):
        minimize(p.objective(1.0), "cddual", max_iter=2)


@pytest.mark.slow
def test_yu2011_experiment_smoke(tmp_path):
    """The Figure 4 reproduction runs end to end on an a9a slice and writes its outputs."""
    a9a_slice()                                          # skips without the shared data
    from loglin.experiments import REPRODUCE, yu2011
    assert {"yu2011-fig2", "yu2011-table3", "yu2011-fig3", "yu2011-fig4"} <= set(REPRODUCE)
    yu2011.fig4(tmp_path, quick=True, max_iter=5)
    assert (tmp_path / "fig4.png").stat().st_size > 0
    assert "BN" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "a9a-cddual.csv").exists() and (tmp_path / "a9a-bn.json").exists()


def test_maxent_dual_cd_at_feature_values_near_1e8_ends_without_an_exception():
    """Values ~1e8 push a pair's sub-problem to a bound of (0, s) to rounding, where the Newton
    curvature s / (Z (s - Z)) divided by zero inside the kernel (a traceback for the user)."""
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.normal(scale=1e8, size=(200, 10)))
    y = rng.integers(0, 3, 200)
    problem = problem_from_matrix(X, y)
    result = minimize(problem.objective(1.0), "cddual", max_iter=30, warn=False)
    assert np.all(np.isfinite(result.w))
    assert np.isfinite(result.f) and result.f <= problem.objective(1.0).fun(np.zeros_like(result.w)) + 1e-9


@pytest.mark.parametrize("builder", ["merged", "shared"])
def test_a_thinned_maxent_trace_sums_work_counters_and_keeps_general_k(builder):
    """A thinned trace (record_spacing) adds the work counters of the iterations it leaves out into the next
    record; general_k describes the iterate (the general K^i path or not) and is kept as it is, not summed."""
    from loglin.solvers.base import FULL_RECORDS
    obj, _ = case(builder, 1.0)
    n = FULL_RECORDS + 10
    full = minimize(obj, "cddual", tol=0, eps=0, max_iter=n, random_state=0, record_spacing=None, warn=False)
    thin = minimize(obj, "cddual", tol=0, eps=0, max_iter=n, random_state=0, record_spacing=1e12, warn=False)
    assert [r["iteration"] for r in thin.trace.records] == list(range(FULL_RECORDS + 1)) + [n]
    assert np.array_equal(thin.w, full.w)
    last = thin.trace.records[-1]
    for name in ("pair_updates", "newton_steps", "contexts_moved"):
        assert last[name] == sum(r[name] for r in full.trace.records[FULL_RECORDS + 1:]), name
    assert last["general_k"] == full.trace.records[-1]["general_k"] == int(not duality.single_entry_features(obj.problem))


def test_lr_passes_compile_without_vector_gathers():
    """Decision 0066: the LR passes of dual CD read w by scalar loads. Compiled afresh (not from the cache), their
    machine code has no vector gather on any machine (on x86 without AVX2 the test cannot fail)."""
    import numba
    X = sp.random(40, 30, density=0.3, random_state=3, format="csr")
    y = np.where(np.arange(40) % 2 == 0, 1.0, -1.0)
    cost = np.ones(40)
    for name in ("lr_dual_pass", "lr_first_pass"):
        kernel = numba.njit(fastmath=dk.FAST)(getattr(dk, name).py_func)
        alpha, alpha_c = np.full(40, 1e-3), np.full(40, 1.0 - 1e-3)
        log_odds = np.log(alpha / alpha_c)
        w = np.zeros(30)
        kernel(np.arange(40), X.indptr, X.indices, X.data, y, cost, np.ones(40), alpha, alpha_c, log_odds, w,
               1e-2, 0.1, 100, dk.LOG_ODDS)
        asm = kernel.inspect_asm(kernel.signatures[0])
        assert "ret" in asm and "vgather" not in asm, name
