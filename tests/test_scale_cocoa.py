"""CoCoA+ and iterative parameter mixing over shards (loglin.scale.cocoa, loglin.scale.mixing).

References are independent: plain dual CD and plain SGD (one shard), TRON's optimum, weak duality."""
import warnings

import numpy as np
import pytest

from loglin.binary import binary_problem
from loglin.errors import InvalidInputError
from loglin.problem import problem_from_matrix
from loglin.solvers.base import minimize
from loglin.training import train

from conftest import a9a_rows, gumbel_multiclass


def _data(n=300, d=20, classes=3, seed=0):
    return gumbel_multiclass(n, d, 0.2, classes, seed)


@pytest.fixture(scope="module")
def maxent():
    return problem_from_matrix(*_data(), all_pairs=True, bias=1.0)


@pytest.fixture(scope="module")
def binary():
    X, y = _data(classes=2, seed=1)
    weights = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    return binary_problem(X, y, 0.3, sample_weight=weights, bias=1.0)


C = 0.5         # Maxent's C (LR's is inside the costs)


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def _tron(problem):
    return _quiet(train, problem, C, "tron", tol=1e-11)[1]


def _shard_seed(random_state, shards=1):
    """The seed shard 0 of loglin.scale.cocoa / mixing draws from the driver's generator."""
    return int(np.random.default_rng(random_state).integers(0, 2 ** 63 - 1, size=shards)[0])


def _records(result, key):
    return np.array([r[key] for r in result.trace.records[1:]])


# ------------------------------------------------------------------ CoCoA+
@pytest.mark.parametrize("name", ["maxent", "binary"])
def test_one_shard_cocoa_is_plain_dual_cd(request, name):
    """sigma' = K = 1: a round is one cddual pass (same order of coordinates, same eps' schedule)."""
    problem = request.getfixturevalue(name)
    plain = _quiet(train, problem, C, "cddual", eps=0.0, tol=0, max_iter=12, random_state=_shard_seed(7))[1]
    cocoa = _quiet(train, problem, C, "cocoa", gap_tol=0, max_iter=12, random_state=7)[1]
    assert cocoa.iterations == plain.iterations == 12
    f_plain, f_cocoa = _records(plain, "objective"), _records(cocoa, "objective")
    np.testing.assert_allclose(f_cocoa, f_plain, rtol=1e-13)
    np.testing.assert_allclose(_records(cocoa, "dual_objective"), _records(plain, "dual_objective"),
                               rtol=0, atol=1e-13 * abs(f_plain[-1]))
    assert np.linalg.norm(cocoa.w - plain.w) <= 1e-12 * np.linalg.norm(plain.w)


@pytest.mark.parametrize("name", ["maxent", "binary"])
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_cocoa_reaches_the_tron_optimum_with_the_gap_going_to_zero(request, name, shards):
    problem = request.getfixturevalue(name)
    reference = _tron(problem)
    model, result = _quiet(train, problem, C, "cocoa", shards=shards, gap_tol=1e-10, max_iter=5000, random_state=1)
    assert result.converged and result.stop_reason == "duality gap tolerance", result.stop_reason
    assert result.f == pytest.approx(reference.f, rel=1e-8)
    f, dual, gap = _records(result, "objective"), _records(result, "dual_objective"), _records(result, "duality_gap")
    scale = abs(reference.f)
    assert np.all(dual <= reference.f + 1e-12 * scale)                  # weak duality
    assert np.all(np.diff(dual) >= -1e-12 * scale)                      # sigma' = K: every round raises D
    assert gap[-1] <= 1e-10 * abs(f[-1]) and gap[0] > 1e3 * gap[-1]
    assert np.all(result.trace.records[-1]["shards"] == shards)
    assert model.info["solver"] == "cocoa"


def test_cocoa_on_binary_valued_and_shared_feature_maxent():
    """Maxent without stored values (sqrt(sigma') values made on the shard) and with a feature shared by
    two labels (the general K^i pass of Yu et al.'s eq. (46))."""
    from conftest import shared_feature_maxent
    X, y = _data(n=200, seed=11)
    X.data[:] = 1.0
    binary_valued = problem_from_matrix(X, y, all_pairs=False, bias=1.0)
    assert binary_valued.ctx_val is None
    for problem in (binary_valued, shared_feature_maxent()):
        reference = _tron(problem)
        for shards in (2, 3):
            result = _quiet(train, problem, C, "cocoa", shards=shards, gap_tol=1e-10, max_iter=5000, random_state=2)[1]
            assert result.converged and result.f == pytest.approx(reference.f, rel=1e-8), shards


def test_adding_without_the_sigma_scaling_is_not_safe(binary):
    """sigma' = 1 < K = 3 (adding the unscaled local solutions): the dual is no longer raised every round."""
    safe = _quiet(train, binary, C, "cocoa", shards=3, gap_tol=0, max_iter=30, random_state=2)[1]
    unsafe = _quiet(train, binary, C, "cocoa", shards=3, gap_tol=0, max_iter=30, random_state=2, sigma=1.0)[1]
    scale = abs(safe.f)
    assert np.all(np.diff(_records(safe, "dual_objective")) >= -1e-12 * scale)
    assert np.any(np.diff(_records(unsafe, "dual_objective")) < -1e-6 * scale)


def test_cocoa_warm_start_and_local_passes(binary):
    reference = _tron(binary)
    cold = _quiet(train, binary, C, "cocoa", shards=2, gap_tol=1e-4, max_iter=5000, random_state=3)[1]
    warm = _quiet(train, binary, C, "cocoa", shards=2, gap_tol=1e-10, max_iter=5000, random_state=3, w0=cold.w,
                  local_passes=3)[1]
    assert warm.converged and warm.f == pytest.approx(reference.f, rel=1e-8)
    assert _records(warm, "duality_gap")[0] < _records(cold, "duality_gap")[0]      # the dual starts from w0


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_cocoa_on_an_a9a_slice_reaches_tron(shards):
    X, y = a9a_rows(1000)
    problem = binary_problem(X, y, 0.1, bias=1.0)
    reference = _tron(problem)
    result = _quiet(train, problem, None, "cocoa", shards=shards, gap_tol=1e-9, max_iter=3000, random_state=0)[1]
    assert result.converged, result.stop_reason
    assert result.f == pytest.approx(reference.f, rel=1e-8)


def test_cocoa_refuses_what_it_cannot_solve(binary):
    free_bias = binary_problem(*_data(classes=2, seed=1), 0.3, bias=1.0, regularize_bias=False)
    with pytest.raises(InvalidInputError, match="bias"):
        _quiet(train, free_bias, None, "cocoa", shards=2)
    with pytest.raises(InvalidInputError, match="each_shard"):
        minimize(binary.objective(), "cocoa")        # a plain objective: no shards to run on
    with pytest.raises(InvalidInputError, match="local_passes"):
        _quiet(train, binary, None, "cocoa", local_passes=0)


# ------------------------------------------------------------------ iterative parameter mixing
@pytest.mark.parametrize("name", ["maxent", "binary"])
def test_one_shard_ipm_with_the_decaying_rate_is_plain_sgd(request, name):
    problem = request.getfixturevalue(name)
    plain = _quiet(train, problem, C, "sgd", eta0=0.05, tol=0, max_iter=6, random_state=_shard_seed(4))[1]
    mixed = _quiet(train, problem, C, "ipm-sgd", eta0=0.05, decay=True, tol=0, max_iter=6, random_state=4)[1]
    np.testing.assert_allclose(_records(mixed, "objective"), _records(plain, "objective"), rtol=1e-14)
    assert np.linalg.norm(mixed.w - plain.w) <= 1e-14 * np.linalg.norm(plain.w)


@pytest.mark.parametrize("name", ["maxent", "binary"])
def test_ipm_with_a_constant_rate_stays_in_a_neighbourhood_of_the_optimum(request, name):
    """Started at w*, IPM-SGD with a constant rate moves away from it (w* is not its fixed point) and settles
    at a distance that shrinks with the rate: the exact optimum is out of its reach."""
    problem = request.getfixturevalue(name)
    reference = _tron(problem)
    gaps = {}
    for eta in (0.1, 0.025):
        result = _quiet(train, problem, C, "ipm-sgd", shards=2, w0=reference.w, eta0=eta, tol=0, max_iter=40,
                        random_state=5)[1]
        gaps[eta] = (_records(result, "objective")[10:] - reference.f) / abs(reference.f)
    assert gaps[0.1].min() > 1e-5
    assert gaps[0.025].mean() < gaps[0.1].mean() / 4
    assert gaps[0.025].min() > 1e-8


def test_ipm_auto_rate_makes_progress(binary):
    reference = _tron(binary)
    result = _quiet(train, binary, None, "ipm-sgd", shards=3, tol=0, max_iter=30, random_state=6)[1]
    f = _records(result, "objective")
    assert result.trace.records[-1]["eta0"] in (1.0, 0.1, 0.01, 0.001, 0.0001)
    assert (f[-1] - reference.f) < 0.05 * (result.trace.records[0]["objective"] - reference.f)


# ------------------------------------------------------------------ interfaces
def test_the_solver_table_lists_them_and_the_cli_trains_with_them(tmp_path, capsys):
    from loglin.cli import main
    from loglin.data.svmlight import write_svmlight
    from loglin.model import LinearModel
    assert main(["solvers"]) == 0
    listing = capsys.readouterr().out
    assert "cocoa" in listing and "ipm-sgd" in listing
    X, y = _data(n=200, seed=8)
    write_svmlight(tmp_path / "train.svm", X, y)
    common = ["train", str(tmp_path / "train.svm"), "-C", "0.5", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "tron.npz"), "--tol", "1e-10"]) == 0
    assert main(common + ["-o", str(tmp_path / "cocoa.npz"), "--solver", "cocoa", "--tol", "1e-10"]) == 0
    assert main(common + ["-o", str(tmp_path / "ipm.npz"), "--solver", "ipm-sgd", "--max-iter", "3"]) == 0
    tron, cocoa = LinearModel.load(tmp_path / "tron.npz"), LinearModel.load(tmp_path / "cocoa.npz")
    assert np.linalg.norm(cocoa.w - tron.w) <= 1e-4 * np.linalg.norm(tron.w)
    assert LinearModel.load(tmp_path / "ipm.npz").info["solver"] == "ipm-sgd"


def test_threads_give_the_in_process_rounds(maxent):
    runs = [_quiet(train, maxent, C, "cocoa", backend=backend, shards=3, gap_tol=0, max_iter=20, random_state=3)[1]
            for backend in ("inprocess", "threads")]
    assert np.array_equal(runs[0].w, runs[1].w)


# ------------------------------------------------------------------ Dask
distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize("name", ["maxent", "binary"])
@pytest.mark.parametrize("solver, options", [("cocoa", {"gap_tol": 1e-10}), ("ipm-sgd", {"eta0": 0.05})])
def test_dask_gives_bitwise_the_in_process_rounds(request, client, name, solver, options):
    problem = request.getfixturevalue(name)
    runs = []
    for backend in ("inprocess", client):
        # clock="cpu" records every round: on the wall clock minimize thins the tests of a binary dual
        # method's iterates by their measured cost (0027), so the two traces would differ in length
        runs.append(_quiet(train, problem, C, solver, backend=backend, shards=3, max_iter=60 if solver == "cocoa"
                           else 5, random_state=9, clock="cpu", **options)[1])
    local, dask = runs
    assert local.iterations == dask.iterations
    assert [r["objective"] for r in local.trace.records] == [r["objective"] for r in dask.trace.records]
    assert [r.get("dual_objective") for r in local.trace.records] == \
        [r.get("dual_objective") for r in dask.trace.records]
    assert np.array_equal(local.w, dask.w)


@pytest.mark.parametrize("shards", [1, 2, 3])
def test_cocoa_on_dask_reaches_the_tron_optimum(client, maxent, shards):
    reference = _tron(maxent)
    result = _quiet(train, maxent, C, "cocoa", backend=client, shards=shards, gap_tol=1e-9, max_iter=5000,
                    random_state=1)[1]
    assert result.converged and result.f == pytest.approx(reference.f, rel=1e-8)
    assert _records(result, "duality_gap")[-1] <= 1e-9 * abs(result.f)


def test_cli_cocoa_on_two_workers_reaches_the_one_process_optimum(tmp_path):
    from loglin.cli import main
    from loglin.data.svmlight import write_svmlight
    from loglin.model import LinearModel
    X, y = _data(n=200, seed=10)
    write_svmlight(tmp_path / "train.svm", X, y)
    common = ["train", str(tmp_path / "train.svm"), "-C", "0.5", "--quiet", "--seed", "3"]
    assert main(common + ["-o", str(tmp_path / "tron.npz"), "--tol", "1e-10"]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--solver", "cocoa", "--tol", "1e-10", "--workers", "2"]) == 0
    tron, two = LinearModel.load(tmp_path / "tron.npz"), LinearModel.load(tmp_path / "two.npz")
    assert two.info["solver"] == "cocoa" and two.info["converged"]
    assert two.info["objective"] == pytest.approx(tron.info["objective"], rel=1e-9)
