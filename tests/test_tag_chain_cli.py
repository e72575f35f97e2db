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
