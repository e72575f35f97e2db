"""ChainModel: training entry point, tagging, safe save/load, and argument errors."""
import numpy as np
import pytest

from loglin.errors import InvalidInputError, ModelFormatError
from loglin.structured.model import ChainModel, train_chain_model

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
