"""Chain CRF / M3N objectives and duals against brute force; EG against L-BFGS on the same primal."""
import itertools

import numpy as np
import pytest

import loglin.structured.eg  # noqa: F401  (registers the chain solvers)
from loglin.errors import InvalidInputError
from loglin.solvers.base import minimize
from loglin.structured.dual import ChainDualState, duality_gap
from loglin.structured.problem import ChainProblem, attribute_label_map


def random_chain_problem(n_sent=6, K=3, n_attr=8, max_len=4, seed=0, all_pairs=False, weights=None):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, size=n_sent)
    seq_ptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    N = int(seq_ptr[-1])
    tok_ptr, attrs = [0], []
    for _ in range(N):
        k = rng.integers(1, 4)
        attrs.extend(rng.choice(n_attr, size=k, replace=False).tolist())
        tok_ptr.append(len(attrs))
    tok_ptr = np.array(tok_ptr, dtype=np.int64)
    tok_attr = np.array(attrs, dtype=np.int32)
    gold = rng.integers(0, K, size=N).astype(np.int32)
    map_ptr, map_label, map_feat, n_state = attribute_label_map((tok_attr, tok_ptr), gold, n_attr, K, all_pairs)
    return ChainProblem(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=None, map_ptr=map_ptr,
                        map_label=map_label, map_feat=map_feat, n_state=n_state, labels=np.arange(K),
                        gold=gold, weight=weights)


def features(p, i, y):
    """f(x_i, y) as a dense vector, straight from the definition."""
    f = np.zeros(p.n_features)
    lo = p.seq_ptr[i]
    K = p.n_labels
    for t, lab in enumerate(y):
        for k in range(p.tok_ptr[lo + t], p.tok_ptr[lo + t + 1]):
            a = p.tok_attr[k]
            for j in range(p.map_ptr[a], p.map_ptr[a + 1]):
                if p.map_label[j] == lab:
                    f[p.map_feat[j]] += 1.0
        if t > 0:
            f[p.n_state + y[t - 1] * K + lab] += 1.0
    return f


def labellings(p, i):
    n = p.seq_ptr[i + 1] - p.seq_ptr[i]
    return [np.array(y) for y in itertools.product(range(p.n_labels), repeat=n)]


def brute_losses(p, w):
    ll = mm = 0.0
    for i in range(p.n_sentences):
        gold = p.gold[p.seq_ptr[i]:p.seq_ptr[i + 1]]
        ys = labellings(p, i)
        scores = np.array([w @ features(p, i, y) for y in ys])
        gs = w @ features(p, i, gold)
        m = scores.max()
        ll += p.weight[i] * (m + np.log(np.exp(scores - m).sum()) - gs)
        mm += p.weight[i] * max(s + (y != gold).sum() - gs for s, y in zip(scores, ys))
    return ll, mm


@pytest.mark.parametrize("all_pairs", [False, True])
def test_primal_objectives_match_enumeration(all_pairs):
    p = random_chain_problem(seed=1, all_pairs=all_pairs, weights=np.linspace(0.5, 2.0, 6))
    w = np.random.default_rng(2).normal(size=p.n_features)
    ll, mm = brute_losses(p, w)
    C = 0.7
    assert p.objective(C).fun(w) == pytest.approx(0.5 * w @ w + C * ll, rel=1e-12)
    assert p.objective(C, loss="mm").fun(w) == pytest.approx(0.5 * w @ w + C * mm, rel=1e-12)


def test_gradient_matches_finite_differences():
    p = random_chain_problem(seed=3)
    obj = p.objective(1.3)
    w = np.random.default_rng(4).normal(size=p.n_features)
    _, g = obj.fun_grad(w)
    h = 1e-6
    fd = np.array([(obj.fun(w + h * e) - obj.fun(w - h * e)) / (2 * h) for e in np.eye(p.n_features)])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("loss", ["ll", "mm"])
def test_part_based_dual_matches_explicit_distributions(loss):
    """Q(u) from s-variables and marginals equals eq. (4)/(5) computed with u_i over all labellings."""
    p = random_chain_problem(seed=5, weights=np.linspace(1.0, 2.0, 6))
    rng = np.random.default_rng(6)
    state = ChainDualState(p, loss, s_node=rng.normal(size=(p.n_tokens, p.n_labels)),
                           s_edge=rng.normal(size=(p.n_sentences, p.n_labels, p.n_labels)))
    C = 0.4
    wu = np.zeros(p.n_features)
    terms = 0.0
    for i in range(p.n_sentences):
        lo, hi = p.seq_ptr[i], p.seq_ptr[i + 1]
        gold = p.gold[lo:hi]
        ys = labellings(p, i)
        sc = np.array([state.s_node[lo + np.arange(hi - lo), y].sum()
                       + sum(state.s_edge[i, y[t - 1], y[t]] for t in range(1, len(y))) for y in ys])
        u = np.exp(sc - sc.max())
        u /= u.sum()
        fg = features(p, i, gold)
        for uy, y in zip(u, ys):
            wu += p.weight[i] * uy * (fg - features(p, i, y))
            terms += p.weight[i] * uy * (np.log(uy) if loss == "ll" else -(y != gold).sum())
    np.testing.assert_allclose(state.wu, wu, atol=1e-10)
    assert state.Q(C) == pytest.approx(terms + 0.5 * C * wu @ wu, rel=1e-10)
    # weak duality: the primal at any w is above the dual value
    assert p.objective(C, loss).fun(np.zeros(p.n_features)) >= state.dual(C)


def test_eg_online_batch_and_lbfgs_reach_the_same_crf_optimum():
    p = random_chain_problem(n_sent=30, K=3, n_attr=12, max_len=5, seed=7)
    obj = p.objective(2.0)
    ref = minimize(obj, "lbfgs", tol=1e-10, max_iter=2000)
    online = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-9, max_iter=400, random_state=0)
    batch = minimize(obj, "chain-eg-batch", tol=0.0, gap_tol=1e-7, max_iter=3000)
    assert online.f == pytest.approx(ref.f, rel=1e-6)
    assert batch.f == pytest.approx(ref.f, rel=1e-4)
    last = online.trace.records[-1]
    assert last["duality_gap"] <= 1e-9 * abs(last["objective"])
    assert last["duality_gap"] >= -1e-9 * abs(last["objective"])
    np.testing.assert_allclose(online.w, ref.w, atol=1e-3 * max(1.0, np.abs(ref.w).max()))
    duals = [r["dual_objective"] for r in online.trace.records[1:]]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:]))     # EG never worsens the dual


def test_m3n_duality_gap_closes_and_matches_subgradient_bound():
    p = random_chain_problem(n_sent=20, K=3, n_attr=10, max_len=4, seed=8)
    obj = p.objective(1.0, loss="mm")
    res = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-3, max_iter=3000, random_state=1)
    last = res.trace.records[-1]
    assert res.stop_reason == "duality gap tolerance"
    assert 0 <= last["duality_gap"] <= 1e-3 * abs(last["objective"])


def test_wrong_objective_is_rejected():
    p = random_chain_problem(seed=9)
    state = ChainDualState(p, "ll")
    with pytest.raises(InvalidInputError):
        minimize(p.objective(1.0, loss="mm"), "chain-eg", state=state, max_iter=1)
    gap, rel = duality_gap(p.objective(1.0), state)
    assert gap >= 0


def test_cutting_plane_and_eg_agree_on_the_m3n_optimum():
    import loglin.structured.cutting_plane  # noqa: F401
    p = random_chain_problem(n_sent=20, K=3, n_attr=10, max_len=4, seed=10)
    obj = p.objective(0.5, loss="mm")
    cp = minimize(obj, "chain-cutting-plane", tol=0.0, max_iter=500)
    eg = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-4, max_iter=5000, random_state=2)
    lower = max(cp.trace.records[-1]["dual_objective"], eg.trace.records[-1]["dual_objective"])
    assert cp.f >= lower - 1e-9 and eg.f >= lower - 1e-9
    assert cp.f == pytest.approx(eg.f, rel=2e-4)


def test_sgd_approaches_the_crf_optimum():
    import loglin.structured.sgd  # noqa: F401
    p = random_chain_problem(n_sent=40, K=3, n_attr=12, max_len=5, seed=11)
    obj = p.objective(1.0)
    ref = minimize(obj, "lbfgs", tol=1e-10, max_iter=2000)
    res = minimize(obj, "chain-sgd", tol=0.0, max_iter=300, random_state=3)
    assert res.f == pytest.approx(ref.f, rel=1e-3)


def test_m3n_defaults_close_the_gap_and_match_brute_force():
    """train(loss="mm") with every default (C, solver, gap tolerance, max_iter) certifies its optimum:
    the primal at the returned w and the dual bound agree with enumeration of the labellings."""
    from loglin.training import DEFAULT_MAX_ITER, default_C, default_gap_tol, train
    p = random_chain_problem(n_sent=20, K=3, n_attr=10, max_len=4, seed=8)
    C, gap_tol = default_C("chain", "mm"), default_gap_tol("chain", "mm")
    model, res = train(p, loss="mm", random_state=0)
    last = res.trace.records[-1]
    assert res.stop_reason == "duality gap tolerance" and res.iterations < DEFAULT_MAX_ITER["chain"]
    _, mm = brute_losses(p, res.w)
    brute_f = 0.5 * res.w @ res.w + C * mm
    assert last["objective"] == pytest.approx(brute_f, rel=1e-10)
    assert last["dual_objective"] <= brute_f * (1 + 1e-12)
    assert brute_f - last["dual_objective"] <= gap_tol * brute_f
    # no other w is better than the dual bound allows: random perturbations of the optimum
    rng = np.random.default_rng(3)
    for _ in range(5):
        v = res.w + 0.05 * rng.normal(size=p.n_features)
        assert 0.5 * v @ v + C * brute_losses(p, v)[1] >= last["dual_objective"] * (1 - 1e-12)


def test_online_eg_rates_stay_above_the_floor_near_the_m3n_optimum():
    """Near the M3N optimum a sentence's exact dual change falls below the rounding of its forward-backward, the
    change test rejects at random, and halving (x0.5) outweighs growth (x1.05): without the floor the rates of
    this chain fell to ~1e-13 in 400 epochs (docs/decisions/0031). The floor keeps them at or above
    eta_ini / RATE_RANGE, and the run still certifies the optimum of enumeration."""
    from loglin.structured.dual import PartDualState
    from loglin.structured.eg import RATE_RANGE
    p = random_chain_problem(n_sent=20, K=3, n_attr=10, max_len=4, seed=8)
    C = 0.1
    state = PartDualState(p, "mm")
    res = minimize(p.objective(C, loss="mm"), "eg", gap_tol=0.0, tol=0.0, max_iter=400, random_state=0, state=state,
                   eta=1.0, warn=False)
    assert state.rates.min() >= 1.0 / RATE_RANGE * (1 - 1e-12)
    _, mm = brute_losses(p, res.w)
    brute_f = 0.5 * res.w @ res.w + C * mm
    last = res.trace.records[-1]
    assert last["dual_objective"] <= brute_f * (1 + 1e-12)
    assert brute_f - last["dual_objective"] <= 1e-4 * brute_f


def test_train_anneals_crf_eg_unless_told_not_to():
    """train() anneals C for structured eg on a CRF by default (Collins et al. section 7.1.1) and not with
    anneal=False; both reach the L-BFGS optimum."""
    from loglin.training import train
    p = random_chain_problem(n_sent=20, K=3, n_attr=10, max_len=4, seed=8)
    ref = minimize(p.objective(1.0), "lbfgs", tol=1e-10, max_iter=2000)
    for anneal, varies in ((None, True), (False, False)):
        options = {} if anneal is None else {"anneal": anneal}
        _, res = train(p, 1.0, "eg", gap_tol=1e-8, random_state=0, **options)
        Cs = {r["C_current"] for r in res.trace.records[1:]}
        assert (len(Cs) > 1) is varies
        assert res.f == pytest.approx(ref.f, rel=1e-6)
    with pytest.raises(InvalidInputError):
        train(p, 1.0, "eg", anneal="no")


def test_m3n_defaults_converge_when_the_features_are_shared_by_many_sentences():
    """Many sentences over few attributes (as real corpora: bias and frequent-word features): ||w(u)|| grows with
    the corpus, and the hinge dual's quadratic term C/2 ||w(u)||^2 with it; the default C must keep EG
    converging in a few dozen epochs (at C = 10 the relative gap was still ~2e-2 after 100)."""
    from loglin.training import default_gap_tol, train
    p = random_chain_problem(n_sent=1500, K=5, n_attr=4, max_len=8, seed=12, all_pairs=True)
    model, res = train(p, loss="mm", random_state=0, max_iter=100, warn=False)
    last = res.trace.records[-1]
    assert res.stop_reason == "duality gap tolerance"
    assert 0 <= last["duality_gap"] <= default_gap_tol("chain", "mm") * last["objective"]


def test_subset_is_the_problem_with_the_other_sentences_weighted_zero():
    p = random_chain_problem(n_sent=7, weights=np.arange(1.0, 8.0))
    keep = [5, 1, 2]
    sub = p.subset(keep)
    zeroed = random_chain_problem(n_sent=7, weights=np.where(np.isin(np.arange(7), keep), np.arange(1.0, 8.0), 0.0))
    w = np.random.default_rng(3).normal(size=p.n_features)
    assert sub.n_sentences == 3 and sub.n_tokens == sum(p.seq_ptr[i + 1] - p.seq_ptr[i] for i in keep)
    for loss in ("ll", "mm"):
        np.testing.assert_allclose(sub.objective(1.0, loss).fun_grad(w)[1], zeroed.objective(1.0, loss).fun_grad(w)[1],
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("loss", ["ll", "mm"])
def test_rate_trials_undo_in_place_and_choose_as_trials_on_copies(loss):
    """choose_eta_ini tries each rate on the state itself and undoes it (try_online keeps only the picked
    blocks and w(u)): the state is bit-for-bit as before, and the rate is the one trials on full copies pick."""
    from loglin.solvers.eg import choose_eta_ini as generic_choice
    from loglin.structured.dual import PartDualState
    from loglin.structured.eg import choose_eta_ini
    p = random_chain_problem(n_sent=40, K=3, n_attr=10, max_len=5, seed=3)
    state = PartDualState(p, loss)
    rng = np.random.default_rng(1)
    state.online(2.0, rng.permutation(p.n_sentences), np.full(p.n_sentences, 0.5))   # away from the start
    before = {k: getattr(state, k).copy() for k in ("s", "mu", "term", "wu")}
    picks = rng.choice(p.n_sentences, size=7, replace=False)
    on_copy = state.copy().online(2.0, picks, np.full(p.n_sentences, 4.0), False, 1)
    assert state.try_online(2.0, picks, np.full(p.n_sentences, 4.0), False, 1) == on_copy
    for k, v in before.items():
        assert np.array_equal(getattr(state, k), v), k

    def on_copies(sample, eta):
        accepted, trials, _ = state.copy().online(2.0, sample, np.full(p.n_sentences, eta), adapt=False, max_trial=1)
        return accepted, trials
    expected = generic_choice(on_copies, np.arange(p.n_sentences), np.random.default_rng(5))
    assert choose_eta_ini(state, 2.0, np.random.default_rng(5)) == expected
    for k, v in before.items():
        assert np.array_equal(getattr(state, k), v), k


@pytest.mark.parametrize("loss", ["ll", "mm"])
def test_marginals_recomputed_at_each_visit_give_the_same_iterates_as_stored_ones(loss):
    """store_marginals=False (the structured EG default) recomputes mu_i from s_i at each visit instead of
    keeping mu: online and batch EG must take bit-for-bit the steps of the state that stores them."""
    from loglin.structured.dual import PartDualState
    p = random_chain_problem(n_sent=30, K=3, n_attr=10, max_len=5, seed=11)
    from loglin.structured.eg import part_state
    assert part_state(p.objective(1.5, loss=loss)).mu.size == 0          # the chain EG solvers' fresh state
    stored, recomputed = PartDualState(p, loss), PartDualState(p, loss, store_marginals=False)
    assert recomputed.mu.size == 0 and stored.mu.size == recomputed.s.size
    rates = {id(st): np.full(p.n_sentences, 0.7) for st in (stored, recomputed)}
    for epoch in range(4):
        order = np.random.default_rng(epoch).permutation(p.n_sentences)
        results = [st.online(1.5, order, rates[id(st)], True, 30, 0.01) for st in (stored, recomputed)]
        assert results[0] == results[1]
        for st in (stored, recomputed):
            st.batch_try(0.3, 1.5)
            st.batch_commit()
    for name in ("s", "term", "wu"):
        assert np.array_equal(getattr(stored, name), getattr(recomputed, name)), name
    assert stored.dual(1.5) == recomputed.dual(1.5)
    recomputed.refresh()
    assert np.array_equal(stored.wu, recomputed.wu) or np.allclose(stored.wu, recomputed.wu, rtol=1e-12, atol=1e-12)
