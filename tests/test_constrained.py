"""Constrained decoding of chain models: fixed / allowed labels, checked by brute-force enumeration."""
import itertools
import warnings

import numpy as np
import pytest

from loglin import training
from loglin.errors import ConvergenceWarning, InvalidInputError
from loglin.structured.chain import unary_scores
from test_training import CHUNKS


@pytest.fixture(scope="module")
def model():
    from loglin.structured.crf_features import build_chain_problem
    problem, space = build_chain_problem(CHUNKS, "chunk")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return training.train(problem, 10.0, "lbfgs", space=space, max_iter=50)[0]


def scores(model, sentence):
    """(node scores U, transition scores Tr) of one sentence, from the training kernels."""
    s = model.space
    _, tok_ptr, tok_attr = s.encode([sentence])
    U = np.empty((len(sentence), s.n_labels))
    unary_scores(0, len(sentence), model.w, 1.0, tok_ptr, tok_attr, np.empty(0), s.map_ptr, s.map_label,
                 s.map_feat, U)
    return U, model.transitions()


def brute_force(model, sentence, allowed):
    U, Tr = scores(model, sentence)
    n, K = U.shape
    best, arg = -np.inf, None
    for ys in itertools.product(range(K), repeat=n):
        if not all(y in allowed[t] for t, y in enumerate(ys)):
            continue
        score = sum(U[t, y] for t, y in enumerate(ys)) + sum(Tr[a, b] for a, b in zip(ys, ys[1:]))
        if score > best:
            best, arg = score, ys
    return [str(model.space.labels[y]) for y in arg]


def test_constrained_viterbi_is_the_best_labelling_among_the_allowed_ones(model):
    labels = [str(c) for c in model.space.labels]
    K = len(labels)
    sentence = [t[:2] for t in CHUNKS[0]]
    free = [set(range(K))] * len(sentence)
    assert model.tag([sentence], constraints=[[None] * len(sentence)]) == model.tag([sentence])
    assert model.tag([sentence])[0] == brute_force(model, sentence, free)
    rng = np.random.default_rng(0)
    for _ in range(20):
        fixed = [None] * len(sentence)
        allowed = [set(range(K)) for _ in sentence]
        for t in rng.choice(len(sentence), size=2, replace=False):
            if rng.random() < 0.5:
                y = int(rng.integers(K))
                fixed[t], allowed[t] = labels[y], {y}
            else:
                ys = rng.choice(K, size=2, replace=False)
                fixed[t], allowed[t] = {labels[y] for y in ys}, set(int(y) for y in ys)
        got = model.tag([sentence], constraints=[fixed])[0]
        assert got == brute_force(model, sentence, allowed)
        for t, want in enumerate(fixed):
            if isinstance(want, str):
                assert got[t] == want


def test_bad_constraints_are_one_clear_error(model):
    sentence = [t[:2] for t in CHUNKS[0]]
    with pytest.raises(InvalidInputError, match="unknown label 'B-XYZ'"):
        model.tag([sentence], constraints=[[None, "B-XYZ", None, None]])
    with pytest.raises(InvalidInputError, match="has 2 tokens"):
        model.tag([sentence], constraints=[[None, None]])


def test_crfsuite_estimator_takes_constraints():
    from loglin.crfsuite import CRF
    X = [[{"w": w.lower()} for w, _, _ in s] for s in CHUNKS]
    y = [[c for _, _, c in s] for s in CHUNKS]
    crf = CRF(c2=0.1).fit(X, y)
    free = crf.predict_single(X[0])
    forced = crf.predict_single(X[0], constraints=[None, None, "B-VP", None])
    assert forced[2] == "B-VP" and crf.predict(X, constraints=[None, None]).tolist() == crf.predict(X).tolist()
    assert len(free) == len(forced)


def test_cli_keep_labels_fixes_the_given_tokens(model, tmp_path):
    import subprocess
    import sys
    model.save(tmp_path / "crf.npz")
    sentence = CHUNKS[0]
    free = model.tag([[t[:2] for t in sentence]])[0]
    labels = [str(c) for c in model.space.labels]
    forced = next(lab for lab in labels if lab != free[1])
    lines = [f"{w} {p} {forced if i == 1 else '_'}" for i, (w, p, _) in enumerate(sentence)]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n\n")
    run = [sys.executable, "-m", "loglin.cli", "tag", "run", str(tmp_path / "crf.npz"), str(tmp_path / "in.txt"),
           "--input-format", "conll", "--keep-labels"]
    out = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    got = [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]
    expected = model.tag([[t[:2] for t in sentence]], constraints=[[None, forced, None, None]])[0]
    assert got == expected and got[1] == forced


def test_chain_marginals_equal_brute_force_enumeration(model):
    sentence = [t[:2] for t in CHUNKS[1]]
    mu = model.marginals([sentence])[0]
    U, Tr = scores(model, sentence)
    n, K = U.shape
    expected = np.zeros((n, K))
    for ys in itertools.product(range(K), repeat=n):
        p = np.exp(sum(U[t, y] for t, y in enumerate(ys)) + sum(Tr[a, b] for a, b in zip(ys, ys[1:])))
        for t, y in enumerate(ys):
            expected[t, y] += p
    np.testing.assert_allclose(mu, expected / expected[0].sum(), rtol=1e-10, atol=1e-14)
    best = model.tag([sentence])[0]
    assert mu.sum(axis=1) == pytest.approx(np.ones(n))
    assert len(best) == n


def _tagger_scores(tagger, sentence):
    """(U, Tr) of a loglin.Tagger's chain model on one sentence, summed from its weights by hand."""
    _, tok_ptr, attr = tagger.templates_.transform([sentence])
    s, w = tagger.model_.space, tagger.coef_
    U = np.zeros((len(sentence), s.n_labels))
    for t in range(len(sentence)):
        for a in attr[tok_ptr[t]:tok_ptr[t + 1]]:
            for j in range(s.map_ptr[a], s.map_ptr[a + 1]):
                U[t, s.map_label[j]] += w[s.map_feat[j]]
    return U, w[s.n_state:].reshape(s.n_labels, s.n_labels)


@pytest.mark.parametrize("kind", ["crf", "m3n"])
def test_cli_keep_labels_on_a_sequence_tagger_file_is_the_constrained_argmax(kind, tmp_path, capsys):
    import loglin
    from loglin.cli import main
    from loglin.data import read_columns
    from pathlib import Path
    data = read_columns(Path(__file__).parent / "data" / "ner_multilingual_train.txt")
    X, y = [[t[:-1] for t in s] for s in data], [[t[-1] for t in s] for s in data]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        tagger = loglin.Tagger(model=kind, features=["w[0]", "cap[0]", "__BOS__"], C=1.0, max_iter=100).fit(X, y)
    tagger.save(tmp_path / "t.npz")
    words = ["Ana", "vive", "en", "Lyon", "hoy"]
    U, Tr = _tagger_scores(tagger, [(w,) for w in words])
    labels, K = tagger.classes_, len(tagger.classes_)
    free = tagger.predict([[(w,) for w in words]])[0]
    rng = np.random.default_rng(1)
    for trial in range(4):
        fixed = [None] * len(words)
        for t in rng.choice(len(words), size=2, replace=False):
            fixed[t] = next(lab for lab in rng.permutation(labels) if lab != free[t])
        (tmp_path / "in.txt").write_text("".join(f"{w} {g or '_'}\n" for w, g in zip(words, fixed)) + "\n")
        assert main(["tag", "run", str(tmp_path / "t.npz"), str(tmp_path / "in.txt"), "--input-format", "conll",
                     "--keep-labels"]) == 0
        rows = [line.split() for line in capsys.readouterr().out.splitlines() if line.strip()]
        got = [r[-1] for r in rows]
        best, arg = -np.inf, None
        for ys in itertools.product(range(K), repeat=len(words)):
            if any(g is not None and labels[k] != g for k, g in zip(ys, fixed)):
                continue
            score = U[np.arange(len(words)), ys].sum() + sum(Tr[a, b] for a, b in zip(ys, ys[1:]))
            if score > best:
                best, arg = score, ys
        assert got == [labels[k] for k in arg]
        assert [r[0] for r in rows] == words and all(g is None or g == o for g, o in zip(fixed, got))
    assert got != free


def test_keep_labels_refuses_what_cannot_take_fixed_labels(tmp_path):
    import loglin
    from loglin.tagging.cli import run_model
    X = [[("Ana",), ("come",)], [("Luis",), ("duerme",)]]
    y = [["B-PER", "O"], ["B-PER", "O"]]
    tagger = loglin.Tagger(features=["w[0]"], max_iter=20).fit(X, y)
    (tmp_path / "text.txt").write_text("Ana come\n")
    with pytest.raises(InvalidInputError, match="needs CoNLL column input"):
        run_model(tagger, tmp_path / "text.txt", "text", keep_labels=True)
    (tmp_path / "one.txt").write_text("Ana\ncome\n\n")
    with pytest.raises(InvalidInputError, match="needs a label column"):
        run_model(tagger, tmp_path / "one.txt", "conll", keep_labels=True)
    maxent = loglin.Tagger(model="maxent", features="pos", max_iter=5)
    maxent.model_, maxent.templates_ = object(), None
    with pytest.raises(InvalidInputError, match="maxent model"):
        run_model(maxent, tmp_path / "text.txt", "conll", keep_labels=True)
    with pytest.raises(ValueError, match="constraints need a chain model"):
        maxent.predict([["Ana"]], constraints=[[None]])
