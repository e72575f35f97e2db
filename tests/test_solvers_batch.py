"""TRON, L-BFGS and SGD: same optimum, the driver's stopping rules, trace, Ctrl-C."""
import json

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.problem import problem_from_matrix
from loglin.solvers import minimize
from conftest import random_sparse


def _tight(obj, solver, **kw):
    return minimize(obj, solver, tol=1e-9, max_iter=kw.pop("max_iter", 500), **kw)


@pytest.mark.parametrize("kind", ["maxent", "all pairs", "binary"])
@pytest.mark.parametrize("precondition", [0.0, 0.01, 1.0])
def test_tron_and_lbfgs_reach_the_same_optimum(kind, precondition, small_multiclass, small_binary):
    if kind == "binary":
        obj = binary_problem(*small_binary, C=2.0).objective()
    else:
        obj = problem_from_matrix(*small_multiclass, all_pairs=kind == "all pairs").objective(2.0)
    a, b = _tight(obj, "tron", precondition=precondition), _tight(obj, "lbfgs")
    assert a.f == pytest.approx(b.f, rel=1e-9)
    assert a.grad_norm < 1e-5 and b.grad_norm < 1e-5
    np.testing.assert_allclose(a.w, b.w, atol=1e-5)


def test_sgd_approaches_the_optimum(small_binary):
    obj = binary_problem(*small_binary, C=1.0).objective()
    best = _tight(obj, "tron").f
    r = minimize(obj, "sgd", tol=0, max_iter=60, random_state=0)
    assert (r.f - best) / best < 1e-2
    f = r.trace.column("objective")
    assert f[-1] < f[1]


@pytest.mark.parametrize("precondition", [0.0, 0.01])
def test_tron_objective_decreases_monotonically(small_multiclass, precondition):
    obj = problem_from_matrix(*small_multiclass).objective(5.0)
    f = _tight(obj, "tron", precondition=precondition).trace.column("objective")
    assert all(b <= a + 1e-12 * abs(a) for a, b in zip(f, f[1:]))
    with pytest.raises(ValueError, match="precondition"):
        minimize(obj, "tron", precondition=2.0)


def test_sample_weight_equals_repeating_rows(small_multiclass):
    X, y = small_multiclass
    counts = np.random.default_rng(0).integers(0, 4, size=len(y))
    weighted = problem_from_matrix(X, y, sample_weight=counts.astype(float)).objective(1.5)
    keep = np.repeat(np.arange(len(y)), counts)
    repeated = problem_from_matrix(X[keep], y[keep]).objective(1.5)
    a, b = _tight(weighted, "tron"), _tight(repeated, "tron")
    assert a.f == pytest.approx(b.f, rel=1e-10)
    np.testing.assert_allclose(a.w, b.w, atol=1e-7)


def test_binary_sample_weight_equals_repeating_rows(small_binary):
    X, y = small_binary
    counts = np.random.default_rng(1).integers(0, 3, size=len(y))
    keep = np.repeat(np.arange(len(y)), counts)
    a = _tight(binary_problem(X, y, 2.0, sample_weight=counts, bias=1.0).objective(), "tron")
    b = _tight(binary_problem(X[keep], y[keep], 2.0, bias=1.0).objective(), "tron")
    np.testing.assert_allclose(a.w, b.w, atol=1e-7)


def test_lr_as_maxent_equals_native_lr(small_binary):
    """Huang et al. sec. 5.2: LR is Maxent with features for label +1 only."""
    X, y = small_binary
    native = binary_problem(X, y, C=0.8)
    as_maxent = problem_from_matrix(X, y, all_pairs=True, label_subset={1})
    a = _tight(native.objective(), "tron")
    b = _tight(as_maxent.objective(0.8), "tron")
    assert a.f == pytest.approx(b.f, rel=1e-9)
    np.testing.assert_allclose(a.w, b.w, atol=1e-6)


def test_unregularized_bias_is_not_shrunk():
    X = sp.csr_matrix(np.zeros((50, 1)))
    y = np.r_[np.ones(45), -np.ones(5)]
    reg = _tight(binary_problem(X, y, C=0.01, bias=1.0).objective(), "tron").w[-1]
    free = _tight(binary_problem(X, y, C=0.01, bias=1.0, regularize_bias=False).objective(), "tron").w[-1]
    assert free == pytest.approx(np.log(45 / 5), rel=1e-6)      # the unpenalized MLE of the intercept
    assert abs(reg) < abs(free)


def test_stopping_rules_and_trace(tmp_path, small_multiclass):
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    r = minimize(obj, "lbfgs", tol=1e-2)
    assert r.converged and r.stop_reason == "gradient tolerance"
    assert r.trace.records[-1]["rel_grad"] <= 1e-2
    r = minimize(obj, "lbfgs", tol=0, max_iter=3)
    assert not r.converged and r.iterations == 3 and r.stop_reason == "max_iter"
    r = minimize(obj, "lbfgs", tol=0, max_iter=1000, time_limit=0.0)
    assert r.stop_reason == "time limit" and r.iterations == 1
    seen = []
    r = minimize(obj, "tron", tol=0, callback=lambda rec: seen.append(rec) or len(seen) >= 3)
    assert r.stop_reason == "callback" and len(seen) == 3 and seen[0]["iteration"] == 0
    r.trace.save(tmp_path / "t.csv")
    r.trace.save(tmp_path / "t.json")
    header = (tmp_path / "t.csv").read_text().splitlines()[0].split(",")
    assert {"solver", "iteration", "seconds", "objective", "grad_norm"} <= set(header)
    data = json.loads((tmp_path / "t.json").read_text())
    assert len(data["records"]) == len(r.trace)
    assert all(b["seconds"] >= a["seconds"] for a, b in zip(data["records"], data["records"][1:]))


def test_ctrl_c_keeps_best_iterate(small_multiclass):
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    calls = []

    def interrupt(record):
        calls.append(record["objective"])
        if len(calls) == 4:
            raise KeyboardInterrupt

    r = minimize(obj, "lbfgs", tol=0, callback=interrupt)
    assert r.stop_reason == "interrupted" and not r.converged
    assert r.f == pytest.approx(min(calls)) and obj.fun(r.w) == pytest.approx(r.f)


def test_held_out_metric_recorded_but_not_timed(small_multiclass):
    import time
    obj = problem_from_matrix(*small_multiclass).objective(1.0)

    def slow_metric(w):
        time.sleep(0.05)
        return 1.0

    r = minimize(obj, "tron", tol=1e-6, evaluate=slow_metric)
    assert all("metric" in rec for rec in r.trace)
    assert r.train_seconds < 0.05 * len(r.trace)


def test_bad_arguments_are_rejected(small_multiclass):
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    with pytest.raises(ValueError, match="unknown solver"):
        minimize(obj, "newton-raphson")
    with pytest.raises(ValueError, match="w0"):
        minimize(obj, "tron", w0=np.zeros(3))
    with pytest.raises(ValueError, match="C must be positive"):
        problem_from_matrix(*small_multiclass).objective(-1.0)


def test_wide_index_dtype_is_used_past_int32():
    from loglin.problem import index_dtype
    assert index_dtype(10) == np.int32
    assert index_dtype(2**31 + 5) == np.int64


def test_cpu_clock_records_both_times(small_multiclass):
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    r = minimize(obj, "lbfgs", tol=0, max_iter=5, clock="cpu")
    assert all("wall_seconds" in rec for rec in r.trace)
    assert "wall_seconds" not in minimize(obj, "lbfgs", max_iter=2).trace.records[-1]
    with pytest.raises(ValueError, match="clock"):
        minimize(obj, "lbfgs", clock="sundial")


def test_record_spacing_thins_the_trace_without_changing_the_run(small_multiclass):
    X, y = small_multiclass
    obj = problem_from_matrix(abs(X), y).objective(1.0)         # GIS needs f >= 0
    full = minimize(obj, "gis", tol=0, max_iter=200, record_spacing=None)
    thin = minimize(obj, "gis", tol=0, max_iter=200, record_spacing=0.5)
    assert len(thin.trace) < len(full.trace) == 201
    kept = [rec["iteration"] for rec in thin.trace]
    assert kept[:21] == list(range(21)) and kept[-1] == 200
    by_iter = {rec["iteration"]: rec for rec in full.trace}
    for rec in thin.trace:          # the same iterates, evaluated at the iterations kept
        assert rec["objective"] == pytest.approx(by_iter[rec["iteration"]]["objective"], rel=1e-12)
    for name in ("n_exp", "newton_steps"):                       # skipped iterations' counts are carried
        assert sum(full.trace.column(name, 0)) == sum(thin.trace.column(name, 0)) > 0
    np.testing.assert_allclose(thin.w, full.w, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="record_spacing"):
        minimize(obj, "gis", record_spacing=0.0)


def test_a_slow_first_step_does_not_hold_back_the_stopping_test(small_multiclass):
    """A first iteration holding a long compilation: the clock-spaced records would wait for the solver
    clock to grow 5% past it; the iteration count bounds that wait to 5% more iterations."""
    import time
    from loglin.solvers import resolve
    X, y = small_multiclass
    obj = problem_from_matrix(abs(X), y).objective(1.0)
    gis = resolve("gis", obj)

    def slow_first_gis(objective, w, rng, **options):
        for k, step in enumerate(gis(objective, w, rng, **options)):
            if k == 0:
                time.sleep(3.0)         # what a cold Numba cache can cost the first step
            yield step
    full = minimize(obj, "gis", tol=1e-4, max_iter=5000, record_spacing=None)
    slow = minimize(obj, slow_first_gis, tol=1e-4, max_iter=5000, record_spacing=0.05)
    assert full.converged and slow.converged and 25 < full.iterations
    assert full.iterations <= slow.iterations <= 1.1 * full.iterations + 2      # not ~0.15 s of iterations more


def test_record_spacing_records_a_finished_solver_once(small_multiclass):
    """A solver that simply returns: its last, unrecorded iteration is recorded once, counters not doubled."""
    from loglin.solvers.base import Step
    obj = problem_from_matrix(*small_multiclass).objective(1.0)

    def counting(objective, w, rng, steps=60):       # a generator outside the table is run as it is
        for k in range(steps):
            w[0] = 0.01 * (k + 1)
            yield Step(w=w, counters={"work": 1})
    thin = minimize(obj, counting, tol=0, max_iter=1000, record_spacing=1e9)
    # the solver returned, but at a point that is not optimal: not converged
    assert thin.stop_reason == "solver stopped before the optimality test held" and thin.iterations == 60
    assert not thin.converged
    assert [r["iteration"] for r in thin.trace][-2:] == [20, 60]
    assert sum(thin.trace.column("work", 0)) == 60


def test_tron_preconditions_low_dimensional_binary_lr_by_default(small_binary, small_multiclass):
    """0023: a = 1 where features < 0.05 x instances (binary LR only), else plain CG (0005)."""
    from loglin.solvers.tron import default_precondition
    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((400, 10)) < 0.3).astype(float))
    y = np.where(rng.random(400) < 0.5, 1.0, -1.0)
    tall = binary_problem(X, y, C=1.0).objective()
    assert default_precondition(tall) == 1.0
    assert default_precondition(binary_problem(X[:100], y[:100], C=1.0).objective()) == 0.0   # 10 >= 0.05 x 100
    assert default_precondition(problem_from_matrix(*small_multiclass).objective(1.0)) == 0.0
    plain, default = _tight(tall, "tron", precondition=0.0), _tight(tall, "tron")
    assert abs(plain.f - default.f) <= 1e-9 * abs(plain.f)


def test_tron_forcing_defaults_and_the_fixed_rule_reach_one_optimum(small_binary, small_multiclass):
    """0060: binary LR stops CG at min(0.3, (|g|/|g0|)^(1/4)) |g| with an unbounded first radius; Maxent keeps
    0.1 and |g0|; the 0005 rule (cg_tol=0.1, forcing=0, radius=1) reaches the same optimum."""
    from loglin.solvers.tron import default_forcing
    binary = binary_problem(*small_binary, C=1.0).objective()
    maxent = problem_from_matrix(*small_multiclass).objective(1.0)
    assert default_forcing(binary) == (0.3, 0.25, np.inf) and default_forcing(maxent) == (0.1, 0.0, 1.0)
    new, old = _tight(binary, "tron"), _tight(binary, "tron", cg_tol=0.1, forcing=0.0, radius=1.0)
    assert abs(new.f - old.f) <= 1e-10 * abs(old.f)
    assert np.linalg.norm(new.w - old.w) <= 1e-6 * np.linalg.norm(old.w)
