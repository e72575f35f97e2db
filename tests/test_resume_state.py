"""--resume keeps the solver's state: k iterations, a stop (callback / Ctrl-C path, a lost shard), and m resumed
iterations give bitwise the iterates of k + m uninterrupted ones (L-BFGS's (s, y) pairs, TRON's radius)."""
import warnings

import numpy as np
import pytest

from loglin.problem import problem_from_matrix
from loglin.scale import InProcessBackend, ShardError
from loglin.solvers.checkpoint import SolverCheckpoint, checkpoint_path
from loglin.training import train
from conftest import CHUNK_SENTENCES, gumbel_multiclass

CHUNKS = CHUNK_SENTENCES[:4]


@pytest.fixture(scope="module")
def maxent():
    return problem_from_matrix(*gumbel_multiclass(200, 30, 0.3, classes=4, seed=4))


@pytest.fixture(scope="module")
def chain():
    from loglin.structured.crf_features import build_chain_problem
    return build_chain_problem(CHUNKS, "chunk")[0]


def _train(problem, solver, max_iter, **keywords):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return train(problem, 3.0, solver, tol=0.0, max_iter=max_iter, warn=False, **keywords)[1]


def _stop_after(k):
    return lambda record: record["iteration"] >= k       # the driver stops as on Ctrl-C: after iteration k


CASES = [("maxent", "lbfgs", 4, 5), ("maxent", "tron", 2, 2), ("chain", "lbfgs", 4, 5)]


@pytest.mark.parametrize("name, solver, k, m", CASES)
def test_resumed_run_continues_the_stopped_one_bitwise(request, tmp_path, name, solver, k, m):
    problem = request.getfixturevalue(name)
    full = _train(problem, solver, k + m)
    assert full.iterations == k + m           # no early stop: the resumed iterations are compared
    checkpoint = SolverCheckpoint()
    stopped = _train(problem, solver, 100, callback=_stop_after(k), checkpoint=checkpoint)
    assert stopped.iterations == k and stopped.stop_reason == "callback"
    path = checkpoint_path(tmp_path / "model.npz")
    checkpoint.save(path, stopped.w)                      # through the file, as --resume reads it
    loaded = SolverCheckpoint.load(path, stopped.w)
    assert loaded is not None and loaded.solver == solver
    assert SolverCheckpoint.load(path, stopped.w + 1e-300 + 1e-9) is None     # another model's state is not used
    resumed = _train(problem, solver, m, w0=stopped.w, checkpoint=loaded)
    assert np.array_equal(resumed.w, full.w)
    assert resumed.f == full.f
    if solver == "lbfgs":      # the weights alone: another path (TRON's fresh radius ||g|| rarely binds: H >= I)
        cold = _train(problem, solver, m, w0=stopped.w)
        assert not np.array_equal(cold.w, full.w)


class LosingBackend(InProcessBackend):
    """In-process shards that lose shard 1 at the ``fail_at``-th fun_grad round (mid line search / step)."""

    def __init__(self, fail_at):
        super().__init__()
        self.fail_at, self.rounds = fail_at, 0

    def map(self, method, *args):
        if method == "fun_grad":
            self.rounds += 1
            if self.rounds == self.fail_at:
                raise ShardError(1, "worker lost (simulated)")
        return super().map(method, *args)


@pytest.mark.parametrize("solver, fail_at", [("lbfgs", 9), ("tron", 6)])
def test_lost_shard_keeps_the_state_and_resume_continues_bitwise(maxent, solver, fail_at):
    with pytest.raises(ShardError) as caught:
        _train(maxent, solver, 100, backend=LosingBackend(fail_at), checkpoint=SolverCheckpoint())
    exc = caught.value
    done = exc.best.iterations
    assert done >= 2 and exc.checkpoint.solver == solver
    assert np.array_equal(exc.checkpoint.arrays["w"], exc.best.w)
    full = _train(maxent, solver, done + 3, backend=InProcessBackend())
    resumed = _train(maxent, solver, 3, backend=InProcessBackend(), w0=exc.model.w, checkpoint=exc.checkpoint)
    assert np.array_equal(resumed.w, full.w)


def test_cli_writes_the_state_beside_the_model_and_resume_uses_it(tmp_path):
    from loglin.cli import main
    from loglin.model_io import load_model
    rng = np.random.default_rng(0)
    lines = [f"{rng.integers(3)} " + " ".join(f"{j + 1}:{rng.uniform(0.5, 2):.3f}" for j in
                                               sorted(rng.choice(12, 4, replace=False))) for _ in range(80)]
    data = tmp_path / "train.svm"
    data.write_text("\n".join(lines) + "\n")
    common = ["train", str(data), "--solver", "lbfgs", "--tol", "0", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "full.npz"), "--max-iter", "7"]) == 0
    assert main(common + ["-o", str(tmp_path / "part.npz"), "--max-iter", "3"]) == 0
    assert checkpoint_path(tmp_path / "part.npz").is_file()
    assert main(common + ["-o", str(tmp_path / "rest.npz"), "--max-iter", "4", "--resume",
                          str(tmp_path / "part.npz")]) == 0
    assert np.array_equal(load_model(tmp_path / "rest.npz").w, load_model(tmp_path / "full.npz").w)
