"""Every loop is bounded and --time-limit is the wall time of the whole run."""
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.errors import ConvergenceWarning, DataScaleWarning
from loglin.problem import problem_from_matrix
from loglin.scale import sharded
from loglin.solvers import entry
from loglin.solvers.base import minimize
from loglin.training import available_solvers

from conftest import random_sparse

SRC = Path(__file__).resolve().parents[2] / "src"


def shard_side(name):
    """Solvers whose passes run on the shards of a sharded objective (loglin.scale.cocoa / mixing)."""
    return "each_shard" in entry(name).needs


def huge_value_data(value=1e100):
    X = sp.csr_matrix(random_sparse(40, 5, 0.6, seed=21, binary=True))
    X.data[0] = value
    y = np.where(np.arange(40) % 2 == 0, 1, -1)
    return X, y


def _problem_and_objective(kind, value):
    X, y = huge_value_data(value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataScaleWarning)
        problem = binary_problem(X, y, 1.0) if kind == "binary" else problem_from_matrix(X, y)
        return problem, problem.objective() if kind == "binary" else problem.objective(1.0)


@pytest.mark.parametrize("kind", ["binary", "maxent"])
def test_a_value_of_1e100_ends_quickly_for_every_solver(kind, serial_numba):
    problem, obj = _problem_and_objective(kind, 1e100)
    tame, tame_obj = _problem_and_objective(kind, 1.0)       # same types: compiles the kernels off the clock
    for name in available_solvers(kind):
        if name.startswith("eg-mm"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            minimize(sharded(tame, 1.0, 1) if shard_side(name) else tame_obj, name, max_iter=1, time_limit=60.0)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            target = sharded(problem, 1.0, 1) if shard_side(name) else obj    # cocoa, ipm-sgd: one shard
            res = minimize(target, name, max_iter=10, time_limit=5.0)
        assert time.perf_counter() - start < 20, name
        assert res.converged or any(issubclass(w.category, ConvergenceWarning) for w in caught), name


def test_cli_with_a_value_of_1e100_returns(tmp_path):
    """The reported hang: TRON's CG never ended (the curvature overflowed to inf, the step was 0)."""
    data = tmp_path / "huge.svm"
    data.write_text("".join(f"{1 if i % 2 else -1} 1:{'1e100' if i == 0 else 1} {2 + i % 3}:1\n" for i in range(30)))
    proc = subprocess.run([sys.executable, "-m", "loglin.cli", "train", str(data), "-o", str(tmp_path / "m.npz"),
                           "--time-limit", "5", "--max-iter", "10", "--quiet"],
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "loglin: warning:" in proc.stderr
    assert (tmp_path / "m.npz").is_file()


def test_time_limit_counts_the_evaluation(small_multiclass):
    """A slow held-out metric (off the solver's clock) cannot make the run outlast its time limit;
    the trace's seconds still count the solver only."""
    obj = problem_from_matrix(*small_multiclass).objective(1.0)

    def slow_metric(w):
        time.sleep(0.05)
        return 0.0

    minimize(obj, "gis", max_iter=1)            # compiles off the clock (a cold cache takes seconds)
    start = time.perf_counter()
    with pytest.warns(ConvergenceWarning, match="time limit"):
        res = minimize(obj, "gis", tol=0, max_iter=100000, time_limit=0.5, evaluate=slow_metric)
    wall = time.perf_counter() - start
    assert res.stop_reason == "time limit" and wall < 0.5 + 0.5
    assert res.trace.records[-1]["seconds"] < 0.5 * wall


def test_cpu_clock_keeps_the_solver_budget(small_multiclass):
    """clock="cpu" (the experiments' measuring mode): the limit is the solver's own CPU time."""
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    with pytest.warns(ConvergenceWarning):
        res = minimize(obj, "gis", tol=0, max_iter=100000, time_limit=0.2, clock="cpu",
                       evaluate=lambda w: time.sleep(0.002) or 0.0)
    assert res.stop_reason == "time limit" and res.train_seconds >= 0.2


def test_long_wall_clock_runs_thin_the_trace(small_multiclass, monkeypatch):
    """The default record_spacing="auto": every iteration at first, then sparse records, so evaluation
    cannot dominate a long run; the last iteration is always recorded."""
    from loglin.solvers import base
    monkeypatch.setattr(base, "AUTO_FULL_SECONDS", 0.0)
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    with pytest.warns(ConvergenceWarning):
        res = minimize(obj, "gis", tol=0, max_iter=400)
    iters = [r["iteration"] for r in res.trace]
    assert iters[:21] == list(range(21)) and iters[-1] == 400 and len(iters) < 200


def test_time_limit_counts_from_the_commands_start(small_multiclass):
    """In a command (loglin train, tag train, parse train) --time-limit bounds the whole command: time spent
    reading data and extracting features before the solver started counts against it."""
    from loglin.signals import command_clock
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    minimize(obj, "gis", max_iter=1)            # compiles off the clock
    with command_clock(time.perf_counter() - 10.0):     # the command began 10 s ago
        with pytest.warns(ConvergenceWarning, match="time limit"):
            late = minimize(obj, "gis", tol=0, max_iter=100000, time_limit=5.0)
    assert late.stop_reason == "time limit" and late.iterations == 1
    res = minimize(obj, "gis", tol=0, max_iter=3, time_limit=5.0)     # outside a command: the call's own clock
    assert res.stop_reason == "max_iter" and res.iterations == 3
