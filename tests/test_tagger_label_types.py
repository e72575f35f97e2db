"""loglin.Tagger with int and bool labels: fitted, predicted, listed in classes_ and saved in their own type,
with the same model as the string labels they stand for (the reference: a fit on those strings)."""
import numpy as np
import pytest

import loglin
from loglin.errors import ModelFormatError
from loglin.model_io import load_npz_model, save_npz_model
from loglin.tagging.estimator import FORMAT, VERSION
from loglin.tagging.datasets import bundled_conll2000_small
from loglin.data import read_conll2000

pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")   # short runs on purpose


@pytest.fixture(scope="module")
def chunks():
    train, _ = (read_conll2000(p) for p in bundled_conll2000_small())
    train = train[:60]
    return [[t[:2] for t in s] for s in train], [[t[2] for t in s] for s in train]


def _as_ints(y):
    """Every chunk label as an int id (numpy ints, as a LabelEncoder gives them), ids not in string order."""
    ids = {label: np.int64(7 * k + 3) for k, label in enumerate(sorted({t for s in y for t in s}, reverse=True))}
    return [[ids[t] for t in s] for s in y]


MODELS = [dict(model="crf", features="chunk"), dict(model="m3n", features="chunk"),
          dict(model="maxent", features="chunk"), dict(model="maxent", features="ner")]


@pytest.mark.parametrize("params", MODELS, ids=lambda p: f"{p['model']}-{p['features']}")
def test_int_labels_give_the_string_labels_model_in_their_own_type(params, chunks, tmp_path):
    X, y = chunks
    y_int = _as_ints(y)
    y_str = [[str(t) for t in s] for s in y_int]
    by_int = loglin.Tagger(**params, max_iter=8).fit(X, y_int)
    by_str = loglin.Tagger(**params, max_iter=8).fit(X, y_str)
    np.testing.assert_array_equal(by_int.coef_, by_str.coef_)
    assert all(type(c) is int for c in by_int.classes_)
    assert [str(c) for c in by_int.classes_] == list(by_str.classes_)
    guess = by_int.predict(X[:10])
    assert all(type(t) is int for s in guess for t in s)
    assert guess == [[int(t) for t in s] for s in by_str.predict(X[:10])]
    assert by_int.score(X, y_int) == pytest.approx(by_str.score(X, y_str))
    by_int.save(tmp_path / "ints.npz")
    loaded = loglin.Tagger.load(tmp_path / "ints.npz")
    assert loaded.classes_ == by_int.classes_ and loaded.predict(X[:10]) == guess


def test_bool_labels_round_trip(chunks, tmp_path):
    X, y = chunks
    y_bool = [[t.startswith("B-") for t in s] for s in y]
    tagger = loglin.Tagger(model="crf", features="chunk", max_iter=8).fit(X, y_bool)
    assert sorted(tagger.classes_) == [False, True] and all(type(c) is bool for c in tagger.classes_)
    guess = tagger.predict(X[:5])
    assert all(type(t) is bool for s in guess for t in s)
    assert tagger.predict(X[:1], constraints=[[True] + [None] * (len(X[0]) - 1)])[0][0] is True
    tagger.save(tmp_path / "bools.npz")
    assert loglin.Tagger.load(tmp_path / "bools.npz").predict(X[:5]) == guess


@pytest.mark.parametrize("labels, words", [([1, "B-NP"], "one type"), ([1.5, 2.5], "str, int or bool"),
                                           ([None, None], "str, int or bool"), ([(1,), (2,)], "str, int or bool")])
def test_other_label_types_are_refused_naming_the_token(labels, words):
    with pytest.raises(ValueError, match=words) as err:
        loglin.Tagger(max_iter=2).fit([[("a", "DT"), ("b", "NN")]], [labels])
    assert "sentence 0" in str(err.value)


def test_a_model_file_with_an_unknown_label_type_is_refused(chunks, tmp_path):
    X, y = chunks
    path = tmp_path / "m.npz"
    loglin.Tagger(model="crf", features="chunk", max_iter=2).fit(X, _as_ints(y)).save(path)
    meta, arrays = load_npz_model(path, FORMAT, VERSION)
    assert meta["label_type"] == "int"
    meta["label_type"] = "pickle"
    forged = tmp_path / "forged.npz"
    save_npz_model(forged, meta, arrays)
    with pytest.raises(ModelFormatError, match="label type"):
        loglin.Tagger.load(forged)


def test_int_labels_in_constraints_and_n_best(chunks):
    """Constraints given in the user's label type fix those labels; n-best lists come back in that type and
    equal the string model's lists mapped through the same ids."""
    X, y = chunks
    y_int = _as_ints(y)
    back = {int(v): k for k, v in {t: i for s, si in zip(y, y_int) for t, i in zip(s, si)}.items()}
    as_int = loglin.Tagger(model="crf", features="chunk", max_iter=15).fit(X, y_int)
    as_str = loglin.Tagger(model="crf", features="chunk", max_iter=15).fit(X, y)
    first = y_int[0][0]
    fixed = [[first] + [None] * (len(X[0]) - 1)]
    assert as_int.predict(X[:1], constraints=fixed)[0][0] == first
    nbest_int = as_int.predict_n_best(X[:2], 3)
    nbest_str = as_str.predict_n_best(X[:2], 3)
    assert [[[back[int(t)] for t in labels] for labels, _ in sent] for sent in nbest_int] == \
        [[labels for labels, _ in sent] for sent in nbest_str]
    np.testing.assert_allclose([s for sent in nbest_int for _, s in sent], [s for sent in nbest_str for _, s in sent],
                               rtol=1e-9)      # the label order differs, so sums differ at rounding
    assert all(isinstance(t, int) for sent in nbest_int for labels, _ in sent for t in labels)
