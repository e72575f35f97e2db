"""--time-limit with --workers bounds the whole command (docs/decisions/0051): the LocalCluster's start, the
counting pass and the shards' start count against the limit, the solver gets what is left, and the cluster's
shutdown is bounded. Each command runs in its own process so that its wall time includes the interpreter's
start and exit; the problems would run many times longer than the limit."""
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import loglin
from loglin.data.svmlight import write_svmlight
from loglin.scale.dask_backend import CLOSE_WAIT_PAST_LIMIT, DaskBackend

distributed = pytest.importorskip("distributed")

LIMIT = 8.0
CHAIN_LIMIT = 12.0      # the chain's shards warm more kernels on the workers: leave the solver a few seconds
# the interpreter's start before the command clock (about 1 s on a loaded machine), the last solver step, the
# bounded shutdown (CLOSE_WAIT_PAST_LIMIT), writing the model and the interpreter's exit (decision 0051: 1.6 to
# 2.6 s measured on a loaded machine)
MARGIN = 5.0


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("time_limit")
    rng = np.random.default_rng(0)
    n, d = 8000, 300        # L-BFGS needs about 9,800 steps (38 s on two workers), ten times the limit
    X = sp.random(n, d, density=10 / d, random_state=1, format="csr")
    column_scale = 10.0 ** rng.uniform(-3, 3, d)          # badly scaled columns: L-BFGS needs thousands of steps
    X.data = np.round(rng.uniform(0.5, 1.5, X.nnz) * column_scale[X.indices], 6)
    y = (X @ rng.normal(size=(d, 10)) + rng.normal(size=(n, 10))).argmax(1)
    write_svmlight(root / "multi.svm", X, y + 1)
    tags, chunks = ["NN", "VB", "DT", "JJ", "IN"], ["B-NP", "I-NP", "B-VP", "O", "B-PP"]
    # random labels, 47k tokens: L-BFGS at C = 1000 needs about 1,800 steps (70 s on two workers) before it can make
    # no more progress, so a fast machine cannot finish inside the limit either
    lines = []
    for _ in range(3000):
        for _ in range(rng.integers(5, 25)):
            lines.append(f"w{rng.integers(0, 10000)} {tags[rng.integers(0, 5)]} {chunks[rng.integers(0, 5)]}")
        lines.append("")
    (root / "chunk.txt").write_text("\n".join(lines) + "\n")
    return root


def _run(args, limit):
    """(exit status, wall seconds, standard output, standard error) of `python -m loglin.cli ARGS --time-limit
    LIMIT`, and the limit."""
    env = {**os.environ, "PYTHONPATH": str(Path(loglin.__file__).parents[1])}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "loglin.cli", *map(str, args), "--time-limit", str(limit)],
                          capture_output=True, text=True, env=env, timeout=limit + 60)
    return done.returncode, time.perf_counter() - started, done.stdout, done.stderr, limit


def _check_bounded(code, wall, out, err, limit, model):
    assert wall <= limit + MARGIN, (wall, err)
    if code == 124:       # a loaded machine can spend the limit starting the cluster: an error and no model
        assert "reached before training started" in err and not model.exists()
        return None
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert model.exists()
    return summary


def test_maxent_with_workers_ends_within_the_limit(files, tmp_path):
    model = tmp_path / "m.npz"
    summary = _check_bounded(*_run(["train", files / "multi.svm", "-o", model, "--workers", 2, "--solver", "lbfgs",
                                    "-C", 1000, "--tol", 1e-15, "--max-iter", 10 ** 6, "--json"], LIMIT), model)
    if summary is not None:
        assert summary["stop_reason"] == "time limit" and not summary["converged"]


def test_chain_crf_with_workers_ends_within_the_limit(files, tmp_path):
    model = tmp_path / "c.npz"
    summary = _check_bounded(*_run(["tag", "train", "--task", "chunk", "--model", "crf", files / "chunk.txt",
                                    "-o", model, "--workers", 2, "-C", 1000, "--tol", 1e-15, "--max-iter", 10 ** 6,
                                    "--json"], CHAIN_LIMIT), model)
    if summary is not None:
        assert summary["stop_reason"] == "time limit" and not summary["converged"]


def test_parser_with_workers_ends_within_the_limit(tmp_path):
    model = tmp_path / "p.npz"
    treebank = Path(__file__).parent / "data" / "parse_en.conllu"
    summary = _check_bounded(*_run(["parse", "train", treebank, "-o", model, "--workers", 2, "-C", 1000,
                                    "--tol", 1e-15, "--max-iter", 10 ** 6, "--json"], LIMIT), model)
    if summary is not None:
        assert not summary["converged"]


def test_an_estimators_time_limit_counts_from_its_clusters_start(files):
    from loglin.data import read_svmlight
    from loglin.errors import TimeLimitBeforeTraining
    from loglin.estimators import MaxentClassifier
    X, y = read_svmlight(files / "multi.svm")
    limit = 6.0
    estimator = MaxentClassifier(C=1000.0, solver="lbfgs", tol=1e-15, max_iter=10 ** 6, time_limit=limit, n_workers=2)
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
    except TimeLimitBeforeTraining:      # a loaded machine can spend the limit starting the cluster
        assert not hasattr(estimator, "model_")
    else:
        assert not estimator.model_.info["converged"]
    # the last solver step and the bounded shutdown (no interpreter start or exit here)
    assert time.perf_counter() - started <= limit + MARGIN - 1.0


def _hangs(timeout=None):
    time.sleep(30)


def _fails(timeout=None):
    raise TimeoutError("the cluster did not close")


@pytest.mark.parametrize("shutdown", [_hangs, _fails])
def test_a_cluster_that_does_not_close_is_abandoned_and_its_workers_killed(shutdown):
    backend = DaskBackend(n_workers=2)
    pids = list(backend.client.run(os.getpid).values())
    backend.cluster.close = shutdown
    started = time.perf_counter()
    backend.close(wait=CLOSE_WAIT_PAST_LIMIT)
    assert time.perf_counter() - started < CLOSE_WAIT_PAST_LIMIT + 2.0
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:        # a killed child not yet reaped is a zombie: gone for this purpose
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except OSError:
        return False
