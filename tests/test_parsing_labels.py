"""Labelled parsing: the arc labeller's Maxent optimum, LAS against a brute-force count, the estimator's labels,
and LAS on the shared Spanish treebank (skipped without it)."""
from pathlib import Path

import numpy as np
import pytest
import scipy.optimize
from scipy.special import logsumexp

import loglin
from loglin.data.conll import Sentence, read_conllx
from loglin.parsing.labeller import ArcLabeller
from loglin.parsing.model import is_punctuation, las, per_label_scores, uas

EN = Path(__file__).parent / "data" / "parse_en.conllu"
pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")   # short parser runs


@pytest.fixture(scope="module")
def english():
    return read_conllx(EN)


def _numpy_objective(X, y_codes, weight, n_labels, C):
    """1/2 ||W||^2 + C sum_i c_i [log sum_l exp(x_i W_l) - x_i W_{y_i}], every (predicate, label) pair a weight."""
    X = X.toarray()

    def f_and_grad(w):
        W = w.reshape(X.shape[1], n_labels)
        S = X @ W
        log_z = logsumexp(S, axis=1)
        loss = weight @ (log_z - S[np.arange(len(y_codes)), y_codes])
        P = np.exp(S - log_z[:, None])
        P[np.arange(len(y_codes)), y_codes] -= 1.0
        return 0.5 * w @ w + C * loss, w + C * (X.T @ (weight[:, None] * P)).ravel()
    return f_and_grad


def test_labeller_reaches_the_optimum_of_an_independent_objective(english, serial_numba):
    C = 0.5
    weight = np.linspace(0.5, 2.0, len(english))
    labeller, result = ArcLabeller.fit(english, C=C, sample_weight=weight, tol=1e-8, max_iter=2000)
    untrained, problem = ArcLabeller.training_problem(english, sample_weight=weight)
    assert problem.dense_pairs and problem.n_features == len(untrained.keys) * problem.n_labels
    X = untrained._rows(*untrained._arc_keys(english, [s.heads for s in english]))
    gold = np.concatenate([s.deprels for s in english])
    codes = np.searchsorted(problem.labels, gold)
    assert np.array_equal(problem.labels[codes], gold)
    f_and_grad = _numpy_objective(X, codes, np.repeat(weight, [len(s) for s in english]), problem.n_labels, C)
    f_at_labeller = f_and_grad(labeller.model.w)[0]
    assert f_at_labeller == pytest.approx(result.f, rel=1e-9)            # the same objective ...
    other = scipy.optimize.minimize(f_and_grad, np.zeros(problem.n_features), jac=True, method="L-BFGS-B",
                                    options={"maxiter": 20000, "gtol": 1e-10, "ftol": 1e-15})
    assert f_at_labeller == pytest.approx(other.fun, rel=1e-6)            # ... at the same minimum
    assert f_at_labeller <= other.fun * (1 + 1e-6)


def _brute_force_las(sentences, heads, labels, skip_punctuation):
    right = total = 0
    for s, h, lab in zip(sentences, heads, labels):
        for i in range(len(s)):
            if skip_punctuation and is_punctuation(s.forms[i], s.cpos[i], s.pos[i]):
                continue
            total += 1
            if int(h[i]) == int(s.heads[i]) and lab[i] == s.deprels[i]:
                right += 1
    return 100.0 * right / total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_las_is_a_count_of_right_head_and_label(english, seed):
    rng = np.random.default_rng(seed)
    label_set = sorted({r for s in english for r in s.deprels})
    heads = [np.where(rng.random(len(s)) < 0.7, s.heads, rng.integers(0, len(s) + 1, len(s))) for s in english]
    labels = [[g if rng.random() < 0.8 else str(rng.choice(label_set)) for g in s.deprels] for s in english]
    scores, unlabelled = las(english, heads, labels), uas(english, heads)
    assert scores["las"] == pytest.approx(_brute_force_las(english, heads, labels, False))
    assert scores["las_no_punct"] == pytest.approx(_brute_force_las(english, heads, labels, True))
    assert scores["las"] <= unlabelled["uas"] and scores["las_no_punct"] <= unlabelled["uas_no_punct"]
    assert 0 < scores["las"] < unlabelled["uas"]            # some right heads carry a wrong label here
    perfect = las(english, heads, [list(s.deprels) for s in english])
    assert perfect["las"] == pytest.approx(unlabelled["uas"])
    assert perfect["las_no_punct"] == pytest.approx(unlabelled["uas_no_punct"])
    assert perfect["label_accuracy"] == 100.0
    right_heads = las(english, [s.heads for s in english], labels)
    assert right_heads["las"] == pytest.approx(right_heads["label_accuracy"])
    table = per_label_scores(english, heads, labels)
    assert sum(row["support"] for row in table.values()) == sum(len(s) for s in english)
    for label, row in table.items():               # recall: LAS restricted to the gold arcs labelled L
        hits = sum(int(h[i]) == int(s.heads[i]) and lab[i] == label
                   for s, h, lab in zip(english, heads, labels) for i in range(len(s)) if s.deprels[i] == label)
        assert row["recall"] == pytest.approx(100.0 * hits / max(row["support"], 1))
        assert row["predicted"] == sum(lab.count(label) for lab in labels)
        assert row["precision"] == pytest.approx(100.0 * hits / max(row["predicted"], 1))


def test_parser_labels_save_load_and_las_score(english, tmp_path, serial_numba):
    parser = loglin.Parser(solver="lbfgs", C=1.0, max_iter=60).fit(english)
    assert parser.labels_ == sorted({r for s in english for r in s.deprels})
    heads = parser.predict(english)
    labels = parser.predict_labels(english)
    assert [len(x) for x in labels] == [len(s) for s in english]
    las_score = parser.score(english, scoring="las")
    assert las_score == pytest.approx(_brute_force_las(english, heads, labels, False) / 100)
    assert las_score <= parser.score(english) and las_score > 0.8
    gold_tree_labels = parser.predict_labels(english, heads=[s.heads for s in english])
    assert sum(a == b for x, s in zip(gold_tree_labels, english) for a, b in zip(x, s.deprels)) > 0.9 * sum(
        len(s) for s in english)
    # CoNLL rows carry DEPREL too: the same labeller from them
    rows = [[(str(i + 1), s.forms[i], s.lemmas[i], s.cpos[i], s.pos[i], s.feats[i], str(s.heads[i]), s.deprels[i],
              "_", "_") for i in range(len(s))] for s in english]
    from_rows = loglin.Parser(solver="lbfgs", C=1.0, max_iter=60).fit(rows, [s.heads for s in english])
    np.testing.assert_allclose(from_rows.model_.labeller.model.w, parser.model_.labeller.model.w)
    assert "las" in parser.model_.evaluate(english)
    import dataclasses
    unlabelled = [dataclasses.replace(s, deprels=["_"] * len(s)) for s in english]
    assert "las" not in parser.model_.evaluate(unlabelled)      # nothing to score the labels against
    parser.save(tmp_path / "p.npz")
    loaded = loglin.Parser.load(tmp_path / "p.npz")
    assert loaded.labels_ == parser.labels_ and loaded.predict_labels(english) == labels
    # (word, pos) pairs have no labels: heads only, and predict_labels says why
    pairs = loglin.Parser(solver="lbfgs", C=1.0, max_iter=20).fit([list(zip(s.forms, s.pos)) for s in english],
                                                                  [s.heads for s in english])
    assert pairs.labels_ is None
    with pytest.raises(loglin.errors.InvalidInputError, match="no arc labeller"):
        pairs.predict_labels(english)
    with pytest.raises(ValueError, match="integers in"):
        parser.predict_labels(english[:1], heads=[np.full(len(english[0]), len(english[0]) + 1)])
    with pytest.raises(loglin.errors.InvalidInputError, match="scoring"):
        parser.score(english, scoring="f1")


def test_sample_weight_two_is_the_sentence_twice_for_the_labeller(english, serial_numba):
    kw = dict(C=1.0, tol=1e-10, max_iter=3000)
    weighted = ArcLabeller.fit(english, sample_weight=[2.0] + [1.0] * (len(english) - 1), **kw)[1]
    doubled = ArcLabeller.fit(english + english[:1], **kw)[1]
    assert weighted.f == pytest.approx(doubled.f, rel=1e-7)


def test_labels_are_the_treebank_strings():
    """No label set is built in: any DEPREL strings are learned and predicted."""
    words = ["x", "y", "z"]
    s = Sentence(ids=np.arange(1, 4, dtype=np.int32), forms=words, lemmas=words, cpos=["A", "B", "A"],
                 pos=["A", "B", "A"], feats=["K=1", "_", "K=2|L=3"], heads=np.array([2, 0, 2], dtype=np.int32),
                 deprels=["ärgument:1", "top", "ärgument:2"])
    labeller, _ = ArcLabeller.fit([s] * 3, C=10.0)
    assert set(labeller.labels) == {"ärgument:1", "top", "ärgument:2"}
    assert labeller.label([s], [s.heads]) == [s.deprels]


def test_spanish_treebank_las_beats_the_majority_label(serial_numba):
    from loglin.data.paths import shared_data_dir
    root = shared_data_dir()
    if root is None or not (root / "conll2007-esp" / "esp.train").is_file():
        pytest.skip("shared CoNLL 2007 Spanish data not available")
    train = read_conllx(root / "conll2007-esp" / "esp.train")[:300]
    test = read_conllx(root / "conll2007-esp" / "esp.test")[:100]
    parser = loglin.Parser(max_iter=5).fit(train)
    scores = parser.model_.evaluate(test)
    heads = parser.predict(test)
    labels, counts = np.unique(np.concatenate([s.deprels for s in train]), return_counts=True)
    majority = str(labels[np.argmax(counts)])
    baseline = las(test, heads, [[majority] * len(s) for s in test])["las"]
    assert scores["las"] == pytest.approx(_brute_force_las(test, heads, parser.predict_labels(test), False))
    assert scores["las"] <= scores["uas"] and scores["las"] > baseline + 15
    assert scores["label_accuracy"] > 80


def test_time_limit_bounds_parser_and_labeller_together(english, serial_numba):
    """The parser's solver stops at the limit, so the fit has used all of it: no time is left for the labeller,
    which is left out with a warning (no labeller trained on weights 0 or past the limit)."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parser = loglin.Parser(solver="lbfgs", C=1.0, max_iter=1000, tol=1e-12, time_limit=1e-9).fit(english)
    assert parser.model_.labeller is None and parser.labels_ is None
    assert any("without an arc labeller" in str(w.message) and "time limit" in str(w.message) for w in caught)
    assert parser.predict(english[:2])                    # the parser itself is kept
    plenty = loglin.Parser(solver="lbfgs", C=1.0, max_iter=20, time_limit=600).fit(english)
    assert plenty.labels_ is not None and plenty.model_.labeller.info["iterations"] > 0
