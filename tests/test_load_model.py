"""load_model reads every model kind, including files written before it existed (tests/data/models)."""
import json
from pathlib import Path

import numpy as np
import pytest

from loglin.data import read_events, read_svmlight
from loglin.data.conll import read_conllx
from loglin.errors import ModelFormatError
from loglin.model import LinearModel
from loglin.model_io import load_model
from loglin.parsing.model import ParserModel
from loglin.structured.model import ChainModel
from loglin.tagging.tagger import MaxentTaggerModel

MODELS = Path(__file__).parent / "data" / "models"
EXPECTED = json.loads((MODELS / "expected.json").read_text())


def _predicted(name, model):
    """What the model predicts on the input recorded beside it, in the recorded form."""
    e = EXPECTED[name]
    if isinstance(model, LinearModel):
        if e["data"].endswith(".svm"):
            X = read_svmlight(MODELS / e["data"])[0]
        else:
            ev = read_events(MODELS / e["data"])
            X = (ev.contexts, ev.values)
        return {"labels": [str(v) for v in model.predict(X)], "proba": model.predict_proba(X)}
    if isinstance(model, ParserModel):
        return {"heads": [h.tolist() for h in model.parse(read_conllx(MODELS / e["treebank"]))]}
    if isinstance(model, ChainModel):
        return {"tags": model.tag([[tuple(t) for t in s] for s in e["sentences"]])}
    return {"tags": model.tag(e["sentences"])}


@pytest.mark.parametrize("name, cls", [("lr.npz", LinearModel), ("maxent.npz", LinearModel),
                                       ("tagger-pos.npz", MaxentTaggerModel), ("chain-crf.npz", ChainModel),
                                       ("chain-m3n.npz", ChainModel), ("parser-crf.npz", ParserModel)])
def test_old_model_files_load_and_predict_as_recorded(name, cls, serial_numba):
    model = load_model(MODELS / name)
    assert type(model) is cls
    got, want = _predicted(name, model), EXPECTED[name]
    for key, value in got.items():
        if key == "proba":
            np.testing.assert_allclose(value, want["proba"], rtol=0, atol=1e-8)
        else:
            assert value == want[key], key


def test_old_chain_model_keeps_its_solver_name():
    assert load_model(MODELS / "chain-m3n.npz").solver == EXPECTED["chain-m3n.npz"]["solver"]


def test_a_new_model_of_every_kind_round_trips(tmp_path, serial_numba):
    for name in ("maxent.npz", "tagger-pos.npz", "chain-crf.npz", "parser-crf.npz"):
        model = load_model(MODELS / name)
        model.save(tmp_path / name)
        again = load_model(tmp_path / name)
        assert type(again) is type(model)
        np.testing.assert_array_equal(again.w, model.w)


def test_load_model_names_an_unknown_format(tmp_path):
    from loglin.model_io import save_npz_model
    save_npz_model(tmp_path / "x.npz", {"loglin_format": "loglin-hmm", "format_version": 1}, {"w": np.ones(2)})
    with pytest.raises(ModelFormatError, match="unknown model format 'loglin-hmm'"):
        load_model(tmp_path / "x.npz")
    with pytest.raises(ModelFormatError, match="no such model file"):
        load_model(tmp_path / "missing.npz")
