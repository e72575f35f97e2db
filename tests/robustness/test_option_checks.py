"""Solver options (-O and solver_options) and numeric CLI options are checked up front, with one clear line."""
import inspect

import numpy as np
import pytest

from loglin.errors import InvalidInputError
from loglin.estimators import LogisticRegression
from loglin.solvers import TABLE
from loglin.solvers.options import OBJECTS, check_solver_options, declared_options

from .cli_helpers import MODELS, chunk_corpus, one_error, run, svmlight_rows

BAD_OPTIONS = [
    ("tron", "cg_tol=abc"), ("tron", "cg_tol=-1"), ("tron", "cg_tol=0"), ("tron", "precondition=yes"),
    ("tron", "precondition=2"), ("tron", "max_cg=0"), ("lbfgs", "memory=0"), ("lbfgs", "memory=10000000000"),
    ("eg", "C_schedule=3"), ("eg", "eta=-1"), ("eg", "eta=nan"), ("eg", "order=sorted"), ("eg", "max_trial=0"),
    ("cd", "beta=1.5"), ("cd", "shuffle=maybe"), ("eg-acc", "passes=abc"), ("eg-lbfgs", "switch_gap=0"),
    ("eg-ll", "max_trial=-2"), ("sgd", "eta0=0"), ("tron", "forcing=2"), ("tron", "radius=0"),
]


@pytest.mark.parametrize("solver, option", BAD_OPTIONS)
def test_bad_solver_option_is_one_line_before_training(solver, option, tmp_path, capsys):
    data = svmlight_rows(tmp_path / "train.svm", classes=(1, 2, 3))       # Maxent: every solver serves it
    code, _, err = run(capsys, "train", data, "-o", tmp_path / "m.npz", "--solver", solver, "-O", option)
    key, _, value = option.partition("=")
    one_error(code, err, solver, key, value)
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("solver, option", BAD_OPTIONS[:6] + BAD_OPTIONS[8:12])
def test_estimator_solver_options_are_checked_the_same_way(solver, option):
    key, _, value = option.partition("=")
    X = np.random.default_rng(0).normal(size=(30, 4))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(InvalidInputError, match=key):
        LogisticRegression(solver=solver, solver_options={key: value}).fit(X, y)


def test_every_declared_default_passes_its_own_check():
    """The check is derived from the signatures: each solver's own defaults must be accepted as they are."""
    checked = 0
    for name, entry in TABLE.items():
        for kind in entry.kinds:
            declared = declared_options(entry.function(kind))
            defaults = {k: q.default for k, q in declared.items() if k != "**" and k not in OBJECTS
                        and q.default is not inspect.Parameter.empty and q.default is not None}
            assert check_solver_options(name, kind, defaults) == defaults, (name, kind)
            checked += len(defaults)
    assert checked > 40


def test_text_values_are_converted_to_the_declared_types():
    options = check_solver_options("cd", "maxent", {"beta": "0.25", "shuffle": "yes"})
    assert options == {"beta": 0.25, "shuffle": True}
    assert check_solver_options("tron", "binary", {"max_cg": "7"}) == {"max_cg": 7}


@pytest.mark.parametrize("flag, value", [("--cutoff", "-3"), ("--bias", "-1"), ("--bias", "inf"), ("--tol", "nan"),
                                         ("--tol", "-1"), ("--time-limit", "-5"), ("--time-limit", "0"),
                                         ("--max-iter", "-1"), ("--gap-tol", "nan")])
def test_numeric_training_options_are_refused_up_front(flag, value, tmp_path, capsys):
    missing = tmp_path / "never-read.svm"                # refused before the data file is opened
    code, _, err = run(capsys, "train", missing, "-o", tmp_path / "m.npz", flag, value)
    one_error(code, err, flag, value)


@pytest.mark.parametrize("beam", ["0", "-1", "1000000000"])
def test_beam_sizes_are_bounded_in_every_tag_command(beam, tmp_path, capsys):
    corpus = chunk_corpus(tmp_path / "train.txt")
    code, _, err = run(capsys, "tag", "train", "--task", "chunk", corpus, "-o", tmp_path / "t.npz", "--beam", beam)
    one_error(code, err, "--beam", beam)
    assert not (tmp_path / "t.npz").exists()
    for command in ("run", "evaluate"):
        code, _, err = run(capsys, "tag", command, MODELS / "tagger-pos.npz", corpus, "--beam", beam)
        one_error(code, err, "--beam", beam)


def test_parser_cutoff_is_checked(tmp_path, capsys):
    code, _, err = run(capsys, "parse", "train", tmp_path / "never-read.conll", "-o", tmp_path / "p.npz",
                       "--cutoff", "-1")
    one_error(code, err, "--cutoff")


def test_dual_solver_error_names_the_estimator_parameter():
    X = np.random.default_rng(1).normal(size=(30, 3))
    y = (X[:, 1] > 0).astype(int)
    with pytest.raises(InvalidInputError, match="regularize_intercept") as info:
        LogisticRegression(solver="cddual", regularize_intercept=False).fit(X, y)
    assert "regularize_bias" not in str(info.value)


@pytest.mark.parametrize("eta", ["abc", "-1", "nan"])
def test_tag_train_eta_goes_through_the_same_check(eta, tmp_path, capsys):
    corpus = chunk_corpus(tmp_path / "train.txt")
    code, _, err = run(capsys, "tag", "train", "--task", "chunk", corpus, "-o", tmp_path / "m.npz", "--model", "crf",
                       "--solver", "eg", "--eta", eta)
    one_error(code, err, "eta", eta)


@pytest.mark.parametrize("nbest", ["0", "-1", "1001"])
@pytest.mark.parametrize("command", [["parse", "run", "parser-crf.npz"], ["parse", "parser-crf.npz"],
                                     ["tag", "run", "tagger-pos.npz"], ["tag", "chain-crf.npz"]])
def test_nbest_out_of_range_names_the_option(nbest, command, tmp_path, capsys):
    *words, model = command
    code, out, err = run(capsys, *words, MODELS / model, tmp_path / "never-read.txt", "--nbest", nbest)
    line = one_error(code, err, "--nbest", nbest, "1000")
    assert not line.startswith("loglin: error: n ")         # the API's parameter name means nothing on the command line
    assert out == ""
