"""backend= / client= / n_workers= on loglin.crfsuite.CRF and loglin.Tagger, and `tag train --model maxent
--workers`: bitwise the in-process shards' model on Dask, the one-process model to rounding."""
import warnings

import numpy as np
import pytest

from loglin.crfsuite import CRF
from loglin.tagging.estimator import Tagger
from conftest import CHUNK_SENTENCES

pytest.importorskip("distributed")

CHUNKS = CHUNK_SENTENCES


def _xy():
    return [[t[:2] for t in s] for s in CHUNKS], [[t[2] for t in s] for s in CHUNKS]


def _items(X):
    """sklearn-crfsuite style feature dicts (with a real value, so tok_val travels too)."""
    return [[{"w": w, "p": p, "len": 0.25 * len(w)} for w, p in s] for s in X]


def _close(a, b, rel):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and np.linalg.norm(b - a) <= rel * np.linalg.norm(a)


def _quiet(fit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fit()


@pytest.mark.parametrize("transitions", [True, False])
def test_crf_on_shards_and_dask(client, transitions):
    X, y = _xy()
    X = _items(X)
    options = dict(c2=0.5, epsilon=1e-12, max_iterations=500, period=10**6, all_possible_transitions=transitions)
    one = _quiet(lambda: CRF(**options).fit(X, y))
    local = _quiet(lambda: CRF(backend="inprocess", **options).fit(X, y))
    dask = _quiet(lambda: CRF(client=client, **options).fit(X, y))
    w_one, w_local, w_dask = (m._fitted()[1] for m in (one, local, dask))
    assert np.array_equal(w_dask, w_local) and dask.n_iter_ == local.n_iter_
    _close(w_one, w_local, 1e-8)       # L-BFGS's line search resolves w to ~sqrt(eps)
    assert local.objective_ == pytest.approx(one.objective_, rel=1e-12)
    seen = {(a, b) for s in y for a, b in zip(s, s[1:])}
    unseen = [(a, b) for a in one.classes_ for b in one.classes_ if (a, b) not in seen]
    assert unseen
    held = [local.transition_features_.get(pair, 0.0) == 0.0 for pair in unseen]
    assert all(held) == (not transitions)     # unseen label bigrams stay at 0 on shards too
    assert [list(s) for s in dask.predict(X)] == [list(s) for s in one.predict(X)]


def test_crf_n_workers_starts_and_closes_its_cluster():
    X, y = _xy()
    X = _items(X)
    one = _quiet(lambda: CRF(c2=0.5, epsilon=1e-12, period=10**6).fit(X, y))
    two = _quiet(lambda: CRF(c2=0.5, epsilon=1e-12, period=10**6, n_workers=2).fit(X, y))
    _close(one._fitted()[1], two._fitted()[1], 1e-8)


def test_crf_scale_out_parameters_are_checked():
    X, y = _xy()
    with pytest.raises(ValueError, match="not both"):
        CRF(backend="threads", client=object()).fit(_items(X), y)
    with pytest.raises(ValueError, match="n_workers"):
        CRF(n_workers=0).fit(_items(X), y)


# both solvers stop when their predicted decrease is below f's rounding (|g| ~ sqrt(eps |f|)): the summation
# order of the shards moves w by up to ~1e-8 relative there; the Dask shards give the in-process shards' bits
@pytest.mark.parametrize("model, solver, rel", [("crf", "lbfgs", 1e-8), ("maxent", "tron", 1e-7)])
def test_tagger_on_shards_and_dask(client, model, solver, rel):
    X, y = _xy()
    features = "chunk"
    extra = {"cutoff": 1} if model == "maxent" else {}
    common = dict(model=model, features=features, C=0.5, solver=solver, tol=1e-12, max_iter=500, **extra)
    one = _quiet(lambda: Tagger(**common).fit(X, y))
    local = _quiet(lambda: Tagger(backend="inprocess", **common).fit(X, y))
    dask = _quiet(lambda: Tagger(client=client, **common).fit(X, y))
    assert np.array_equal(dask.coef_, local.coef_) and dask.n_iter_ == local.n_iter_
    _close(one.coef_, local.coef_, rel)
    assert dask.predict(X) == one.predict(X)


def test_tagger_auto_solver_on_shards_is_lbfgs():
    X, y = _xy()
    tagger = _quiet(lambda: Tagger(model="maxent", features="chunk", cutoff=1, backend="threads",
                                   max_iter=5).fit(X, y))
    assert tagger.model_.info["solver"] == "lbfgs"
    with pytest.raises(ValueError, match="n_workers"):
        Tagger(model="maxent", features="chunk", backend="threads", n_workers=2).fit(X, y)


def test_cli_tag_train_maxent_workers_writes_the_single_process_model(tmp_path):
    from loglin.cli import main
    from loglin.model_io import load_model
    data = tmp_path / "train.txt"
    data.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in CHUNKS))
    common = ["tag", "train", str(data), "--task", "chunk", "--model", "maxent", "-C", "0.5", "--tol", "1e-12",
              "--cutoff", "1", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "one.npz"), "--solver", "tron"]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--solver", "tron", "--workers", "2"]) == 0
    assert main(common + ["-o", str(tmp_path / "auto.npz"), "--workers", "2", "--max-iter", "3"]) == 0
    one, two = load_model(tmp_path / "one.npz"), load_model(tmp_path / "two.npz")
    _close(one.w, two.w, 1e-7)
    assert load_model(tmp_path / "auto.npz").info["solver"] == "lbfgs"
    assert main(common + ["-o", str(tmp_path / "eg.npz"), "--solver", "eg-acc", "--workers", "2"]) == 2


@pytest.mark.parametrize("fmt", ["conll2000-pos", "conll2000-chunk"])
def test_loglin_train_on_a_tagging_corpus_with_workers_is_tag_train_with_workers(tmp_path, fmt):
    """`loglin train --format conll2000-* --workers 2` takes tag train's sharded path: the one-process model."""
    from loglin.cli import main
    from loglin.model_io import load_model
    data = tmp_path / "train.txt"
    data.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in CHUNKS))
    common = ["train", str(data), "--format", fmt, "-C", "0.5", "--tol", "1e-12", "--cutoff", "1", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "one.npz"), "--solver", "tron"]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--solver", "tron", "--workers", "2"]) == 0
    assert main(common + ["-o", str(tmp_path / "auto.npz"), "--workers", "2", "--max-iter", "3"]) == 0
    one, two = load_model(tmp_path / "one.npz"), load_model(tmp_path / "two.npz")
    assert one.info["features"] == two.info["features"] and one.info["contexts"] == two.info["contexts"]
    _close(one.w, two.w, 1e-7)
    assert load_model(tmp_path / "auto.npz").info["solver"] == "lbfgs"
    assert main(common + ["-o", str(tmp_path / "eg.npz"), "--solver", "eg-acc", "--workers", "2"]) == 2
