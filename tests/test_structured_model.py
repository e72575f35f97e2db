"""ChainModel: training entry point, tagging, safe save/load, and argument errors."""
import numpy as np
import pytest

from loglin.errors import InvalidInputError, ModelFormatError
from loglin.structured.model import ChainModel
from loglin.tagging.estimator import train_chain_model

SENTENCES = [
    [("The", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sat", "VBD", "B-VP"), (".", ".", "O")],
    [("A", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("ran", "VBD", "B-VP"), ("home", "NN", "B-NP")],
    [("Dogs", "NNS", "B-NP"), ("bark", "VBP", "B-VP"), (".", ".", "O")],
] * 4


@pytest.mark.parametrize("model,solver", [("crf", "lbfgs"), ("crf", "eg"), ("crf", "sgd"), ("m3n", "eg"),
                                          ("m3n", "cutting-plane")])
def test_train_tag_save_load(tmp_path, model, solver):
    m = train_chain_model(SENTENCES, "chunk", model=model, solver=solver, C=10.0, max_iter=200)
    tags = m.tag(SENTENCES[:3])
    assert tags == [[t[2] for t in s] for s in SENTENCES[:3]]
    path = tmp_path / "m.npz"
    m.save(path)
    back = ChainModel.load(path)
    np.testing.assert_array_equal(back.w, m.w)
    assert back.tag(SENTENCES[:3]) == tags
    assert back.model == model


def test_errors(tmp_path):
    with pytest.raises(InvalidInputError):
        train_chain_model(SENTENCES, "chunk", model="m3n", solver="lbfgs")
    with pytest.raises(InvalidInputError):
        train_chain_model(SENTENCES, "chunk", model="hmm")
    with pytest.raises(InvalidInputError):
        train_chain_model([[("a", "b")]], "chunk")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ModelFormatError):
        ChainModel.load(bad)


def test_chunk_f1_agrees_with_local_rules():
    import random
    from loglin.structured.evaluate import _chunk_f1, chunk_f1
    rng = random.Random(0)
    tags = ["O", "B-NP", "I-NP", "B-VP", "I-VP", "I-PP"]
    gold = [[rng.choice(tags) for _ in range(rng.randint(1, 12))] for _ in range(200)]
    pred = [[t if rng.random() < 0.7 else rng.choice(tags) for t in s] for s in gold]
    assert chunk_f1(gold, pred) == pytest.approx(_chunk_f1(gold, pred), abs=1e-9)


def _chunk_attributes_plain(words, tags):
    """CRFsuite's chunking template written out directly (reference for the optimized one)."""
    n, out = len(words), []
    for t in range(n):
        def w(k):
            return words[t + k] if 0 <= t + k < n else None

        def p(k):
            return tags[t + k] if 0 <= t + k < n else None
        a = [f"w[{k}]={w(k)}" for k in (-2, -1, 0, 1, 2) if w(k) is not None]
        if w(-1) is not None:
            a.append(f"w[-1]|w[0]={w(-1)}|{w(0)}")
        if w(1) is not None:
            a.append(f"w[0]|w[1]={w(0)}|{w(1)}")
        a += [f"pos[{k}]={p(k)}" for k in (-2, -1, 0, 1, 2) if p(k) is not None]
        a += [f"pos[{k}]|pos[{k + 1}]={p(k)}|{p(k + 1)}" for k in (-2, -1, 0, 1)
              if p(k) is not None and p(k + 1) is not None]
        a += [f"pos[{k}]|pos[{k + 1}]|pos[{k + 2}]={p(k)}|{p(k + 1)}|{p(k + 2)}" for k in (-2, -1, 0)
              if p(k) is not None and p(k + 1) is not None and p(k + 2) is not None]
        if t == 0:
            a.append("__BOS__")
        if t == n - 1:
            a.append("__EOS__")
        out.append(a)
    return out


def test_chunk_preset_gives_the_plain_chunk_attributes_on_real_sentences():
    from loglin.data import read_conll2000
    from loglin.structured.crf_features import token_attributes
    from loglin.tagging.datasets import bundled_conll2000_small
    sentences = read_conll2000(bundled_conll2000_small()[0])[:300]
    sentences += [s[:1] for s in sentences[:3]] + [s[:2] for s in sentences[:3]] + [s[:3] for s in sentences[:3]]
    expected = [_chunk_attributes_plain([t[0] for t in s], [t[1] for t in s]) for s in sentences]
    assert token_attributes(sentences, "chunk") == expected


def test_predict_from_attribute_names_equals_predict():
    m = train_chain_model(SENTENCES, "chunk", model="crf", solver="lbfgs", C=10.0, max_iter=50)
    test = SENTENCES[:3] + [[("Unseen", "XX", "O"), ("words", "NNS", "O")]]
    xseqs = [_chunk_attributes_plain([t[0] for t in s], [t[1] for t in s]) for s in test]
    for a, b in zip(m.predict_ids_from_attributes(xseqs), m.predict_ids(test)):
        np.testing.assert_array_equal(a, b)
    assert m.predict_ids_from_attributes([]) == []
    with pytest.raises(InvalidInputError):
        m.predict_ids_from_attributes([[]])
