"""`loglin tag train --model crf|m3n`: chain models behind the tagging command line."""
import json

import pytest

from loglin.cli import main

SENTENCES = [
    [("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"), ("deficit", "NN", "I-NP")],
    [("The", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("runs", "VBZ", "B-VP"), ("fast", "RB", "B-ADVP")],
    [("A", "DT", "B-NP"), ("cat", "NN", "I-NP"), ("sleeps", "VBZ", "B-VP"), (".", ".", "O")],
]


@pytest.fixture
def corpus(tmp_path):
    text = "\n\n".join("\n".join(" ".join(t) for t in s) for s in SENTENCES * 4) + "\n"
    (tmp_path / "train.txt").write_text(text)
    return tmp_path


@pytest.mark.parametrize("model, solver", [("crf", "lbfgs"), ("m3n", "eg")])
def test_train_evaluate_and_tag_a_chain_model(corpus, capsys, model, solver):
    d = corpus
    assert main(["tag", "train", "--task", "chunk", "--model", model, "--solver", solver, str(d / "train.txt"),
                 "-o", str(d / "m.npz"), "--max-iter", "60", "--quiet", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == model
    assert main(["tag", "evaluate", str(d / "m.npz"), str(d / "train.txt"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["f1"] > 90            # a separable toy corpus is learned
    (d / "in.txt").write_text("The/DT cat/NN runs/VBZ\n")
    assert main(["tag", str(d / "m.npz"), str(d / "in.txt")]) == 0
    assert capsys.readouterr().out.split()[:3] == ["The/DT/B-NP", "cat/NN/I-NP", "runs/VBZ/B-VP"]


def test_m3n_refuses_a_primal_smooth_solver(corpus, capsys):
    assert main(["tag", "train", "--task", "chunk", "--model", "m3n", "--solver", "lbfgs",
                 str(corpus / "train.txt"), "-o", str(corpus / "m.npz")]) == 2
    assert "needs a differentiable objective" in capsys.readouterr().err


@pytest.mark.parametrize("model, options", [("crf", []), ("crf", ["--solver", "sgd", "-C", "2"]),
                                            ("m3n", ["--solver", "eg-batch"])])
def test_cli_tagger_and_train_chain_model_are_one_path(tmp_path, model, options, serial_numba):
    """`tag train --model crf|m3n`, loglin.Tagger and train_chain_model, given the same data and options and
    nothing else, fit the same weights: one training path, one set of defaults (solver, C, tol, seed)."""
    import numpy as np
    from loglin import Tagger
    from loglin.data import read_conll2000
    from loglin.structured.model import ChainModel
    from loglin.tagging.datasets import bundled_conll2000_small
    from loglin.tagging.estimator import train_chain_model
    sentences = read_conll2000(bundled_conll2000_small()[0])[:150]
    data, model_file = tmp_path / "train.txt", tmp_path / "cli.npz"
    data.write_text("\n\n".join("\n".join(" ".join(t) for t in s) for s in sentences) + "\n")
    assert main(["tag", "train", "--task", "chunk", "--model", model, str(data), "-o", str(model_file),
                 "--max-iter", "12", "--quiet", *options]) == 0
    cli = ChainModel.load(model_file)
    given = dict(zip(options[::2], options[1::2]))
    solver, C = given.get("--solver"), float(given["-C"]) if "-C" in given else None
    X, y = [[t[:2] for t in s] for s in sentences], [[t[2] for t in s] for s in sentences]
    tagger = Tagger(model=model, features="chunk", C=C, solver=solver or "auto", max_iter=12).fit(X, y)
    function = train_chain_model(sentences, "chunk", model=model, solver=solver, C=C, max_iter=12)
    np.testing.assert_array_equal(tagger.coef_, cli.w)
    np.testing.assert_array_equal(function.w, cli.w)
    assert function.space.attributes == cli.space.attributes and function.space.task == cli.space.task == "chunk"
    assert cli.solver == tagger.model_.solver == function.solver and cli.C == tagger.model_.C == function.C
    assert cli.tag(sentences[:20]) == function.tag(sentences[:20]) == tagger.predict(X[:20])


def test_fit_options_are_constructor_parameters():
    """Training settings are Tagger / Parser parameters (get_params lists them); fit(**options) still works for
    one release, with a DeprecationWarning."""
    import numpy as np
    from loglin import Parser, Tagger
    for estimator in (Tagger, Parser):
        names = set(estimator().get_params())
        assert {"tol", "gap_tol", "max_iter", "time_limit", "clock", "callback", "checkpoint",
                "initial_weights", "solver_options"} <= names
    X = [[(w, p) for w, p, _ in s] for s in SENTENCES * 2]
    y = [[c for _, _, c in s] for s in SENTENCES * 2]
    seen = []
    tagger = Tagger(features="chunk", max_iter=5, gap_tol=1e-3, callback=lambda r: seen.append(r) or False)
    new = tagger.fit(X, y).coef_.copy()
    assert len(seen) == tagger.n_iter_ + 1 or len(seen) == tagger.n_iter_
    with pytest.warns(DeprecationWarning, match="constructor"):
        old = Tagger(features="chunk", max_iter=5).fit(X, y, gap_tol=1e-3)
    np.testing.assert_array_equal(old.coef_, new)
