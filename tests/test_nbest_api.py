"""n-best tagging from Python: ChainModel.tag_n_best, Tagger.predict_n_best (CRF, M3N, Maxent) and
loglin.crfsuite.CRF.predict_n_best, checked against brute force and the 1-best decoders."""
import itertools
import warnings

import numpy as np
import pytest

import loglin
from loglin import training
from loglin.data import read_conll2000
from loglin.errors import ConvergenceWarning, InvalidInputError
from loglin.tagging.beam import iob_transitions
from loglin.tagging.datasets import bundled_conll2000_small
from test_constrained import scores as sentence_scores
from test_crfsuite import MIXED, MIXED_Y, score_path
from test_training import CHUNKS

pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")


@pytest.fixture(scope="module")
def chain_models():
    from loglin.structured.crf_features import build_chain_problem
    problem, space = build_chain_problem(CHUNKS, "chunk")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        crf = training.train(problem, 10.0, "lbfgs", space=space, max_iter=50)[0]
        m3n = training.train(problem, 1.0, "eg", loss="mm", space=space, max_iter=20)[0]
    return crf, m3n


@pytest.fixture(scope="module")
def conll():
    train, test = (read_conll2000(p) for p in bundled_conll2000_small())
    split = lambda ss: ([[t[:2] for t in s] for s in ss], [[t[2] for t in s] for s in ss])   # noqa: E731
    return split(train[:200]), split(test[:25])


def all_labellings(model, sentence, allowed=None):
    """[(score, label names)] of every labelling, best first; allowed[t]: label ids allowed at token t."""
    U, Tr = sentence_scores(model, sentence)
    n, K = U.shape
    out = []
    for ys in itertools.product(range(K), repeat=n):
        if allowed is not None and not all(y in allowed[t] for t, y in enumerate(ys)):
            continue
        s = U[0, ys[0]] + sum(Tr[ys[t - 1], ys[t]] + U[t, ys[t]] for t in range(1, n))
        out.append((s, [str(model.space.labels[y]) for y in ys]))
    out.sort(key=lambda item: -item[0])
    return out


@pytest.mark.parametrize("kind", ["crf", "m3n"])
def test_chain_model_n_best_is_the_top_of_the_enumeration(chain_models, kind):
    model = chain_models[0 if kind == "crf" else 1]
    sentence = [t[:2] for t in CHUNKS[0]]
    truth = all_labellings(model, sentence)
    log_z = np.logaddexp.reduce([s for s, _ in truth])
    got, = model.tag_n_best([sentence], 7)
    assert [labels for labels, _ in got] == [labels for _, labels in truth[:7]]
    shift = log_z if kind == "crf" else 0.0
    assert [s for _, s in got] == pytest.approx([s - shift for s, _ in truth[:7]], rel=1e-10, abs=1e-10)
    assert got[0][0] == model.tag([sentence])[0]
    # constraints: the given labels fixed, and the enumeration restricted the same way
    labels = [str(x) for x in model.space.labels]
    fixed = [None, "B-VP", None, None]
    allowed = [range(len(labels)) if f is None else [labels.index(f)] for f in fixed]
    got, = model.tag_n_best([sentence], 5, constraints=[fixed])
    truth = all_labellings(model, sentence, allowed)
    assert [labels for labels, _ in got] == [labels for _, labels in truth[:5]]
    assert got[0][0] == model.tag([sentence], constraints=[fixed])[0]


def test_iob_constraint_keeps_every_candidate_well_formed(chain_models):
    crf = chain_models[0]
    labels = [str(x) for x in crf.space.labels]
    allowed_after = iob_transitions(labels)
    index = {x: i for i, x in enumerate(labels)}
    sentences = [[t[:2] for t in s] for s in CHUNKS]
    for candidates in crf.tag_n_best(sentences, 20, iob_constraint=True):
        for tags, _ in candidates:
            ids = [index[x] for x in tags]
            assert allowed_after[len(labels), ids[0]] and all(allowed_after[a, b] for a, b in zip(ids, ids[1:]))
    free = crf.tag_n_best(sentences, 20)
    assert any(not all(allowed_after[index[a], index[b]] for a, b in zip(tags, tags[1:]))
               for candidates in free for tags, _ in candidates)


@pytest.mark.parametrize("model,features", [("crf", "chunk"), ("m3n", "chunk"), ("maxent", "chunk"),
                                            ("maxent", ["w[0]", "pos[0]", "pos[-1]"])])
def test_tagger_n_best_starts_with_predict(conll, model, features):
    (X, y), (Xt, _) = conll
    tagger = loglin.Tagger(model=model, features=features, max_iter=30).fit(X, y)
    lists = tagger.predict_n_best(Xt, 4)
    best = tagger.predict(Xt)
    assert len(lists) == len(Xt)
    for candidates, top, sentence in zip(lists, best, Xt):
        assert 1 <= len(candidates) <= 4 and candidates[0][0] == top
        assert all(len(tags) == len(sentence) for tags, _ in candidates)
        scores = [s for _, s in candidates]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(tags) for tags, _ in candidates}) == len(candidates)
        if model != "m3n":                       # log-probabilities
            assert np.exp(scores).sum() <= 1 + 1e-9
    assert any(len(c) == 4 for c in lists)
    assert tagger.predict_n_best([], 3) == []
    with pytest.raises(InvalidInputError):
        tagger.predict_n_best(Xt, 0)


def test_tagger_n_best_with_constraints(conll):
    (X, y), (Xt, yt) = conll
    tagger = loglin.Tagger(model="crf", features="chunk", max_iter=30).fit(X, y)
    constraints = [[label if t % 3 == 0 else None for t, label in enumerate(labels)] for labels in yt]
    lists = tagger.predict_n_best(Xt, 3, constraints=constraints)
    best = tagger.predict(Xt, constraints=constraints)
    for candidates, top, fixed in zip(lists, best, constraints):
        assert candidates[0][0] == top
        for tags, _ in candidates:
            assert all(f is None or f == t for f, t in zip(fixed, tags))
    maxent = loglin.Tagger(model="maxent", features="chunk", max_iter=10).fit(X, y)
    with pytest.raises(ValueError, match="chain model"):
        maxent.predict_n_best(Xt, 3, constraints=constraints)


def test_crfsuite_n_best_against_enumeration():
    from loglin.crfsuite import CRF
    crf = CRF(c2=0.2, max_iterations=50).fit(MIXED, MIXED_Y)
    for xseq in MIXED:
        scores = {path: score_path(crf, xseq, path) for path in itertools.product(crf.classes_, repeat=len(xseq))}
        log_z = np.logaddexp.reduce(list(scores.values()))
        ranked = sorted(scores, key=lambda p: -scores[p])
        got = crf.predict_n_best_single(xseq, 5)
        assert [tuple(tags) for tags, _ in got] == ranked[:5]
        assert [s for _, s in got] == pytest.approx([scores[p] - log_z for p in ranked[:5]], abs=1e-10)
        assert got[0][0] == crf.predict_single(xseq)
        everything = crf.predict_n_best_single(xseq, len(scores))
        assert sum(np.exp(s) for _, s in everything) == pytest.approx(1.0, rel=1e-10)


# ------------------------------------------------------------------ loglin tag run --nbest
CLI_SENTENCES = [
    [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"), ("deficit", "NN", "I-NP")],
    [("The", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("runs", "VBZ", "B-VP"), ("fast", "RB", "B-ADVP")],
    [("A", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sleeps", "VBZ", "B-VP"), (".", ".", "O")],
]


def read_n_best_output(text):
    """[(rank, value, [rows])] of CRF++ -n style output: '# RANK VALUE', token rows, a blank line."""
    blocks = []
    for chunk in text.strip("\n").split("\n\n"):
        lines = chunk.split("\n")
        _, rank, value = lines[0].split()
        blocks.append((int(rank), float(value), [line.split() for line in lines[1:]]))
    return blocks


@pytest.mark.parametrize("model,task", [("crf", "chunk"), ("m3n", "chunk"), ("maxent", "chunk"), ("crf", "ner")])
def test_tag_run_nbest_writes_crfpp_style_candidates(tmp_path, capsys, model, task):
    from loglin.cli import main
    from loglin.model_io import load_model
    text = "\n\n".join("\n".join(" ".join(t) for t in s) for s in CLI_SENTENCES * 4) + "\n"
    (tmp_path / "train.txt").write_text(text)
    fmt = ["--format", "columns"] if task == "ner" else []
    extra = ["--cutoff", "1"] if model == "maxent" else []
    assert main(["tag", "train", "--task", task, "--model", model, str(tmp_path / "train.txt"), *fmt, *extra,
                 "-o", str(tmp_path / "m.npz"), "--max-iter", "40", "--quiet"]) == 0
    capsys.readouterr()
    inputs = [[("The", "DT"), ("cat", "NN"), ("runs", "VBZ")], [("He", "PRP"), ("sleeps", "VBZ")]]
    (tmp_path / "in.txt").write_text("\n\n".join("\n".join(" ".join(t) for t in s) for s in inputs) + "\n")
    assert main(["tag", "run", str(tmp_path / "m.npz"), str(tmp_path / "in.txt"), "--nbest", "3"]) == 0
    blocks = read_n_best_output(capsys.readouterr().out)
    loaded = load_model(tmp_path / "m.npz")
    expected = (loaded.predict_n_best if hasattr(loaded, "predict_n_best") else loaded.tag_n_best)(inputs, 3)
    flat = [(rank, tags, score, sentence) for sentence, candidates in zip(inputs, expected)
            for rank, (tags, score) in enumerate(candidates)]
    assert len(blocks) == len(flat) and sum(len(c) == 3 for c in expected) >= 1
    for (rank, value, rows), (want_rank, tags, score, sentence) in zip(blocks, flat):
        assert rank == want_rank
        assert value == pytest.approx(score if model == "m3n" else np.exp(score), rel=1e-5, abs=1e-12)
        assert [row[:-1] for row in rows] == [list(t) for t in sentence]
        assert [row[-1] for row in rows] == tags
    assert main(["tag", "run", str(tmp_path / "m.npz"), str(tmp_path / "in.txt"), "--nbest", "0"]) != 0
    assert "--nbest must be an integer" in capsys.readouterr().err


# ------------------------------------------------------------------ n out of range: one clear error everywhere
BAD_N = [0, -2, 2.5, "3", True, None]


@pytest.mark.parametrize("n", BAD_N)
def test_every_n_best_entry_point_refuses_a_bad_n(conll, chain_models, n):
    from loglin.crfsuite import CRF
    from loglin.tagging.tagger import MaxentTaggerModel
    (X, y), (Xt, _) = conll
    sentences = [list(zip(words, tags)) for words, tags in zip(X[:60], y[:60])]
    sentences = [[(w, p, c) for (w, p), c in s] for s in sentences]
    maxent = MaxentTaggerModel.train(sentences, "chunk", cutoff=1, max_iter=5)
    with pytest.raises(InvalidInputError, match="number of best labellings"):
        maxent.tag_n_best(Xt[:2], n)
    crf = chain_models[0]
    with pytest.raises(InvalidInputError, match="number of best labellings"):
        crf.tag_n_best([[t[:2] for t in CHUNKS[0]]], n)
    tagger = loglin.Tagger(model="crf", features="chunk", max_iter=5).fit(X[:60], y[:60])
    with pytest.raises(InvalidInputError, match="number of best labellings"):
        tagger.predict_n_best(Xt[:2], n)
    suite = CRF(max_iterations=5).fit(MIXED, MIXED_Y)
    with pytest.raises(InvalidInputError, match="number of best labellings"):
        suite.predict_n_best(MIXED, n)


@pytest.mark.parametrize("nbest", ["0", "-1"])
def test_tag_run_refuses_a_bad_nbest_in_one_line(tmp_path, capsys, nbest):
    from loglin.cli import main
    text = "\n\n".join("\n".join(" ".join(t) for t in s) for s in CLI_SENTENCES * 4) + "\n"
    (tmp_path / "train.txt").write_text(text)
    assert main(["tag", "train", "--task", "chunk", "--model", "maxent", "--cutoff", "1", str(tmp_path / "train.txt"),
                 "-o", str(tmp_path / "m.npz"), "--max-iter", "5", "--quiet"]) == 0
    (tmp_path / "in.txt").write_text("The DT\ncat NN\n")
    capsys.readouterr()
    assert main(["tag", "run", str(tmp_path / "m.npz"), str(tmp_path / "in.txt"), "--nbest", nbest]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "--nbest" in err
