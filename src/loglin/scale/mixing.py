"""Iterative parameter mixing of SGD over shards (McDonald, Hall & Mann 2010; issue 19).

McDonald, Hall & Mann 2010, "Distributed training strategies for the structured perceptron", the
iterative parameter mixing strategy: every round each shard runs one epoch of the online learner over its own
data from the mixed weights, and the driver mixes the shards' end points, here weighted by shard size
(rows): w <- sum_k (n_k / n) w_k. The online learner is the SGD of :mod:`loglin.solvers.sgd` (Collins
et al. 2008, section 7.1.3) on the *global* per-example objective: example i of shard k has the weight
n C_i / sum_j C_j (Maxent: n c(x) / sum c) and lam = 1 / sum_j C_j (Maxent: 1 / (C sum c)) with the global
n and sums, so that sum_k (n_k / n) (shard k's mean objective) is f / sum_j C_j.

Where it converges: with a constant rate (``decay=False``) each epoch is a contraction to a point that
differs from the optimum by O(eta) (SGD's noise, and the drift of each shard towards its own data's
optimum within an epoch), so IPM settles in a neighbourhood of w* whose size shrinks with eta, not at
w*; with the decaying rate eta0 / (1 + k / n_k) the neighbourhood shrinks with the rounds (slowly,
as SGD's own O(1/k)). Neither reaches the exact optimum in practice: use ``cocoa`` (or TRON / L-BFGS on
the sharded objective) for that. docs/decisions/0022 has the measured gaps.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidInputError
from ..kernels import logistic as lk
from ..kernels import maxent as mk
from ..solvers.base import Step
from ..solvers.sgd import ETA0_GRID

HELPER = "ipm-sgd"


class LocalSGD:
    """Shard k's SGD epochs on the global per-example objective (module docstring)."""

    def __init__(self, part, seed):
        objective = part.objective
        self.problem = p = objective.problem
        self.kind = "binary" if hasattr(p, "X") else "maxent"
        self.rng = np.random.default_rng(int(seed))
        if self.kind == "maxent":
            self.C = float(objective.C)
            self.n, self.weights = p.n_contexts, np.asarray(p.ctx_count, dtype=np.float64)
        else:
            self.n, self.weights = p.n_instances, np.asarray(p.cost, dtype=np.float64)
        self.steps = 0
        self.weight = self.lam = None

    def summary(self):
        return {"rows": int(self.n), "weight": float(self.weights.sum())}

    def configure(self, n_total, weight_total):
        """The global n and weight sum (c or C_i) that scale every example and lam."""
        self.weight = self.weights * (n_total / weight_total)
        self.lam = 1.0 / (weight_total * (self.C if self.kind == "maxent" else 1.0))

    def epoch(self, w, eta0, decay, commit=True):
        """One SGD pass over the shard in a fresh random order from w; returns the end point. ``decay``:
        eta0 / (1 + k / n_k) with k this shard's steps so far, else the constant eta0. ``commit``: count the
        steps (a trial pass of the rate selection does not)."""
        v = np.array(w, dtype=np.float64)
        order = self.rng.permutation(self.n)
        horizon = float(self.n) if decay else math.inf         # k / inf = 0: a constant rate
        p = self.problem
        if self.kind == "maxent":
            scale, k = mk.sgd_epoch(v, 1.0, order, eta0, self.steps, horizon, self.lam, self.weight, p.n_labels,
                                    p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat,
                                    p.obs_ptr, p.obs_label, p.obs_count)
        else:
            X = p.X
            scale, k = lk.sgd_epoch(v, 1.0, order, eta0, self.steps, horizon, self.lam, self.weight,
                                    X.indptr, X.indices, X.data, p.y)
        if commit:
            self.steps = k
        return v * scale


def local_sgd(part, seed):
    """The factory :meth:`loglin.scale.shards.ShardPart.attach` calls on each shard."""
    return LocalSGD(part, seed)


def _mix(objective, w, fractions, eta0, decay, commit=True):
    """sum_k fractions_k w_k over the shards' epochs from w, added in shard order."""
    mixed = np.zeros_like(w)
    for fraction, end in zip(fractions, objective.on_shards("helper", HELPER, "epoch", w, eta0, decay, commit)):
        mixed += fraction * end
    return mixed


def ipm_sgd(objective, w, rng, eta0="auto", decay: bool = False):
    """Iterative parameter mixing of SGD on a sharded Maxent or LR objective (:func:`loglin.scale.sharded`):
    one round (an epoch on every shard, then the size-weighted mix) per outer iteration. ``eta0``: the rate,
    or "auto": the grid value of :mod:`loglin.solvers.sgd` whose trial round from w gives the lowest
    objective. ``decay``: eta0 / (1 + k / n_k) as single-process SGD; default a constant rate (the mixing
    then settles in an O(eta) neighbourhood of the optimum, see the module docstring)."""
    seeds = rng.integers(0, 2 ** 63 - 1, size=objective.n_shards)
    summaries = objective.each_shard("attach", [(HELPER, f"{__name__}:local_sgd", int(s)) for s in seeds])
    rows = np.array([s["rows"] for s in summaries], dtype=np.float64)
    objective.on_shards("helper", HELPER, "configure", float(rows.sum()),
                        math.fsum(s["weight"] for s in summaries))
    fractions = rows / rows.sum()
    selection = 0
    if eta0 == "auto":
        best = (math.inf, ETA0_GRID[0])
        for trial in ETA0_GRID:
            f = objective.fun(_mix(objective, w, fractions, trial, decay, commit=False))
            if math.isfinite(f) and f < best[0]:
                best = (f, trial)
        eta0, selection = best[1], len(ETA0_GRID)
    eta0 = float(eta0)
    if not eta0 > 0:
        raise InvalidInputError(f"eta0 must be positive, got {eta0}")
    rounds = 0
    while True:
        w[:] = _mix(objective, w, fractions, eta0, decay)
        rounds += 1
        yield Step(w=w, counters={"effective_iterations": float(rounds), "eta0": eta0,
                                  "selection_passes": selection, "shards": objective.n_shards})
