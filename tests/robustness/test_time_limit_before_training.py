"""--time-limit used up while a command reads its data or extracts features: it stops there, says so in one
line, writes no model and exits with 124 (as GNU timeout), instead of finishing the extraction first."""
import numpy as np
import pytest

import loglin
from loglin.signals import check_command_time, command_clock, limit_command, training_started
from loglin.errors import TimeLimitBeforeTraining

from .cli_helpers import chunk_corpus, one_error, run, svmlight_rows, treebank

COMMANDS = [["tag", "train", "--task", "chunk"], ["tag", "train", "--task", "chunk", "--model", "crf"],
            ["tag", "train", "--task", "chunk", "--model", "m3n"],
            ["tag", "train", "--task", "ner", "--model", "maxent"], ["parse", "train"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c[:1] + c[-1:]))
def test_a_limit_used_up_before_training_stops_the_command_there(command, tmp_path, capsys):
    data = treebank(tmp_path / "bank.conll") if command[0] == "parse" else chunk_corpus(tmp_path / "train.txt")
    model = tmp_path / "m.npz"
    code, out, err = run(capsys, *command, data, "-o", model, "--time-limit", "1e-9")
    one_error(code, err, "time limit", "before training started", "no model written")
    assert code == TimeLimitBeforeTraining.EXIT_STATUS == 124
    assert not model.exists() and not list(tmp_path.glob("*.tmp*"))


def test_a_cpu_clock_limit_is_the_solvers_budget_and_trains(tmp_path, capsys):
    data = chunk_corpus(tmp_path / "train.txt")
    code, out, err = run(capsys, "tag", "train", "--task", "chunk", "--model", "crf", data, "-o", tmp_path / "m.npz",
                         "--time-limit", "1e-9", "--clock", "cpu", "--quiet")
    assert code == 0, err
    assert (tmp_path / "m.npz").exists()


def test_flat_train_with_a_tiny_limit_still_writes_its_model(tmp_path, capsys):
    """svmlight reading has no check yet: the solver takes its one step and keeps the model, as before."""
    data = svmlight_rows(tmp_path / "rows.svm")
    code, out, err = run(capsys, "train", data, "-o", tmp_path / "m.npz", "--time-limit", "1e-9", "--quiet")
    assert code == 0 and (tmp_path / "m.npz").exists(), err


def test_the_check_is_off_outside_a_command_and_once_a_solver_started():
    check_command_time("reading")                       # a library call: no command, no limit
    with command_clock(0.0):                            # a command that started at perf_counter() 0: long ago
        check_command_time("reading")                   # no --time-limit given
        limit_command(1.0)
        with pytest.raises(TimeLimitBeforeTraining, match="reading"):
            check_command_time("reading")
        training_started()
        check_command_time("reading")                   # the solver owns the limit now (one step, best kept)
    X = [[("the", "DT"), ("cat", "NN")], [("a", "DT"), ("dog", "NN")]]
    y = [["B-NP", "I-NP"], ["B-NP", "I-NP"]]
    with pytest.warns(loglin.errors.ConvergenceWarning):
        tagger = loglin.Tagger(model="crf", features="chunk", time_limit=1e-9).fit(X, y)
    assert np.isfinite(tagger.objective_)
