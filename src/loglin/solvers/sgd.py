"""Stochastic gradient descent on the regularized primal (Collins et al. 2008, section 7.1.3).

Objective divided by C*N:  lam/2 ||w||^2 + (1/N) sum_x c(x) loss(x),  lam = 1/(C N).
Learning rate eta_k = eta0 / (1 + k/n) with k the number of updates so far;
eta0 = "auto" tries {1, 0.1, 0.01, 0.001, 0.0001} for one pass on a 10%
sample and keeps the one with the lowest objective there (the paper picks by
validation error; at this level we have no validation set). An outer
iteration is one pass over the data in a fresh random order.
SGD shrinks every weight, so an unregularized bias is regularized here.
"""
import numpy as np

from ..kernels import logistic as lk
from ..kernels import maxent as mk
from .base import Step, objective_kind

ETA0_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)


class _Epochs:
    """Per-problem data for the compiled SGD pass."""

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

    def run(self, w_scaled, scale, order, eta0, step0):
        p = self.objective.problem
        if self.kind == "maxent":
            return mk.sgd_epoch(w_scaled, scale, order, eta0, step0, self.n, self.lam, self.weight, p.n_labels,
                                p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat,
                                p.obs_ptr, p.obs_label, p.obs_count)
        X = p.X
        return lk.sgd_epoch(w_scaled, scale, order, eta0, step0, self.n, self.lam, self.weight,
                            X.indptr, X.indices, X.data, p.y)


def choose_eta0(epochs, w, rng, grid=ETA0_GRID, fraction=0.1):
    """Pick eta0 by one pass over a random 10% sample (lowest full objective)."""
    m = max(1, int(fraction * epochs.n))
    sample = rng.choice(epochs.n, size=m, replace=False)
    best = (np.inf, grid[0])
    for eta0 in grid:
        ws = w.copy()
        scale, _ = epochs.run(ws, 1.0, sample, eta0, 0)
        f = epochs.objective.fun(ws * scale)
        if np.isfinite(f) and f < best[0]:
            best = (f, eta0)
    return best[1]


def sgd(objective, w, rng, eta0="auto"):
    epochs = _Epochs(objective)
    if eta0 == "auto":
        eta0 = choose_eta0(epochs, w, rng)
    eta0 = float(eta0)
    if not eta0 > 0:
        raise ValueError(f"eta0 must be positive, got {eta0}")
    w_scaled = w.copy()
    scale, k = 1.0, 0
    while True:
        order = rng.permutation(epochs.n)
        scale, k = epochs.run(w_scaled, scale, order, eta0, k)
        w[:] = w_scaled * scale
        w_scaled[:] = w
        scale = 1.0
        yield Step(w=w, counters={"eta0": eta0, "updates": k})
