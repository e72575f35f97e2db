"""SIGINT / SIGTERM while -C auto runs its folds in worker processes (--jobs 2): the command stops the workers
(no process outlives it), says that no model was written, writes none, and exits with 128 + the signal."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .cli_helpers import chunk_corpus
from .test_signals import default_signals

SRC = Path(__file__).resolve().parents[2] / "src"


def _children():
    """{parent pid: [child pids]} of the live (non-zombie) processes, read from /proc."""
    tree = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def _descendants(pid):
    tree, out, todo = _children(), [], [pid]
    while todo:
        for child in tree.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_parallel_folds_ends_every_worker(signum, tmp_path):
    corpus = chunk_corpus(tmp_path / "train.txt", sentences=400)
    model = tmp_path / "m.npz"
    proc = subprocess.Popen([sys.executable, "-m", "loglin.cli", "tag", "train", "--task", "chunk", "--model", "crf",
                             str(corpus), "-o", str(model), "-C", "auto", "--cv", "2", "--jobs", "2", "--solver",
                             "sgd", "--tol", "0", "--max-iter", "100000000", "--quiet"],
                            env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin", "NUMBA_NUM_THREADS": "2"},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            family = _descendants(proc.pid)
            if len(family) >= 3:        # the fork server and two fold workers (its children)
                break
            time.sleep(0.5)
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        time.sleep(3.0)                 # the folds are fitting
        family = _descendants(proc.pid)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:             # a failing run: take its whole tree down, not only the parent
            for pid in _descendants(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            proc.kill()
    assert proc.returncode == 128 + signum, err
    assert "Traceback" not in err, err
    assert "no model written" in err and signal.Signals(signum).name in err, err
    assert "leaked" not in err and "resource_tracker" not in err, err       # the killed workers' semaphores (0063)
    assert not model.exists()
    end = time.monotonic() + 15
    while any(_alive(pid) for pid in family) and time.monotonic() < end:
        time.sleep(0.2)
    assert not [pid for pid in family if _alive(pid)], (family, err)
