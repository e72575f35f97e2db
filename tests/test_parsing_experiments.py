"""The parsing reproductions: their held-out scorer against the parser's own evaluation, partial traces,
and a quick end-to-end run (skipped without the shared Spanish data)."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from loglin.data.conll import read_conllx
from loglin.experiments import REPRODUCE
from loglin.experiments.collins2008_parsing import HeldOutUAS, _run
from loglin.parsing.model import ParserModel, uas
from loglin.parsing.problem import build_tree_problem

EN = Path(__file__).parent / "data" / "parse_en.conllu"


@pytest.fixture(scope="module")
def english():
    sentences = read_conllx(EN)
    problem, space, _ = build_tree_problem(sentences)
    return sentences, problem, space


def test_held_out_scorer_matches_parser_evaluation(english, serial_numba):
    sentences, problem, space = english
    scorer = HeldOutUAS(space, sentences)
    for seed in range(3):
        w = np.random.default_rng(seed).normal(size=problem.n_features)
        expected = uas(sentences, ParserModel(space, w).parse(sentences))
        assert scorer(w) == pytest.approx(expected["uas"])
        assert scorer.history[-1][1] == pytest.approx(expected["uas_no_punct"])
    assert len(scorer.history) == 3


def test_run_rewrites_the_trace_after_every_iteration(english, tmp_path, serial_numba):
    sentences, problem, space = english
    scorer = HeldOutUAS(space, sentences)
    obj = problem.objective(0.5, "ll")
    res, trace = _run(tmp_path, "EG", obj, "tree-eg", scorer, 0.5, tol=0.0, max_iter=3, random_state=0)
    with (tmp_path / "EG.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(trace.records) == 4
    for r, rec in zip(rows, trace.records):
        assert float(r["primal_collins"]) == pytest.approx(rec["objective"] / 0.5)
        assert float(r["uas_no_punct"]) == pytest.approx(rec["uas_no_punct"])
    assert res.iterations == 3


@pytest.mark.slow
def test_quick_parsing_experiments(tmp_path, serial_numba):
    for name in ("collins2008-parse-ll", "collins2008-parse-mm", "collins2008-parse-path"):
        out = tmp_path / name
        REPRODUCE[name](out, quick=True)
        assert (out / "summary.md").is_file() and list(out.glob("*.png"))
    summary = json.loads((tmp_path / "collins2008-parse-ll" / "summary.json").read_text())
    assert set(summary) == {"EG", "L-BFGS", "SGD"}
    assert all(0 < s["uas"] <= 100 and 0 < s["uas_no_punct"] <= 100 for s in summary.values())
    path = json.loads((tmp_path / "collins2008-parse-path" / "path.json").read_text())
    totals = [r["total_iterations"] for r in path]
    assert totals == sorted(totals) and len(path) >= 2
    cold = json.loads((tmp_path / "collins2008-parse-path" / "cold.json").read_text())
    assert cold and all(r["iterations"] > 0 for r in cold)
