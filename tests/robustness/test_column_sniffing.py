"""`tag run` / `predict` with --input-format auto: CoNLL columns of one sentence (no blank line, no -DOCSTART-)
are read as columns when the model's label column says so, and text is never taken for columns."""
import random

import pytest

from loglin.cli import main

from .cli_helpers import MODELS, run

NAMES = [("Ana", "B-PER"), ("Oslo", "B-LOC"), ("Siemens", "B-ORG"), ("Lima", "B-LOC"), ("Kofi", "B-PER")]
WORDS = [("visits", "VBZ", "B-VP"), ("the", "DT", "B-NP"), ("city", "NN", "I-NP"), ("today", "NN", "B-NP"),
         ("and", "CC", "O"), ("sells", "VBZ", "B-VP"), (".", ".", "O")]


def conll2003_sentence(rng):
    """Rows (word, POS, chunk, NE) of one random sentence with one or two names."""
    rows = []
    for _ in range(rng.randint(4, 8)):
        if rng.random() < 0.3:
            name, tag = rng.choice(NAMES)
            rows.append((name, "NNP", "B-NP", tag))
        else:
            rows.append((*rng.choice(WORDS), "O"))
    return rows


@pytest.fixture(scope="module")
def ner_model(tmp_path_factory):
    """A small NER CRF trained from generated CoNLL-2003 columns (word POS chunk NE)."""
    folder = tmp_path_factory.mktemp("ner")
    rng = random.Random(3)
    corpus = folder / "train.txt"
    corpus.write_text("".join("".join(" ".join(r) + "\n" for r in conll2003_sentence(rng)) + "\n" for _ in range(30)))
    model = folder / "ner.npz"
    code = main(["tag", "train", "--task", "ner", str(corpus), "-o", str(model), "--max-iter", "20", "--quiet"])
    assert code == 0
    return model


def out_rows(out):
    return [line.split() for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("ending", ["", "\n", "\n\n"])
@pytest.mark.parametrize("command", [["tag", "run"], ["predict"]])
def test_one_conll2003_sentence_without_blank_lines_is_read_as_columns(ending, command, ner_model, tmp_path, capsys):
    rows = conll2003_sentence(random.Random(7))
    data = tmp_path / "one.txt"
    data.write_text("\n".join(" ".join(r) for r in rows) + ending)
    code, out, err = run(capsys, *command, ner_model, data)
    assert code == 0, err
    got = out_rows(out)
    assert [r[:4] for r in got] == [list(r) for r in rows] and all(len(r) == 5 for r in got)


def test_one_two_column_ner_sentence_is_read_as_columns(ner_model, tmp_path, capsys):
    rows = [(r[0], r[3]) for r in conll2003_sentence(random.Random(8))]
    data = tmp_path / "two.txt"
    data.write_text("\n".join(" ".join(r) for r in rows))
    code, out, err = run(capsys, "tag", "run", ner_model, data)
    assert code == 0, err
    assert [r[:2] for r in out_rows(out)] == [list(r) for r in rows]


def test_one_conll2003_sentence_given_to_a_pos_tagger_is_read_as_columns(tmp_path, capsys):
    data = tmp_path / "one.txt"
    data.write_text("The DT B-NP O\ncompany NN I-NP O\nsaid VBD B-VP O\nit PRP B-NP O\n")
    code, out, err = run(capsys, "tag", "run", MODELS / "tagger-pos.npz", data)
    assert code == 0, err
    assert [len(r) for r in out_rows(out)] == [5, 5, 5, 5]


TEXTS = {"four words a line": "Ana visits the city\nKofi sells the city\nthe city visits Oslo\n",
         "lines ending in a full stop": "Ana visits the city .\nKofi sells it today .\n",
         "two words and a full stop": "Hello .\nGoodbye .\n",
         "one line of four words": "Ana visits Oslo today\n"}


@pytest.mark.parametrize("text", sorted(TEXTS))
@pytest.mark.parametrize("model", ["ner", "tagger-pos.npz", "chain-crf.npz"])
def test_text_of_equal_width_lines_stays_text(text, model, ner_model, tmp_path, capsys):
    data = tmp_path / "text.txt"
    data.write_text(TEXTS[text])
    if model == "chain-crf.npz":                  # a chunker reads word/POS tokens
        data.write_text("\n".join(" ".join(f"{w}/NN" for w in line.split()) for line in TEXTS[text].splitlines()))
    code, out, err = run(capsys, "tag", "run", ner_model if model == "ner" else MODELS / model, data)
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == len(data.read_text().splitlines())            # one output line per sentence line
    assert all("/" in token for line in lines for token in line.split())
