"""Sentence shards of the chain CRF and the parser (loglin.scale): loss parts sum to the full objective,
L-BFGS over shards reaches the one-process optimum, Dask gives bitwise the in-process iterates, and
`tag train --model crf --workers 2` writes the one-process model."""
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from loglin.data.conll import read_conllx
from loglin.errors import InvalidInputError
from loglin.scale import shard_bounds, sharded
from loglin.solvers.base import minimize
from loglin.training import train
from conftest import CHUNK_SENTENCES

EN = Path(__file__).parent / "data" / "parse_en.conllu"
CHUNKS = CHUNK_SENTENCES[:5]


def _columns(sentences):
    return "".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in sentences)


@pytest.fixture(scope="module")
def chain():
    from loglin.structured.crf_features import build_chain_problem
    problem, _ = build_chain_problem(CHUNKS, "chunk")
    problem.weight = np.array([1.0, 0.5, 2.0, 1.0, 1.5])     # sentence weights travel with their shard
    from loglin.structured.passes import empirical_counts
    problem.emp = empirical_counts(problem.data, problem.weight, problem.n_features)
    return problem


@pytest.fixture(scope="module")
def tree():
    from loglin.data.conll import read_conllx
    from loglin.parsing.problem import build_tree_problem
    return build_tree_problem(read_conllx(EN))[0]


@pytest.mark.parametrize("name", ["chain", "tree"])
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_sentence_shards_sum_to_the_full_objective(request, name, shards):
    problem = request.getfixturevalue(name)
    full = problem.objective(2.0)
    w = 0.3 * np.random.default_rng(shards).normal(size=full.n)
    with sharded(problem, 2.0, shards) as objective:
        assert objective.n_shards == shards and objective.kind == full.kind == name
        assert not callable(getattr(objective, "hess_vec", None))      # L-BFGS / OWL-QN only
        f, g = full.fun_grad(w)
        fs, gs = objective.fun_grad(w)
        assert fs == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(gs, g, rtol=0, atol=1e-12 * np.abs(g).max())
        assert objective.fun(w) == pytest.approx(full.fun(w), rel=1e-12)
        assert objective.collins(fs) == pytest.approx(full.collins(f), rel=1e-12)


def test_tree_shards_balance_cubic_cost(tree):
    bounds = shard_bounds(tree, 3)
    cost = np.diff(np.concatenate([[0], np.cumsum(np.diff(tree.sent_ptr) ** 3)])[bounds])
    largest = int(np.diff(tree.sent_ptr).max()) ** 3
    assert len(cost) == 3 and cost.max() - cost.min() <= 2 * largest


@pytest.mark.parametrize("name", ["chain", "tree"])
def test_lbfgs_over_two_shards_reaches_the_single_process_objective(request, name):
    problem = request.getfixturevalue(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = train(problem, 2.0, "lbfgs", tol=1e-10, max_iter=2000)[1]
        two = train(problem, 2.0, "lbfgs", tol=1e-10, max_iter=2000, shards=2)[1]
        auto = train(problem, 2.0, tol=1e-10, max_iter=2000, shards=2)[1]
    assert two.f == pytest.approx(one.f, rel=1e-10)
    assert auto.solver == "lbfgs" and auto.f == pytest.approx(one.f, rel=1e-10)


def test_owlqn_over_shards_reaches_the_single_process_objective(chain):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = train(chain, 2.0, "owlqn", penalty="l1", tol=1e-9, max_iter=3000)[1]
        three = train(chain, 2.0, "owlqn", penalty="l1", tol=1e-9, max_iter=3000, shards=3)[1]
    assert three.f == pytest.approx(one.f, rel=1e-8)


def test_thread_backend_gives_the_in_process_iterates(tree):
    runs = []
    for backend in ("inprocess", "threads"):
        with sharded(tree, 1.0, 3, backend) as objective:
            runs.append(minimize(objective, "lbfgs", tol=1e-8, max_iter=100, warn=False))
    assert np.array_equal(runs[0].w, runs[1].w) and runs[0].iterations > 2


def test_train_refuses_max_margin_and_dual_solvers_on_shards(chain):
    with pytest.raises(InvalidInputError, match="log-loss"):
        train(chain, 1.0, "eg", loss="mm", shards=2)
    with pytest.raises(InvalidInputError, match="solvers"):
        train(chain, 1.0, "eg", shards=2)


# ------------------------------------------------------------------ Dask

distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize("name", ["chain", "tree"])
def test_dask_gives_bitwise_the_in_process_lbfgs_iterates(request, client, name):
    problem = request.getfixturevalue(name)
    runs = []
    for backend in ("inprocess", client):
        with sharded(problem, 2.0, 2, backend) as objective:
            runs.append(minimize(objective, "lbfgs", tol=1e-8, max_iter=200, warn=False))
    local, dask = runs
    assert local.iterations == dask.iterations > 2
    assert [r["objective"] for r in local.trace.records] == [r["objective"] for r in dask.trace.records]
    assert [r["grad_norm"] for r in local.trace.records] == [r["grad_norm"] for r in dask.trace.records]
    assert np.array_equal(local.w, dask.w)



def test_cli_tag_train_crf_workers_writes_the_single_process_model(tmp_path):
    """L-BFGS's line search tests f, which stops resolving w near sqrt(eps |f|): a small C keeps f small."""
    from loglin.cli import main
    from loglin.model_io import load_model
    data = tmp_path / "train.txt"
    data.write_text(_columns(CHUNKS))
    common = ["tag", "train", str(data), "--task", "chunk", "--model", "crf", "-C", "0.5", "--tol", "1e-12",
              "--quiet"]
    assert main(common + ["-o", str(tmp_path / "one.npz")]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--workers", "2"]) == 0
    one, two = load_model(tmp_path / "one.npz"), load_model(tmp_path / "two.npz")
    # the one-process file numbers attributes template by template, the workers' in order of first sight:
    # compare the weights by (label, attribute) name
    from loglin.inspection import weights
    named_one = {(label, name): value for label, name, value in weights(one)}
    named_two = {(label, name): value for label, name, value in weights(two)}
    assert named_one.keys() == named_two.keys() and len(named_one) > 100
    keys = sorted(named_one)
    a, b = np.array([named_one[k] for k in keys]), np.array([named_two[k] for k in keys])
    assert np.linalg.norm(b - a) <= 1e-8 * np.linalg.norm(a)


def test_cli_parse_train_workers_and_refusals(tmp_path):
    from loglin.cli import main
    from loglin.model_io import load_model
    common = ["parse", "train", str(EN), "-C", "1", "--tol", "1e-8", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "one.npz"), "--solver", "lbfgs"]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--workers", "2", "--dev", str(EN),
                          "--trace", str(tmp_path / "two.json")]) == 0      # no --solver: lbfgs
    one, two = load_model(tmp_path / "one.npz"), load_model(tmp_path / "two.npz")
    assert two.solver == "lbfgs"
    dev_uas = [r["metric"] for r in json.loads((tmp_path / "two.json").read_text())["records"] if "metric" in r]
    assert dev_uas[-1] == pytest.approx(two.evaluate(read_conllx(EN))["uas"])       # in percent, as in-process
    assert np.linalg.norm(two.w - one.w) <= 1e-6 * np.linalg.norm(one.w)
    # the arc labeller too: the one-process path's, from the same gold arcs and options
    assert one.labeller is not None and two.labeller is not None and two.labeller.labels == one.labeller.labels
    np.testing.assert_allclose(two.labeller.model.w, one.labeller.model.w, rtol=1e-9, atol=1e-12)
    assert "las" in two.evaluate(read_conllx(EN))
    assert main(common + ["-o", str(tmp_path / "m3n.npz"), "--model", "m3n", "--workers", "2"]) == 2
    assert main(common + ["-o", str(tmp_path / "eg.npz"), "--solver", "eg", "--workers", "2"]) == 2
