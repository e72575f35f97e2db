"""Accelerated EG: Nesterov's outer loop around EG passes on proximal-point problems.

EG (solvers/eg.py) converges linearly, at a rate set by how a context's curvature C c(x) ||phi(x)||^2
compares with the regularizer's 1. With many predicates per context that ratio is large (CoNLL2000-C,
all pairs, C = 10: ~36 x 10), and EG's tail needs ~90 passes per factor e.

The accelerated proximal-point method (Guler 1992; the outer loop of Catalyst, Lin, Mairal &
Harchaoui 2015, and of Shalev-Shwartz & Zhang's 2014 accelerated prox-SDCA) instead solves, a few
passes each, the better-conditioned problems

    x_k ~ argmin_w f(w) + kappa/2 ||w - y_k||^2,   y_{k+1} = x_k + b (x_k - x_{k-1}),
    b = (1 - sqrt q) / (1 + sqrt q),  q = mu / (mu + kappa),  mu = 1 (f's 1/2 ||w||^2),

which need ~sqrt(1 + kappa) times fewer outer steps than the plain proximal-point method. Each is a
problem of the same kind: divided by 1 + kappa it is

    C' sum_x c(x) loss_x(w) + 1/2 ||w - m_k||^2,   C' = C / (1 + kappa),  m_k = kappa y_k / (1 + kappa),

whose dual is EG's at C' with w(beta) moved by the center m_k. EG's updates read w only through the
scores, so moving the center is w += m_{k+1} - m_k, and the dual point carries over as the warm start.
The momentum restarts (is set to 0) when the last step x_k - x_{k-1} went uphill along the proximal
gradient kappa (y_{k-1} - x_k) (O'Donoghue & Candes 2015's gradient test), which keeps the fixed-pass
inner solves safe.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import duality
from ..errors import InvalidInputError
from ..kernels import eg as ek
from ..kernels.vector import dot
from .base import Step, objective_kind
from .dual_cd import lr_state, maxent_state
from .eg import ETA0, GROWTH, MAX_TRIAL, REFRESH_EVERY, pick_order, maxent_eg_kernel

INNER_CURVATURE = 16.0          # default kappa: the inner problems' median context curvature C' c(x) ||phi(x)||^2


def eg_acc(objective, w, rng, kappa=None, passes: int = 2, restart: bool = True, eta: float = ETA0,
           max_trial: int = MAX_TRIAL, order: str = "blocks", init_eps: float = duality.ME_INIT_EPS,
           eps1: float = duality.LR_EPS1, eps2: float = duality.LR_EPS2):
    """Options: kappa (the proximal weight; default: C median(c(x) ||phi(x)||^2) / 16 - 1, at least 0),
    passes (EG passes per proximal problem), restart (the gradient restart test), and EG's eta, max_trial,
    order ("blocks" or "permutation"), init_eps / eps1 / eps2 (starting point). One outer iteration is
    ``passes`` EG passes; kappa = 0 is plain EG."""
    duality.require_regularized(objective, "eg-acc")
    if getattr(objective, "loss", "ll") != "ll":
        raise InvalidInputError("eg-acc solves the log-linear dual; for the max-margin objective use eg-mm")
    if int(passes) < 1 or not float(eta) > 0 or int(max_trial) < 1:
        raise InvalidInputError(f"passes and max_trial must be >= 1 and eta positive, got {passes!r}, "
                                f"{max_trial!r}, {eta!r}")
    if order not in ("blocks", "permutation"):
        raise InvalidInputError(f"eg-acc visits every example once per pass: order must be 'blocks' or "
                                f"'permutation', got {order!r}")
    binary = objective_kind(objective) == "binary"
    kappa = default_kappa(objective, binary) if kappa is None else float(kappa)
    if not (math.isfinite(kappa) and kappa >= 0):
        raise InvalidInputError(f"kappa must be finite and >= 0, got {kappa!r}")
    inner = (_LRPasses if binary else _MaxentPasses)(objective, w, rng, 1.0 / (1.0 + kappa), order, float(eta),
                                                      int(max_trial), (eps1, eps2) if binary else init_eps)
    return accelerate(inner, w, kappa, int(passes), restart)


def accelerate(inner, w, kappa, passes, restart):
    """The outer loop (Nesterov momentum over proximal-point problems) around any ``inner`` EG solver.

    ``inner`` solves the proximal problem at C' = C / (1 + kappa) around its movable center: it offers
    ``w`` (the primal point of its dual), ``center``, ``run_pass() -> (accepted, trials)`` and
    ``move_center(shift)``. One outer iteration is ``passes`` passes."""
    sq = math.sqrt(1.0 / (1.0 + kappa))
    momentum = (1.0 - sq) / (1.0 + sq)
    x_prev = np.array(w, dtype=np.float64)     # x_0 = y_0 = the start
    center = inner.center.copy()
    while True:
        accepted = trials = 0
        for _ in range(passes):
            a, t = inner.run_pass()
            accepted, trials = accepted + a, trials + t
        x = inner.w.copy()
        # y_k - x_k against x_k - x_{k-1}: momentum along an ascent direction of the proximal model
        y_prev = center * ((1.0 + kappa) / kappa) if kappa > 0 else x
        restarted = bool(restart and kappa > 0 and dot(y_prev - x, x - x_prev) > 0)
        b = 0.0 if restarted else momentum
        if kappa > 0:
            new_center = (kappa / (1.0 + kappa)) * (x + b * (x - x_prev))
            inner.move_center(new_center - center)
            center = new_center
        x_prev = x
        w[:] = x
        yield Step(w=w, counters={"passes": passes, "accepted": int(accepted), "trials": int(trials),
                                  "momentum": b, "restart": int(restarted), "kappa": kappa})


def default_kappa(objective, binary):
    """kappa with the inner problems' median context curvature C' c(x) ||phi(x)||^2 near INNER_CURVATURE.

    Measured, EG passes to 1e-4 (relative f - f*): CoNLL2000-C, all pairs, C = 10 (median ||phi||^2 = 36, so
    kappa = 21.5): 54 with 2 passes per problem, 66 with 3, 80 with 4; kappa 12 / 40 with 2 passes: 66 / 56;
    1 pass per problem: not within 60. CoNLL2000-P (kappa 7.75): 26 passes (EG alone: ~45). LR: 20 Newsgroups
    (unit rows, C = 128: kappa 7) and news20 (C = 8: kappa 0) are fastest at the rule's value; a9a (kappa 2.5,
    78 passes) is more ill-conditioned than its row norms say (correlated one-hot features): kappa 20-80 take
    18-20 passes there. A rule on row norms cannot see that; ``kappa`` is an option."""
    p = objective.problem
    if binary:
        sq = np.asarray(p.X.multiply(p.X).sum(axis=1)).ravel() * p.cost
    else:
        val = p._val_or_empty()
        summed = np.concatenate(([0.0], np.cumsum(val * val if len(val) else np.ones(len(p.ctx_pred)))))
        sq = (summed[p.ctx_ptr[1:]] - summed[p.ctx_ptr[:-1]]) * p.ctx_count * objective.C
    sq = sq[sq > 0]
    return max(0.0, float(np.median(sq)) / INNER_CURVATURE - 1.0) if len(sq) else 0.0


class _MaxentPasses:
    """EG passes on the Maxent dual at C' = scale C, around a movable center (w = center + w(beta))."""

    def __init__(self, objective, w, rng, scale, order, eta, max_trial, init_eps):
        p = objective.problem
        self.order, self.rng, self.max_trial = order, rng, max_trial
        self.C = objective.C * scale
        if order == "blocks":           # one shuffle in memory, so that blocks of contexts are random ones
            p = p.with_contexts_in_order(rng.permutation(p.n_contexts))
        self.problem = p
        # a non-zero start is x_0 = y_0: the first center is kappa/(1+kappa) w, met by beta of the rest
        self.center = np.array(w, dtype=np.float64) * (1.0 - scale)
        self.w = np.array(w, dtype=np.float64)
        self.beta, self.active = maxent_state(p, self.C, self.w, init_eps)      # w <- w(beta)
        self.w += self.center
        self.rates = np.full(p.n_contexts, eta)
        _, self.kernel = maxent_eg_kernel(p)
        self.done = 0

    def run_pass(self):
        picks, _ = pick_order(self.active, self.rng, self.order, len(self.active), 0)
        a, t, _ = self.kernel(picks, self.C, self.beta, self.w, self.rates, self.max_trial, GROWTH)
        self.done += 1
        if self.done % REFRESH_EVERY == 0:          # rounding drift of the incremental w
            self.w[:] = self.center + duality.maxent_w_of_beta(self.problem, self.C, self.beta)
        return a, t

    def move_center(self, shift):
        self.center += shift
        self.w += shift


class _LRPasses:
    """EG passes on the LR dual at C_i' = scale C_i, around a movable center (w = center + w(alpha))."""

    def __init__(self, objective, w, rng, scale, order, eta, max_trial, eps):
        p = objective.problem
        p = dataclasses.replace(p, cost=p.cost * scale)
        if order == "blocks":           # one shuffle of the rows in memory (see eg's order="blocks")
            perm = rng.permutation(p.n_instances)
            p = dataclasses.replace(p, X=p.X[perm], y=p.y[perm], cost=p.cost[perm])
        self.problem, self.order, self.rng, self.max_trial = p, order, rng, max_trial
        self.center = np.array(w, dtype=np.float64) * (1.0 - scale)
        self.w = np.array(w, dtype=np.float64)
        self.alpha, self.alpha_c, self.active, self.qdiag = lr_state(p, self.w, *eps)   # w <- w(alpha)
        self.w += self.center
        self.rates = np.full(p.n_instances, eta)

    def run_pass(self):
        picks, _ = pick_order(self.active, self.rng, self.order, len(self.active), 0)
        p, X = self.problem, self.problem.X
        a, t, _ = ek.lr_eg_pass(picks, X.indptr, X.indices, X.data, p.y, p.cost, self.qdiag, self.alpha,
                                self.alpha_c, self.w, self.rates, self.max_trial, GROWTH)
        return a, t

    def move_center(self, shift):
        self.center += shift
        self.w += shift
