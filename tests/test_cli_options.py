"""`loglin train`, `loglin tag train` and `loglin parse train` share one set of training options."""
import argparse
import json

import pytest

from loglin import cli, cli_options
from loglin.parsing import cli as parse_cli
from loglin.tagging import cli as tag_cli

SHARED = ("-C", "--sigma2", "--solver", "--tol", "--gap-tol", "--max-iter", "--time-limit", "--clock", "--trace",
          "--seed", "-O", "--json", "--quiet")


def _subparser(parser, *names):
    for name in names:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _train_parsers():
    return {"train": _subparser(cli.build_parser(), "train"),
            "tag train": _subparser(tag_cli._parser(), "tag", "train"),
            "parse train": _subparser(parse_cli.build_parser(), "train")}


def _options(parser):
    return {s: a for a in parser._actions for s in a.option_strings}


def test_the_three_train_commands_share_every_option_with_one_help_and_default():
    reference = _options(cli_options.training_options())
    for command, parser in _train_parsers().items():
        options = _options(parser)
        for flag in SHARED:
            assert flag in options, (command, flag)
            mine, ref = options[flag], reference[flag]
            assert (mine.dest, mine.default, mine.help, mine.type, mine.choices) == \
                   (ref.dest, ref.default, ref.help, ref.type, ref.choices), (command, flag)


def test_the_three_train_commands_parse_the_same_values():
    argv = ["-C", "3", "--tol", "1e-6", "--gap-tol", "1e-3", "--max-iter", "7", "--time-limit", "9", "--clock",
            "cpu", "--trace", "t.json", "--seed", "4", "-O", "a=1", "-O", "b=x", "--json", "--quiet", "--solver", "eg"]
    seen = []
    for command, parser in _train_parsers().items():
        args = parser.parse_args(["DATA", "-o", "m.npz"] + argv)
        seen.append({flag: getattr(args, _options(parser)[flag].dest) for flag in SHARED})
    assert seen[0] == seen[1] == seen[2]
    assert seen[0]["-O"] == ["a=1", "b=x"] and seen[0]["--tol"] == 1e-6


def test_help_states_the_default_solver_per_kind(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")          # argparse wraps at hyphens ("eg-" / "acc") on narrow terminals
    text = " ".join(cli_options.training_options().format_help().split())
    for kind, solver in cli_options.AUTO_HELP.items():
        assert f"{kind} {solver}" in text


def test_loglin_train_on_a_tagging_corpus_takes_the_shared_options(tmp_path, capsys):
    from loglin.tagging.datasets import bundled_conll2000_small
    train_file, _ = bundled_conll2000_small()
    lines = train_file.read_text().split("\n\n")[:30]
    (tmp_path / "train.txt").write_text("\n\n".join(lines) + "\n")
    assert cli.main(["train", str(tmp_path / "train.txt"), "--format", "conll2000-pos", "-o",
                     str(tmp_path / "m.npz"), "--max-iter", "2", "--solver", "cd", "-O", "shuffle=1", "--seed", "3",
                     "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["task"] == "pos" and report["iterations"] == 2 and report["solver"] == "cd"
    assert cli.main(["train", str(tmp_path / "train.txt"), "--format", "conll2000-pos", "-o",
                     str(tmp_path / "m.npz"), "--solver", "cd", "-O", "nope=1"]) == 2
    assert "has no option nope" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["parse", "train"], ["tag", "train"]])
def test_an_unknown_solver_is_one_error_line(tmp_path, capsys, argv):
    (tmp_path / "x").write_text("")
    assert cli.main(argv + [str(tmp_path / "x"), "-o", str(tmp_path / "m.npz"), "--solver", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown solver 'nope'" in err[0]
