"""Model inspection (loglin.inspection, `loglin info --top`, `loglin dump`) for every model kind."""
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from loglin import training
from loglin.errors import ConvergenceWarning
from loglin.inspection import TRANSITIONS, top, weights
from test_training import _problems


@pytest.fixture(scope="module")
def models():
    from conftest import random_sparse
    X = random_sparse(120, 25, 0.25, seed=3)
    y = np.random.default_rng(4).choice(["DT", "NN", "VB", "JJ"], size=120)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for kind, (problem, space) in _problems((X, y)).items():
            out[kind] = training.train(problem, 1.0, space=space, max_iter=30, penalty="l1" if kind == "maxent"
                                       else "l2")[0]
    return out


def test_every_nonzero_weight_is_listed_once(models):
    for kind, model in models.items():
        rows = weights(model)
        assert len(rows) == np.count_nonzero(model.w), kind
        assert sum(abs(v) for _, _, v in rows) == pytest.approx(np.abs(model.w).sum(), rel=1e-12), kind


def test_maxent_names_give_the_models_scores(models):
    model = models["maxent"]
    listed = weights(model)
    assert np.count_nonzero(model.w) < model.w.size            # the L1 model is sparse
    for p in range(model.n_inputs):
        x = sp.csr_matrix(([1.0], ([0], [p])), shape=(1, model.n_inputs))
        scores = model.decision_function(x)[0]
        expected = {str(c): 0.0 for c in model.labels}
        for label, feature, value in listed:
            if feature == f"x{p + 1}":
                expected[label] += value
        np.testing.assert_allclose(scores, [expected[str(c)] for c in model.labels], atol=1e-12)


def test_chain_transitions_and_binary_sign(models):
    chain = models["chain"]
    K = len(chain.space.labels)
    T = chain.w[chain.space.n_state:].reshape(K, K)
    listed = {f: v for a, f, v in weights(chain) if a == TRANSITIONS}
    labels = [str(c) for c in chain.space.labels]
    assert listed == {f"{labels[i]} -> {labels[j]}": T[i, j] for i in range(K) for j in range(K) if T[i, j]}
    binary = models["binary"]
    assert {a for a, _, _ in weights(binary)} == {str(binary.labels[1])}
    best = top(binary, 1)[str(binary.labels[1])]
    assert best["positive"][0][1] == max(binary.w) and best["negative"][0][1] == min(binary.w)


def test_cli_info_top_and_dump(models, tmp_path):
    path = tmp_path / "chain.npz"
    models["chain"].save(path)
    run = [sys.executable, "-m", "loglin.cli"]
    info = subprocess.run(run + ["info", str(path), "--top", "2", "--json"], capture_output=True, text=True,
                          timeout=300)
    assert info.returncode == 0, info.stderr
    top2 = json.loads(info.stdout)["top"]
    assert TRANSITIONS in top2 and all(len(v["positive"]) <= 2 for v in top2.values())
    dump = subprocess.run(run + ["dump", str(path), "-o", str(tmp_path / "w.tsv")], capture_output=True,
                          text=True, timeout=300)
    assert dump.returncode == 0, dump.stderr
    lines = (tmp_path / "w.tsv").read_text().splitlines()
    assert len(lines) == np.count_nonzero(models["chain"].w)
    assert sum(abs(float(line.split("\t")[2])) for line in lines) == pytest.approx(np.abs(models["chain"].w).sum())


def test_crfsuite_models_are_read_by_info_and_dump_and_refused_by_evaluate(tmp_path):
    from loglin.crfsuite import CRF
    from loglin.model_io import load_model
    X = [[{"w": "a", "n": 1.0}, {"w": "b"}], [{"w": "b"}, {"w": "a"}]]
    crf = CRF(c2=0.1).fit(X, [["A", "B"], ["B", "A"]])
    path = tmp_path / "crf.npz"
    crf.save(path)
    listed = weights(load_model(path))
    state = {(a, f): v for a, f, v in listed if a != TRANSITIONS}
    assert state == {(label, attr): v for (attr, label), v in crf.state_features_.items()}
    run = [sys.executable, "-m", "loglin.cli"]
    info = subprocess.run(run + ["info", str(path), "--json"], capture_output=True, text=True, timeout=300)
    assert json.loads(info.stdout)["kind"] == "crfsuite"
    bad = subprocess.run(run + ["evaluate", str(path), str(path)], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "loglin.crfsuite model" in bad.stderr
