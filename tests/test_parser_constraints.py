"""Constrained parsing (structured.tree_constrained): the best projective tree keeping given heads, against
enumeration of every projective tree; through ParserModel.parse, Parser.predict and `parse run --keep-heads`."""
from pathlib import Path

import numpy as np
import pytest

import loglin
from loglin.cli import main
from loglin.data.conll import read_conllx
from loglin.errors import InvalidInputError
from loglin.structured import tree
from loglin.structured.tree_constrained import constrained_eisner
from test_parser_nbest import _arc_matrix
from test_tree_nbest import all_trees

EN = Path(__file__).parent / "data" / "parse_en.conllu"
pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")   # short runs on purpose


def _score(S, heads):
    return sum(S[h, m] for m, h in enumerate(heads, start=1))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_constrained_eisner_is_the_best_enumerated_tree_keeping_the_fixed_heads(n):
    rng = np.random.default_rng(n)
    trees = all_trees(n)
    for trial in range(12):
        S = rng.normal(size=(n + 1, n + 1))
        fixed = np.full(n, -1)
        for m in rng.choice(n, size=rng.integers(0, n + 1), replace=False):     # random heads, often impossible
            fixed[m] = rng.choice([h for h in range(n + 1) if h != m + 1])
        keeping = [t for t in trees if all(f < 0 or t[m] == f for m, f in enumerate(fixed))]
        heads, score = constrained_eisner(S, fixed)
        if not keeping:
            assert score == -np.inf
            continue
        best = max(_score(S, t) for t in keeping)
        assert score == pytest.approx(best, abs=1e-12)
        assert any(np.array_equal(heads, t) for t in keeping) and _score(S, heads) == pytest.approx(best, abs=1e-12)


def test_no_constraint_is_eisner_and_a_tree_fixed_whole_is_itself():
    rng = np.random.default_rng(7)
    S = rng.normal(size=(8, 8))
    heads, score = tree.eisner(S)
    assert np.array_equal(constrained_eisner(S, [-1] * 7)[0], heads)
    other = all_trees(7)[123]
    kept, kept_score = constrained_eisner(S, other)
    assert np.array_equal(kept, other) and kept_score == pytest.approx(_score(S, other))


@pytest.fixture(scope="module")
def parser():
    return loglin.Parser(model="crf", solver="lbfgs", C=1.0, max_iter=40).fit(read_conllx(EN))


def test_predict_keeps_the_given_heads_and_parses_the_rest_best(parser):
    sentences = read_conllx(EN)[:12]
    free = parser.predict(sentences)
    model = parser._fitted()
    for s, h in zip(sentences, free):
        if len(s) < 3:
            continue
        gold = s.heads
        constraints = [[None] * len(s)]
        for m in range(0, len(s), 2):           # every other word keeps its gold head (a projective tree exists)
            constraints[0][m] = int(gold[m])
        got = parser.predict([s], constraints)[0]
        assert all(got[m] == gold[m] for m in range(0, len(s), 2))
        S = _arc_matrix(model, s)
        _, best = constrained_eisner(S, [-1 if c is None else c for c in constraints[0]])
        assert _score(S, got) == pytest.approx(best, rel=1e-12)
        assert _score(S, got) <= _score(S, h) + 1e-9                 # never above the unconstrained best
    assert all(np.array_equal(a, b) for a, b in zip(parser.predict(sentences, [None] * len(sentences)), free))


def test_bad_constraints_are_one_clear_error(parser):
    s = read_conllx(EN)[0]
    n = len(s)
    for bad, match in (([None] * (n + 1), "entries"), ([1] + [None] * (n - 1), "other than 1"),
                       ([n + 1] + [None] * (n - 1), r"\[0, "), (["2"] + [None] * (n - 1), "head id"),
                       ([True] + [None] * (n - 1), "head id")):
        with pytest.raises(InvalidInputError, match=match):
            parser.predict([s], [bad])
    if n >= 4:          # arcs 3 -> 1 and 4 -> 2 cross: no projective tree keeps both
        with pytest.raises(InvalidInputError, match="sentence 1: no projective tree"):
            parser.predict([s], [[3, 4] + [None] * (n - 2)])


def _partial_file(tmp_path, sentences, deprel=lambda m: "_"):
    """The sentences as CoNLL-X with the HEAD of every even word and ``deprel(m)`` in DEPREL; the kept heads."""
    lines = []
    for s in sentences:
        for m in range(len(s)):
            head = str(int(s.heads[m])) if m % 2 == 0 else "_"
            lines.append("\t".join([str(m + 1), s.forms[m], s.lemmas[m], s.cpos[m], s.pos[m], s.feats[m], head,
                                    deprel(m), "_", "_"]))
        lines.append("")
    given = tmp_path / "partial.conllu"
    given.write_text("\n".join(lines) + "\n")
    return given, [[int(h) if m % 2 == 0 else None for m, h in enumerate(s.heads)] for s in sentences]


def test_parse_run_keep_heads_keeps_the_input_heads(parser, tmp_path, capsys):
    model = tmp_path / "p.npz"
    parser.save(model)
    sentences = read_conllx(EN)[:5]
    given, constraints = _partial_file(tmp_path, sentences)
    out = tmp_path / "out.conllu"
    assert main(["parse", "run", str(model), str(given), "-o", str(out), "--keep-heads"]) == 0
    parsed = read_conllx(out)
    expected = parser.predict(sentences, constraints)
    for s, p, e in zip(sentences, parsed, expected):
        assert all(p.heads[m] == s.heads[m] for m in range(0, len(s), 2))
        assert np.array_equal(p.heads, e)
    assert main(["parse", "run", str(model), str(given)]) == 2            # without the flag: mixed HEAD refused
    assert main(["parse", "run", str(model), str(given), "--keep-heads", "--nbest", "2"]) == 2
    assert "--keep-heads" in capsys.readouterr().err


def test_parse_run_keep_heads_keeps_a_deprel_given_with_its_head(parser, tmp_path):
    model = tmp_path / "p.npz"
    parser.save(model)
    sentences = read_conllx(EN)[:6]
    deprel = lambda m: f"given{m}" if m % 3 != 1 else "_"       # also on free words, where it is not kept
    given, constraints = _partial_file(tmp_path, sentences, deprel)
    # kept: per sentence, per word, the DEPREL the output must keep or None
    kept = [[deprel(m) if h is not None and deprel(m) != "_" else None for m, h in enumerate(c)] for c in constraints]
    out = tmp_path / "out.conllu"
    assert main(["parse", "run", str(model), str(given), "-o", str(out), "--keep-heads"]) == 0
    parsed = read_conllx(out)
    heads = parser.predict(sentences, constraints)
    labelled = parser._fitted().label(sentences, heads)
    assert any(k is None for ks in kept for k in ks) and any(k is not None for ks in kept for k in ks)
    for p, ks, predicted in zip(parsed, kept, labelled):
        assert p.deprels == [k if k is not None else y for k, y in zip(ks, predicted)]
        assert not any(d.startswith("given") for d, k in zip(p.deprels, ks) if k is None)
