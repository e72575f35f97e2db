"""Model files: round trip, and every kind of damage gives a clear ModelFormatError."""
import json
import zipfile

import numpy as np
import pytest

from loglin.errors import ModelFormatError
from loglin.model import LinearModel
from loglin.model_io import save_npz_model
from loglin.problem import problem_from_matrix
from loglin.training import train


@pytest.fixture
def saved(tmp_path, small_multiclass):
    X, y = small_multiclass
    model, _ = train(problem_from_matrix(X, y, bias=1.0), 1.0, "tron", tol=1e-6)
    path = tmp_path / "m.npz"
    model.save(path)
    return model, path, X


def test_round_trip_predicts_identically(saved):
    model, path, X = saved
    loaded = LinearModel.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    np.testing.assert_allclose(loaded.predict_proba(X), model.predict_proba(X))
    assert loaded.info["solver"] == "tron"


def _rewrite(path, meta_update=None, arrays_update=None, drop=()):
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    meta = json.loads(arrays.pop("__meta__").tobytes())
    meta.update(meta_update or {})
    arrays.update(arrays_update or {})
    for k in drop:
        arrays.pop(k)
    save_npz_model(path, meta, arrays)


@pytest.mark.parametrize("damage, message", [
    (lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "truncated or corrupted"),
    (lambda p: p.write_bytes(b"\x00" * 100), "truncated or corrupted"),
    (lambda p: _rewrite(p, {"format_version": 99}), "newer"),
    (lambda p: _rewrite(p, {"loglin_format": "something-else"}), "expected a 'loglin-linear' model"),
    (lambda p: _rewrite(p, drop=("map_feat",)), "missing"),
    (lambda p: _rewrite(p, arrays_update={"w": np.full(5, np.nan)}), "NaN"),
    (lambda p: _rewrite(p, arrays_update={"map_feat": np.array([10**9] * 4)}), "inconsistent"),
    (lambda p: _rewrite(p, {"kind": "svm"}), "unknown model kind"),
])
def test_damaged_files_are_rejected(saved, damage, message):
    _, path, _ = saved
    damage(path)
    with pytest.raises(ModelFormatError, match=message):
        LinearModel.load(path)


def test_pickled_payload_is_never_executed(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(path, __meta__=np.frombuffer(json.dumps({"loglin_format": "loglin-linear", "format_version": 1,
                                                      "kind": "binary", "n_inputs": 1}).encode(), np.uint8),
             w=np.array([object()], dtype=object), labels=np.array([0, 1]))
    with pytest.raises(ModelFormatError):
        LinearModel.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(ModelFormatError, match="no such model file"):
        LinearModel.load(tmp_path / "nope.npz")


def test_member_that_is_not_an_array(saved):
    _, path, _ = saved
    with zipfile.ZipFile(path, "a") as zf:
        zf.writestr("junk.npy", b"definitely not a numpy array")
    with pytest.raises(ModelFormatError, match="corrupted"):
        LinearModel.load(path)
