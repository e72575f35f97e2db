"""Solvers for parser objectives (kind "tree"): EG on the duals and the paper's baselines (Collins et al. 2008).

* ``tree-eg`` / ``tree-eg-batch``: part-based online / batch EG (Figures 1-3) with
  the section 7 learning rates - the loops of loglin.structured.eg run on a
  :class:`~loglin.parsing.dual.TreeDualState`;
* ``tree-sgd``: SGD on the CRF primal, eta0 / (1 + k/n), eta0 chosen by one pass per value (section 7.1.3);
* ``tree-cutting-plane``: 1-slack cutting-plane structural SVM on the M3N primal (section 8 baseline),
  loss-augmented Eisner as separation oracle.
``lbfgs`` serves the CRF primal directly (it accepts kind "tree").
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import dependency as dk
from ..solvers.base import Step
from ..structured.cutting_plane import one_slack_cutting_plane
from ..structured.eg import check_state, eg_batch, eg_online
from .dual import TreeDualState
from .objective import TreeObjective

ETA0_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)


def _state(objective, state):
    if not isinstance(objective, TreeObjective):
        raise InvalidInputError("the tree solvers train TreeObjective parsers (CRF / M3N)")
    return TreeDualState(objective.problem, objective.loss) if state is None else check_state(objective, state)


def tree_eg(objective, w, rng, state=None, **options):
    return eg_online(objective, w, rng, _state(objective, state), **options)


def tree_eg_batch(objective, w, rng, state=None, **options):
    return eg_batch(objective, w, rng, _state(objective, state), **options)


def sgd_pass(objective, w, order, eta0, step0):
    p = objective.problem
    v = w.copy()
    scale, k = dk.sgd_epoch(v, 1.0, np.asarray(order, dtype=np.int64), float(eta0), int(step0), p.n_sentences,
                            1.0 / objective.C, p.max_len, *p.kernel_args(), p.heads, p.weight)
    w[:] = scale * v
    return k


def tree_sgd(objective, w, rng, eta0="auto", validation=None):
    if not isinstance(objective, TreeObjective) or objective.loss != "ll":
        raise InvalidInputError("tree-sgd trains the CRF (log-linear) parser objective")
    n = objective.problem.n_sentences
    passes = 0
    if eta0 == "auto":
        best, order = (np.inf, np.inf, ETA0_GRID[0]), rng.permutation(n)
        for e in ETA0_GRID:
            trial = w.copy()
            sgd_pass(objective, trial, order, e, 0)
            passes += 1
            if not np.all(np.isfinite(trial)):
                continue
            f = objective.fun(trial)
            err = validation(trial) if validation is not None else f
            if (err, f) < best[:2]:
                best = (err, f, e)
        eta0 = best[2]
    eta0 = float(eta0)
    if not eta0 > 0:
        raise InvalidInputError(f"eta0 must be positive, got {eta0}")
    k, epoch = 0, 0
    while True:
        epoch += 1
        k = sgd_pass(objective, w, rng.permutation(n), eta0, k)
        yield Step(w=w, counters={"effective_iterations": float(epoch), "eta0": eta0, "selection_passes": passes})


def tree_cutting_plane(objective, w, rng, epsilon=1e-6):
    """Same algorithm as loglin.structured.cutting_plane, with loss-augmented Eisner as the oracle."""
    if not isinstance(objective, TreeObjective) or objective.loss != "mm":
        raise InvalidInputError("tree-cutting-plane trains the max-margin (M3N) parser objective")
    return one_slack_cutting_plane(objective, w, epsilon)
