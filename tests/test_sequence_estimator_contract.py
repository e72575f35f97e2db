"""scikit-learn's estimator contract on the sequence estimators (loglin.Tagger, loglin.Parser,
loglin.crfsuite.CRF). ``check_estimator`` feeds 2-D arrays, which sentences are not, so the checks that apply to
lists of sentences are written out here, one test each, for all three estimators."""
import copy
import pickle
from pathlib import Path

import numpy as np
import pytest

import loglin
from loglin.data import read_columns
from loglin.data.conll import read_conllx

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone                                    # noqa: E402
from sklearn.exceptions import NotFittedError                     # noqa: E402
from sklearn.metrics import make_scorer                           # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402

DATA = Path(__file__).parent / "data"
pytestmark = [pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning"),
              pytest.mark.usefixtures("serial_numba")]


def _ner():
    sentences = read_columns(DATA / "ner_multilingual_train.txt")
    return [[t[:-1] for t in s] for s in sentences], [[t[-1] for t in s] for s in sentences]


def _crf_data():
    X, y = _ner()
    return [[{"w": t[0].lower(), "cap": t[0][:1].isupper()} for t in s] for s in X], y


def _parser_data():
    sentences = read_conllx(DATA / "parse_en.conllu")
    return [list(zip(s.forms, s.pos)) for s in sentences], [s.heads for s in sentences]


def _tagger_scorer():
    from loglin.tagging.estimator import chunk_f1
    return make_scorer(chunk_f1)


def _crf_scorer():
    from loglin.crfsuite import scorers
    return scorers.sequence_accuracy


def _weights(estimator):
    return estimator.model_w_ if hasattr(estimator, "model_w_") else estimator.coef_


# name -> (estimator factory, data, scorer for GridSearchCV, a parameter grid over the regularization)
CASES = {
    "tagger": (lambda: loglin.Tagger(features=["w[-1..1]", "shape[0]", "cap[0]"], C=2.0, max_iter=60),
               _ner, _tagger_scorer, {"C": [0.01, 5.0]}),
    "parser": (lambda: loglin.Parser(C=0.5, solver="lbfgs", max_iter=40), _parser_data, lambda: None,
               {"C": [1e-4, 1.0]}),
    "crf": (lambda: __import__("loglin.crfsuite", fromlist=["CRF"]).CRF(c2=0.1, max_iterations=60), _crf_data,
            _crf_scorer, {"c2": [0.01, 100.0]}),
}


@pytest.fixture(params=sorted(CASES), scope="module")
def case(request):
    make, data, scorer, grid = CASES[request.param]
    X, y = data()
    return request.param, make, X, y, scorer(), grid


@pytest.fixture(scope="module")
def fitted(case):
    name, make, X, y, _, _ = case
    return make().fit(X, y)


def _same_predictions(a, b):
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert list(np.asarray(p).tolist()) == list(np.asarray(q).tolist())


def test_clone_get_params_set_params_round_trip(case):
    _, make, *_ = case
    estimator = make()
    params = estimator.get_params()
    twin = clone(estimator)
    assert twin is not estimator and twin.get_params() == params
    assert type(estimator)(**params).get_params() == params          # __init__ stores its arguments as given
    first = sorted(params)[0]
    assert estimator.set_params(**{first: params[first]}) is estimator
    with pytest.raises(ValueError):
        estimator.set_params(no_such_parameter=1)


def test_fit_returns_self_and_mutates_neither_parameters_nor_input(case):
    _, make, X, y, *_ = case
    estimator = make()
    before = copy.deepcopy(estimator.get_params())
    X_before, y_before = copy.deepcopy(X), copy.deepcopy(y)
    assert estimator.fit(X, y) is estimator
    after = estimator.get_params()
    assert sorted(after) == sorted(before)
    for key, value in before.items():
        assert repr(after[key]) == repr(value), key
    assert repr(X) == repr(X_before) and repr(y) == repr(y_before)
    assert not [k for k in vars(estimator) if k not in before and not k.endswith("_") and not k.startswith("_")]


def test_not_fitted_error_before_fit(case):
    _, make, X, y, *_ = case
    estimator = make()
    with pytest.raises(NotFittedError):
        estimator.predict(X[:1])
    with pytest.raises(NotFittedError):
        estimator.score(X[:2], y[:2])


def test_fit_twice_equals_fit_once(case, fitted):
    _, make, X, y, *_ = case
    again = make().fit(X, y).fit(X, y)
    np.testing.assert_array_equal(_weights(again), _weights(fitted))


def test_pickle_round_trip_predicts_the_same(case, fitted):
    _, _, X, y, *_ = case
    loaded = pickle.loads(pickle.dumps(fitted))
    _same_predictions(loaded.predict(X), fitted.predict(X))
    assert loaded.score(X, y) == fitted.score(X, y)
    assert loaded.get_params() == fitted.get_params()


def test_grid_search_selects_by_the_sequence_scorer(case):
    name, make, X, y, scorer, grid = case
    search = GridSearchCV(make(), grid, cv=3, scoring=scorer).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and scores.max() > scores.min()
    (key, values), = grid.items()
    assert search.best_params_[key] == values[int(np.argmax(scores))]
    _same_predictions(search.predict(X[:3]), search.best_estimator_.predict(X[:3]))


@pytest.mark.parametrize("name", ["tagger", "parser"])
def test_training_settings_reach_clones_through_the_constructor(name):
    """Training settings are constructor parameters (docs/decisions/0033): GridSearchCV varies one (max_iter)
    and the callback given to the estimator runs in every clone's fit; fit takes no training options."""
    make, data, scorer, _ = CASES[name]
    X, y = data()
    iterations = []
    estimator = make().set_params(callback=lambda record: iterations.append(record["iteration"]) or False,
                                  gap_tol=1e-3, clock="cpu")
    search = GridSearchCV(estimator, {"max_iter": [1, 3]}, cv=2, scoring=scorer()).fit(X, y)
    assert search.best_estimator_.get_params()["gap_tol"] == 1e-3
    assert search.best_estimator_.n_iter_ == search.best_params_["max_iter"]
    assert max(iterations) == 3 and iterations.count(0) == 2 * 2 + 1        # every fold's fit and the refit


def test_cross_val_score_clones_without_n_jobs(case):
    _, make, X, y, scorer, _ = case
    estimator = make()
    scores = cross_val_score(estimator, X, y, cv=3, scoring=scorer)
    assert scores.shape == (3,) and np.all(np.isfinite(scores))
    assert not hasattr(estimator, "coef_") and not hasattr(estimator, "model_w_")   # the folds fit clones
    assert "n_jobs" not in estimator.get_params() or estimator.get_params()["n_jobs"] in (None, 1)


def _bad_inputs(name, X, y):
    """(X, y, words of the one error) for every kind of bad input."""
    cases = [(X[:3], y[:2], "3 sentences in X but 2"),                      # sentence count mismatch
             ([X[0]], [list(y[0])[:-1]], "sentence 0 has")]               # token count mismatch
    if name == "parser":
        cases[1] = ([X[0]], [np.asarray(y[0])[:-1]], "words need")
        cases += [([[]], [np.zeros(0, dtype=int)], "non-empty list of tokens"),
                  ([X[0]], [[str(h) for h in y[0]]], "integer heads"),
                  ([X[0]], [[0.5] * len(X[0])], "integer heads")]
    else:
        if name == "tagger":            # the CRF skips empty sentences, as CRFsuite does (test below)
            cases.append(([X[0], []], [y[0], []], "sentence 1 is empty"))
        if name == "tagger":            # str, int or bool labels, given back in their type
            cases += [([X[0]], [[None] * len(y[0])], "labels must be str, int or bool"),
                      ([X[0]], [[0.5] * len(y[0])], "labels must be str, int or bool"),
                      ([X[0]], [[1] + list(y[0])[1:]], "labels must all have one type")]
        else:                           # sklearn-crfsuite's CRF takes strings only
            cases += [([X[0]], [[1] * len(y[0])], "labels must be strings"),
                      ([X[0]], [[None] * len(y[0])], "labels must be strings")]
    return cases


def test_bad_y_gives_one_clear_error(case):
    name, make, X, y, *_ = case
    for bad_X, bad_y, words in _bad_inputs(name, X, y):
        with pytest.raises(ValueError) as err:
            make().fit(bad_X, bad_y)
        assert words in str(err.value), (words, str(err.value))
        assert "\n" not in str(err.value)


def test_crf_skips_empty_sentences_as_crfsuite_does():
    from loglin.crfsuite import CRF
    X, y = _crf_data()
    with_empty = CRF(c2=0.1, max_iterations=30).fit(X[:5] + [[]] + X[5:], y[:5] + [[]] + y[5:])
    np.testing.assert_array_equal(with_empty.model_w_, CRF(c2=0.1, max_iterations=30).fit(X, y).model_w_)
