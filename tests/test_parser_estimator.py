"""loglin.Parser: fit / predict / score / save / load, sample weights, warm starts, dev traces."""
from pathlib import Path

import numpy as np
import pytest

import loglin
from loglin.data.conll import read_conllx
from loglin.parsing.model import uas

EN = Path(__file__).parent / "data" / "parse_en.conllu"
pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")   # short runs on purpose


@pytest.fixture(scope="module")
def english():
    sentences = read_conllx(EN)
    X = [list(zip(s.forms, s.pos)) for s in sentences]
    return sentences, X, [s.heads for s in sentences]


def test_fit_predict_score_save_load(english, tmp_path, serial_numba):
    sentences, X, y = english
    parser = loglin.Parser(max_iter=30).fit(X, y, X_dev=X[:4], y_dev=y[:4])
    heads = parser.predict(X)
    assert parser.score(X, y) == pytest.approx(uas(sentences, heads)["uas"] / 100)
    assert parser.score(X, y) > 0.9
    assert len([r for r in parser.trace_.records if "metric" in r]) > 3
    # Sentence objects and CoNLL rows give the same parse as (word, pos) pairs
    assert all(np.array_equal(a, b) for a, b in zip(parser.predict(sentences), heads))
    rows = [[(str(i + 1), f, "_", c, p, "_", "_", "_", "_", "_") for i, (f, c, p) in enumerate(zip(s.forms, s.cpos,
                                                                                                s.pos))]
            for s in sentences]
    assert all(np.array_equal(a, b) for a, b in zip(parser.predict(rows), heads))
    parser.save(tmp_path / "p.npz")
    loaded = loglin.Parser.load(tmp_path / "p.npz")
    assert loaded.get_params() == parser.get_params()
    assert all(np.array_equal(a, b) for a, b in zip(loaded.predict(X), heads))
    from loglin.model_io import load_model
    assert type(load_model(tmp_path / "p.npz")).__name__ == "ParserModel"     # `loglin parse` reads it


def test_sample_weight_two_is_the_sentence_twice(english, serial_numba):
    _, X, y = english
    kw = dict(solver="lbfgs", C=1.0, tol=1e-9, max_iter=3000)
    weighted = loglin.Parser(**kw).fit(X, y, sample_weight=[2.0] + [1.0] * (len(X) - 1))
    doubled = loglin.Parser(**kw).fit(X + X[:1], y + y[:1])
    plain = loglin.Parser(**kw).fit(X, y)
    assert weighted.objective_ == pytest.approx(doubled.objective_, rel=1e-7)
    assert abs(weighted.objective_ - plain.objective_) > 1e-3 * plain.objective_


def test_warm_start_and_checks(english, serial_numba):
    _, X, y = english
    parser = loglin.Parser(solver="lbfgs", tol=1e-6, max_iter=500, warm_start=True).fit(X, y)
    cold = parser.n_iter_
    parser.fit(X, y)
    assert cold > 10 and parser.n_iter_ <= 2
    with pytest.raises(ValueError, match="y \\(the heads\\) is required"):
        loglin.Parser().fit(X)
    with pytest.raises(ValueError, match="3 words need 3 integer heads"):
        loglin.Parser().fit([[("a", "X"), ("b", "Y"), ("c", "Z")]], [[0, 1]])
    with pytest.raises(ValueError, match="model must be"):
        loglin.Parser(model="svm").fit(X, y)


def test_spanish_treebank(serial_numba):
    from loglin.data.paths import shared_data_dir
    root = shared_data_dir()
    if root is None or not (root / "conll2007-esp" / "esp.train").is_file():
        pytest.skip("shared CoNLL 2007 Spanish data not available")
    train = read_conllx(root / "conll2007-esp" / "esp.train")[:150]
    test = read_conllx(root / "conll2007-esp" / "esp.test")[:50]
    parser = loglin.Parser(max_iter=5).fit(train, X_dev=test, y_dev=[s.heads for s in test])
    assert parser.n_skipped_ >= 0 and 0.5 < parser.score(test) <= 1.0
