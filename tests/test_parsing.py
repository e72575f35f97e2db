"""Parser objectives, duals and solvers on a small hand-written English treebank (tests/data/parse_en.conllu)."""
from pathlib import Path

import numpy as np
import pytest

from loglin.data.conll import read_conllx
from loglin.errors import InvalidInputError
from loglin.structured import tree
from loglin.parsing.dual import TreeDualState
from loglin.parsing.estimator import train_parser
from loglin.parsing.model import ParserModel, is_punctuation, solve, uas
from loglin.parsing.problem import build_tree_problem, check_tree
from loglin.solvers.base import minimize

EN = Path(__file__).parent / "data" / "parse_en.conllu"


@pytest.fixture(scope="module")
def english():
    sentences = read_conllx(EN)
    problem, space, skipped = build_tree_problem(sentences)
    return sentences, problem, space, skipped


def _arc_matrix(problem, w, i):
    n = problem.sent_ptr[i + 1] - problem.sent_ptr[i]
    S = np.zeros((n + 1, n + 1))
    for h in range(n + 1):
        for m in range(1, n + 1):
            r = problem.arc_off[i] + h * (n + 1) + m
            S[h, m] = w[problem.feat_idx[problem.feat_ptr[r]:problem.feat_ptr[r + 1]]].sum()
    return S, problem.heads[problem.sent_ptr[i]:problem.sent_ptr[i + 1]]


def test_problem_shapes(english):
    sentences, problem, space, skipped = english
    assert skipped == 0 and problem.n_sentences == len(sentences) == 12
    assert space.n_features == problem.n_features > 100
    # every gold arc keeps all its features (the index is built from gold arcs)
    S, heads = _arc_matrix(problem, np.ones(problem.n_features), 0)
    assert np.all(S[heads, np.arange(1, len(heads) + 1)] > 40)


@pytest.mark.parametrize("loss", ["ll", "mm"])
def test_loss_matches_per_sentence_inference(english, loss, serial_numba):
    _, problem, _, _ = english
    w = np.random.default_rng(0).normal(scale=0.3, size=problem.n_features)
    expected = 0.0
    for i in range(problem.n_sentences):
        S, heads = _arc_matrix(problem, w, i)
        gold = tree.tree_score(S, heads)
        top = tree.marginals(S)[0] if loss == "ll" else tree.loss_augmented_eisner(S, heads)[1]
        expected += top - gold
    obj = problem.objective(2.0, loss)
    assert obj.data_loss(w) == pytest.approx(expected, rel=1e-10)
    assert obj.fun(w) == pytest.approx(0.5 * w @ w + 2.0 * expected, rel=1e-10)


def test_crf_gradient_matches_finite_differences(english, serial_numba):
    _, problem, _, _ = english
    obj = problem.objective(0.7, "ll")
    rng = np.random.default_rng(1)
    w = rng.normal(scale=0.2, size=problem.n_features)
    f, g = obj.fun_grad(w)
    for _ in range(3):
        d = rng.normal(size=problem.n_features)
        eps = 1e-5
        fd = (obj.fun(w + eps * d) - obj.fun(w - eps * d)) / (2 * eps)
        assert fd == pytest.approx(g @ d, rel=1e-6, abs=1e-6)


def test_dual_state_is_consistent(english, serial_numba):
    _, problem, _, _ = english
    for loss in ("ll", "mm"):
        state = TreeDualState(problem, loss)
        obj = problem.objective(1.0, loss)
        assert state.dual(1.0) <= obj.fun(state.primal_weights(1.0)) + 1e-9       # weak duality
        w = np.random.default_rng(2).normal(scale=0.3, size=problem.n_features)
        warm = TreeDualState.from_primal(problem, w, loss)
        if loss == "ll":      # at u = p(w), w(u) is C^-1 times minus the data gradient
            g = obj.fun_grad(w)[1] - w
            np.testing.assert_allclose(warm.wu, -g / 1.0, atol=1e-9)


def test_eg_reaches_lbfgs_optimum_and_gap_closes(english, serial_numba):
    _, problem, _, _ = english
    C = 1.0
    ref = minimize(problem.objective(C, "ll"), "lbfgs", tol=1e-9, max_iter=500)
    eg = solve(problem, "crf", "eg", C, gap_tol=1e-6, max_iter=400)
    last = eg.trace.records[-1]
    gap = (last["objective"] - last["dual_objective"]) / abs(last["objective"])
    assert eg.stop_reason.startswith("gap") or gap < 1e-5
    assert gap < 1e-5
    assert eg.f == pytest.approx(ref.f, rel=1e-4)
    batch = solve(problem, "crf", "eg-batch", C, gap_tol=1e-3, max_iter=400)
    assert batch.f == pytest.approx(ref.f, rel=2e-3)


def test_max_margin_eg_and_cutting_plane_agree(english, serial_numba):
    _, problem, _, _ = english
    C = 1.0
    cp = solve(problem, "m3n", "cutting-plane", C, gap_tol=1e-6, max_iter=300)
    eg = solve(problem, "m3n", "eg", C, gap_tol=1e-3, max_iter=150)
    dual = eg.trace.records[-1]["dual_objective"]
    # the EG dual converges to the cutting-plane optimum from below (primal recovery C w(u) lags, as usual for MM)
    assert dual <= cp.f + 1e-6 and dual == pytest.approx(cp.f, rel=1e-3)
    assert eg.f >= cp.f - 1e-6


def test_m3n_defaults_certify_the_cutting_plane_optimum(english, serial_numba):
    """train(loss="mm") on a tree problem with every default (C, solver, gap tolerance, max_iter) stops on its
    certificate, at a primal within that tolerance of an independent solver's optimum (cutting-plane), with a
    dual bound below it; loglin.Parser(model="m3n") with its defaults does the same. (EG, the default before
    docs/decisions/0040, ended at a relative gap ~1e-2 after its 200 epochs here.)"""
    from loglin.parsing.estimator import Parser
    from loglin.training import DEFAULT_MAX_ITER, default_C, default_gap_tol, train
    sentences, problem, _, _ = english
    C, gap_tol = default_C("tree", "mm"), default_gap_tol("tree", "mm")
    _, res = train(problem, loss="mm", random_state=0)
    assert res.stop_reason == "duality gap tolerance" and res.iterations < DEFAULT_MAX_ITER["tree"]
    cp = solve(problem, "m3n", "cutting-plane", C, gap_tol=1e-9, max_iter=500)
    dual = res.trace.records[-1]["dual_objective"]
    assert dual <= cp.f * (1 + 1e-9)
    assert cp.f * (1 - 1e-9) <= res.f <= cp.f * (1 + gap_tol)
    parser = Parser(model="m3n").fit(sentences)
    assert parser.result_.stop_reason == "duality gap tolerance"
    assert parser.objective_ <= cp.f * (1 + gap_tol)


def test_sgd_decreases_the_objective(english, serial_numba):
    _, problem, _, _ = english
    obj = problem.objective(1.0, "ll")
    res = solve(problem, "crf", "sgd", 1.0, max_iter=10)
    assert res.f < obj.fun(np.zeros(problem.n_features))


def test_train_parse_save_load(english, tmp_path, serial_numba):
    sentences = english[0]
    model = train_parser(sentences, "crf", "lbfgs", C=1.0, max_iter=100)
    heads = model.parse(sentences)
    assert uas(sentences, heads)["uas"] > 95.0
    for h in heads:
        check_tree(h)
    model.save(tmp_path / "p.npz")
    again = ParserModel.load(tmp_path / "p.npz")
    assert all(np.array_equal(a, b) for a, b in zip(heads, again.parse(sentences)))
    assert again.info["n_features"] == model.space.n_features


def test_options_and_tree_checks(english):
    sentences = english[0]
    with pytest.raises(InvalidInputError):
        train_parser(sentences, "m3n", "lbfgs")
    with pytest.raises(InvalidInputError):
        train_parser(sentences, "crf", "cutting-plane")
    with pytest.raises(InvalidInputError):
        train_parser(sentences, "hmm", "eg")
    with pytest.raises(InvalidInputError, match="cycle"):
        check_tree([2, 1])


def test_uas_and_punctuation():
    assert is_punctuation(",", "F", "Fc") and is_punctuation("x", "PUNCT") and is_punctuation("«»", "X")
    assert not is_punctuation("dog", "NOUN") and not is_punctuation("3.5", "NUM")
    s = read_conllx(EN)[:1]        # The cat sleeps .
    r = uas(s, [np.array([2, 3, 0, 2])])
    assert r["uas"] == pytest.approx(75.0) and r["uas_no_punct"] == pytest.approx(100.0)


def test_subset_is_the_problem_with_the_other_sentences_weighted_zero(english, serial_numba):
    sentences, problem, _, _ = english
    keep = [7, 0, 3]
    sub = problem.subset(keep)
    weight = np.zeros(problem.n_sentences)
    weight[keep] = 1.0
    zeroed = build_tree_problem(sentences, weight=weight)[0]
    w = np.random.default_rng(2).normal(size=problem.n_features)
    assert sub.n_sentences == 3 and np.array_equal(sub.heads, np.concatenate([sentences[i].heads for i in keep]))
    for loss in ("ll", "mm"):
        np.testing.assert_allclose(sub.objective(1.0, loss).fun_grad(w)[1], zeroed.objective(1.0, loss).fun_grad(w)[1],
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("heads", [[2, 5, 0], [2, -1, 0], [4, 0, 1]])
def test_check_tree_rejects_heads_out_of_range(heads):
    with pytest.raises(InvalidInputError, match="head"):
        check_tree(np.array(heads), "sentence 1: ")
