"""Randomized online EG (Algorithm 8 of Yu et al. 2011) for LR and Maxent, against TRON."""

import numpy as np
import pytest
import scipy.sparse as sp

from loglin import duality
from loglin.binary import binary_problem
from loglin.errors import InvalidInputError
from loglin.kernels import eg as ek
from loglin.problem import problem_from_matrix
from loglin.solvers import minimize
from conftest import a9a_rows, random_binary_lr, shared_feature_maxent


pytestmark = pytest.mark.usefixtures("serial_numba")


random_binary = random_binary_lr


def merged_maxent(seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(50, 15, density=0.3, random_state=seed, format="csr")
    X.data[:] = rng.normal(size=X.nnz)
    y = rng.integers(0, 4, size=50)
    X = sp.vstack([X, X[:20], X[:10]]).tocsr()
    y = np.concatenate([y, rng.integers(0, 4, 20), rng.integers(0, 4, 10)])
    return problem_from_matrix(X, y, all_pairs=False)


def a9a_slice(rows=800):
    return a9a_rows(rows)


def f_star(objective):
    return minimize(objective, "tron", tol=1e-12, max_iter=500).f


def rel(f, ref):
    return abs(f - ref) / abs(ref)


def eg_run(objective, max_iter=600, **kw):
    return minimize(objective, "eg", tol=0, gap_tol=1e-8, max_iter=max_iter, random_state=0, **kw)


def assert_dual_rises(result, ref):
    """EG keeps a move only if the dual decreases, so our (negated) D never falls."""
    duals = np.array(result.trace.column("dual_objective")[1:], dtype=float)
    gaps = np.array(result.trace.column("duality_gap")[1:], dtype=float)
    assert np.all(np.isfinite(duals))
    assert np.all(np.diff(duals) >= -1e-10 * abs(ref))
    assert np.all(gaps >= -1e-9 * abs(ref))


@pytest.mark.parametrize("C", [1e-3, 1.0, 10.0])
def test_eg_lr_reaches_tron_optimum(C):
    obj = random_binary(C=C).objective()
    ref = f_star(obj)
    res = eg_run(obj)
    assert rel(res.f, ref) < 1e-4
    assert_dual_rises(res, ref)
    assert res.trace.records[-1]["duality_gap"] <= 1e-4 * abs(ref)


@pytest.mark.slow
def test_eg_lr_on_a9a_slice():
    X, y = a9a_slice()
    obj = binary_problem(X, y, 4.0).objective()
    ref = f_star(obj)
    res = eg_run(obj, max_iter=400)
    assert rel(res.f, ref) < 1e-4
    assert_dual_rises(res, ref)


@pytest.mark.parametrize("builder", [merged_maxent, shared_feature_maxent])
@pytest.mark.parametrize("C", [1e-3, 1.0, 5.0])
def test_eg_maxent_reaches_tron_optimum(builder, C):
    p = builder()
    obj = p.objective(C)
    ref = f_star(obj)
    res = eg_run(obj)
    assert rel(res.f, ref) < 1e-4
    assert_dual_rises(res, ref)
    assert res.trace.records[-1]["general_k"] == int(not duality.single_entry_features(p))


def test_eg_recovers_from_a_huge_learning_rate():
    obj = random_binary(C=2.0).objective()
    ref = f_star(obj)
    res = eg_run(obj, eta0=1e4, max_trial=30)
    assert rel(res.f, ref) < 1e-4
    assert_dual_rises(res, ref)


def test_eg_dual_change_matches_recomputed_dual():
    """(54) as used inside the kernel equals the change of the full dual objective."""
    p = merged_maxent(seed=4)
    C = 2.0
    beta = duality.maxent_initial_beta(p, C)
    w = duality.maxent_w_of_beta(p, C, beta)
    eta = np.full(p.n_contexts, 0.5)
    args = (p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat, p.ctx_count, C)
    for x in range(0, p.n_contexts, 7):
        before = duality.maxent_dual_objective(p, C, beta)
        accepted, _, _ = ek.maxent_eg_pass(np.array([x]), False, *args, beta, w, eta, 1, 1.05)
        after = duality.maxent_dual_objective(p, C, beta)
        assert np.allclose(w, duality.maxent_w_of_beta(p, C, beta), atol=1e-10)     # w kept as w(beta)
        assert np.allclose(beta[x].sum(), C * p.ctx_count[x])
        if accepted:
            assert after >= before - 1e-12 * abs(before)


def test_eg_options_are_checked():
    obj = random_binary().objective()
    with pytest.raises(InvalidInputError):
        minimize(obj, "eg", eta0=0.0, max_iter=1)


# ---------------------------------------------------------------- eg and eg-ll: one implementation
def test_eg_ll_is_eg_with_collins_defaults():
    from loglin.structured.multiclass_eg import EG_LL_DEFAULTS
    obj = merged_maxent(seed=2).objective(3.0)
    a = minimize(obj, "eg-ll", tol=0, max_iter=15, random_state=3)
    b = minimize(obj, "eg", tol=0, max_iter=15, random_state=3, **EG_LL_DEFAULTS)
    np.testing.assert_array_equal(a.w, b.w)
    assert a.trace.column("effective_iterations") == b.trace.column("effective_iterations")


@pytest.mark.parametrize("order", ["random", "permutation", "blocks", "cyclic"])
def test_eg_lr_with_collins_eta_choice_and_order(order):
    obj = random_binary(C=3.0).objective()
    ref = f_star(obj)
    res = eg_run(obj, eta="auto", order=order)
    assert rel(res.f, ref) < 1e-4
    assert_dual_rises(res, ref)
    eff = res.trace.column("effective_iterations")[1:]
    assert eff[0] >= 1.0 and all(b > a for a, b in zip(eff, eff[1:]))    # every trial counts as a visit


def test_eg_proposal_is_the_normalized_multiplicative_update():
    rng = np.random.default_rng(0)
    b = rng.random(6) + 0.01
    G = rng.normal(size=6)
    log_new, new = np.empty(6), np.empty(6)
    ek.eg_proposal(np.log(b), G, 0.3, np.log(2.5), log_new, new)
    expected = b * np.exp(-0.3 * G)
    np.testing.assert_allclose(new, 2.5 * expected / expected.sum(), rtol=1e-12)
    np.testing.assert_allclose(np.exp(log_new), new, rtol=1e-12)


def test_eg_warm_state_follows_a_path_of_C():
    from loglin.solvers.eg import EGState
    p = merged_maxent(seed=5)
    state = EGState(p)
    for C in (0.5, 4.0):
        obj = p.objective(C)
        res = minimize(obj, "eg", w0=state.primal_weights(C), state=state, tol=0, gap_tol=1e-9, max_iter=800,
                       random_state=0)
        assert rel(res.f, f_star(obj)) < 1e-6
        np.testing.assert_allclose(state.primal_weights(C), res.w)
        assert state.dual(C) == pytest.approx(duality.maxent_dual_objective(p, C, state.beta * C / state.C),
                                              rel=1e-10)


def test_eg_rejects_the_max_margin_objective_and_bad_order():
    from loglin.structured.multiclass import MaxMarginObjective
    p = merged_maxent()
    with pytest.raises(InvalidInputError):
        minimize(MaxMarginObjective(p, 1.0), "eg", max_iter=1)
    with pytest.raises(InvalidInputError):
        minimize(p.objective(1.0), "eg", order="sorted", max_iter=1)
    with pytest.raises(InvalidInputError):
        minimize(p.objective(1.0), "eg", order="permutation", updates_per_step=5, max_iter=1)


@pytest.mark.parametrize("order", ["permutation", "blocks"])
def test_eg_one_pass_orders_on_maxent_reach_tron_optimum(order):
    p = merged_maxent(seed=2)
    obj = p.objective(1.0)
    ref = f_star(obj)
    res = eg_run(obj, order=order)
    assert rel(res.f, ref) < 1e-4
    assert_dual_rises(res, ref)


def test_eg_block_order_visits_every_example_once_per_pass_in_shuffled_blocks(monkeypatch):
    from loglin.solvers import eg as eg_module
    monkeypatch.setattr(eg_module, "BLOCK", 4)
    active = np.arange(3, 22)                   # 19 examples: four full blocks and a short one
    rng = np.random.default_rng(0)
    passes = [eg_module.pick_order(active, rng, "blocks", len(active), 0)[0] for _ in range(3)]
    for picks in passes:
        np.testing.assert_array_equal(np.sort(picks), active)
        pos = picks - active[0]                 # positions in ``active``: blocks [4k, 4k + 4), in sequence
        starts = np.flatnonzero(pos % 4 == 0)
        assert starts[0] == 0 and len(starts) == 5
        for a, b in zip(starts, list(starts[1:]) + [len(pos)]):
            np.testing.assert_array_equal(pos[a:b], pos[a] + np.arange(b - a))
    assert not all(np.array_equal(passes[0], q) for q in passes[1:])     # a new block order each pass


@pytest.mark.parametrize("real_valued", [False, True])
def test_eg_dense_all_pairs_kernel_takes_the_generic_steps(real_valued):
    """On the all-pairs layout EG runs the dense branch of maxent_eg_pass; renumbering the features at random forces the
    generic kernel on the same model, which must take the same steps (same f, same w up to the renumbering)."""
    from test_objective import _permuted_numbering
    rng = np.random.default_rng(7)
    X = sp.random(80, 12, density=0.3, random_state=7, format="csr")
    X.data[:] = rng.random(X.nnz) + 0.5 if real_valued else 1.0
    y = rng.integers(0, 5, size=80)
    p = problem_from_matrix(X, y, all_pairs=True)
    other, perm = _permuted_numbering(p, 3)
    assert p.dense_pairs and not other.dense_pairs
    a = minimize(p.objective(2.0), "eg", tol=0, max_iter=8, random_state=0)
    b = minimize(other.objective(2.0), "eg", tol=0, max_iter=8, random_state=0)
    assert rel(a.f, b.f) < 1e-12
    np.testing.assert_allclose(b.w[perm], a.w, rtol=1e-10, atol=1e-12)


def test_eg_rates_do_not_collapse_on_rounding_noise():
    """Near-certain contexts (weak regularization) change the dual by rounding noise only; counting that as a
    failure halved eta_x max_trial times per visit, for good (x1.05 per success). Before the rounding floor in
    the acceptance test the median rate here fell to ~0.01 after 300 passes; it must stay near eta0."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20))
    y = np.argmax(X @ (3 * rng.normal(size=(20, 4))) + 0.1 * rng.gumbel(size=(300, 4)), axis=1)
    obj = problem_from_matrix(sp.csr_matrix(X), y, all_pairs=True).objective(1000.0)
    res = minimize(obj, "eg", tol=0, max_iter=300, random_state=0)
    assert res.trace.records[-1]["eta_median"] > 0.25
    assert_dual_rises(res, res.f)


def test_eg_block_whose_optimum_is_below_the_float_floor_keeps_its_rate():
    """Context 1 (feature value 1e4) sits where the model fitted on context 0 (value 1, a million counts)
    gives its other label probability ~exp(-1e5): its optimal dual variable is below any float. A proposal
    that underflows moves that label to the floor and is tested exactly; before, it was rejected, which halved
    the context's rate on every visit (max_trial times) and froze its block."""
    X = sp.csr_matrix(np.array([[1.0], [1.0], [1e4]]))
    y = np.array([0, 1, 0])
    p = problem_from_matrix(X, y, sample_weight=np.array([1e6, 1e5, 1.0]))
    obj = p.objective(1.0)
    from loglin.solvers.eg import EGState
    state = EGState.from_objective(obj, np.zeros(obj.n), duality.ME_INIT_EPS)
    res = minimize(obj, "eg", state=state, tol=0, max_iter=60, random_state=0)
    big = int(np.flatnonzero(p.ctx_val == 1e4)[0])              # the context of the 1e4 row
    assert np.all(np.isfinite(state.beta)) and np.all(state.beta > 0)
    assert state.beta[big, 1] <= 1e-290 * state.beta[big].sum()  # at the floor: its optimum is ~exp(-1e5)
    assert state.rates[big] > 0.5                                # not halved away (it was ~0.5 / 2**k before)
    assert rel(res.f, f_star(obj)) < 1e-6


def test_eg_block_order_runs_on_a_shuffled_copy_and_returns_the_state_in_the_callers_order():
    """order='blocks' shuffles the contexts once in memory (a file sorted by label would otherwise make every
    block one class): on label-sorted data it still reaches TRON's optimum, and the caller's EGState ends in its
    own context order, consistent with w (w = w(beta), eq. 50)."""
    from loglin.solvers.eg import EGState
    p = merged_maxent(seed=4)
    order = np.argsort(np.asarray(p.obs_label)[np.asarray(p.obs_ptr[:-1])], kind="stable")   # contexts by label
    sorted_p = p.with_contexts_in_order(order)
    obj = sorted_p.objective(1.0)
    state = EGState.from_objective(obj, np.zeros(obj.n), duality.ME_INIT_EPS)
    res = minimize(obj, "eg", order="blocks", state=state, tol=0, gap_tol=1e-9, max_iter=2000, random_state=0)
    assert rel(res.f, f_star(obj)) < 1e-6
    np.testing.assert_allclose(duality.maxent_w_of_beta(sorted_p, state.C, state.beta), res.w, atol=1e-8)
    assert not np.isnan(state.rates).any()


def test_with_contexts_in_order_is_the_same_problem():
    p = merged_maxent(seed=6)
    order = np.random.default_rng(1).permutation(p.n_contexts)
    q = p.with_contexts_in_order(order)
    w = np.random.default_rng(2).normal(size=p.n_features)
    assert q.objective(2.0).fun(w) == pytest.approx(p.objective(2.0).fun(w), rel=1e-12)
    np.testing.assert_allclose(q.emp, p.emp)
    np.testing.assert_array_equal(q.ctx_count, p.ctx_count[order])
    a, b = p.context_matrix().toarray()[order], q.context_matrix().toarray()
    np.testing.assert_array_equal(a, b)
    with pytest.raises(InvalidInputError):
        p.with_contexts_in_order(np.zeros(p.n_contexts, dtype=int))


def test_dual_objective_is_reported_off_the_clock(monkeypatch):
    """Dual solvers hand the driver a callable: the trace's dual is the dual of the yielded point, and computing it
    is reporting, not solving, so it is not charged to the solver's (CPU) time."""
    import time
    from loglin.solvers.eg import EGState
    p = merged_maxent(seed=3)
    obj = p.objective(1.0)
    state = EGState.from_objective(obj, np.zeros(obj.n), duality.ME_INIT_EPS)
    real = duality.maxent_dual_objective

    def slow_dual(*args, **kw):
        t0 = time.process_time()
        while time.process_time() - t0 < 0.05:      # burn 50 ms of CPU per evaluation
            pass
        return real(*args, **kw)
    monkeypatch.setattr(duality, "maxent_dual_objective", slow_dual)
    res = minimize(obj, "eg", state=state, tol=0, max_iter=6, random_state=0, clock="cpu")
    assert res.trace.records[-1]["seconds"] < 6 * 0.05                   # the six 50 ms evaluations are not in it
    assert res.trace.records[-1]["dual_objective"] == pytest.approx(real(p, 1.0, state.beta), rel=1e-12)


@pytest.mark.parametrize("kind", ["maxent", "binary"])
def test_eg_lbfgs_switches_at_the_gap_and_reaches_the_optimum(kind):
    obj = merged_maxent().objective(5.0) if kind == "maxent" else random_binary(C=2.0).objective()
    ref = f_star(obj)
    res = minimize(obj, "eg-lbfgs", tol=1e-8, max_iter=2000, random_state=0, switch_gap=0.05, check_every=2)
    assert rel(res.f, ref) < 1e-9
    recs = res.trace.records[1:]
    phases = [r["phase"] for r in recs]
    assert phases[0] == 0 and phases[-1] == 1 and phases == sorted(phases)       # EG, then L-BFGS only
    checks = [r for r in recs if r["phase"] == 0 and "duality_gap" in r]
    assert all(r["iteration"] % 2 == 0 for r in checks)                         # a gap check every 2 passes
    assert checks[-1]["duality_gap"] <= 0.05 * abs(checks[-1]["objective"])     # the switch: gap small enough
    assert all(r["duality_gap"] > 0.05 * abs(r["objective"]) for r in checks[:-1])
    with pytest.raises(InvalidInputError, match="switch_gap"):
        minimize(obj, "eg-lbfgs", switch_gap=0.0)
    X = sp.random(40, 6, density=0.5, random_state=1, format="csr")
    free_bias = problem_from_matrix(X, np.arange(40) % 3, bias=1.0, regularize_bias=False).objective(1.0)
    with pytest.raises(InvalidInputError, match="eg-lbfgs"):
        minimize(free_bias, "eg-lbfgs")
