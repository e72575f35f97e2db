"""Tests of loglin.data.conll: column files, CoNLL-2000 chunking, CoNLL-X/CoNLL-U, projectivity."""

import numpy as np
import pytest

from loglin.data import (Sentence, is_projective, read_columns, read_conll2000, read_conllx,
                         write_conllx)
from loglin.errors import DataFormatError, InvalidInputError
from conftest import at, data_file, write






# ---------------------------------------------------------------- generic columns


def test_read_columns_blocks(tmp_path):
    text = "-DOCSTART- -X- O\n\nA b c\nD e f\n\n\n\nG h i\n"   # no final blank line
    assert read_columns(write(tmp_path, text)) == [[("A", "b", "c"), ("D", "e", "f")], [("G", "h", "i")]]


def test_read_columns_wrong_count(tmp_path):
    path = write(tmp_path, "a b\nc d\n\ne f g\n")
    with pytest.raises(DataFormatError, match=at(path, 4, "expected 2 columns, got 3")):
        read_columns(path)
    with pytest.raises(DataFormatError, match=at(path, 1, "expected 3 columns, got 2")):
        read_columns(path, n_columns=3)
    with pytest.raises(InvalidInputError):
        read_columns(path, n_columns=0)


def test_read_conll2000(tmp_path):
    text = "He PRP B-NP\nreckons VBZ B-VP\n. . O\n\nOK UH B-INTJ\n"
    assert read_conll2000(write(tmp_path, text)) == [
        [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), (".", ".", "O")],
        [("OK", "UH", "B-INTJ")],
    ]


@pytest.mark.parametrize("tag", ["B", "X-NP", "b-NP", "B-", "I_NP", "o"])
def test_read_conll2000_bad_iob_tag(tmp_path, tag):
    path = write(tmp_path, f"a DT B-NP\n\nb NN {tag}\n")
    with pytest.raises(DataFormatError, match=at(path, 3, "IOB tag")):
        read_conll2000(path)


def test_read_conll2000_wrong_columns_and_bytes(tmp_path):
    path = write(tmp_path, "a DT B-NP\nb NN\n")
    with pytest.raises(DataFormatError, match=at(path, 2, "expected 3 columns, got 2")):
        read_conll2000(path)
    path = write(tmp_path, b"a DT B-NP\n\nb\xff NN I-NP\n", name="bytes.txt")
    with pytest.raises(DataFormatError, match=at(path, 3, "UTF-8.*0xff")):
        read_conll2000(path)


# ---------------------------------------------------------------- CoNLL-X / CoNLL-U

CONLLX = """\
1 El el d da gen=m 2 spec 2 spec
2 gato gato n nc _ 3 suj _ _
3 duerme dormir v vm _ 0 ROOT _ _

1 Sí sí r rg _ 0 ROOT _ _
"""

CONLLU = (
    "# sent_id = 1\n"
    "# text = New York isn't far\n"
    "1\tNew York\tNew York\tPROPN\tNNP\t_\t4\tnsubj\t_\t_\n"
    "2-3\tisn't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tis\tbe\tAUX\t_\t_\t4\tcop\t_\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_\n"
    "3.1\tgone\tgo\tVERB\t_\t_\t_\t_\t4:conj\t_\n"
    "4\tfar\tfar\tADV\tRB\t_\t0\troot\t_\tSpaceAfter=No\t\n"
    "\n"
)


def test_read_conllx_whitespace_separated(tmp_path):
    first, second = read_conllx(write(tmp_path, CONLLX))
    assert len(first) == 3 and len(second) == 1
    assert first.ids.dtype == np.int32 and list(first.ids) == [1, 2, 3]
    assert first.forms == ["El", "gato", "duerme"] and first.lemmas == ["el", "gato", "dormir"]
    assert first.cpos == ["d", "n", "v"] and first.pos == ["da", "nc", "vm"]
    assert first.feats == ["gen=m", "_", "_"]
    assert first.heads.dtype == np.int32 and list(first.heads) == [2, 3, 0]
    assert first.deprels == ["spec", "suj", "ROOT"]


def test_read_conllu(tmp_path):
    (sentence,) = read_conllx(write(tmp_path, CONLLU))
    assert sentence.forms == ["New York", "is", "n't", "far"]    # tab split keeps the space
    assert sentence.cpos == ["PROPN", "AUX", "PART", "ADV"]
    assert sentence.pos == ["NNP", "AUX", "RB", "RB"]            # XPOS "_" falls back to UPOS
    assert list(sentence.heads) == [4, 4, 4, 0]


@pytest.mark.parametrize(
    "bad_line, message",
    [
        ("2 x x n n _ 1 dep _", "expected 10 columns, got 9"),
        ("2 x x n n _ 1 dep _ _ _", "expected 10 columns, got 11"),
        ("3 x x n n _ 1 dep _ _", "expected token id 2, got '3'"),
        ("1 x x n n _ 1 dep _ _", "expected token id 2, got '1'"),
        ("two x x n n _ 1 dep _ _", "expected token id 2"),
        ("2 x x n n _ _ dep _ _", "integer head, got '_'"),
        ("2 x x n n _ -1 dep _ _", "integer head, got '-1'"),
        ("2 x x n n _ 3 dep _ _", r"head in \[0, 2\], got 3"),
        ("2\tx\t\tn\tn\t_\t1\tdep\t_\t_", "column 3"),
    ],
)
def test_read_conllx_errors(tmp_path, bad_line, message):
    path = write(tmp_path, f"1 a a n n _ 0 ROOT _ _\n\n# comment\n1 w w n n _ 0 ROOT _ _\n{bad_line}\n")
    with pytest.raises(DataFormatError, match=at(path, 5, message)):
        read_conllx(path)


def test_read_conllx_first_id_and_bytes(tmp_path):
    path = write(tmp_path, "1 a a n n _ 0 ROOT _ _\n\n2 b b n n _ 0 ROOT _ _\n")
    with pytest.raises(DataFormatError, match=at(path, 3, "expected token id 1")):
        read_conllx(path)
    path = write(tmp_path, b"1 a a n n _ 0 ROOT _ _\n2 \xc3 b n n _ 0 ROOT _ _\n", name="b.conll")
    with pytest.raises(DataFormatError, match=at(path, 2, "UTF-8")):
        read_conllx(path)


def test_write_conllx_round_trip_and_predictions(tmp_path):
    sentences = read_conllx(write(tmp_path, CONLLX + "\n" + CONLLU))
    path = tmp_path / "out.conll"
    write_conllx(path, sentences)
    back = read_conllx(path)
    for a, b in zip(sentences, back, strict=True):
        for field in ("forms", "lemmas", "cpos", "pos", "feats", "deprels"):
            assert getattr(a, field) == getattr(b, field)
        np.testing.assert_array_equal(a.heads, b.heads)
    first_line = path.read_text().splitlines()[0]
    assert first_line == "1\tEl\tel\td\tda\tgen=m\t2\tspec\t_\t_"

    heads = [np.array([0, 1, 1]), [0], [0, 1, 1, 1]]
    deprels = [["r", "a", "b"], ["r"], ["r", "x", "y", "z"]]
    write_conllx(path, sentences, heads=heads, deprels=deprels)
    back = read_conllx(path)
    assert [list(s.heads) for s in back] == [list(h) for h in heads]
    assert [s.deprels for s in back] == deprels
    assert back[0].forms == sentences[0].forms


def test_write_conllx_rejects_bad_input(tmp_path):
    (sentence,) = read_conllx(write(tmp_path, "1 a a n n _ 0 ROOT _ _\n2 b b n n _ 1 x _ _\n"))
    out = tmp_path / "out.conll"
    with pytest.raises(InvalidInputError):
        write_conllx(out, [sentence], heads=[[0, 1], [0]])       # one list per sentence
    with pytest.raises(InvalidInputError):
        write_conllx(out, [sentence], heads=[[0]])               # one head per token
    with pytest.raises(InvalidInputError):
        write_conllx(out, [sentence], heads=[[0, 5]])            # head out of range
    sentence.forms[0] = "a\tb"
    with pytest.raises(InvalidInputError):
        write_conllx(out, [sentence])


# ---------------------------------------------------------------- projectivity


@pytest.mark.parametrize(
    "heads, projective",
    [
        ([], True),
        ([0], True),
        ([2, 0, 2], True),
        ([0, 1, 2, 3], True),
        ([2, 0, 0], True),         # arcs (1,2), (0,2), (0,3): shared end points do not cross
        ([3, 4, 0, 3], False),     # arcs (1,3) and (2,4) cross
        ([0, 4, 1, 1], False),     # arcs (1,3) and (2,4) cross
        ([3, 0, 2, 2, 1], False),  # arc (1,3) crosses the root arc (0,2)
    ],
)
def test_is_projective_examples(heads, projective):
    assert is_projective(np.array(heads, dtype=np.int64)) is projective


def test_is_projective_rejects_bad_heads():
    with pytest.raises(InvalidInputError):
        is_projective([0, 3])
    with pytest.raises(InvalidInputError):
        is_projective([[0]])
    with pytest.raises(InvalidInputError):
        is_projective([0.0, 1.0])


def _projective_by_dominance(heads):
    """Independent definition: every word between a head and its dependent descends from that head."""
    n = len(heads)

    def dominated(word, head):
        for _ in range(n + 1):
            if word == head:
                return True
            if word == 0:
                return False
            word = heads[word - 1]
        return False

    for dep in range(1, n + 1):
        head = heads[dep - 1]
        lo, hi = min(dep, head), max(dep, head)
        if not all(dominated(k, head) for k in range(lo + 1, hi)):
            return False
    return True


# ---------------------------------------------------------------- real data


def test_conll2000_real():
    train = read_conll2000(data_file("conll2000", "train.txt"))
    assert len(train) == 8936 and sum(map(len, train)) == 211727
    assert len({tok[1] for sent in train for tok in sent}) == 44     # CoNLL2000-P labels
    assert len({tok[2] for sent in train for tok in sent}) == 22     # CoNLL2000-C labels
    test = read_conll2000(data_file("conll2000", "test.txt"))
    assert len(test) == 2012 and sum(map(len, test)) == 47377


def test_conll2007_spanish_real(tmp_path):
    train = read_conllx(data_file("conll2007-esp", "esp.train"))
    assert len(train) == 2949 and sum(map(len, train)) == 75822
    assert train[0].forms[:3] == ["El", "aumento", "del"] and train[0].forms[3] == "índice"
    assert all((s.heads == 0).sum() == 1 for s in train)
    flags = [is_projective(s.heads) for s in train]
    assert flags == [_projective_by_dominance(list(s.heads)) for s in train]
    assert 0 < flags.count(False) < len(train) // 10
    # writing and reading back the real treebank changes nothing
    write_conllx(tmp_path / "esp.conll", train)
    back = read_conllx(tmp_path / "esp.conll")
    assert [s.forms for s in back] == [s.forms for s in train]
    assert [s.heads.tolist() for s in back] == [s.heads.tolist() for s in train]
    test = read_conllx(data_file("conll2007-esp", "esp.test"))
    assert sum(map(len, test)) == 19206


def test_sentence_is_a_plain_dataclass():
    s = Sentence(np.arange(1, 2, dtype=np.int32), ["a"], ["a"], ["n"], ["nc"], ["_"],
                 np.zeros(1, np.int32), ["ROOT"])
    assert len(s) == 1
