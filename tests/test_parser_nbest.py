"""k-best parsing through the parser model, the estimator and `loglin parse run --nbest`."""
import json
from pathlib import Path

import numpy as np
import pytest

import loglin
from loglin.cli import main
from loglin.data.conll import read_conllx
from loglin.errors import InvalidInputError
from loglin.parsing.model import ParserModel
from loglin.structured import tree

EN = Path(__file__).parent / "data" / "parse_en.conllu"
pytestmark = pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")   # short runs on purpose


@pytest.fixture(scope="module")
def english():
    return read_conllx(EN)


@pytest.fixture(scope="module")
def parsers(english):
    return {m: loglin.Parser(model=m, solver="lbfgs" if m == "crf" else "auto", C=1.0, max_iter=40).fit(english)
            for m in ("crf", "m3n")}


def _arc_matrix(model, sentence):
    """S[h, m] = w . f(h, m) of one sentence, from its encoded arc features."""
    sent_ptr, arc_off, feat_ptr, feat_idx = model.space.encode([sentence])
    n = len(sentence)
    S = np.zeros((n + 1, n + 1))
    for h in range(n + 1):
        for m in range(1, n + 1):
            r = arc_off[0] + h * (n + 1) + m
            S[h, m] = model.w[feat_idx[feat_ptr[r]:feat_ptr[r + 1]]].sum()
    return S


@pytest.mark.parametrize("kind", ["crf", "m3n"])
def test_predict_n_best_is_best_first_and_starts_with_predict(parsers, english, kind):
    parser = parsers[kind]
    n_best = parser.predict_n_best(english, 6)
    assert len(n_best) == len(english)
    for trees, one, s in zip(n_best, parser.predict(english), english):
        assert len(trees) == 6                       # every sentence has at least 4 words: 55 trees
        assert np.array_equal(trees[0][0], one)
        assert len({tuple(h) for h, _ in trees}) == 6
        scores = [v for _, v in trees]
        assert scores == sorted(scores, reverse=True)
        S = _arc_matrix(parser.model_, s)
        shift = tree.log_partition(S) if kind == "crf" else 0.0
        for heads, score in trees:                   # CRF: log P(tree | x); M3N: w . f
            assert score == pytest.approx(tree.tree_score(S, heads) - shift, rel=1e-9, abs=1e-9)


def test_token_tuples_give_the_same_lists_as_sentences(parsers, english):
    rows = [list(zip(s.forms, s.cpos, s.pos)) for s in english]
    a, b = parsers["crf"].predict_n_best(rows, 4), parsers["crf"].predict_n_best(english, 4)
    assert [[(h.tolist(), v) for h, v in trees] for trees in a] == [[(h.tolist(), v) for h, v in trees] for trees in b]
    assert parsers["crf"].predict_n_best([], 4) == []


def test_crf_probabilities_of_every_tree_sum_to_one(parsers, english):
    short = [s for s in english if len(s) <= 5]
    assert short
    for s, trees in zip(short, parsers["crf"].predict_n_best(short, 1000)):
        assert len(trees) == {4: 55, 5: 273}[len(s)]
        assert sum(np.exp(v) for _, v in trees) == pytest.approx(1.0, rel=1e-9)


def test_labels_of_the_n_best_trees(parsers, english):
    model = parsers["crf"].model_
    n_best = model.parse_n_best(english, 3)
    labels = model.label_n_best(english, n_best)
    for r in range(3):
        heads = [trees[r][0] for trees in n_best]
        assert [lab[r] for lab in labels] == model.label(english, heads)
    assert ParserModel(model.space, model.w).label_n_best(english, n_best) is None


@pytest.mark.parametrize("bad", [0, -2, 1.5, "3"])
def test_bad_n_is_refused(parsers, english, bad):
    with pytest.raises(InvalidInputError):
        parsers["crf"].predict_n_best(english, bad)


def test_parse_run_nbest_writes_k_blocks_per_sentence(parsers, english, tmp_path, capsys):
    model_path = tmp_path / "en.npz"
    parsers["crf"].save(model_path)
    model = ParserModel.load(model_path)
    out = tmp_path / "out.conllu"
    assert main(["parse", "run", str(model_path), str(EN), "-o", str(out), "--nbest", "3"]) == 0
    n_best = model.parse_n_best(english, 3)
    labels = model.label_n_best(english, n_best)
    blocks = [b for b in out.read_text().split("\n\n") if b.strip()]
    assert len(blocks) == 3 * len(english)
    original = [b for b in EN.read_text().split("\n\n") if b.strip()]
    for j, block in enumerate(blocks):
        k, r = divmod(j, 3)
        lines = block.splitlines()
        assert lines[0].split()[:4] == ["#", "nbest", str(r), "score"]
        assert float(lines[0].split()[4]) == pytest.approx(n_best[k][r][1], rel=1e-5)
        words = [line.split("\t") for line in lines[1:] if line.split("\t")[0].isdigit()]
        assert [int(f[6]) for f in words] == n_best[k][r][0].tolist()
        assert [f[7] for f in words] == labels[k][r]
        assert [line for line in lines[1:] if line.startswith("#")] == \
            [line + (f"-{r}" if line.startswith("# sent_id") else "") for line in original[k].splitlines()
             if line.startswith("#")]
    parsed = read_conllx(out)                       # still a CoNLL-U file: each sentence three times
    assert [len(s) for s in parsed] == [len(s) for s in english for _ in range(3)]
    # --nbest 1 writes the 1-best parse, and the shortcut form takes the option too
    assert main(["parse", str(model_path), str(EN), "--nbest", "1"]) == 0
    one = capsys.readouterr().out
    assert [int(line.split("\t")[6]) for line in one.splitlines() if line.split("\t")[0].isdigit()] == \
        [h for heads in model.parse(english) for h in heads.tolist()]
    assert main(["parse", "run", str(model_path), str(EN), "--nbest", "0"]) != 0
    assert "--nbest" in capsys.readouterr().err


def test_parse_run_nbest_without_labeller_writes_underscores(parsers, english, tmp_path):
    plain = ParserModel(parsers["m3n"].model_.space, parsers["m3n"].model_.w, model="m3n")
    path = tmp_path / "plain.npz"
    plain.save(path)
    out = tmp_path / "out.conllu"
    assert main(["parse", "run", str(path), str(EN), "-o", str(out), "--nbest", "2"]) == 0
    words = [line.split("\t") for line in out.read_text().splitlines() if line.split("\t")[0].isdigit()]
    assert len(words) == 2 * sum(len(s) for s in english)
    assert {f[7] for f in words} == {"_"}


def test_each_tree_of_parse_run_nbest_is_a_conllu_sentence_of_its_own(tmp_path, capsys):
    """Comments that open a document or paragraph (or head a CoNLL-U Plus file) come once, not once per tree;
    every tree keeps the sentence's # text and gets a sent_id of its own (ids are unique in CoNLL-U)."""
    header = "# global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC\n# newdoc id = d1\n# newpar\n"
    sentences = [b for b in EN.read_text().split("\n\n") if b.strip()]
    bank = tmp_path / "doc.conllu"
    bank.write_text(header + "\n\n".join(sentences[:2] + ["# newpar id = p2\n" + sentences[2]] + sentences[3:])
                    + "\n\n")
    model = Path(__file__).parent / "data" / "models" / "parser-crf.npz"
    out = tmp_path / "out.conllu"
    k = 3
    assert main(["parse", "run", str(model), str(bank), "-o", str(out), "--nbest", str(k)]) == 0
    lines = out.read_text().splitlines()
    assert lines[0] == header.splitlines()[0]                   # CoNLL-U Plus: the first line of the file
    assert [line for line in lines if line.startswith("# newdoc")] == ["# newdoc id = d1"]
    assert [line for line in lines if line.startswith("# newpar")] == ["# newpar", "# newpar id = p2"]
    ids = [line.split("=", 1)[1].strip() for line in lines if line.startswith("# sent_id")]
    given = [line.split("=", 1)[1].strip() for s in sentences for line in s.splitlines() if line.startswith("# sent_id")]
    assert len(set(ids)) == len(ids) == k * len(given)
    assert ids == [f"{i}-{r}" for i in given for r in range(k)]
    texts = [line for line in lines if line.startswith("# text")]
    assert texts == [line for s in sentences for line in s.splitlines() if line.startswith("# text") for _ in range(k)]
    capsys.readouterr()
    assert main(["parse", "evaluate", str(model), str(out), "--json"]) == 0      # still a treebank loglin reads
    assert json.loads(capsys.readouterr().out)["sentences"] == k * len(sentences)
