"""Pure L1 has no strong convexity, so "converged" rests on a duality gap (loglin.penalty.dual_bound) for
binary LR and Maxent: the dual value never exceeds the primal anywhere (weak duality, checked against
primal values at unrelated points and SciPy's L-BFGS-B optimum of the split formulation w = u - v), and a
run that says converged is within its tolerance of that independent optimum at feature scales 1e-3 .. 1e3."""
import warnings

import numpy as np
import pytest

from conftest import random_sparse
from loglin import training
from loglin.binary import binary_problem
from loglin.penalty import penalized
from loglin.problem import problem_from_matrix
from test_penalty import split_reference

SCALES = (1e-3, 1.0, 1e3)


def _problem(kind, scale):
    X = random_sparse(150, 20, 0.3, seed=5, nonneg=False) * scale
    score = X @ np.random.default_rng(6).normal(size=20) / scale
    if kind == "binary":
        return binary_problem(X, np.where(score + 0.3 * np.random.default_rng(7).normal(size=150) > 0, 1, -1), 1.0)
    return problem_from_matrix(X, np.digitize(score, [-0.3, 0.3]))


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("kind", ["binary", "maxent"])
def test_the_dual_bound_never_exceeds_a_primal_value(kind, scale, serial_numba):
    objective = training._objective(_problem(kind, scale), kind, 1.0, "ll")
    F = penalized(objective, "l1")
    f_ref, w_ref = split_reference(objective, 1.0)
    rng = np.random.default_rng(0)
    points = [np.zeros(F.n), w_ref] + [w_ref + rng.normal(size=F.n) / scale * t for t in (1e-3, 1e-1, 1.0)]
    duals = [F.dual_bound(w) for w in points]
    primal = min([F.fun(w) for w in points] + [f_ref])
    assert all(d is not None and d <= primal + 1e-9 * abs(primal) for d in duals), (duals, primal)
    assert F.fun(w_ref) - F.dual_bound(w_ref) <= 1e-3 * abs(f_ref) or scale > 1     # meets it where solved


@pytest.mark.parametrize("kind, solver", [("binary", "newglmnet"), ("binary", "owlqn"), ("maxent", "owlqn")])
def test_converged_l1_runs_are_within_tol_of_the_optimum_at_every_scale(kind, solver, serial_numba):
    tol, converged_somewhere = 1e-4, False
    for scale in SCALES:
        problem = _problem(kind, scale)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, result = training.train(problem, 1.0, solver, penalty="l1", tol=tol, max_iter=1000)
        f_ref, _ = split_reference(training._objective(problem, kind, 1.0, "ll"), 1.0)
        if result.converged:
            converged_somewhere = True
            assert result.f - f_ref <= tol * abs(result.f), (scale, result.f, f_ref)
            gap = result.trace.records[-1]["duality_gap"]
            assert gap is not None and gap <= tol * abs(result.f)
    assert converged_somewhere
