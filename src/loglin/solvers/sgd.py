"""Stochastic gradient descent on the regularized primal (Collins et al. 2008, section 7.1.3), every kind.

One driver, :func:`sgd_epochs`, and one step-size choice, :func:`choose_eta0`, for every model kind;
a kind supplies only its compiled pass (an *epochs* object: ``n`` examples, ``selection_fraction``,
``objective`` and ``run(w, order, eta0, step0) -> step count``, updating w in place). The flat passes
are here (:class:`FlatEpochs`); the structured ones in loglin.structured.sgd.

Per example, in Collins' scale (lam = 1/(C N) on Maxent, 1/sum c on LR, C' = 1/C on structures):
w <- w - eta (c(x) grad loss(x) + lam w) with eta_k = eta0 / (1 + k/n), k the updates so far.
eta0 = "auto" tries {1, 0.1, 0.01, 0.001, 0.0001} with one pass each (over a random 10% sample on the
flat problems, over all sentences on structures, as the paper does) and keeps the lowest validation
error when ``validation(w) -> error`` is given (the paper's rule), else the lowest objective. An outer
iteration is one pass over the data in a fresh random order. SGD shrinks every weight, so an
unregularized bias is regularized here.
"""
import numpy as np

from ..errors import InvalidInputError
from ..kernels import logistic as lk
from ..kernels import maxent as mk
from .base import Step, objective_kind

ETA0_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)


class FlatEpochs:
    """The compiled SGD pass of a Maxent or LR problem."""

    selection_fraction = 0.1

    def __init__(self, objective):
        self.objective = objective
        self.kind = objective_kind(objective)
        p = objective.problem
        if self.kind == "maxent":
            self.n = p.n_contexts
            total = p.total_count
            self.weight = p.ctx_count * (self.n / total)
            self.lam = 1.0 / (objective.C * total)
        else:
            self.n = p.n_instances
            total = float(p.cost.sum())
            self.weight = p.cost * (self.n / total)
            self.lam = 1.0 / total

    def run(self, w, order, eta0, step0):
        p = self.objective.problem
        v = w.copy()
        if self.kind == "maxent":
            scale, k = mk.sgd_epoch(v, 1.0, order, eta0, step0, self.n, self.lam, self.weight, p.n_labels,
                                    p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat,
                                    p.obs_ptr, p.obs_label, p.obs_count)
        else:
            X = p.X
            scale, k = lk.sgd_epoch(v, 1.0, order, eta0, step0, self.n, self.lam, self.weight,
                                    X.indptr, X.indices, X.data, p.y)
        w[:] = v * scale
        return k


def choose_eta0(epochs, w, rng, validation=None, grid=ETA0_GRID):
    """(eta0, passes spent): the grid value whose one pass from w leaves the lowest validation error
    (or objective); passes over a random ``epochs.selection_fraction`` of the examples."""
    n = epochs.n
    m = max(1, int(epochs.selection_fraction * n))
    sample = rng.permutation(n) if m >= n else rng.choice(n, size=m, replace=False)
    best = (np.inf, np.inf, grid[0])
    for eta0 in grid:
        trial = w.copy()
        epochs.run(trial, sample, eta0, 0)
        if not np.all(np.isfinite(trial)):
            continue
        f = epochs.objective.fun(trial)
        err = validation(trial) if validation is not None else f
        if (err, f) < best[:2]:
            best = (err, f, eta0)
    return best[2], len(grid)


def sgd_epochs(epochs, w, rng, eta0="auto", validation=None):
    """SGD passes of ``epochs`` from w, one driver step per pass."""
    selection = 0
    if eta0 == "auto":
        eta0, selection = choose_eta0(epochs, w, rng, validation)
    eta0 = float(eta0)
    if not eta0 > 0:
        raise InvalidInputError(f"eta0 must be positive, got {eta0}")
    k, epoch = 0, 0
    while True:
        epoch += 1
        k = epochs.run(w, rng.permutation(epochs.n), eta0, k)
        yield Step(w=w, counters={"effective_iterations": float(epoch), "eta0": eta0,
                                  "selection_passes": selection})


def sgd(objective, w, rng, eta0="auto", validation=None):
    """SGD on a Maxent or LR objective."""
    return sgd_epochs(FlatEpochs(objective), w, rng, eta0, validation)
