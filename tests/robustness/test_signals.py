"""SIGINT / SIGTERM during training: the run stops at the next step, writes the best model so far
(atomically), says so, and exits with 128 + the signal's number; never a traceback.

Each case starts a real ``loglin`` process, waits, and sends the signal; if the signal arrived
before training began (the process was still importing or compiling), it retries with a longer
wait, since only a signal during training is under test.
"""
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
KEPT = "received: stopping after the current step and keeping the best model so far"
CHUNK_SLICE = SRC / "loglin" / "datasets" / "conll2000-small" / "train.txt"
TREEBANK = ROOT / "tests" / "data" / "parse_en.conllu"


def flat_data(tmp_path):
    lines = []
    for i in range(400):
        label = ("A", "B", "C")[i % 3]
        feats = sorted({1 + (i * 7) % 13, 14 + (i * 5) % 11, 26 + i % 4})
        lines.append(f"{i % 3} " + " ".join(f"{j}:1" for j in feats))
    path = tmp_path / "flat.svm"
    path.write_text("\n".join(lines) + "\n")
    return path


def load(path):
    from loglin.model_io import load_model
    return load_model(path)


CASES = {
    "flat": (lambda tmp, out: ["train", str(flat_data(tmp)), "-o", out, "--model", "maxent", "--solver", "gis",
                               "--tol", "0", "--max-iter", "100000000", "--quiet"], 3.0, load),
    "crf": (lambda tmp, out: ["tag", "train", "--task", "chunk", "--format", "conll2000", str(CHUNK_SLICE),
                              "-o", out, "--model", "crf", "--solver", "sgd", "--max-iter", "100000", "--quiet"],
            6.0, load),
    "parser": (lambda tmp, out: ["parse", "train", str(TREEBANK), "-o", out, "--solver", "sgd", "-C", "1000",
                                 "--max-iter", "100000000", "--quiet"], 6.0, load),
}


def default_signals():
    """In the child: SIGINT / SIGTERM as a terminal's foreground command gets them, even when the tests run
    as a background job (whose SIGINT a non-interactive shell ignores, and loglin then ignores too)."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


def interrupt(argv, signum, delay, cwd):
    """Run ``loglin argv``, send ``signum`` after ``delay`` s (longer if training had not begun)."""
    for attempt in range(3):
        proc = subprocess.Popen([sys.executable, "-m", "loglin.cli", *argv], cwd=cwd,
                                env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "NUMBA_NUM_THREADS": "2"},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=default_signals)
        try:
            time.sleep(delay * 2 ** attempt)
            if proc.poll() is not None:
                out, err = proc.communicate()
                pytest.fail(f"training ended before the signal (exit {proc.returncode}): {err[-2000:]}")
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:         # a failing case must not leave a run of 1e8 iterations behind
                proc.kill()
                proc.communicate()
        if KEPT in err:
            return proc.returncode, out, err
    pytest.fail(f"the signal never arrived during training: {err[-2000:]}")


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("family", sorted(CASES))
def test_signal_keeps_the_model(family, signum, tmp_path):
    make_argv, delay, load = CASES[family]
    if family == "parser" and not TREEBANK.is_file():
        pytest.skip("no treebank")
    work = tmp_path / "work"
    work.mkdir()
    out = work / "model.npz"
    code, stdout, stderr = interrupt(make_argv(tmp_path, str(out)), signum, delay, work)
    assert code == 128 + signum, stderr
    assert "Traceback" not in stderr and "SystemError" not in stderr, stderr
    assert out.is_file() and [p.name for p in work.iterdir()] == ["model.npz"]     # no temporary left
    load(out)                                        # a complete, loadable model


def test_first_signal_stops_at_the_next_step_second_one_aborts(small_multiclass):
    """In process: the handler only sets a flag (the step in progress completes), restores the previous
    handler at once (a second Ctrl-C raises KeyboardInterrupt), and minimize puts it back when done."""
    import os
    import warnings

    from loglin.errors import ConvergenceWarning
    from loglin.problem import problem_from_matrix
    from loglin.solvers.base import minimize
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    seen = []

    def on_record(record):
        seen.append(record["objective"])
        if len(seen) == 3:
            os.kill(os.getpid(), signal.SIGINT)
        if len(seen) == 4:          # only possible if the flag were not checked after the step
            raise AssertionError("the run went on after the signal")
        return False

    before = signal.getsignal(signal.SIGINT)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = minimize(obj, "gis", tol=0, max_iter=1000, callback=on_record)
    assert res.stop_reason == "interrupted" and not res.converged and res.signal == "SIGINT"
    assert res.f == min(seen) and any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert signal.getsignal(signal.SIGINT) is before

    def twice(record):
        if record["iteration"] < 2:
            return False
        os.kill(os.getpid(), signal.SIGINT)         # sets the flag
        os.kill(os.getpid(), signal.SIGINT)         # reaches the previous handler: KeyboardInterrupt here
        seen.append("after")
        return False

    seen.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(obj, "gis", tol=0, max_iter=1000, callback=twice)
    assert "after" not in seen and res.stop_reason == "interrupted"
    assert signal.getsignal(signal.SIGINT) is before


def test_a_signal_the_process_ignores_stays_ignored():
    """SIGINT ignored from the start (a background job of a non-interactive shell): training must not catch it
    for its own span only, where before training it was lost and during it would stop the run."""
    from loglin.signals import StopOnSignal, raising_on_signal
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with StopOnSignal():
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_IGN, signal.SIG_DFL)   # still caught
        with raising_on_signal("stopped"):
            assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)
