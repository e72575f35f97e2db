"""Randomized online exponentiated gradient on the dual (EG).

Collins, Globerson, Koo, Carreras & Bartlett (2008), as given for LR and
Maxent by Yu, Huang & Lin (2011), Algorithm 8 and eqs. (52)-(54): pick an
instance (context) at random, move its block of dual variables by the
normalized multiplicative update (52), and keep the move only if the dual
decreases ((54), O(|Y|) under (48)); a failed trial halves that example's
learning rate eta_i, at most ``max_trial`` times, and a success multiplies it
by 1.05. Every eta_i starts at 0.5.

For LR the block of instance i is (alpha_i, C_i - alpha_i); for Maxent it is
beta_x on the simplex of total C c(x) (see :mod:`loglin.duality`). One outer
iteration = l random picks (with replacement). The start is the one of the
dual CD methods ((36) / (51)), or the dual point of a non-zero initial w.
"""
from __future__ import annotations

import numpy as np

from .. import duality
from ..errors import InvalidInputError
from ..kernels import eg as ek
from .base import Step, objective_kind, register_solver
from .dual_cd import GeneralScratch, lr_state, maxent_state

ETA0 = 0.5           # initial per-example learning rate
MAX_TRIAL = 10       # halvings per visit (left to the user by the paper)


@register_solver("eg", kinds=("binary", "maxent"),
                 summary="randomized online exponentiated gradient on the dual",
                 paper="Collins et al. 2008; Yu, Huang & Lin 2011, Algorithm 8")
def eg(objective, w, rng, eta0=ETA0, max_trial=MAX_TRIAL, eps=0.0, eps1=duality.LR_EPS1,
       eps2=duality.LR_EPS2, init_eps=duality.ME_INIT_EPS, report_dual=True):
    """Options: eta0, max_trial, eps (stop when the largest dual violation seen
    in a pass is <= eps; 0 = never), eps1/eps2/init_eps (starting point),
    report_dual (compute D each pass)."""
    if eta0 <= 0 or max_trial < 1:
        raise InvalidInputError("eta0 must be positive and max_trial at least 1")
    duality.require_regularized(objective, "eg")
    if objective_kind(objective) == "binary":
        yield from _lr_eg(objective, w, rng, eta0, max_trial, eps, eps1, eps2, report_dual)
    else:
        yield from _maxent_eg(objective, w, rng, eta0, max_trial, eps, init_eps, report_dual)


def _lr_eg(objective, w, rng, eta0, max_trial, eps, eps1, eps2, report_dual):
    p = objective.problem
    X = p.X
    alpha, alpha_c, active, qdiag = lr_state(objective, w, eps1, eps2)
    eta = np.full(p.n_instances, float(eta0))
    while True:
        picks = active[rng.integers(0, len(active), size=len(active))] if len(active) else active
        accepted, trials, vmax = ek.lr_eg_pass(picks, X.indptr, X.indices, X.data, p.y, p.cost, qdiag,
                                               alpha, alpha_c, w, eta, max_trial)
        dual = duality.lr_dual_objective(p, alpha, alpha_c, w) if report_dual else None
        yield Step(w=w, dual=dual, done=bool(vmax <= eps or len(active) == 0),
                   counters={"accepted": int(accepted), "trials": int(trials), "max_violation": float(vmax)})


def _maxent_eg(objective, w, rng, eta0, max_trial, eps, init_eps, report_dual):
    p, C = objective.problem, objective.C
    beta, active = maxent_state(objective, w, init_eps)
    eta = np.full(p.n_contexts, float(eta0))
    general = not duality.single_entry_features(p)
    scratch = GeneralScratch(p) if general else None
    args = (p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat, p.ctx_count, C,
            beta, w, eta, max_trial)
    while True:
        picks = active[rng.integers(0, len(active), size=len(active))]
        if general:
            accepted, trials, vmax = ek.maxent_eg_pass_general(picks, *args, scratch.slot, scratch.touched,
                                                               scratch.F)
        else:
            accepted, trials, vmax = ek.maxent_eg_pass(picks, *args)
        dual = duality.maxent_dual_objective(p, C, beta, w) if report_dual else None
        yield Step(w=w, dual=dual, done=bool(vmax <= eps),
                   counters={"accepted": int(accepted), "trials": int(trials), "max_violation": float(vmax),
                             "general_k": int(general)})
