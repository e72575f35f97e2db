"""CoCoA+ with part-based EG as the local solver on sentence shards of the chain CRF and the parser
(loglin.scale.cocoa_eg). References are independent: single-process online EG (one shard), L-BFGS's optimum,
weak duality."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from loglin.errors import InvalidInputError
from loglin.training import train

from conftest import CHUNK_SENTENCES

EN = Path(__file__).parent / "data" / "parse_en.conllu"
C = 2.0


@pytest.fixture(scope="module")
def chain():
    from loglin.structured.crf_features import build_chain_problem
    from loglin.structured.passes import empirical_counts
    problem, _ = build_chain_problem(CHUNK_SENTENCES[:6], "chunk")
    problem.weight = np.array([1.0, 0.5, 2.0, 1.0, 1.5, 1.0])     # sentence weights travel with their shard
    problem.emp = empirical_counts(problem.data, problem.weight, problem.n_features)
    return problem


@pytest.fixture(scope="module")
def tree():
    from loglin.data.conll import read_conllx
    from loglin.parsing.problem import build_tree_problem
    return build_tree_problem(read_conllx(EN))[0]


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def _lbfgs(problem):
    return _quiet(train, problem, C, "lbfgs", tol=1e-10, max_iter=3000)[1]


def _shard_seed(random_state):
    """The seed shard 0 of loglin.scale.cocoa_eg draws from the driver's generator."""
    return int(np.random.default_rng(random_state).integers(0, 2 ** 63 - 1, size=1)[0])


def _records(result, key):
    return np.array([r[key] for r in result.trace.records[1:]])


def test_one_shard_cocoa_is_online_eg_in_permutation_order(chain):
    """sigma' = K = 1: a round is an epoch of single-process online EG (permutation order, no annealing)."""
    plain = _quiet(train, chain, C, "eg", order="permutation", anneal=False, gap_tol=0, max_iter=15,
                   random_state=_shard_seed(7), clock="cpu")[1]
    cocoa = _quiet(train, chain, C, "cocoa", gap_tol=0, max_iter=15, random_state=7, clock="cpu")[1]
    assert cocoa.iterations == plain.iterations == 15
    f_plain = _records(plain, "objective")
    np.testing.assert_allclose(_records(cocoa, "objective"), f_plain, rtol=1e-11)
    np.testing.assert_allclose(_records(cocoa, "dual_objective"), _records(plain, "dual_objective"),
                               rtol=0, atol=1e-11 * abs(f_plain[-1]))
    assert np.linalg.norm(cocoa.w - plain.w) <= 1e-10 * np.linalg.norm(plain.w)


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_cocoa_eg_reaches_the_lbfgs_optimum_with_the_gap_going_to_zero(chain, shards):
    reference = _lbfgs(chain)
    model, result = _quiet(train, chain, C, "cocoa", shards=shards, gap_tol=1e-10, max_iter=2000, random_state=1)
    assert result.converged and result.stop_reason == "duality gap tolerance", result.stop_reason
    assert result.f == pytest.approx(reference.f, rel=1e-8)
    assert np.linalg.norm(result.w - reference.w) <= 1e-3 * np.linalg.norm(reference.w)
    dual, gap = _records(result, "dual_objective"), _records(result, "duality_gap")
    scale = abs(reference.f)
    assert np.all(dual <= reference.f + 1e-12 * scale)                  # weak duality
    assert np.all(np.diff(dual) >= -1e-12 * scale)                      # sigma' = K: no round lowers D
    assert gap[-1] <= 1e-10 * abs(result.f) and gap[0] > 1e4 * gap[-1]
    assert result.trace.records[-1]["shards"] == shards
    assert model.solver == "cocoa"


@pytest.fixture(scope="module")
def chain40():
    """40 sentences pasted together from 1-3 of the chunking sentences: every shard of 4 or 8 holds the same
    frequent features (transitions, common words), the data on which CoCoA+'s rounds grow with K."""
    from loglin.structured.crf_features import build_chain_problem
    rng = np.random.default_rng(5)
    sentences = [sum((list(CHUNK_SENTENCES[j]) for j in rng.choice(len(CHUNK_SENTENCES), size=rng.integers(1, 4))),
                     []) for _ in range(40)]
    return build_chain_problem(sentences, "chunk")[0]


@pytest.mark.parametrize("shards", [4, 8])
def test_cocoa_eg_gap_keeps_falling_with_many_shards(chain40, shards):
    """No stall: from a relative gap of 1e-2 on, every WINDOW rounds at least halve the gap, down to 1e-10, and
    the optimum is L-BFGS's (a run whose rates or drift froze the gap above 1e-6 fails the window test)."""
    window = 25
    reference = _lbfgs(chain40)
    result = _quiet(train, chain40, C, "cocoa", shards=shards, gap_tol=1e-10, max_iter=1000, random_state=1)[1]
    assert result.converged, result.stop_reason
    assert result.f == pytest.approx(reference.f, rel=1e-8)
    relative = _records(result, "duality_gap") / np.abs(_records(result, "objective"))
    assert np.all(np.diff(_records(result, "dual_objective")) >= -1e-12 * abs(reference.f))
    start = int(np.argmax(relative <= 1e-2))
    assert relative[start] <= 1e-2
    for k in range(start, len(relative) - window):
        assert relative[k + window] <= 0.5 * relative[k], (k, relative[k], relative[k + window])


def test_cocoa_eg_on_parser_shards_reaches_the_lbfgs_optimum(tree):
    """The same code on the tree structure (arc parts)."""
    reference = _lbfgs(tree)
    result = _quiet(train, tree, C, "cocoa", shards=2, gap_tol=1e-9, max_iter=2000, random_state=2)[1]
    assert result.converged, result.stop_reason
    assert result.f == pytest.approx(reference.f, rel=1e-8)
    assert np.all(np.diff(_records(result, "dual_objective")) >= -1e-12 * abs(reference.f))


def test_adding_without_the_sigma_scaling_is_not_safe(chain):
    """sigma' = 1 < K = 3 (adding the local solutions unscaled): some round lowers the dual."""
    unsafe = _quiet(train, chain, C, "cocoa", shards=3, gap_tol=0, max_iter=30, random_state=2, sigma=1.0,
                    eta=4.0)[1]
    dual = _records(unsafe, "dual_objective")
    assert np.any(np.diff(dual) < -1e-6 * abs(unsafe.f))


def test_warm_start_and_local_passes(chain):
    reference = _lbfgs(chain)
    cold = _quiet(train, chain, C, "cocoa", shards=2, gap_tol=1e-3, max_iter=500, random_state=3)[1]
    warm = _quiet(train, chain, C, "cocoa", shards=2, gap_tol=1e-10, max_iter=2000, random_state=3, w0=cold.w,
                  local_passes=2)[1]
    assert warm.converged and warm.f == pytest.approx(reference.f, rel=1e-8)
    assert _records(warm, "duality_gap")[0] < _records(cold, "duality_gap")[0]      # the dual starts from w0


def test_cocoa_eg_refuses_what_it_cannot_solve(chain):
    with pytest.raises(InvalidInputError, match="local_passes"):
        _quiet(train, chain, C, "cocoa", shards=2, local_passes=0)
    with pytest.raises(InvalidInputError, match="eta"):
        _quiet(train, chain, C, "cocoa", shards=2, eta=-1.0)
    with pytest.raises(InvalidInputError):
        _quiet(train, chain, C, "cocoa", shards=2, loss="mm")       # sharded objectives are log-loss only


# ------------------------------------------------------------------ Dask
distributed = pytest.importorskip("distributed")


def test_dask_gives_bitwise_the_in_process_rounds(chain, client):
    runs = [_quiet(train, chain, C, "cocoa", backend=backend, shards=3, gap_tol=0, max_iter=25, random_state=9,
                   clock="cpu")[1] for backend in ("inprocess", client)]
    local, dask = runs
    assert local.iterations == dask.iterations == 25
    assert [r["objective"] for r in local.trace.records] == [r["objective"] for r in dask.trace.records]
    assert [r.get("dual_objective") for r in local.trace.records] == \
        [r.get("dual_objective") for r in dask.trace.records]
    assert np.array_equal(local.w, dask.w)


@pytest.mark.parametrize("shards", [2, 3])
def test_cocoa_eg_on_dask_reaches_the_lbfgs_optimum(chain, client, shards):
    reference = _lbfgs(chain)
    result = _quiet(train, chain, C, "cocoa", backend=client, shards=shards, gap_tol=1e-10, max_iter=2000,
                    random_state=4)[1]
    assert result.converged and result.f == pytest.approx(reference.f, rel=1e-8)
    assert _records(result, "duality_gap")[-1] <= 1e-10 * abs(result.f)


def test_cli_tag_train_crf_with_cocoa_on_two_workers(tmp_path):
    from loglin.cli import main
    from loglin.model_io import load_model
    data = tmp_path / "train.txt"
    data.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in CHUNK_SENTENCES))
    common = ["tag", "train", str(data), "--task", "chunk", "--model", "crf", "-C", "2", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "lbfgs.npz"), "--solver", "lbfgs", "--tol", "1e-10"]) == 0
    assert main(common + ["-o", str(tmp_path / "cocoa.npz"), "--solver", "cocoa", "--tol", "1e-10",
                          "--workers", "2"]) == 0
    lbfgs, cocoa = load_model(tmp_path / "lbfgs.npz"), load_model(tmp_path / "cocoa.npz")
    assert len(cocoa.w) == len(lbfgs.w)          # the workers index the features in another order: compare sorted
    assert np.linalg.norm(np.sort(cocoa.w) - np.sort(lbfgs.w)) <= 1e-4 * np.linalg.norm(lbfgs.w)
