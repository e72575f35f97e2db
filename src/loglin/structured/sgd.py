"""Stochastic gradient descent on the CRF primal, the baseline of Collins et al. (2008), section 7.1.3.

In the paper's scale, sum_i loss_i + C'/2 ||w||^2 with C' = 1/C, the step on a
randomly chosen sentence i is

    w <- w - eta d/dw ( -log p(y_i | x_i; w) + C'/(2n) ||w||^2 ),   eta = eta0 / (1 + k/n)

with k the number of updates so far. eta0 is chosen from {1, 0.1, 0.01,
0.001, 0.0001} by one pass of SGD per value: the lowest *validation error*
after that pass when a ``validation(w) -> error`` function is given (the
paper's rule), otherwise the lowest primal objective. Those selection passes
are not counted in the trace (the paper does not count them either) but are
reported as the counter ``selection_passes``. One outer iteration is one
pass of n updates in a fresh random order.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..solvers.base import Step
from . import passes
from .objective import StructuredObjective

ETA0_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)


def sgd_pass(objective, w, order, eta0, step0):
    """One pass over ``order`` starting at update count step0; updates w in place, returns the new count."""
    p = objective.problem
    v = np.array(w, dtype=np.float64)
    scale, k = passes.sgd_epoch(p.data, v, 1.0, np.asarray(order, dtype=np.int64), float(eta0), int(step0),
                                p.n_sentences, 1.0 / objective.C, p.weight)
    w[:] = scale * v
    return k


def choose_eta0(objective, w, rng, validation=None, grid=ETA0_GRID):
    """(eta0, number of passes spent) - the best value after one pass (section 7.1.3)."""
    n = objective.problem.n_sentences
    best = (np.inf, np.inf, grid[0])
    order = rng.permutation(n)
    for eta0 in grid:
        trial = w.copy()
        sgd_pass(objective, trial, order, eta0, 0)
        if not np.all(np.isfinite(trial)):
            continue
        f = objective.fun(trial)
        err = validation(trial) if validation is not None else f
        if (err, f) < best[:2]:
            best = (err, f, eta0)
    return best[2], len(grid)


def chain_sgd(objective, w, rng, eta0="auto", validation=None):
    return structured_sgd(objective, w, rng, eta0, validation)


def structured_sgd(objective, w, rng, eta0="auto", validation=None):
    """SGD epochs on the CRF primal of any structure (one driver step per pass)."""
    if not isinstance(objective, StructuredObjective) or objective.loss != "ll":
        kind = getattr(objective, "kind", "chain")
        raise InvalidInputError(f"{kind}-sgd trains the CRF (log-linear) {kind} objective")
    selection = 0
    if eta0 == "auto":
        eta0, selection = choose_eta0(objective, w, rng, validation)
    eta0 = float(eta0)
    if not eta0 > 0:
        raise InvalidInputError(f"eta0 must be positive, got {eta0}")
    n = objective.problem.n_sentences
    k, epoch = 0, 0
    while True:
        epoch += 1
        k = sgd_pass(objective, w, rng.permutation(n), eta0, k)
        yield Step(w=w, counters={"effective_iterations": float(epoch), "eta0": eta0,
                                  "selection_passes": selection})
