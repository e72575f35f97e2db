"""loglin.Tagger and its feature templates: presets against plain reference features, the template file format,
fit / predict / score / save / load, sample weights, warm starts, scikit-learn's clone and GridSearchCV."""
from pathlib import Path

import numpy as np
import pytest

import loglin
from loglin.data import read_columns, read_conll2000
from loglin.errors import DataFormatError, InvalidInputError
from loglin.tagging.datasets import bundled_conll2000_small
from loglin.tagging.estimator import chunk_f1
from loglin.tagging.templates import CompiledTemplates, Template, TemplateSet, template_set

DATA = Path(__file__).parent / "data"
pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")   # short runs on purpose


@pytest.fixture(scope="module")
def conll():
    train, test = (read_conll2000(p) for p in bundled_conll2000_small())
    split = lambda ss: ([[t[:2] for t in s] for s in ss], [[t[2] for t in s] for s in ss])   # noqa: E731
    return split(train), split(test)


def _ner(name):
    sentences = read_columns(DATA / f"ner_multilingual_{name}.txt")
    return [[t[:-1] for t in s] for s in sentences], [[t[-1] for t in s] for s in sentences]


# ------------------------------------------------------------------ templates

def _pos_attributes_plain(words):
    """The CRF POS tagger's attributes written out directly (reference for the "pos" preset)."""
    n, out = len(words), []
    for t, word in enumerate(words):
        a = ["bias", f"w={word}", f"lw={word.lower()}"]
        a += [f"w[{k}]={words[t + k].lower()}" for k in (-2, -1, 1, 2) if 0 <= t + k < n]
        for m in (1, 2, 3):
            if len(word) > m:
                a += [f"suf{m}={word[-m:]}", f"pre{m}={word[:m]}"]
        a += [name for name, on in (("digit", any(ch.isdigit() for ch in word)), ("hyphen", "-" in word),
                                    ("upper" if t else "upper0", word[:1].isupper())) if on]
        a += ["__BOS__"] * (t == 0) + ["__EOS__"] * (t == n - 1)
        out.append(a)
    return out


def _reference_attributes(preset, sentence):
    from test_structured_model import _chunk_attributes_plain
    if preset == "chunk":
        return _chunk_attributes_plain([t[0] for t in sentence], [t[1] for t in sentence])
    return _pos_attributes_plain([t[0] for t in sentence])


@pytest.mark.parametrize("preset", ["chunk", "pos"])
def test_presets_give_the_reference_attributes_token_for_token(conll, preset):
    (X, _), (Xt, _) = conll
    compiled = CompiledTemplates(template_set(preset))
    compiled.fit(X[:400])
    assert compiled.token_attribute_names(X[:400]) == [_reference_attributes(preset, s) for s in X[:400]]
    # new sentences: the same attributes, less those never seen in training
    known = set(compiled.attribute_names())
    expected = [[[a for a in tok if a in known] for tok in _reference_attributes(preset, s)] for s in Xt[:100]]
    assert compiled.token_attribute_names(Xt[:100]) == expected


@pytest.mark.parametrize("preset", ["chunk", "pos"])
def test_chain_problems_number_attributes_first_seen_as_the_reference(preset):
    """build_chain_problem and ChainFeatureSpace.encode (the compiler, renumbered first seen / mapped by name)
    against the reference: attribute strings per token, ids in the order first seen, the attribute-label map
    of those arrays; and the new sentences' attributes looked up by name, unseen ones dropped."""
    from loglin.structured.crf_features import build_chain_problem, gold_column
    from loglin.structured.problem import attribute_label_map
    column = gold_column(preset)
    train, test = ([[t[:column + 1] for t in s] for s in read_conll2000(p)] for p in bundled_conll2000_small())
    problem, space = build_chain_problem(train, preset)
    index = {}

    def reference(sentences, grow):
        seq_ptr, tok_ptr, attr = [0], [0], []
        for s in sentences:
            for names in _reference_attributes(preset, s):
                ids = [index.setdefault(a, len(index)) if grow else index.get(a) for a in names]
                attr += [k for k in ids if k is not None]
                tok_ptr.append(len(attr))
            seq_ptr.append(len(tok_ptr) - 1)
        return np.array(seq_ptr, dtype=np.int64), np.array(tok_ptr, dtype=np.int64), np.array(attr, dtype=np.int32)
    arrays = reference(train, grow=True)
    for a, b in zip(arrays, (problem.seq_ptr, problem.tok_ptr, problem.tok_attr)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert list(index) == space.attributes == problem.attributes
    labels = sorted({t[column] for s in train for t in s})
    assert space.labels.tolist() == labels
    gold = np.array([labels.index(t[column]) for s in train for t in s], dtype=np.int32)
    np.testing.assert_array_equal(problem.gold, gold)
    gold_map = attribute_label_map((arrays[2], arrays[1]), gold, len(index), len(labels))
    for a, b in zip(gold_map, (problem.map_ptr, problem.map_label, problem.map_feat, problem.n_state)):
        np.testing.assert_array_equal(a, b)
    encoded, expected = space.encode(test[:150]), reference(test[:150], grow=False)
    assert len(index) == len(space.attributes)
    for a, b in zip(encoded, expected):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert len(encoded[2]) < sum(len(a) for s in test[:150] for a in _reference_attributes(preset, s))


def test_template_text_format(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("# my templates\nw[-1..1]\n\nlw[-1]|lw[0]   # a bigram\nS = shape[0]\ncap[0]\n__BOS__\n")
    ts = TemplateSet.from_file(path)
    assert [t.line() for t in ts] == ["w[-1]", "w[0]", "w[1]", "lw[-1]|lw[0]", "S = shape[0]", "cap[0]", "__BOS__"]
    assert TemplateSet.from_text(ts.text()) == ts
    compiled = CompiledTemplates(ts)
    compiled.fit([["Hello", "big", "World"]])
    assert compiled.token_attribute_names([["Hello", "World"]]) == [
        [["w[0]=Hello", "w[1]=World", "S=Xxxxx", "cap[0]", "__BOS__"], ["w[-1]=Hello", "w[0]=World", "S=Xxxxx", "cap[0]"]]]


@pytest.mark.parametrize("text, line, words", [
    ("w[0]\nw[zero]\n", 2, "cannot read 'w[zero]'"),
    ("w[0]\n\n# fine\nnosuch[1]\n", 4, "unknown observable 'nosuch'"),
    ("w[0]\nw[-1..1]|pos[0]\n", 2, "must stand alone"),
    ("w[0]\nw[2..1]\n", 2, "empty range"),
])
def test_bad_template_files_name_file_and_line(tmp_path, text, line, words):
    path = tmp_path / "bad.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError) as err:
        TemplateSet.from_file(path)
    assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value)
    assert "\n" not in str(err.value)


def test_template_errors():
    with pytest.raises(DataFormatError, match="no templates"):
        TemplateSet.from_text("# nothing\n", "empty.txt")
    with pytest.raises(InvalidInputError, match="repeated"):
        TemplateSet(["w[0]", "w[0]"])
    with pytest.raises(InvalidInputError, match="column 1"):
        CompiledTemplates(TemplateSet(["pos[0]"])).fit([["a", "b"]])
    assert Template.parse("pos[-1]|pos[0]")[0].items == (("pos", -1), ("pos", 0))


# ------------------------------------------------------------------ the estimator

def test_crf_chunker_round_trip(conll, tmp_path):
    (X, y), (Xt, yt) = conll
    tagger = loglin.Tagger(model="crf", features="chunk", max_iter=40).fit(X[:400], y[:400], X_dev=Xt[:50],
                                                                              y_dev=yt[:50])
    assert tagger.score_kind_ == "f1"
    guess = tagger.predict(Xt)
    assert tagger.score(Xt, yt) == pytest.approx(chunk_f1(yt, guess)) and tagger.score(Xt, yt) > 0.8
    dev = [r["metric"] for r in tagger.trace_.records if "metric" in r]
    assert len(dev) > 5 and dev[-1] > dev[0]
    tagger.save(tmp_path / "chunker.npz")
    loaded = loglin.Tagger.load(tmp_path / "chunker.npz")
    assert loaded.predict(Xt) == guess and loaded.get_params() == tagger.get_params()
    mu = tagger.predict_marginals(Xt[:20])
    assert all(np.allclose(m.sum(axis=1), 1.0) for m in mu)
    # the Viterbi label is the marginal argmax on nearly every token
    agree = np.mean(np.concatenate([np.asarray(tagger.classes_)[m.argmax(1)] == np.asarray(g)
                                    for m, g in zip(mu, guess[:20])]))
    assert agree > 0.97


def test_ner_preset_generalises_beyond_words(tmp_path):
    X, y = _ner("train")
    Xt, yt = _ner("test")
    assert len(X) == 30 and len(Xt) == 6           # -DOCSTART- skipped
    ner = loglin.Tagger(features="ner", C=10.0).fit(X, y)
    words = loglin.Tagger(features=["w[0]"], C=10.0).fit(X, y)
    assert ner.score(X, y) > 0.95
    assert ner.score(Xt, yt) > 0.6 and ner.score(Xt, yt) > words.score(Xt, yt) + 0.15
    path = tmp_path / "templates.txt"
    path.write_text(template_set("ner").text())
    from_file = loglin.Tagger(features=str(path), C=10.0).fit(X, y)
    assert from_file.predict(Xt) == ner.predict(Xt)
    from_file.save(tmp_path / "ner.npz")
    loaded = loglin.Tagger.load(tmp_path / "ner.npz")
    assert loaded.predict(Xt) == ner.predict(Xt) and loaded.templates_.templates == template_set("ner")


def test_sample_weight_two_is_the_sentence_twice():
    X, y = _ner("train")
    kw = dict(features="ner", C=1.0, tol=1e-9, max_iter=2000)
    weighted = loglin.Tagger(**kw).fit(X, y, sample_weight=[2.0] + [1.0] * (len(X) - 1))
    doubled = loglin.Tagger(**kw).fit(X + X[:1], y + y[:1])
    plain = loglin.Tagger(**kw).fit(X, y)
    assert weighted.objective_ == pytest.approx(doubled.objective_, rel=1e-7)
    assert abs(weighted.objective_ - plain.objective_) > 1e-3 * plain.objective_
    np.testing.assert_allclose(weighted.coef_, doubled.coef_, atol=1e-4)
    with pytest.raises(ValueError, match="Negative"):
        loglin.Tagger().fit(X, y, sample_weight=[-1.0] * len(X))


def test_warm_start_continues_from_the_previous_weights():
    X, y = _ner("train")
    tagger = loglin.Tagger(features="ner", tol=1e-6, warm_start=True).fit(X, y)
    cold = tagger.n_iter_
    tagger.fit(X, y)
    assert cold > 10 and tagger.n_iter_ <= 2
    fresh = loglin.Tagger(features="ner", tol=1e-6, warm_start=False).fit(X, y)
    fresh.fit(X, y)
    assert fresh.n_iter_ == cold


def test_m3n_and_maxent_models(conll, tmp_path):
    (X, y), (Xt, yt) = conll
    m3n = loglin.Tagger(model="m3n", features="chunk", max_iter=15).fit(X[:200], y[:200])
    assert m3n.score(Xt[:100], yt[:100]) > 0.6
    maxent = loglin.Tagger(model="maxent", features="chunk", max_iter=40).fit(X[:200], y[:200])
    assert maxent.score(Xt[:100], yt[:100]) > 0.7
    maxent.save(tmp_path / "maxent.npz")
    assert loglin.Tagger.load(tmp_path / "maxent.npz").predict(Xt[:100]) == maxent.predict(Xt[:100])


@pytest.mark.parametrize("features", ["chunk", "pos"])
def test_maxent_sample_weight_two_is_the_sentence_twice(conll, features):
    (X, y), _ = conll
    X = [[t if features == "chunk" else t[:1] for t in s] for s in X[:60]]
    y = y[:60]
    kw = dict(model="maxent", features=features, C=1.0, tol=1e-10, max_iter=3000, solver="lbfgs")
    weights = np.ones(len(X))
    weights[[0, 7]] = [2.0, 0.0]
    weighted = loglin.Tagger(**kw).fit(X, y, sample_weight=weights)
    kept = [i for i in range(len(X)) if i != 7]
    doubled = loglin.Tagger(**kw).fit([X[i] for i in kept] + [X[0]], [y[i] for i in kept] + [y[0]])
    plain = loglin.Tagger(**kw).fit(X, y)
    assert weighted.objective_ == pytest.approx(doubled.objective_, rel=1e-7)
    assert abs(weighted.objective_ - plain.objective_) > 1e-4 * plain.objective_
    np.testing.assert_allclose(weighted.coef_, doubled.coef_, atol=1e-4)
    with pytest.raises(ValueError, match="Negative"):
        loglin.Tagger(**kw).fit(X, y, sample_weight=-weights)


def test_input_checks():
    with pytest.raises(ValueError, match="sentence 1 has 2 tokens but 1 labels"):
        loglin.Tagger().fit([["a"], ["b", "c"]], [["X"], ["Y"]])
    with pytest.raises(ValueError, match="model must be"):
        loglin.Tagger(model="hmm").fit([["a"]], [["X"]])
    from loglin.estimators import NotFittedError
    with pytest.raises(NotFittedError):
        loglin.Tagger().predict([["a"]])


def test_clone_and_grid_search_over_C():
    sklearn = pytest.importorskip("sklearn")          # noqa: F841
    from sklearn.base import clone
    from sklearn.metrics import make_scorer
    from sklearn.model_selection import GridSearchCV
    X, y = _ner("train")
    tagger = loglin.Tagger(features="ner", C=3.0, max_iter=50)
    copy = clone(tagger)
    assert copy is not tagger and copy.get_params() == tagger.get_params()
    copy.set_params(C=0.5)
    assert copy.C == 0.5 and tagger.C == 3.0
    search = GridSearchCV(loglin.Tagger(features="ner", max_iter=50), {"C": [0.01, 10.0]}, cv=3,
                          scoring=make_scorer(chunk_f1)).fit(X, y)
    scores = search.cv_results_["mean_test_score"]
    assert search.best_params_["C"] == 10.0 and scores[1] > scores[0]
    assert search.best_estimator_.predict(X[:2]) == search.predict(X[:2])


# ------------------------------------------------------------------ the command line builds the same class

def test_cli_trains_ner_and_template_file_models(tmp_path, capsys):
    import json
    from loglin.cli import main
    from loglin.model_io import load_model
    train, test = DATA / "ner_multilingual_train.txt", DATA / "ner_multilingual_test.txt"
    assert main(["tag", "train", "--task", "ner", str(train), "-o", str(tmp_path / "ner.npz"), "--test", str(test),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kind"] == "crf" and summary["features"] == "ner" and summary["test"]["f1"] > 60
    model = load_model(tmp_path / "ner.npz")
    X, y = _ner("train")
    expected = loglin.Tagger(features="ner").fit(X, y)
    Xt, _ = _ner("test")
    assert isinstance(model, loglin.Tagger) and model.predict(Xt) == expected.predict(Xt)
    (tmp_path / "in.txt").write_text("Elena Navarro vive en Granada .\n")
    assert main(["tag", str(tmp_path / "ner.npz"), str(tmp_path / "in.txt")]) == 0
    assert capsys.readouterr().out.split()[:2] == ["Elena/B-PER", "Navarro/I-PER"]
    (tmp_path / "t.txt").write_text("w[0]\nshape[0]\n")
    assert main(["tag", "train", "--task", "ner", "--model", "m3n", "--features", str(tmp_path / "t.txt"), str(train),
                 "-o", str(tmp_path / "m3n.npz"), "--max-iter", "20", "--quiet"]) == 0
    assert load_model(tmp_path / "m3n.npz").templates_.templates == TemplateSet(["w[0]", "shape[0]"])
    (tmp_path / "bad.txt").write_text("w[0]\nshape[x]\n")
    assert main(["tag", "train", "--task", "ner", "--features", str(tmp_path / "bad.txt"), str(train),
                 "-o", str(tmp_path / "bad.npz")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{tmp_path / 'bad.txt'}:2:" in err[0] and not (tmp_path / "bad.npz").exists()
    capsys.readouterr()
    assert main(["tag", "train", "--task", "ner", "--model", "maxent", str(train), "-o", str(tmp_path / "x.npz"),
                 "--test", str(test), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    maxent = load_model(tmp_path / "x.npz")
    assert summary["kind"] == "maxent" and isinstance(maxent, loglin.Tagger) and maxent.model == "maxent"
    expected = loglin.Tagger(model="maxent", features="ner", C=summary["C"]).fit(X, y)
    assert maxent.predict(Xt) == expected.predict(Xt) and summary["test"]["f1"] > 40
    assert main(["tag", str(tmp_path / "x.npz"), str(tmp_path / "in.txt")]) == 0
    assert len(capsys.readouterr().out.split()) == 6


def test_cli_chunk_crf_keeps_the_chain_model_file(conll, tmp_path, capsys):
    from loglin.cli import main
    from loglin.model_io import load_model
    from loglin.structured.model import ChainModel
    (X, y), (Xt, _) = conll
    path = tmp_path / "train.txt"
    path.write_text("\n".join("\n".join(f"{w} {p} {c}" for (w, p), c in zip(xs, ys)) + "\n" for xs, ys in
                              zip(X[:150], y[:150])))
    assert main(["tag", "train", "--task", "chunk", "--model", "crf", str(path), "-o", str(tmp_path / "c.npz"),
                 "--max-iter", "30", "--quiet"]) == 0
    model = load_model(tmp_path / "c.npz")
    expected = loglin.Tagger(features="chunk", max_iter=30).fit(X[:150], y[:150])
    assert isinstance(model, ChainModel) and model.tag(Xt[:50]) == expected.predict(Xt[:50])


def test_estimator_conventions_on_sequences():
    """check_estimator's rules that apply to sequence input: __init__ stores, fit returns self and leaves its
    input alone, set_params / get_params round-trip, refitting with the same data gives the same model."""
    import copy
    X, y = _ner("train")
    X_before, y_before = copy.deepcopy(X), copy.deepcopy(y)
    features = ["w[0]", "shape[0]"]
    tagger = loglin.Tagger(features=features, C=2.0)
    assert tagger.features is features and tagger.get_params()["C"] == 2.0
    assert tagger.fit(X, y) is tagger and X == X_before and y == y_before
    first = tagger.coef_.copy()
    assert np.array_equal(tagger.set_params(**tagger.get_params()).fit(X, y).coef_, first)
    parser = loglin.Parser(C=0.5)
    assert parser.set_params(max_iter=3).get_params()["max_iter"] == 3
    with pytest.raises(ValueError):
        loglin.Tagger().set_params(no_such=1)


def test_marginals_equal_brute_force_enumeration():
    import itertools
    X, y = _ner("train")
    tagger = loglin.Tagger(features=["w[0]", "cap[0]", "__BOS__"], C=1.0).fit(X, y)
    sentence = [("Ana",), ("vive",), ("en",), ("Lyon",)]
    seq_ptr, tok_ptr, attr = tagger.templates_.transform([sentence])
    s, w = tagger.model_.space, tagger.coef_
    K, n = s.n_labels, len(sentence)
    U = np.zeros((n, K))
    for t in range(n):
        for a in attr[tok_ptr[t]:tok_ptr[t + 1]]:
            for j in range(s.map_ptr[a], s.map_ptr[a + 1]):
                U[t, s.map_label[j]] += w[s.map_feat[j]]
    Tr = w[s.n_state:].reshape(K, K)
    expected = np.zeros((n, K))
    best, best_score = None, -np.inf
    for ys in itertools.product(range(K), repeat=n):
        score = sum(U[t, k] for t, k in enumerate(ys)) + sum(Tr[a, b] for a, b in zip(ys, ys[1:]))
        expected[np.arange(n), ys] += np.exp(score)
        if score > best_score:
            best, best_score = ys, score
    np.testing.assert_allclose(tagger.predict_marginals([sentence])[0], expected / expected[0].sum(), rtol=1e-9)
    assert tagger.predict([sentence])[0] == [tagger.classes_[k] for k in best]


# ------------------------------------------------------------------ the Maxent tagger over templates

def _greedy_by_hand(tagger, sentence):
    """Left-to-right argmax of P(y | template attributes, previous label, previous two labels), summed from
    the weights by hand: predicate ids are the attributes, then the seen t codes, then the seen t2 codes."""
    model = tagger.model_
    feats = model.features
    _, tok_ptr, attr = tagger.templates_.transform([sentence])
    K = len(tagger.classes_)
    t_keys, t2_keys = feats.history_keys
    A = tagger.templates_.n_attributes
    out = []
    for i in range(len(sentence)):
        prev1 = out[i - 1] if i >= 1 else K
        prev2 = out[i - 2] if i >= 2 else K
        preds = list(attr[tok_ptr[i]:tok_ptr[i + 1]])
        for base, keys, code in ((A, t_keys, prev1), (A + len(t_keys), t2_keys, prev2 * (K + 1) + prev1)):
            hit = np.flatnonzero(keys == code)
            preds += [base + int(hit[0])] if len(hit) else []
        score = np.zeros(K)
        for p in preds:
            for j in range(model.map_ptr[p], model.map_ptr[p + 1]):
                score[model.map_label[j]] += model.w[model.map_feat[j]]
        out.append(int(np.argmax(score)))
    return [tagger.classes_[k] for k in out]


def test_template_maxent_tagger_uses_the_templates_and_the_label_history(tmp_path):
    X, y = _ner("train")
    Xt, yt = _ner("test")
    small = loglin.Tagger(model="maxent", features=["w[0]"], C=1.0).fit(X, y)
    tagger = loglin.Tagger(model="maxent", features=["w[0]", "shape[0]", "suffix3[0]"], C=1.0, beam=1).fit(X, y)
    names = set(tagger.templates_.attribute_names())
    assert any(n.startswith("shape[0]=") for n in names) and not any(n.startswith("shape[0]=") for n in
                                                                    small.templates_.attribute_names())
    assert len(tagger.coef_) > len(small.coef_) and tagger.score(X, y) > 0.8
    for sentence in Xt[:5] + X[:5]:
        assert tagger.predict([sentence])[0] == _greedy_by_hand(tagger, sentence)
    ner = loglin.Tagger(model="maxent", features="ner", max_iter=200).fit(X, y)
    assert ner.score(Xt, yt) > 0.5
    ner.save(tmp_path / "m.npz")
    from loglin.model_io import load_model
    loaded = load_model(tmp_path / "m.npz")
    assert isinstance(loaded, loglin.Tagger) and loaded.model == "maxent"
    assert loaded.predict(Xt) == ner.predict(Xt) and loaded.get_params()["features"] == "ner"
    with pytest.raises(ValueError, match="chain model"):
        ner.predict_marginals(Xt[:1])
    from loglin.inspection import weights
    listed = weights(loaded)
    assert len(listed) == np.count_nonzero(loaded.coef_)
    names = {name for _, name, _ in listed}
    assert any(n.startswith("t=") for n in names) and any(n.startswith("t2=<s>,") for n in names)
    assert any(n.startswith("w[0]=") for n in names)


def test_template_maxent_sample_weight_two_is_the_sentence_twice():
    X, y = _ner("train")
    kw = dict(model="maxent", features=["w[-1..1]", "shape[0]"], C=1.0, tol=1e-10, max_iter=3000, solver="lbfgs")
    weights = np.ones(len(X))
    weights[[1, 4]] = [2.0, 0.0]
    weighted = loglin.Tagger(**kw).fit(X, y, sample_weight=weights)
    doubled = loglin.Tagger(**kw).fit(X + X[1:2] + X[4:5], y + y[1:2] + y[4:5],
                                      sample_weight=np.r_[np.where(weights == 2.0, 1.0, weights), 1.0, 0.0])
    plain = loglin.Tagger(**kw).fit(X, y)
    assert weighted.objective_ == pytest.approx(doubled.objective_, rel=1e-7)
    assert abs(weighted.objective_ - plain.objective_) > 1e-4 * plain.objective_
    warm = loglin.Tagger(**{**kw, "tol": 1e-6}, warm_start=True).fit(X, y)
    cold_iterations = warm.n_iter_
    assert warm.fit(X, y).n_iter_ <= 2 < cold_iterations


def _to_iobes(tags):
    """IOB2 -> IOBES: a chunk of one token is S-X, the last token of a longer one E-X."""
    out = []
    for i, tag in enumerate(tags):
        nxt = tags[i + 1] if i + 1 < len(tags) else "O"
        inside_next = nxt.startswith("I-") and nxt[2:] == tag[2:]
        if tag.startswith("B-"):
            out.append(tag if inside_next else "S-" + tag[2:])
        elif tag.startswith("I-"):
            out.append(tag if inside_next else "E-" + tag[2:])
        else:
            out.append(tag)
    return out


def test_iobes_labels_are_scored_by_chunk_f1():
    from loglin.tagging.conlleval import conlleval, iobes_to_iob2
    X, y = _ner("train")
    Xt, yt = _ner("test")
    y_iobes, yt_iobes = [_to_iobes(s) for s in y], [_to_iobes(s) for s in yt]
    assert [iobes_to_iob2(s) for s in y_iobes] == y              # the conversion is exact
    tagger = loglin.Tagger(features="ner", C=10.0).fit(X, y_iobes)
    assert tagger.score_kind_ == "f1"
    guess = tagger.predict(Xt)
    expected = conlleval([iobes_to_iob2(s) for s in yt_iobes], [iobes_to_iob2(s) for s in guess])["f1"] / 100
    assert tagger.score(Xt, yt_iobes) == pytest.approx(expected, abs=1e-12)
    accuracy = sum(a == b for s, g in zip(yt_iobes, guess) for a, b in zip(s, g)) / sum(map(len, yt_iobes))
    assert tagger.score(Xt, yt_iobes) != pytest.approx(accuracy)
