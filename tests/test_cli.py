"""The loglin command line, as a user runs it."""
import json
import subprocess
import sys

import numpy as np
import pytest

from loglin.cli import main
from loglin.data import write_svmlight
from conftest import random_sparse


@pytest.fixture
def svm_files(tmp_path, small_binary):
    X, y = small_binary
    write_svmlight(tmp_path / "train.svm", X[:100], y[:100])
    write_svmlight(tmp_path / "test.svm", X[100:], y[100:])
    return tmp_path


def _json(capsys):
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_train_evaluate_predict_info(svm_files, capsys):
    d = svm_files
    assert main(["train", str(d / "train.svm"), "-o", str(d / "m.npz"), "-C", "2", "--json", "--quiet",
                 "--trace", str(d / "trace.csv")]) == 0
    out = _json(capsys)
    assert {"solver", "objective", "grad_norm", "iterations", "train_seconds"} <= set(out)
    assert out["solver"] == "tron" and out["model"] == "lr" and out["converged"]
    assert (d / "trace.csv").read_text().startswith("solver,iteration")
    assert main(["evaluate", str(d / "m.npz"), str(d / "test.svm"), "--json"]) == 0
    ev = _json(capsys)
    assert ev["n"] == 50 and 50 < ev["accuracy"] <= 100
    assert main(["predict", str(d / "m.npz"), str(d / "test.svm"), "--proba", "-o", str(d / "p.txt")]) == 0
    lines = (d / "p.txt").read_text().splitlines()
    assert lines[0].split()[0] == "labels" and len(lines) == 51
    probs = np.array([[float(v) for v in ln.split()[1:]] for ln in lines[1:]])
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert main(["info", str(d / "m.npz"), "--json"]) == 0
    assert _json(capsys)["kind"] == "lr"


def test_sigma2_is_the_same_as_C(svm_files, capsys):
    d = svm_files
    main(["train", str(d / "train.svm"), "-o", str(d / "a.npz"), "-C", "3", "--json", "--tol", "1e-8"])
    a = _json(capsys)["objective"]
    main(["train", str(d / "train.svm"), "-o", str(d / "b.npz"), "--sigma2", "3", "--json", "--tol", "1e-8"])
    assert _json(capsys)["objective"] == pytest.approx(a, rel=1e-12)


def test_events_maxent(tmp_path, capsys):
    rng = np.random.default_rng(0)
    lines = []
    for _ in range(200):
        label = rng.choice(["NN", "VB", "DT"])
        preds = [f"w={label.lower()}{rng.integers(3)}", f"suf={rng.integers(4)}", f"x=0.5"]
        lines.append(" ".join([str(label)] + preds))
    (tmp_path / "ev.txt").write_text("\n".join(lines) + "\n")
    assert main(["train", str(tmp_path / "ev.txt"), "--format", "events", "-o", str(tmp_path / "m.npz"),
                 "--solver", "lbfgs", "--json"]) == 0
    assert _json(capsys)["model"] == "maxent"
    assert main(["evaluate", str(tmp_path / "m.npz"), str(tmp_path / "ev.txt"), "--json"]) == 0
    assert _json(capsys)["accuracy"] > 90


@pytest.mark.parametrize("argv, message", [
    (["train", "MISSING.svm", "-o", "m.npz"], "No such file"),
    (["train", "BAD", "-o", "m.npz"], "BAD:2"),
    (["train", "GOOD", "-o", "m.npz", "--solver", "nope"], "unknown solver"),
    (["train", "GOOD", "-o", "m.npz", "-C", "-1"], "positive"),
    (["train", "ONECLASS", "-o", "m.npz"], "two labels"),
    (["evaluate", "CORRUPT", "GOOD"], "corrupted"),
])
def test_bad_input_gives_one_line_and_exit_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "BAD").write_text("1 1:1 2:1\n-1 3:x\n")
    (tmp_path / "GOOD").write_text("1 1:1 2:1\n-1 3:1\n")
    (tmp_path / "ONECLASS").write_text("1 1:1 2:1\n1 3:1\n")
    (tmp_path / "CORRUPT").write_bytes(b"PK\x03\x04 not really a zip")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("loglin: error:") and message in err[0]


def test_help_runs_as_a_program():
    out = subprocess.run([sys.executable, "-m", "loglin.cli", "train", "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "--sigma2" in out.stdout and "LIBLINEAR" in out.stdout


@pytest.mark.needs_data("a9a", "a9a")
def test_reproduce_lists_and_passes_options(tmp_path, capsys):
    assert main(["reproduce"]) == 0
    assert "huang2010-fig4" in capsys.readouterr().out.split()
    out = tmp_path / "fig4"
    assert main(["reproduce", "huang2010-fig4", "--quick", "--datasets", "a9a", "--time-limit", "0.3",
                 "--out", str(out)]) == 0
    summary = (out / "summary.md").read_text()
    assert "a9a" in summary and "news20" not in summary


def test_reproduce_without_its_data_says_where_to_put_it(tmp_path, capsys, monkeypatch):
    missing = tmp_path / "no-data-here"
    monkeypatch.setenv("LOGLIN_DATA", str(missing))
    assert main(["reproduce", "huang2010-fig4", "--quick", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("loglin: error: ")
    assert str(missing) in err[0] and "LOGLIN_DATA" in err[0] and "shared/data" in err[0]
    missing.mkdir()                                    # the directory exists but lacks the data set
    assert main(["reproduce", "huang2010-fig4", "--quick", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing / "a9a" / "a9a") in err[0]


def test_reproduce_refuses_options_an_experiment_lacks(tmp_path, capsys):
    assert main(["reproduce", "huang2010-table3", "--solvers", "cd", "--out", str(tmp_path)]) != 0
    assert "does not take --solvers" in capsys.readouterr().err
    assert main(["reproduce", "huang2010-fig2", "--time-limit", "-1", "--out", str(tmp_path)]) != 0
    assert main(["reproduce", "yu2011-fig2", "--reference", "1.5", "--out", str(tmp_path)]) != 0
    assert "does not take --reference" in capsys.readouterr().err
    assert main(["reproduce", "yu2011-fig3", "--reference", "conll2000-pos=", "--out", str(tmp_path)]) != 0
    assert "DATA=FILE" in capsys.readouterr().err


def test_reproduce_time_limit_spec(capsys):
    from loglin.cli_options import time_limit_spec
    from loglin.errors import LoglinError
    assert time_limit_spec("300") == (300.0, {})
    assert time_limit_spec("300, cd=900,scgis=900") == (300.0, {"cd": 900.0, "scgis": 900.0})
    assert time_limit_spec("cd=900") == (None, {"cd": 900.0})
    for bad in ("cd=", "=5", "cd=x", "300,400", "cd=-1", "0"):
        with pytest.raises(LoglinError):
            time_limit_spec(bad)
    assert main(["reproduce", "huang2010-fig4", "--time-limit", "1,cd=2", "--out", "unused"]) != 0
    assert "does not take --time-limit SOLVER=SECONDS" in capsys.readouterr().err


def test_reproduce_reference_spec():
    from loglin.cli_options import reference_spec
    assert reference_spec("12.5") == 12.5
    assert reference_spec("r.json") == "r.json"
    assert reference_spec("conll2000-pos=a.json, brown=3e5") == {"conll2000-pos": "a.json", "brown": 3e5}


def test_reproduce_passes_a_reference_to_yu2011_fig3(tmp_path):
    out = tmp_path / "fig3"
    assert main(["reproduce", "yu2011-fig3", "--quick", "--solvers", "cd", "--time-limit", "0.2", "--reference",
                 "conll2000-pos=1.0", "--out", str(out)]) == 0
    assert "a value given by the caller" in (out / "summary.md").read_text()


def test_solver_options_from_the_command_line(svm_files, capsys):
    """-O KEY=VALUE reaches the solver (eg's block order reaches tron's optimum); a wrong name is refused with the
    solver's options listed, a malformed pair with the expected form."""
    d = svm_files
    main(["train", str(d / "train.svm"), "-o", str(d / "t.npz"), "-C", "2", "--json", "--tol", "1e-10"])
    ref = _json(capsys)["objective"]
    assert main(["train", str(d / "train.svm"), "-o", str(d / "e.npz"), "-C", "2", "--json", "--solver", "eg",
                 "-O", "order=blocks", "-O", "max_trial=5", "--tol", "1e-8", "--max-iter", "3000"]) == 0
    assert _json(capsys)["objective"] == pytest.approx(ref, rel=1e-6)
    assert main(["train", str(d / "train.svm"), "-o", str(d / "x.npz"), "--solver", "eg", "-O", "orde=blocks"]) == 2
    err = capsys.readouterr().err
    assert "orde" in err and "order" in err and "max_trial" in err
    assert main(["train", str(d / "train.svm"), "-o", str(d / "x.npz"), "--solver", "eg", "-O", "order"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err
    assert main(["train", str(d / "train.svm"), "-o", str(d / "x.npz"), "--solver", "eg", "-O", "order=sorted"]) == 2
    err = capsys.readouterr().err                               # checked against the declared choices
    assert "option order takes one of" in err and "'sorted'" in err
