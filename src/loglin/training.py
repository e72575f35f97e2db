"""Train a model from a problem: the one path the CLI, estimators and experiments share."""
from __future__ import annotations

import numpy as np

from .binary import BinaryProblem
from .errors import ConvergenceWarning, InvalidInputError  # noqa: F401 (re-exported: loglin.training.ConvergenceWarning)
from .model import LinearModel
from .solvers.base import SOLVERS, _load_all_solvers, minimize

DEFAULT_SOLVER = "tron"


def available_solvers(kind=None) -> dict:
    """{name: SolverInfo} of registered solvers, optionally only those for 'maxent' or 'binary'."""
    _load_all_solvers()
    return {k: v for k, v in sorted(SOLVERS.items()) if kind is None or kind in v.kinds}


def train(problem, C: float = 1.0, solver: str = DEFAULT_SOLVER, *, w0=None, tol: float = 1e-3,
          max_iter: int = 1000, time_limit=None, random_state=None, progress=False, evaluate=None,
          callback=None, warn=True, info=None, **options):
    """Fit ``problem`` (MaxentProblem or BinaryProblem) and return (LinearModel, Result).

    ``C`` is LIBLINEAR's regularization constant (for a BinaryProblem it is
    already inside its per-instance costs and this argument is ignored).
    """
    if isinstance(problem, BinaryProblem):
        objective = problem.objective()
    else:
        if not np.isfinite(C) or C <= 0:
            raise InvalidInputError(f"C must be positive and finite, got {C}")
        objective = problem.objective(C)
    result = minimize(objective, solver, w0, tol=tol, max_iter=max_iter, time_limit=time_limit,
                      random_state=random_state, progress=progress, evaluate=evaluate, callback=callback,
                      warn=warn, **options)
    meta = {"solver": solver, "C": float(getattr(objective, "C", C)), "objective": float(result.f),
            "iterations": result.iterations, "train_seconds": result.train_seconds,
            "converged": bool(result.converged), **(info or {})}
    if isinstance(problem, BinaryProblem):
        model = LinearModel.from_binary(problem, result.w, info=meta)
    else:
        n_inputs = problem.n_predicates - (1 if problem.bias > 0 else 0)
        model = LinearModel.from_maxent(problem, result.w, n_inputs=n_inputs, bias=problem.bias, info=meta)
    return model, result
