"""loglin.metrics against scikit-learn's definitions, and `loglin evaluate`'s report."""
import json
import subprocess
import sys

import numpy as np
import pytest

from loglin.metrics import classification_scores


def test_scores_equal_scikit_learns():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    gold = rng.choice(["a", "b", "c", "d"], size=300)
    pred = np.where(rng.random(300) < 0.7, gold, rng.choice(["a", "b", "c", "e"], size=300))
    ours = classification_scores(gold, pred)
    labels = ours["confusion"]["labels"]
    p, r, f, s = metrics.precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    for i, c in enumerate(labels):
        assert ours["per_class"][c] == pytest.approx({"precision": p[i], "recall": r[i], "f1": f[i], "support": s[i]})
    for avg in ("macro", "micro", "weighted"):
        expected = metrics.precision_recall_fscore_support(gold, pred, labels=labels, average=avg, zero_division=0)
        got = ours[avg]
        assert (got["precision"], got["recall"], got["f1"]) == pytest.approx(expected[:3])
    np.testing.assert_array_equal(ours["confusion"]["matrix"], metrics.confusion_matrix(gold, pred, labels=labels))


def test_evaluate_reports_per_class_scores(tmp_path):
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, size=90)
    X = rng.normal(size=(90, 4)) + 2 * np.eye(3, 4)[y]
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{c} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(r)) + "\n" for c, r in zip(y, X)))
    run = [sys.executable, "-m", "loglin.cli"]
    assert subprocess.run(run + ["train", str(data), "-o", str(tmp_path / "m.npz"), "--quiet"],
                          timeout=600).returncode == 0
    out = subprocess.run(run + ["evaluate", str(tmp_path / "m.npz"), str(data), "--json"], capture_output=True,
                         text=True, timeout=600)
    scores = json.loads(out.stdout)
    assert sum(c["support"] for c in scores["per_class"].values()) == 90
    assert scores["micro"]["f1"] == pytest.approx(scores["accuracy"] / 100)
    assert np.trace(np.array(scores["confusion"]["matrix"])) == round(scores["accuracy"] * 0.9)
