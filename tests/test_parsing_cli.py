"""`loglin parse train|evaluate|MODEL INPUT` on CoNLL-U (hand-written English) and CoNLL-X (Spanish slice)."""
import json
from pathlib import Path

import pytest

from loglin.cli import main
from loglin.data.conll import read_conllx, write_conllx
from loglin.data.paths import shared_data_dir

EN = Path(__file__).parent / "data" / "parse_en.conllu"


def _heads_column(text):
    return [line.split("\t")[6] for line in text.splitlines() if line and not line.startswith("#")]


def test_conllu_round_trip(tmp_path, capsys, serial_numba):
    model = tmp_path / "en.npz"
    assert main(["parse", "train", str(EN), "-o", str(model), "--solver", "lbfgs", "-C", "1", "--max-iter", "80",
                 "--quiet"]) == 0
    assert main(["parse", "evaluate", str(model), str(EN), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert {"uas", "uas_no_punct", "las", "label_accuracy", "sentences_per_second"} <= set(scores)
    assert scores["uas"] > 95 and scores["sentences"] == 12 and scores["las"] <= scores["uas"]
    # the input's DEPREL column blanked out: the written labels can only come from the model
    unlabelled = tmp_path / "in.conllu"
    unlabelled.write_text("\n".join(_with_column(line, 7, "_") for line in EN.read_text().splitlines()) + "\n")
    out = tmp_path / "out.conllu"
    assert main(["parse", str(model), str(unlabelled), "-o", str(out)]) == 0
    original, written = EN.read_text().splitlines(), out.read_text().splitlines()
    assert len(original) == len(written)
    for a, b in zip(original, written):          # identical except the HEAD and DEPREL columns of word lines
        if a.startswith("#") or not a or "-" in a.split("\t")[0]:
            assert a == b
        else:
            fa, fb = a.split("\t"), b.split("\t")
            assert fa[:6] == fb[:6] and fa[8:] == fb[8:]
    parsed = read_conllx(out)                    # a valid CoNLL-U file again, one head per word
    gold = read_conllx(EN)
    assert [len(s) for s in parsed] == [len(s) for s in gold]
    from loglin.parsing.model import ParserModel
    loaded = ParserModel.load(model)
    heads = loaded.parse(gold)
    assert [s.deprels for s in parsed] == loaded.label(gold, heads)
    right = sum(a == b for p, g in zip(parsed, gold) for a, b in zip(p.deprels, g.deprels))
    assert right >= 0.9 * sum(len(s) for s in gold)           # a labeller fit on these very trees
    assert main(["parse", "run", str(model), str(EN)]) == 0
    printed = capsys.readouterr().out
    assert _heads_column(printed) == _heads_column(out.read_text())
    assert _column(printed, 7) == _column(out.read_text(), 7)


def _column(text, k):
    """Column k of the word lines (not comments, multiword tokens or empty nodes)."""
    return [line.split("\t")[k] for line in text.splitlines() if line and line.split("\t")[0].isdigit()]


def _with_column(line, k, value):
    if not line or line.startswith("#"):
        return line
    fields = line.split("\t")
    fields[k] = value
    return "\t".join(fields)


def test_parser_file_without_labeller_writes_no_labels(tmp_path, capsys, serial_numba):
    """A model file from before arc labelling (tests/data/models) still loads and parses; it writes DEPREL "_",
    never the input's gold labels beside its predicted heads, and evaluate reports UAS only."""
    old = Path(__file__).parent / "data" / "models" / "parser-crf.npz"
    from loglin.parsing.model import ParserModel
    assert ParserModel.load(old).labeller is None
    out = tmp_path / "out.conllu"
    assert main(["parse", str(old), str(EN), "-o", str(out)]) == 0
    assert set(_column(out.read_text(), 7)) == {"_"} and "_" not in set(_column(EN.read_text(), 7))
    assert main(["parse", "evaluate", str(old), str(EN), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert "uas" in scores and "las" not in scores


def test_m3n_cutting_plane_trains(tmp_path, capsys, serial_numba):
    model = tmp_path / "m.npz"
    assert main(["parse", "train", str(EN), "-o", str(model), "--model", "m3n", "--solver", "cutting-plane",
                 "--max-iter", "50", "--quiet"]) == 0
    assert main(["parse", "evaluate", str(model), str(EN)]) == 0
    assert "UAS" in capsys.readouterr().out


@pytest.mark.parametrize("body, message", [
    ("1\tA\ta\tDET\t_\t_\t2\tdet\t_\n", "expected 10 columns"),
    ("1\tA\ta\tDET\t_\t_\t7\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_\n", "expected a head in [0, 2]"),
    ("1\tA\ta\tDET\t_\t_\tx\tdet\t_\t_\n", "expected an integer head"),
])
def test_malformed_files_name_file_and_line(tmp_path, capsys, body, message):
    bad = tmp_path / "bad.conllu"
    bad.write_text("# c\n" + body)
    assert main(["parse", "train", str(bad), "-o", str(tmp_path / "m.npz")]) == 2
    err = capsys.readouterr().err
    assert message in err and f"{bad}:2" in err


def test_cycles_missing_files_and_bad_models(tmp_path, capsys):
    cyc = tmp_path / "cyc.conll"
    cyc.write_text("1\ta\ta\tX\tX\t_\t2\t_\t_\t_\n2\tb\tb\tX\tX\t_\t1\t_\t_\t_\n")
    assert main(["parse", "train", str(cyc), "-o", str(tmp_path / "m.npz")]) == 2
    assert "cycle" in capsys.readouterr().err
    assert main(["parse", "evaluate", str(tmp_path / "none.npz"), str(EN)]) == 2
    (tmp_path / "junk.npz").write_bytes(b"not a model")
    assert main(["parse", str(tmp_path / "junk.npz"), str(EN)]) == 2
    assert main(["parse", "train", str(EN), "-o", str(tmp_path / "m.npz"), "--model", "m3n", "--solver", "lbfgs"]) == 2
    assert "differentiable" in capsys.readouterr().err


def test_spanish_slice_round_trip(tmp_path, capsys, serial_numba):
    root = shared_data_dir()
    if root is None or not (root / "conll2007-esp" / "esp.train").is_file():
        pytest.skip("shared CoNLL 2007 Spanish data not available")
    train = read_conllx(root / "conll2007-esp" / "esp.train")[:120]
    test = read_conllx(root / "conll2007-esp" / "esp.test")[:40]
    write_conllx(tmp_path / "tr.conll", train)
    write_conllx(tmp_path / "te.conll", test)
    model = tmp_path / "es.npz"
    assert main(["parse", "train", str(tmp_path / "tr.conll"), "-o", str(model), "--max-iter", "4",
                 "--dev", str(tmp_path / "te.conll")]) == 0
    assert "non-projective" in capsys.readouterr().out
    assert main(["parse", "evaluate", str(model), str(tmp_path / "te.conll"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert 40 < scores["uas"] <= 100 and 40 < scores["uas_no_punct"] <= 100
    assert main(["parse", str(model), str(tmp_path / "te.conll"), "-o", str(tmp_path / "out.conll")]) == 0
    assert len(read_conllx(tmp_path / "out.conll")) == 40


def test_info_recognises_parser_models(tmp_path, capsys, serial_numba):
    model = tmp_path / "en.npz"
    assert main(["parse", "train", str(EN), "-o", str(model), "--max-iter", "3", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["info", str(model), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    from loglin.parsing.model import ParserModel
    parser = ParserModel.load(model)
    assert info["kind"] == "parser" and info["model"] == parser.model and info["solver"] == parser.solver
    assert info["n_features"] == parser.space.n_features == len(parser.w)
    assert info["train_sentences"] == 12
    assert main(["info", str(model)]) == 0
    assert "kind: parser" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore::loglin.errors.ConvergenceWarning")
@pytest.mark.parametrize("options", [["--max-iter", "4"], ["--solver", "lbfgs", "-C", "1", "--max-iter", "15"]])
def test_cli_estimator_and_train_parser_are_one_path(tmp_path, options, serial_numba):
    """`parse train`, loglin.Parser and train_parser, given the same options and nothing else, fit the same
    weights: one set of defaults (solver, C, tol, seed) and one dev-UAS unit (percent) in the trace."""
    import numpy as np
    from loglin import Parser
    from loglin.parsing.estimator import train_parser
    from loglin.parsing.model import ParserModel, uas
    model_file, trace_file = tmp_path / "cli.npz", tmp_path / "trace.json"
    assert main(["parse", "train", str(EN), "-o", str(model_file), "--dev", str(EN), "--trace", str(trace_file),
                 "--quiet", *options]) == 0
    cli = ParserModel.load(model_file)
    given = dict(zip(options[::2], options[1::2]))
    params = {"max_iter": int(given["--max-iter"])}
    if "--solver" in given:
        params.update(solver=given["--solver"], C=float(given["-C"]))
    sentences = read_conllx(EN)
    parser = Parser(**params).fit(sentences, X_dev=sentences)
    function = train_parser(sentences, **params)
    np.testing.assert_array_equal(parser.coef_, cli.w)
    np.testing.assert_array_equal(function.w, cli.w)
    assert cli.solver == parser.model_.solver == function.solver and cli.C == parser.model_.C == function.C
    last = parser.trace_.records[-1]["metric"]
    assert last == pytest.approx(uas(sentences, parser.predict(sentences))["uas"]) and last > 1.0
    cli_trace = [r["metric"] for r in json.loads(trace_file.read_text())["records"] if "metric" in r]
    assert cli_trace[-1] == pytest.approx(last)


def test_run_writes_no_input_column_it_does_not_predict(tmp_path, capsys, serial_numba):
    """PHEAD / PDEPREL (CoNLL-X) and DEPS (CoNLL-U, words and empty nodes) are gold syntax the parser does not
    predict: `parse run` writes "_" there, never the input's own; CoNLL-U's MISC (not syntax) is kept."""
    old = Path(__file__).parent / "data" / "models" / "parser-crf.npz"
    conllx = tmp_path / "in.conll"
    conllx.write_text("1\tA\ta\tDET\tDT\t_\t2\tdet\t2\tdet\n2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t0\troot\n\n")
    out = tmp_path / "out.conll"
    assert main(["parse", "run", str(old), str(conllx), "-o", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines() if line]
    assert [r[:6] for r in rows] == [line.split("\t")[:6] for line in conllx.read_text().splitlines() if line]
    assert {r[8] for r in rows} == {r[9] for r in rows} == {"_"}
    conllu = tmp_path / "in.conllu"
    conllu.write_text("# text = A dog barks\n1\tA\ta\tDET\t_\t_\t2\tdet\t2:det\t_\n"
                      "2\tdog\tdog\tNOUN\t_\t_\t3\tnsubj\t3:nsubj|3.1:nsubj\tSpaceAfter=No\n"
                      "3\tbarks\tbark\tVERB\t_\t_\t0\troot\t0:root\t_\n3.1\tbarks\tbark\tVERB\t_\t_\t_\t_\t0:root\t_\n\n")
    assert main(["parse", "run", str(old), str(conllu)]) == 0
    printed = capsys.readouterr().out.splitlines()
    rows = [line.split("\t") for line in printed if line and not line.startswith("#")]
    assert [r[8] for r in rows] == ["_"] * 4
    assert [r[9] for r in rows] == ["_", "SpaceAfter=No", "_", "_"]
    assert printed[0] == "# text = A dog barks" and rows[3][:8] == "3.1 barks bark VERB _ _ _ _".split()


def _parse_train_stopped_in_labeller(tmp_path, monkeypatch, capsys, act, *extra):
    """`parse train` with ``act`` run right after the arc labeller's features are extracted: (exit code, stderr,
    model file)."""
    from loglin.parsing.labeller import ArcLabeller
    original = ArcLabeller.training_problem.__func__

    def then_act(cls, *args, **kwargs):
        built = original(cls, *args, **kwargs)
        act()
        return built
    monkeypatch.setattr(ArcLabeller, "training_problem", classmethod(then_act))
    model = tmp_path / "p.npz"
    code = main(["parse", "train", str(EN), "-o", str(model), "--solver", "lbfgs", "-C", "1", "--max-iter", "5",
                 "--quiet", *extra])
    return code, capsys.readouterr().err, model


def test_time_limit_covers_the_labeller(tmp_path, monkeypatch, capsys, serial_numba):
    """The labeller trains in what the parser leaves of --time-limit; used up before it starts, the parser
    is saved without one and one warning line says so."""
    import time as clock
    from loglin.parsing.model import ParserModel
    from loglin.signals import command_elapsed
    limit = 3.0

    def wait_past_limit():
        while command_elapsed() <= limit:
            clock.sleep(0.05)
    code, err, model = _parse_train_stopped_in_labeller(tmp_path, monkeypatch, capsys, wait_past_limit,
                                                        "--time-limit", str(limit))
    assert code == 0, err
    lines = [line for line in err.splitlines() if "arc labeller" in line]
    assert len(lines) == 1 and "time limit" in lines[0] and "Traceback" not in err
    assert ParserModel.load(model).labeller is None
    assert main(["parse", "evaluate", str(model), str(EN), "--json"]) == 0
    assert "las" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_signal_during_the_labeller_keeps_the_parser(tmp_path, monkeypatch, capsys, serial_numba, signum):
    import os
    import signal
    from loglin.parsing.model import ParserModel
    number = getattr(signal, signum)
    code, err, model = _parse_train_stopped_in_labeller(tmp_path, monkeypatch, capsys,
                                                        lambda: os.kill(os.getpid(), number))
    assert code == 128 + number and "Traceback" not in err
    assert f"{signum} arrived before the arc labeller's training" in err
    parser = ParserModel.load(model)
    assert parser.labeller is None and len(parser.w) > 0
    assert {p.name for p in tmp_path.iterdir()} <= {"p.npz", "p.solver.npz"}    # atomic: no temporary left
