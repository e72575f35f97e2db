"""loglin.training.train: one entry for every problem kind, one set of defaults, one ConvergenceWarning rule."""
import warnings
from pathlib import Path

import numpy as np
import pytest

from conftest import random_binary_lr
from loglin import training
from loglin.errors import ConvergenceWarning, InvalidInputError
from loglin.solvers.base import minimize

EN = Path(__file__).parent / "data" / "parse_en.conllu"
CHUNKS = [[("He", "PRP", "B-NP"), ("reckons", "VBZ", "B-VP"), ("the", "DT", "B-NP"), ("deficit", "NN", "I-NP")],
          [("The", "DT", "B-NP"), ("dog", "NN", "I-NP"), ("runs", "VBZ", "B-VP"), ("fast", "RB", "B-ADVP")]]


def _problems(small_multiclass):
    from loglin.data.conll import read_conllx
    from loglin.parsing.problem import build_tree_problem
    from loglin.problem import problem_from_matrix
    from loglin.structured.crf_features import build_chain_problem
    chain, chain_space = build_chain_problem(CHUNKS, "chunk")
    tree, tree_space, _ = build_tree_problem(read_conllx(EN))
    return {"maxent": (problem_from_matrix(*small_multiclass), None), "binary": (random_binary_lr(), None),
            "chain": (chain, chain_space), "tree": (tree, tree_space)}


def test_train_serves_every_kind_with_its_default_solver_and_model(small_multiclass, serial_numba):
    from loglin.model import LinearModel
    from loglin.parsing.model import ParserModel
    from loglin.structured.model import ChainModel
    expected = {"maxent": LinearModel, "binary": LinearModel, "chain": ChainModel, "tree": ParserModel}
    for kind, (problem, space) in _problems(small_multiclass).items():
        assert training.problem_kind(problem) == kind
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model, result = training.train(problem, space=space, max_iter=5)
        assert type(model) is expected[kind] and result.solver == training.default_solver(kind, problem=problem)
        np.testing.assert_array_equal(model.w, result.w)


def test_train_reaches_what_minimize_reaches_on_the_same_objective(small_multiclass, serial_numba):
    problems = _problems(small_multiclass)
    for kind in ("maxent", "chain", "tree"):
        problem, space = problems[kind]
        _, result = training.train(problem, 2.0, "lbfgs", space=space, tol=1e-7, max_iter=500)
        direct = minimize(problem.objective(2.0), "lbfgs", tol=1e-7, max_iter=500)
        assert result.f == pytest.approx(direct.f, rel=1e-9)


def test_convergence_warning_only_when_the_solver_stopped_on_a_limit(small_multiclass, serial_numba):
    problem, space = _problems(small_multiclass)["chain"]
    with pytest.warns(ConvergenceWarning, match=r"stopped \(max_iter\)"):
        training.train(problem, 1.0, "lbfgs", space=space, max_iter=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, result = training.train(problem, 1.0, "lbfgs", space=space, max_iter=500)
    assert result.converged
    assert training.ConvergenceWarning is ConvergenceWarning


def test_m3n_trains_with_a_dual_solver_and_refuses_a_smooth_one(small_multiclass, serial_numba):
    problem, space = _problems(small_multiclass)["tree"]
    model, result = training.train(problem, 1.0, "cutting-plane", loss="mm", space=space, max_iter=300,
                                   gap_tol=1e-3)
    assert model.model == "m3n" and result.stop_reason == "duality gap tolerance"
    with pytest.raises(InvalidInputError, match="needs a differentiable objective"):
        training.train(problem, 1.0, "lbfgs", loss="mm", space=space)
    with pytest.raises(InvalidInputError, match="cannot train a list"):
        training.train([1, 2], 1.0)


def _sparse_binary(rows, cols, per_row, seed=0, scale=1.0):
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    indices = np.concatenate([np.sort(rng.choice(cols, per_row, replace=False)) for _ in range(rows)])
    X = sp.csr_matrix((rng.uniform(0.5, 1.5, rows * per_row), indices, np.arange(0, rows * per_row + 1, per_row)),
                      shape=(rows, cols))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sp.diags(scale / norms) @ X
    return sp.csr_matrix(X), np.where(rng.random(rows) < 0.5, 1.0, -1.0)


def test_auto_binary_rule_by_shape():
    """Low-dimensional (features < 0.01 x instances): Newton with the Hessian formed when it is small and
    cheap, else TRON; small: TRON; otherwise dual CD when C ||x||^2 <= 16 or the tolerance is loose, else
    eg-acc; a free bias: TRON (0023, 0027)."""
    from loglin.binary import binary_problem
    wide, y = _sparse_binary(2000, 60000, 60)                     # 120,000 non-zeros, unit rows
    assert training.auto_binary(binary_problem(wide, y, C=8.0)) == "cddual"
    assert training.auto_binary(binary_problem(wide, y, C=128.0)) == "eg-acc"
    assert training.auto_binary(binary_problem(wide, y, C=128.0), tol=1e-4) == "eg-acc"
    assert training.auto_binary(binary_problem(wide, y, C=128.0), tol=training.LOOSE_TOL) == "cddual"
    assert training.auto_binary(binary_problem(wide, y, C=8.0, bias=1.0, regularize_bias=False)) == "tron"
    tall, y2 = _sparse_binary(20000, 150, 8, seed=1)              # 160,000 non-zeros, features < 0.01 x rows
    assert training.auto_binary(binary_problem(tall, y2, C=8.0)) == "newton"
    assert training.auto_binary(binary_problem(tall, y2, C=8.0, bias=1.0, regularize_bias=False)) == "newton"
    dense, y5 = _sparse_binary(20000, 150, 30, seed=4)            # 30 non-zeros a row: 15.5 pairs per non-zero
    assert training.auto_binary(binary_problem(dense, y5, C=8.0)) == "tron"
    many, y6 = _sparse_binary(150000, 1200, 2, seed=5)            # 1,200 features: no dense Hessian
    assert training.auto_binary(binary_problem(many, y6, C=8.0)) == "tron"
    mid, y4 = _sparse_binary(10000, 200, 20, seed=3)               # features = 0.02 x rows, C ||x||^2 = 32
    assert training.auto_binary(binary_problem(mid, y4, C=32.0)) == "eg-acc"
    assert training.auto_binary(binary_problem(mid, y4, C=32.0), tol=0.1) == "eg-acc"      # tall: not dual CD
    small, y3 = _sparse_binary(200, 60000, 60, seed=2)            # a pass of 12,000 non-zeros
    assert training.auto_binary(binary_problem(small, y3, C=8.0)) == "tron"
    assert training.default_solver("binary", problem=binary_problem(wide, y, C=8.0)) == "cddual"
    assert training.default_solver("binary", problem=binary_problem(wide, y, C=128.0), tol=0.1) == "cddual"
    assert training.default_solver("binary") == training.DEFAULT_SOLVERS["binary"]
