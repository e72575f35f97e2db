"""loglin.crfsuite: sklearn-crfsuite's CRF on loglin's chain CRF.

References are independent of loglin: python-crfsuite (CRFsuite's own L-BFGS / OWL-QN)
for the objective, the feature names and the marginals; sklearn-crfsuite for the
tutorial script; brute-force enumeration for marginals on tiny inputs.
"""
import itertools
import pickle
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

try:
    from benchmarks.crfsuite_dropin import TUTORIAL, run_tutorial
except ImportError:                     # pytest run from elsewhere than the repository root
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.crfsuite_dropin import TUTORIAL, run_tutorial
from loglin.crfsuite import CRF, CRFsuiteCompatibilityWarning, crfsuite_regularization, metrics
from loglin.data.conll import read_conll2000
from loglin.tagging.datasets import bundled_conll2000_small

pycrfsuite = pytest.importorskip("pycrfsuite")


@pytest.fixture(scope="module")
def conll():
    train_path, test_path = bundled_conll2000_small()
    return read_conll2000(train_path), read_conll2000(test_path)


@pytest.fixture(scope="module")
def tutorial_features(conll):
    """The tutorial's word2features applied to 150 training and 60 test sentences of the bundled slice."""
    ns = run_tutorial("loglin.crfsuite", conll[0][:3], conll[0][:1], max_iterations=1)
    train, test = conll[0][:150], conll[1][:60]
    X = [ns["sent2features"](s) for s in train]
    y = [ns["sent2labels"](s) for s in train]
    Xt = [ns["sent2features"](s) for s in test]
    yt = [ns["sent2labels"](s) for s in test]
    return X, y, Xt, yt


def crfsuite_train(X, y, **params):
    """A python-crfsuite model trained on (X, y): its Tagger."""
    trainer = pycrfsuite.Trainer(verbose=False)
    for xseq, yseq in zip(X, y):
        trainer.append(xseq, yseq)
    trainer.set_params(params)
    path = tempfile.mktemp(suffix=".crfsuite")
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    return tagger


MIXED = [
    [{"w": "the", "n": 1.5, "cap": False, "d": {"x": "y", "z": 2}, "l": ["p", "q"]}, {"w": "dog", "suf": ["g", "og"]}],
    [["a", "b"], ["c", "a"], ["b"]],
    [{"w": "dog", "deep": {"a": {"b": "c"}}}, {"w": "barks", "cap": True}, {"w": "the", "n": -0.5}],
    [{"w": "the"}, {"w": "cat", "s": {"t"}}],
]
MIXED_Y = [["D", "N"], ["D", "N", "V"], ["N", "V", "D"], ["D", "N"]]


# ------------------------------------------------------------------ the objective against CRFsuite's
def tight(**params):
    return dict(epsilon=1e-9, delta=1e-14, max_iterations=3000, **params)


@pytest.mark.parametrize("transitions", [False, True])
@pytest.mark.parametrize("states", [False, True])
def test_objective_equals_crfsuite_mixed_features(transitions, states):
    c2 = 0.3
    crf = CRF(c2=c2, all_possible_transitions=transitions, all_possible_states=states, **tight()).fit(MIXED, MIXED_Y)
    tagger = crfsuite_train(MIXED, MIXED_Y, c2=c2, **{"feature.possible_transitions": transitions,
                                                      "feature.possible_states": states}, epsilon=1e-9, delta=1e-14)
    info = tagger.info()
    # the same attribute names (python-crfsuite's flattening) and the same non-zero features
    assert set(crf.state_features_) == set(info.state_features)
    assert set(crf.transition_features_) == set(info.transitions)
    theirs = crf.objective(MIXED, MIXED_Y, crf.weights_from(info.state_features, info.transitions))
    ours = crf.objective(MIXED, MIXED_Y)
    assert ours == pytest.approx(crf.objective_, rel=1e-12)
    assert ours == pytest.approx(theirs, rel=1e-5)
    assert ours <= theirs * (1 + 1e-7)          # CRFsuite's weights are printed to 6 decimals


@pytest.mark.parametrize("c2, transitions, min_freq", [(0.1, True, None), (1.0, False, None), (0.5, False, 2)])
def test_objective_equals_crfsuite_tutorial(tutorial_features, c2, transitions, min_freq):
    X, y, _, _ = tutorial_features
    crf = CRF(c2=c2, all_possible_transitions=transitions, min_freq=min_freq, **tight()).fit(X, y)
    params = {"feature.possible_transitions": transitions, "feature.minfreq": min_freq or 0}
    tagger = crfsuite_train(X, y, c2=c2, epsilon=1e-9, delta=1e-14, max_iterations=3000, **params)
    info = tagger.info()
    theirs = crf.objective(X, y, crf.weights_from(info.state_features, info.transitions))
    assert crf.objective_ == pytest.approx(theirs, rel=1e-5)
    assert crf.objective_ <= theirs * (1 + 1e-7)
    assert set(crf.transition_features_) == set(info.transitions)


def test_objective_equals_crfsuite_owlqn(tutorial_features):
    X, y, _, _ = tutorial_features
    crf = CRF(c1=0.2, c2=0.05, all_possible_transitions=True, **tight()).fit(X, y)
    tagger = crfsuite_train(X, y, c1=0.2, c2=0.05, epsilon=1e-9, delta=1e-14, max_iterations=3000,
                            **{"feature.possible_transitions": True})
    info = tagger.info()
    theirs = crf.objective(X, y, crf.weights_from(info.state_features, info.transitions))
    assert crf.objective_ == pytest.approx(theirs, rel=1e-5)


def test_regularization_mapping():
    for c1, c2 in [(0, 0.5), (0.3, 0), (0.2, 0.1)]:
        C, penalty, r = crfsuite_regularization(c1, c2)
        r = {"l2": 0.0, "l1": 1.0}.get(penalty, r)
        # loglin's objective divided by C is CRFsuite's: l1 / C = c1, (1 - r) / (2C) = c2
        assert r / C == pytest.approx(c1) and (1 - r) / (2 * C) == pytest.approx(c2)
        assert penalty == {(True, False): "l2", (False, True): "l1", (False, False): "elasticnet"}[(c1 == 0, c2 == 0)]
    assert crfsuite_regularization(None, None) == (0.5, "l2", None)
    assert crfsuite_regularization(0.3, 0) == (pytest.approx(1 / 0.3), "l1", None)
    with pytest.raises(ValueError):
        crfsuite_regularization(0, 0)


# ------------------------------------------------------------------ inference against CRFsuite and brute force
def test_predictions_and_marginals_match_crfsuite_on_its_weights(tutorial_features):
    X, y, Xt, _ = tutorial_features
    crf = CRF(c2=0.5, all_possible_transitions=True, max_iterations=30).fit(X, y)
    tagger = crfsuite_train(X, y, c2=0.5, max_iterations=30, **{"feature.possible_transitions": True})
    info = tagger.info()
    crf.model_w_ = crf.weights_from(info.state_features, info.transitions)
    crf.__dict__.pop("_info", None)
    pred, marg = crf.predict(Xt), crf.predict_marginals(Xt)
    for xseq, p, m in zip(Xt[:20], pred, marg):
        assert p == tagger.tag(xseq)
        tagger.set(xseq)
        for t, row in enumerate(m):
            for label, prob in row.items():
                assert prob == pytest.approx(tagger.marginal(label, t), abs=1e-4)


def test_marginals_brute_force():
    crf = CRF(c2=0.2, max_iterations=50).fit(MIXED, MIXED_Y)
    labels = crf.classes_
    for xseq in MIXED:
        best, scores = None, {}
        for path in itertools.product(labels, repeat=len(xseq)):
            scores[path] = score_path(crf, xseq, path)
        log_z = np.logaddexp.reduce(list(scores.values()))
        best = max(scores, key=scores.get)
        assert crf.predict_single(xseq) == list(best)
        marg = crf.predict_marginals_single(xseq)
        for t in range(len(xseq)):
            for label in labels:
                p = sum(np.exp(s - log_z) for path, s in scores.items() if path[t] == label)
                assert marg[t][label] == pytest.approx(p, abs=1e-10)


def score_path(crf, xseq, path):
    from loglin.crfsuite.items import flatten_item
    state, trans = crf.state_features_, crf.transition_features_
    total = 0.0
    for t, (item, label) in enumerate(zip(xseq, path)):
        names, values = [], []
        flatten_item(item, names, values)
        total += sum(v * state.get((a, label), 0.0) for a, v in zip(names, values))
        if t:
            total += trans.get((path[t - 1], label), 0.0)
    return total


# ------------------------------------------------------------------ the tutorial, model selection, persistence
@pytest.mark.slow
def test_tutorial_runs_with_only_the_import_changed(conll):
    pytest.importorskip("sklearn_crfsuite")
    train, test = conll[0][:300], conll[1][:100]
    assert "sklearn_crfsuite" not in TUTORIAL and "loglin" not in TUTORIAL       # only the import line differs
    theirs = run_tutorial("sklearn-crfsuite", train, test, c2=0.1, max_iterations=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        ours = run_tutorial("loglin.crfsuite", train, test, c2=0.1, max_iterations=300)
    assert ours["labels"] == theirs["labels"]
    assert abs(ours["f1"] - theirs["f1"]) <= 0.003
    assert metrics.flat_accuracy_score(ours["y_test"], ours["y_pred"]) == pytest.approx(
        ours["crf"].score(ours["X_test"], ours["y_test"]))


@pytest.mark.slow
def test_tutorial_with_c1(conll):
    pytest.importorskip("sklearn_crfsuite")
    train, test = conll[0][:300], conll[1][:100]
    theirs = run_tutorial("sklearn-crfsuite", train, test, c1=0.1, c2=0.1, max_iterations=300)
    ours = run_tutorial("loglin.crfsuite", train, test, c1=0.1, c2=0.1, max_iterations=300)
    assert abs(ours["f1"] - theirs["f1"]) <= 0.003


def test_grid_search_over_c2(tutorial_features):
    sklearn = pytest.importorskip("sklearn.model_selection")
    from loglin.crfsuite import scorers
    X, y, _, _ = tutorial_features
    search = sklearn.GridSearchCV(CRF(max_iterations=40), {"c2": [0.01, 1.0, 100.0]}, cv=2,
                                  scoring=scorers.sequence_accuracy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X[:80], y[:80])
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == (3,) and np.all((scores >= 0) & (scores <= 1))
    assert scores[0] > scores[2]                  # c2 = 100 shrinks the model to near-uniform
    assert search.best_estimator_.c2 == search.best_params_["c2"]


def test_clone_pickle_save_load_round_trip(tutorial_features, tmp_path):
    from sklearn.base import clone
    X, y, Xt, _ = tutorial_features
    crf = CRF(c2=0.3, max_iterations=40, all_possible_transitions=True).fit(X[:60], y[:60])
    pred, marg = crf.predict(Xt), crf.predict_marginals(Xt)
    fresh = clone(crf)
    assert fresh.get_params() == crf.get_params() and not hasattr(fresh, "model_w_")
    refit = fresh.fit(X[:60], y[:60])
    assert list(refit.predict(Xt)) == list(pred)
    back = pickle.loads(pickle.dumps(crf))
    assert list(back.predict(Xt)) == list(pred)
    path = tmp_path / "model.npz"
    crf.save(path)
    loaded = CRF.load(path)
    assert list(loaded.predict(Xt)) == list(pred)
    assert loaded.predict_marginals(Xt)[3] == marg[3]
    assert loaded.get_params() == crf.get_params()
    assert loaded.state_features_ == crf.state_features_ and loaded.classes_ == crf.classes_
    # model_filename: written by fit, read back by an unfitted estimator (as sklearn-crfsuite does)
    named = CRF(c2=0.3, max_iterations=40, all_possible_transitions=True, model_filename=str(tmp_path / "m.npz"))
    named.fit(X[:60], y[:60])
    assert list(CRF(model_filename=str(tmp_path / "m.npz")).predict(Xt)) == list(pred)


def test_load_refuses_other_files(tmp_path):
    from loglin.errors import ModelFormatError
    from loglin.model_io import load_npz_model, save_npz_model
    bad = tmp_path / "x.crfsuite"
    bad.write_bytes(b"lCRF not a loglin model")
    with pytest.raises(ModelFormatError):
        CRF.load(bad)
    good = tmp_path / "good.npz"
    CRF(c2=0.1, max_iterations=10).fit(MIXED, MIXED_Y).save(good)
    meta, arrays = load_npz_model(good, "loglin-crfsuite", 1)
    for name, broken in [("labels", np.array(["D", "D", "V"])), ("map_feat", arrays["map_feat"] + 10 ** 6),
                         ("w", arrays["w"][:-1]), ("map_ptr", arrays["map_ptr"][::-1])]:
        save_npz_model(tmp_path / "bad.npz", meta, {**arrays, name: broken})
        with pytest.raises(ModelFormatError):
            CRF.load(tmp_path / "bad.npz")


# ------------------------------------------------------------------ parameters
@pytest.mark.parametrize("name", ["ap", "pa", "arow"])
def test_unavailable_algorithms_name_the_alternatives(name):
    with pytest.raises(ValueError, match="not available in loglin.*lbfgs"):
        CRF(algorithm=name).fit(MIXED, MIXED_Y)


def test_unknown_algorithm_lists_choices():
    with pytest.raises(ValueError, match="lbfgs"):
        CRF(algorithm="tron").fit(MIXED, MIXED_Y)


@pytest.mark.slow
def test_loglin_solvers_and_l2sgd(tutorial_features):
    X, y, Xt, yt = tutorial_features
    exact = CRF(c2=0.5, all_possible_transitions=True, **tight()).fit(X, y)
    # eg stops at a relative duality gap of 1e-4; loglin's sgd is a rough optimizer (eta0 picked on a sample)
    for algorithm, rel in (("eg", 1e-3), ("l2sgd", 0.1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            crf = CRF(algorithm=algorithm, c2=0.5, all_possible_transitions=True, max_iterations=100).fit(X, y)
        assert crf.objective_ == pytest.approx(exact.objective_, rel=rel)
        assert crf.objective_ >= exact.objective_ * (1 - 1e-9)


def test_ignored_parameters_warn():
    with pytest.warns(CRFsuiteCompatibilityWarning, match="linesearch"):
        CRF(linesearch="Backtracking", max_iterations=5).fit(MIXED, MIXED_Y)
    with pytest.warns(CRFsuiteCompatibilityWarning, match="every label bigram"):
        CRF(algorithm="l2sgd", max_iterations=5).fit(MIXED, MIXED_Y)


def test_dev_set_is_scored_in_the_training_log():
    crf = CRF(c2=0.1, max_iterations=20).fit(MIXED, MIXED_Y, X_dev=MIXED[:2], y_dev=MIXED_Y[:2])
    log = crf.training_log_
    assert log.iterations and "accuracy" in log.last_iteration["scores"]
    assert log.last_iteration["loss"] == pytest.approx(crf.objective_)
    with pytest.raises(ValueError, match="both"):
        CRF().fit(MIXED, MIXED_Y, X_dev=MIXED)


def test_input_errors():
    with pytest.raises(ValueError, match="tokens but"):
        CRF().fit([[{"a": 1}]], [["A", "B"]])
    with pytest.raises(TypeError, match="value of type"):
        CRF().fit([[{"a": None}], [{"b": "x"}]], [["A"], ["B"]])
    from loglin.estimators import NotFittedError
    with pytest.raises(NotFittedError):
        CRF().predict(MIXED)


def test_unseen_attributes_and_empty_sentences():
    crf = CRF(c2=0.1, max_iterations=20).fit(MIXED, MIXED_Y)
    out = crf.predict([[{"never": "seen"}], []])
    assert len(out[0]) == 1 and out[1] == []
    assert crf.predict_marginals([[]])[0] == []


# ------------------------------------------------------------------ metrics
def test_metrics_against_definitions():
    y_true = [["A", "B", "O"], ["O", "A"], ["B"]]
    y_pred = [["A", "O", "O"], ["O", "A"], ["A"]]
    assert metrics.flat_accuracy_score(y_true, y_pred) == pytest.approx(4 / 6)
    assert metrics.sequence_accuracy_score(y_true, y_pred) == pytest.approx(1 / 3)
    sk = pytest.importorskip("sklearn.metrics")
    flat_t, flat_p = sum(y_true, []), sum(y_pred, [])
    assert metrics.flat_f1_score(y_true, y_pred, average="macro") == sk.f1_score(flat_t, flat_p, average="macro")
    assert metrics.flat_precision_score(y_true, y_pred, average="micro") == sk.precision_score(flat_t, flat_p,
                                                                                             average="micro")
    assert metrics.flat_recall_score(y_true, y_pred, labels=["A"], average=None)[0] == 1.0
    assert "A" in metrics.flat_classification_report(y_true, y_pred)
    with pytest.raises(ValueError):
        metrics.flat_accuracy_score(y_true, y_pred[:2])


def test_c1_alone_trains_a_sparse_l1_crf():
    dense = CRF(c1=0.0, c2=0.05, max_iterations=500).fit(MIXED, MIXED_Y)
    sparse = CRF(c1=0.5, c2=0.0, max_iterations=2000).fit(MIXED, MIXED_Y)
    assert 0 < len(sparse.state_features_) < len(dense.state_features_)
    assert sparse.objective_ == pytest.approx(sparse.objective(MIXED, MIXED_Y), rel=1e-9)
