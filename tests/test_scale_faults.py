"""A shard lost mid-run: the best model so far is kept (train attaches it to the ShardError, the CLI writes
it atomically and names the shard), and --resume / w0 continues from it on freshly read shards."""
import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.data.svmlight import write_svmlight
from loglin.scale import ShardError
from loglin.scale.backends import InProcessBackend
from loglin.scale.dask_backend import DaskBackend
from loglin.scale.sources import FileSource, scan
from loglin.training import train

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def data_file(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = sp.random(400, 30, density=0.2, random_state=2, format="csr")
    X.data = rng.uniform(0.2, 2.0, X.nnz)
    y = np.argmax(X @ rng.normal(size=(30, 3)) + rng.gumbel(size=(400, 3)), axis=1)
    path = tmp_path_factory.mktemp("faults") / "train.svm"
    write_svmlight(path, X, y)
    return path


def _exit_soon():
    import threading
    threading.Timer(0.2, os._exit, (1,)).start()


def _quiet_train(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train(*args, **kwargs)


def test_a_killed_worker_keeps_the_best_model_and_a_resumed_run_reaches_the_optimum(data_file):
    source = FileSource(data_file, "svmlight", "maxent")
    reference, full = _quiet_train(scan(source, "inprocess", 1), 2.0, "lbfgs", tol=1e-10)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        backend = DaskBackend(client=client, timeout=5.0)
        data = scan(source, backend)
        seen = []

        def kill_after_three(record):
            seen.append(record["objective"])
            if len(seen) == 4:
                client.run(_exit_soon, workers=[sorted(client.scheduler_info()["workers"])[1]])
            return False
        with pytest.raises(ShardError, match="shard 1") as caught:
            _quiet_train(data, 2.0, "lbfgs", tol=1e-10, backend=backend, callback=kill_after_three)
    kept, best = caught.value.model, caught.value.best
    assert caught.value.shard == 1 and best.iterations >= 3
    assert best.f == min(seen) < seen[0]
    objective = scan(source, "inprocess", 1)
    from loglin.scale import sharded
    with sharded(objective, 2.0) as f:
        assert f.fun(kept.w) == pytest.approx(best.f, rel=1e-12)          # the model written is that iterate
    resumed, result = _quiet_train(scan(source, InProcessBackend(), 3), 2.0, "lbfgs", tol=1e-10, w0=kept.w)
    assert result.f == pytest.approx(full.f, rel=1e-10)
    assert result.iterations < full.iterations


def test_cli_writes_the_best_model_names_the_shard_and_resumes(data_file, tmp_path, monkeypatch, capsys):
    """The shard's failure is simulated in the backend (deterministic): after five rounds shard 1 raises."""
    from loglin.cli import main
    from loglin.model import LinearModel
    from loglin.scale import dask_backend
    rounds = {"n": 0}
    original = dask_backend.DaskBackend.map

    def failing_map(self, method, *args):
        rounds["n"] += 1
        if rounds["n"] > 5:
            raise ShardError(1, f"no answer to {method} from worker tcp://x (the worker died or is stuck)")
        return original(self, method, *args)
    out = tmp_path / "model.npz"
    common = ["train", str(data_file), "-C", "2", "--solver", "lbfgs", "--tol", "1e-10", "--quiet", "-o", str(out)]
    monkeypatch.setattr(dask_backend.DaskBackend, "map", failing_map)
    assert main(common + ["--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert "shard 1" in err and "kept the best model so far" in err and f"--resume {out}" in err
    kept = LinearModel.load(out)
    assert kept.info["converged"] is False and np.any(kept.w != 0)
    monkeypatch.setattr(dask_backend.DaskBackend, "map", original)
    assert main(common + ["--workers", "2", "--resume", str(out)]) == 0
    assert main(["train", str(data_file), "-C", "2", "--solver", "lbfgs", "--tol", "1e-10", "--quiet", "-o",
                 str(tmp_path / "one.npz")]) == 0
    one, resumed = LinearModel.load(tmp_path / "one.npz"), LinearModel.load(out)
    assert resumed.info["converged"]
    assert np.linalg.norm(resumed.w - one.w) <= 1e-6 * np.linalg.norm(one.w)
