"""Primal CD (Algorithm 3 of Huang et al. 2010) for Maxent and binary LR, and a real-data slice."""
import numpy as np
import pytest

from loglin.binary import binary_problem
from loglin.data.paths import shared_data_dir
from loglin.problem import problem_from_matrix
from loglin.solvers import minimize
from conftest import random_sparse


def _optimum(obj):
    return minimize(obj, "tron", tol=1e-12, max_iter=300).f


def _run_to(obj, solver, f_star, rel=1e-7, max_iter=4000, **kw):
    stop = lambda rec: (rec["objective"] - f_star) / abs(f_star) <= rel
    return minimize(obj, solver, tol=0, max_iter=max_iter, callback=stop, **kw)


def _monotone(r):
    f = r.trace.column("objective")
    return all(b <= a + 1e-12 * abs(a) for a, b in zip(f, f[1:]))


def _lr_data(kind, seed=0, n=160, d=18):
    X = random_sparse(n, d, 0.3, seed=seed, binary=(kind == "binary"), nonneg=(kind != "signed"))
    if kind == "real":
        X.data = 0.1 + 3.0 * X.data
    w = np.random.default_rng(seed).normal(size=d)
    y = np.where(X @ w - np.median(X @ w) + 0.5 * np.random.default_rng(seed + 1).normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("kind", ["binary", "real", "signed"])
@pytest.mark.parametrize("solver", ["cd", "cdd"])
@pytest.mark.parametrize("bias", [0.0, 1.0])
def test_cd_solves_logistic_regression(kind, solver, bias):
    X, y = _lr_data(kind)
    obj = binary_problem(X, y, C=3.0, bias=bias, regularize_bias=bias == 0.0).objective()
    f_star = _optimum(obj)
    r = _run_to(obj, solver, f_star)
    assert (r.f - f_star) / f_star <= 1e-6, r.stop_reason
    assert _monotone(r)


def test_lr_and_lr_as_maxent_take_the_same_steps():
    """Section 5.2: LR is Maxent with features on label +1 only; CD must not care which we hand it."""
    X, y = _lr_data("real", seed=3)
    C = 2.0
    lr = minimize(binary_problem(X, y, C=C).objective(), "cd", tol=0, max_iter=6)
    mx = minimize(problem_from_matrix(X, y, label_subset={1}).objective(C), "cd", tol=0, max_iter=6)
    np.testing.assert_allclose(lr.trace.column("objective"), mx.trace.column("objective"), rtol=1e-10)
    np.testing.assert_allclose(lr.w, mx.w, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("kind", ["maxent", "binary"])
def test_upper_bound_test_only_saves_work(kind):
    """(38) implies (35), so CD and CDD accept the same lambda; CD needs fewer logs."""
    X, y = _lr_data("real", seed=5)
    if kind == "maxent":
        y = np.random.default_rng(0).integers(0, 4, size=len(y))
        obj = problem_from_matrix(X, y).objective(0.5)
    else:
        obj = binary_problem(X, y, C=0.5).objective()
    a = minimize(obj, "cd", tol=0, max_iter=15)
    b = minimize(obj, "cdd", tol=0, max_iter=15)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-12, atol=1e-14)
    bound_tests = sum(a.trace.column("line_search_steps", 0))          # one log each
    assert sum(a.trace.column("n_log", 0)) - bound_tests < sum(b.trace.column("n_log", 0))
    assert sum(a.trace.column("upper_bound_skips", 0)) > 0
    assert sum(b.trace.column("upper_bound_skips", 0)) == 0


def test_unit_steps_near_the_optimum_theorem_6():
    """Far from w* the line search backtracks; near w* lambda = 1 is accepted (Theorem 6)."""
    X = random_sparse(200, 30, 0.2, seed=9, binary=True)
    y = np.random.default_rng(2).integers(0, 5, size=200)
    obj = problem_from_matrix(X, y).objective(4.0)
    w0 = 6.0 * np.random.default_rng(4).normal(size=obj.n)
    r = minimize(obj, "cd", w0=w0, tol=1e-8, max_iter=500)     # stop before rounding noise dominates
    assert r.converged
    recs = r.trace.records[1:]
    frac = lambda rs: sum(x["unit_steps"] for x in rs) / max(1, sum(x["newton_steps"] for x in rs))
    early, late = frac(recs[:3]), frac(recs[-10:])
    assert early < 0.99
    assert late >= 0.99
    # every non-unit step costs extra line-search steps
    assert all(x["line_search_steps"] >= x["newton_steps"] for x in recs)


def test_binary_features_cost_one_exp_per_line_search_step():
    """Section 4.3: with 0/1 features e^{z f_t(x,y)} = e^z; real values need one exp per non-zero."""
    y = np.random.default_rng(0).integers(0, 3, size=150)
    runs = {}
    for kind in ("binary", "real"):
        X = random_sparse(150, 20, 0.3, seed=1, binary=(kind == "binary"))
        prob = problem_from_matrix(X, y)
        rec = minimize(prob.objective(1.0), "cdd", tol=0, max_iter=3).trace.records[-1]
        runs[kind] = (rec, prob)
    rec, prob = runs["binary"]
    assert rec["n_exp"] <= rec["line_search_steps"] + rec["newton_steps"]       # trials + one per update
    rec, prob = runs["real"]
    assert rec["n_exp"] >= prob.nnz()        # eq. (18) alone touches every non-zero once
    assert rec["n_log"] >= prob.nnz() / 3     # cdd evaluates (17): one log per context of the column


def test_large_scores_do_not_overflow():
    """Start where w^T f(x, y) is in the thousands: S_w overflows without the per-context scaling."""
    X = random_sparse(120, 8, 0.5, seed=2)
    X.data = 1.0 + 2.0 * X.data
    y = np.random.default_rng(5).integers(0, 3, size=120)
    obj = problem_from_matrix(X, y).objective(0.05)
    f_star = _optimum(obj)
    w0 = np.random.default_rng(1).normal(scale=100.0, size=obj.n)
    for solver in ("cd", "scgis", "gis", "iis"):
        r = _run_to(obj, solver, f_star, rel=1e-7, max_iter=3000, w0=w0)
        assert np.all(np.isfinite(r.w))
        assert (r.f - f_star) / f_star <= 1e-6, solver
        assert _monotone(r), solver
        if solver in ("cd", "scgis"):
            assert sum(r.trace.column("rescaled_rows", 0)) > 0


def test_random_order_is_seeded_and_converges():
    X = random_sparse(100, 15, 0.3, seed=6, binary=True)
    y = np.random.default_rng(3).integers(0, 3, size=100)
    obj = problem_from_matrix(X, y).objective(1.0)
    f_star = _optimum(obj)
    # every iteration recorded: the automatic thinning starts by the clock, which a cold compile can reach
    a = _run_to(obj, "cd", f_star, shuffle=True, random_state=11, record_spacing=None)
    b = _run_to(obj, "cd", f_star, shuffle=True, random_state=11, record_spacing=None)
    c = minimize(obj, "cd", tol=0, max_iter=a.iterations, shuffle=True, random_state=12, record_spacing=None)
    assert a.trace.column("objective") == b.trace.column("objective")
    assert a.trace.column("objective") != c.trace.column("objective")
    assert (a.f - f_star) / f_star <= 1e-6


# ------------------------------------------------------------------ a9a slice


def _a9a_slice(n=2000):
    root = shared_data_dir()
    if root is None or not (root / "a9a" / "a9a").exists():
        pytest.skip("shared a9a data not available")
    from loglin.data import read_svmlight
    X, y = read_svmlight(root / "a9a" / "a9a")
    return X[:n], y[:n]


@pytest.mark.slow
def test_a9a_slice_every_method_reaches_the_tron_optimum():
    """Huang et al. section 5.2's model (LR as Maxent, features on label +1) on a9a's first 2000 rows."""
    X, y = _a9a_slice()
    plus = int(np.flatnonzero(np.unique(y) == 1)[0])
    obj = problem_from_matrix(X, y, all_pairs=True, label_subset={plus}).objective(0.1)
    f_star = _optimum(obj)
    for solver in ("cd", "cdd", "scgis", "gis", "iis"):
        r = _run_to(obj, solver, f_star, max_iter=5000)
        assert (r.f - f_star) / f_star <= 1e-6, solver
        assert _monotone(r), solver
    lr = binary_problem(X, y, C=0.1).objective()
    assert _optimum(lr) == pytest.approx(f_star, rel=1e-9)
    r = _run_to(lr, "cd", f_star)
    assert (r.f - f_star) / f_star <= 1e-6


@pytest.mark.slow
def test_huang2010_fig4_quick_writes_plots_traces_and_summary(tmp_path):
    _a9a_slice(10)                                   # skips without the shared data
    from loglin.experiments import REPRODUCE
    assert {"huang2010-table3", "huang2010-fig2", "huang2010-fig3", "huang2010-fig4"} <= set(REPRODUCE)
    REPRODUCE["huang2010-fig4"](tmp_path, quick=True)
    assert (tmp_path / "fig4.png").stat().st_size > 0
    summary = (tmp_path / "summary.md").read_text()
    assert "(38)" in summary and "## The paper's claims" in summary
    from loglin.trace import Trace
    cd = Trace.from_json(tmp_path / "a9a-sigma2=1l-cd.json")
    cdd = Trace.from_json(tmp_path / "a9a-sigma2=1l-cdd.json")
    m = min(len(cd), len(cdd))                       # (38) implies (35): the same iterates
    np.testing.assert_allclose(cd.column("objective")[:m], cdd.column("objective")[:m], rtol=1e-9)


def test_power_series_of_the_cd_surrogate_matches_direct_logs():
    """For 0/1 features A_t^CD's data part sum_x c log(1 + P_x (e^z - 1)) is an O(1) series in M_k = sum c P^k."""
    from loglin.kernels import primal_cd as kcd
    from loglin.kernels import scaled_scores as ss
    rng = np.random.default_rng(7)
    n = 300
    S = rng.random((n, 4)) ** 3
    R = ss.context_records(rng.integers(1, 4, size=n).astype(float))
    R[:, ss.TOTAL] = S.sum(axis=1)
    cols = (np.array([0, n], dtype=np.int64), np.arange(n, dtype=np.int32), np.empty(0))
    sums = np.zeros(kcd.SERIES_TERMS)
    kcd._column_power_sums(0, 2, cols, S, R, sums)
    P = S[:, 2] / S.sum(axis=1)
    assert np.any(P > 0.5) and np.expm1(-0.28) > -kcd.SERIES_MAX and np.expm1(0.22) < kcd.SERIES_MAX
    for z in (-0.28, -0.15, -0.06, -1e-3, 1e-7, 0.02, 0.06, 0.15, 0.22):
        em1 = np.expm1(z)
        direct = float(np.sum(R[:, ss.COUNT] * np.log1p(P * em1)))
        assert kcd._series_log_ratio(em1, sums) == pytest.approx(direct, rel=1e-13, abs=1e-300)


def test_bounds_from_few_power_sums_lie_above_the_cd_surrogate():
    """(35) is first tried on upper bounds of sum_x c log(1 + P_x (e^z - 1)): the series cut after M_1..M_3, and
    for large steps the same cut on P <= 1/2 and on (1 - P)(e^{-z} - 1) for P > 1/2. They must never lie below
    the direct logs (else a step would be accepted that (35) rejects), and the split one must be close for P
    near 1 and large steps, where the other is loose."""
    from loglin.kernels import primal_cd as kcd
    from loglin.kernels import scaled_scores as ss
    rng = np.random.default_rng(3)
    n = 400
    for shape in ("spread", "near_one"):
        S = rng.random((n, 5)) ** 3
        if shape == "near_one":
            S[:, 2] = 1e3 * (1.0 + rng.random(n))
        R = ss.context_records(rng.integers(1, 4, size=n).astype(float))
        R[:, ss.TOTAL] = S.sum(axis=1)
        cols = (np.array([0, n], dtype=np.int64), np.arange(n, dtype=np.int32), np.empty(0))
        sums = np.zeros(kcd.SUMS)
        kcd._column_bound_powers(0, 2, cols, S, R, sums)
        first = sums[:3].copy()
        kcd._column_power_sums(0, 2, cols, S, R, sums)
        assert np.array_equal(first, sums[:3])          # the same M_1..M_3 whichever pass gathered them
        kcd._column_split_sums(0, 2, cols, S, R, sums[kcd.SERIES_TERMS:])
        P = S[:, 2] / R[:, ss.TOTAL]
        for z in np.linspace(np.log1p(kcd.BOUND_LOW), 3.0, 61):
            em1 = np.expm1(z)
            direct = float(np.sum(R[:, ss.COUNT] * np.log1p(P * em1)))
            scale = float(R[:, ss.COUNT].sum()) * max(1.0, abs(z))
            assert kcd._series_bound(em1, sums) >= direct - 1e-13 * scale
            split = kcd._split_bound(z, em1, sums[kcd.SERIES_TERMS:])
            assert split >= direct - 1e-13 * scale
            if shape == "near_one" and abs(z) >= 1.0:
                assert split - direct <= 0.05 * abs(direct)


def test_rejected_cd_step_leaves_the_state_exactly_as_it_was():
    """The fused evaluate-and-update pass of CD must be undone bit for bit when (35) fails."""
    from loglin.kernels import primal_cd as kcd
    from loglin.kernels import scaled_scores as ss
    from loglin.solvers.iterative_scaling import SequentialData
    X = random_sparse(80, 10, 0.4, seed=3, binary=False)
    y = np.random.default_rng(3).integers(0, 3, size=80)
    prob = problem_from_matrix(X, y)
    data = SequentialData.from_maxent(prob, 1.0, "cd")
    w = np.random.default_rng(1).normal(size=prob.n_features)
    S = np.empty((data.n_contexts, data.n_labels))
    R = ss.context_records(data.ctx_count)
    ss.init_scores(w, data.rows, S, R)
    t = int(np.flatnonzero(data.feat_pred >= 0)[0])
    p, lab = data.feat_pred[t], data.feat_label[t]
    S0, R0, w0 = S.copy(), R.copy(), w.copy()
    saved = np.empty((80, 4))
    counters = np.zeros(len(ss.COUNTER_NAMES), dtype=np.int64)
    kcd._step_and_measure(t, p, lab, 0.7, w, data.rows, data.cols, S, R, saved, np.empty(3), counters,
                          (S, R, data.cols[1][:0], np.empty(0, dtype=np.int64)))
    assert w[t] != w0[t] and not np.array_equal(S, S0)
    kcd._undo_step(t, p, lab, w0[t], w, data.cols, S, R, saved)
    assert np.array_equal(S, S0) and np.array_equal(R, R0) and np.array_equal(w, w0)


@pytest.mark.parametrize("method", ["cd", "cdd", "scgis"])
@pytest.mark.parametrize("binary", [True, False])
def test_blocked_sequential_pass_matches_the_plain_pass_bit_for_bit(method, binary):
    """Runs of features on one predicate are solved on a compact copy of their column of S (blocks, with
    CD's and SCGIS's update fused into the next feature's sums on 0/1 data): w, S and T after each outer
    iteration must equal those of the plain feature-by-feature pass exactly, row repairs included."""
    from loglin.kernels import scaled_scores as ss
    from loglin.kernels import scaling as ks
    from loglin.solvers.iterative_scaling import SequentialData
    rng = np.random.default_rng(11)
    X = random_sparse(240, 12, 0.5, seed=11, binary=binary)
    prob = problem_from_matrix(X, rng.integers(0, 5, size=240))
    data = SequentialData.from_maxent(prob, 1.0, method)
    assert np.any(np.diff(data.feat_pred[data.feat_pred >= 0]) == 0)      # runs on one predicate exist
    kind = ks.SCGIS if method == "scgis" else ks.CD
    order = np.arange(prob.n_features)

    def passes(block_entries):
        w = np.random.default_rng(2).normal(scale=25.0, size=prob.n_features)   # extreme scores: repairs happen
        S = np.empty((data.n_contexts, data.n_labels))
        R = ss.context_records(data.ctx_count)
        ss.init_scores(w, data.rows, S, R)
        states, repairs = [], 0
        for _ in range(3):
            counters = np.zeros(len(ss.COUNTER_NAMES), dtype=np.int64)
            ss.resum_totals(S, R)
            ks.sequential_pass(kind, order, w, data.reg, data.C, data.emp, 1e-5 * data.total_count, 0.01, 0.5,
                               method == "cd", data.rows, data.cols, data.feat_pred, data.feat_label, data.pred_max,
                               data.pred_count, S, R, counters, block_entries)
            states.append((w.copy(), S.copy(), R.copy()))
            repairs += counters[ss.RESCALE]
        return states, repairs

    plain, plain_repairs = passes(1)
    blocked, blocked_repairs = passes(ks.BLOCK_ENTRIES)
    assert plain_repairs == blocked_repairs
    if method != "scgis":
        assert plain_repairs > 0
    for (w0, S0, R0), (w1, S1, R1) in zip(plain, blocked):
        assert np.array_equal(w0, w1) and np.array_equal(S0, S1) and np.array_equal(R0, R1)


def test_a_block_never_holds_one_label_twice():
    """Two features on one (predicate, label) pair, one after the other, must see each other's update of
    S[x, y]: the run of a block stops at a repeated label, so blocked and plain passes still agree."""
    from loglin.kernels import scaled_scores as ss
    from loglin.kernels import scaling as ks
    from loglin.solvers.iterative_scaling import SequentialData
    rng = np.random.default_rng(5)
    X = random_sparse(150, 6, 0.6, seed=5, binary=True)
    prob = problem_from_matrix(X, rng.integers(0, 3, size=150))
    data = SequentialData.from_maxent(prob, 1.0, "cd")
    n = prob.n_features
    t0 = int(np.flatnonzero(data.feat_pred >= 0)[0])
    feat_pred, feat_label = np.append(data.feat_pred, data.feat_pred[t0]), np.append(data.feat_label, data.feat_label[t0])
    emp, reg = np.append(data.emp, data.emp[t0]), np.append(data.reg, data.reg[t0])
    order = np.insert(np.arange(n), t0 + 1, n)             # the copy of t0 right after it

    def passes(kind, block_entries):
        w = np.zeros(n + 1)
        S = np.empty((data.n_contexts, data.n_labels))
        R = ss.context_records(data.ctx_count)
        ss.init_scores(w[:n], data.rows, S, R)
        for _ in range(2):
            ss.resum_totals(S, R)
            ks.sequential_pass(kind, order, w, reg, data.C, emp, 1e-5 * data.total_count, 0.01, 0.5, True,
                               data.rows, data.cols, feat_pred, feat_label, data.pred_max, data.pred_count, S, R,
                               np.zeros(len(ss.COUNTER_NAMES), dtype=np.int64), block_entries)
        return w, S, R

    for kind in (ks.CD, ks.SCGIS):
        plain, blocked = passes(kind, 1), passes(kind, ks.BLOCK_ENTRIES)
        assert plain[0][t0] != 0.0 and plain[0][n] != 0.0
        for a, b in zip(plain, blocked):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 13, 301])
def test_block_sums_in_vector_lanes_equal_the_scalar_lanes_of_the_plain_pass(n):
    """CD's column sums are four partial sums (decision 0065): the block kernels add four rows as one vector,
    the plain pass keeps four scalars; both must give the same M_1..M_24 and split sums bit for bit, for
    any number of rows (the last group padded with zero terms)."""
    from loglin.kernels import primal_cd as kcd
    from loglin.kernels import scaled_scores as ss
    rng = np.random.default_rng(n)
    S = rng.random((n, 3)) ** 3
    S[::3, 1] = 1e3 * (1.0 + rng.random(S[::3, 1].shape[0]))     # P near 1: every branch of the terms
    S[1::5, 1] = 1e-9
    R = ss.context_records(rng.integers(1, 4, size=n).astype(float))
    R[:, ss.TOTAL] = S.sum(axis=1)
    cols = (np.array([0, n], dtype=np.int64), np.arange(n, dtype=np.int32), np.empty(0))
    plain, block = np.zeros(kcd.SUMS), np.zeros(kcd.SUMS)
    kcd._column_power_sums(0, 1, cols, S, R, plain)
    kcd._column_split_sums(0, 1, cols, S, R, plain[kcd.SERIES_TERMS:])
    s, T, c = S[:, 1].copy(), R[:, ss.TOTAL].copy(), R[:, ss.COUNT].copy()
    kcd._block_power_sums(s, T, c, block)
    kcd._block_split_sums(s, T, c, block[kcd.SERIES_TERMS:])
    assert np.array_equal(plain, block)
    P = s / T
    np.testing.assert_allclose(plain[:3], [np.sum(c * P), np.sum(c * P ** 2), np.sum(c * P ** 3 * (P > 1e-7))], rtol=1e-13)
