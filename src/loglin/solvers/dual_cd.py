"""Dual coordinate descent for logistic regression and Maxent.

Yu, Huang & Lin (2011), "Dual coordinate descent methods for logistic
regression and maximum entropy models", Machine Learning 85:41-75.

* ``cddual`` - LR: Algorithm 5, each one-variable sub-problem (18) solved on
  Z1 = alpha_i or Z2 = C_i - alpha_i (whichever side (34) says is nearer the optimum); both
  are kept, so C_i - alpha_i is never formed by cancellation. By default Newton runs on the
  log-odds of the nearer side (``kernels.dual_cd.log_odds_newton``: same root and stopping test,
  about a third of the Newton steps of the first pass, docs/decisions/0023);
  ``subproblem="alg4"`` is the paper's modified Newton method of Algorithm 4 on Z
  (``kernels.dual_cd.modified_newton``).
  Maxent: the two-level method, Algorithm 7 over contexts with Algorithm 6
  (maximal violating pair, gradient (49) under (48), Algorithm 4 per pair)
  inside; when (48) fails the full K^i of (46) is used instead.
* ``cddual-ls`` - LR with one Newton step plus line search per sub-problem
  (CDdual-ls of section 6.1, beta = 0.5, gamma = 0.01; ``newton_line_search``).
* ``bn`` - LR with bisection then Newton (Algorithm 9, section 6.3; ``bisection_newton``).

One outer iteration = one pass over a random permutation of the instances
(contexts). The sub-problem tolerance eps' starts at 1e-2 and is divided by
10 whenever a pass needed at most l/10 Newton steps, down to min(1e-8, eps) -
LIBLINEAR's -s 7 schedule. For Maxent the count is of contexts whose block
had to move (a context needs about |Y| or more pair updates whenever w has
moved, so counting pair updates would never tighten eps'). Algorithm 6 runs
on each context until max G - min G <= eps' (a safety cap of
MAX_PAIRS_PER_LABEL |Y| pair updates per visit only guards against rounding
stalls); ``max_pairs`` caps it lower as an option. The solver
stops itself (``done``) when the largest dual gradient violation met during a
pass is below ``eps`` (LIBLINEAR's rule; default 0.1 like ``-s 7``). The
dual objective, in the primal's scale, is reported every pass so that the
driver records the duality gap and can stop on ``gap_tol``; see
:mod:`loglin.duality` for the duals, including Maxent with merged contexts.

A non-zero initial w is a warm start: alpha (beta) is set from the
optimality conditions at that w. From w = 0, LR has no set-up pass: the first
pass builds Q_ii and w(alpha) as it goes (``kernels.dual_cd.lr_first_pass``).
"""
from __future__ import annotations

import numpy as np

from .. import duality
from ..errors import InvalidInputError
from ..kernels import dual_cd as dk
from .base import Step, objective_kind

EPS = 0.1                  # outer stopping: max violation (LIBLINEAR -s 7 default)
XI = 0.1                   # xi of Algorithm 4 (section 6.1)
INNER_EPS0 = 1e-2          # initial sub-problem tolerance eps'
INNER_EPS_MIN = 1e-8       # final eps'
INNER_SHRINK = 0.1         # eps' <- 0.1 eps' ...
INNER_SHRINK_WHEN = 0.1    # ... when a pass took <= l/10 Newton steps
MAX_NEWTON = 100           # Newton steps per sub-problem (LIBLINEAR's cap)
FUSED_START = True         # LR from w = 0: no set-up pass, Q_ii and w(alpha) built by the first pass (0064)
MAX_PAIRS_PER_LABEL = 100  # safety cap of Algorithm 6: pair updates per context visit / |Y|


class InnerTolerance:
    """eps' of section 6.1, tightened like LIBLINEAR -s 7."""

    def __init__(self, start, floor):
        self.value = float(start)
        self.floor = float(floor)

    def after_pass(self, steps, n):
        if steps <= INNER_SHRINK_WHEN * n:
            self.value = max(self.floor, INNER_SHRINK * self.value)


def _check_options(eps, xi, max_newton, inner_eps, inner_eps_min):
    if not (0.0 < xi < 1.0):
        raise InvalidInputError(f"xi must lie in (0, 1), got {xi}")
    if eps < 0 or inner_eps <= 0 or inner_eps_min <= 0:
        raise InvalidInputError("eps must be >= 0 and the inner tolerances > 0")
    if max_newton < 1:
        raise InvalidInputError(f"max_newton must be at least 1, got {max_newton}")


def _has_start(w):
    return bool(np.any(w != 0.0))


# ====================================================================== LR
def lr_starts_cold(w):
    """True when LR's dual CD starts from w = 0 with no set-up pass (:func:`lr_cold_state`, then
    ``kernels.dual_cd.lr_first_pass``)."""
    return FUSED_START and not _has_start(w)


def _lr_alpha(p, w, eps1, eps2):
    """alpha, C - alpha (from w's optimality conditions, or the start (36) at w = 0) and the active instances."""
    if _has_start(w):
        alpha, alpha_c = duality.lr_alpha_from_w(p, w)
    else:
        alpha, alpha_c = duality.lr_initial_alpha(p.cost, eps1, eps2)
    dead = p.cost <= 0
    alpha[dead], alpha_c[dead] = 0.0, 0.0
    return alpha, alpha_c, np.flatnonzero(~dead).astype(np.int64)


def lr_state(p, w, eps1=duality.LR_EPS1, eps2=duality.LR_EPS2):
    """alpha, C - alpha, active instances (C_i > 0) and Q_ii of problem p; sets w <- w(alpha)."""
    alpha, alpha_c, active = _lr_alpha(p, w, eps1, eps2)
    X = p.X
    qdiag, w[:] = dk.lr_start(X.indptr, X.indices, X.data, p.y, alpha, X.shape[1])
    return alpha, alpha_c, active, qdiag


def lr_cold_state(p, w, eps1=duality.LR_EPS1, eps2=duality.LR_EPS2):
    """As :func:`lr_state` at w = 0 without its pass over X: Q_ii, log-odds and w(alpha) are left to
    ``kernels.dual_cd.lr_first_pass`` (w stays 0 until then)."""
    alpha, alpha_c, active = _lr_alpha(p, w, eps1, eps2)
    return alpha, alpha_c, active, np.zeros_like(alpha)


def lr_log_odds(alpha, alpha_c, active):
    """log(alpha / (C - alpha)) of the active instances, kept per instance so that a visit takes no log."""
    log_odds = np.zeros_like(alpha)                     # dead instances are never visited
    log_odds[active] = np.log(alpha[active] / alpha_c[active])
    return log_odds


def _lr_dual_cd(objective, w, rng, variant, name, eps, xi, max_newton, inner_eps, inner_eps_min,
                eps1, eps2, report_dual):
    _check_options(eps, xi, max_newton, inner_eps, inner_eps_min)
    duality.require_regularized(objective, name)
    p = objective.problem
    X = p.X
    cold = lr_starts_cold(w)
    if cold:                                    # the set-up pass is folded into the first pass
        alpha, alpha_c, active, qdiag = lr_cold_state(p, w, eps1, eps2)
        log_odds = np.zeros_like(alpha)
    else:
        alpha, alpha_c, active, qdiag = lr_state(p, w, eps1, eps2)
        log_odds = lr_log_odds(alpha, alpha_c, active)
    tol = InnerTolerance(inner_eps, min(inner_eps_min, eps) if eps > 0 else inner_eps_min)
    while True:
        order = rng.permutation(active)
        used = tol.value
        kernel = dk.lr_first_pass if cold else dk.lr_dual_pass
        cold = False
        newton, vmax, changed = kernel(order, X.indptr, X.indices, X.data, p.y, p.cost, qdiag,
                                       alpha, alpha_c, log_odds, w, used, xi, max_newton, variant)
        tol.after_pass(newton, len(active))
        dual = (lambda: duality.lr_dual_objective(p, alpha, alpha_c, w)) if report_dual else None   # untimed
        stalled = changed == 0 and used <= tol.floor
        yield Step(w=w, dual=dual, done=bool(vmax <= eps or stalled or len(active) == 0),
                   counters={"newton_steps": int(newton), "inner_eps": used, "max_violation": float(vmax),
                             "updated": int(changed)})


# ====================================================================== Maxent
def maxent_state(p, C, w, init_eps=duality.ME_INIT_EPS):
    """beta (contexts x labels) of problem p at C, active contexts (c(x) > 0); sets w <- w(beta)."""
    beta = duality.maxent_beta_from_w(p, C, w) if _has_start(w) else duality.maxent_initial_beta(p, C, init_eps)
    active = np.flatnonzero(p.ctx_count > 0).astype(np.int64)
    w[:] = duality.maxent_w_of_beta(p, C, beta)
    return beta, active


class GeneralScratch:
    """Work arrays of the general-K^i path (one dense f(x, .) block per context)."""

    def __init__(self, problem):
        width = max(1, int(dk.max_row_width(problem.ctx_ptr, problem.ctx_pred, problem.map_ptr)))
        self.slot = np.full(problem.n_features, -1, dtype=np.int64)
        self.touched = np.empty(width, dtype=np.int64)
        self.F = np.empty((problem.n_labels, width))


def _maxent_dual_cd(objective, w, rng, eps, xi, max_newton, inner_eps, inner_eps_min, max_pairs, init_eps,
                    report_dual):
    _check_options(eps, xi, max_newton, inner_eps, inner_eps_min)
    duality.require_regularized(objective, "cddual")
    p, C = objective.problem, objective.C
    beta, active = maxent_state(p, C, w, init_eps)
    max_pairs = MAX_PAIRS_PER_LABEL * p.n_labels if max_pairs is None else int(max_pairs)
    if max_pairs < 1:
        raise InvalidInputError(f"max_pairs must be at least 1, got {max_pairs}")
    general = not duality.single_entry_features(p)
    scratch = GeneralScratch(p) if general else None
    args = (p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat, beta, w)
    tol = InnerTolerance(inner_eps, min(inner_eps_min, eps) if eps > 0 else inner_eps_min)
    while True:
        order = rng.permutation(active)
        used = tol.value
        if general:
            pairs, newton, vmax, moved = dk.maxent_dual_pass_general(order, *args, used, xi, max_newton,
                                                                     max_pairs, scratch.slot, scratch.touched,
                                                                     scratch.F)
        else:
            pairs, newton, vmax, moved = dk.maxent_dual_pass(order, *args, used, xi, max_newton, max_pairs)
        tol.after_pass(moved, len(active))
        dual = (lambda: duality.maxent_dual_objective(p, C, beta, w)) if report_dual else None   # untimed
        stalled = pairs == 0 and used <= tol.floor
        yield Step(w=w, dual=dual, done=bool(vmax <= eps or stalled),
                   counters={"pair_updates": int(pairs), "contexts_moved": int(moved), "newton_steps": int(newton),
                             "inner_eps": used,
                             "max_violation": float(vmax), "general_k": int(general)})


# ====================================================================== registry
SUBPROBLEM_SOLVERS = {"log-odds": dk.LOG_ODDS, "alg4": dk.ALG4}


def cddual(objective, w, rng, eps=EPS, xi=XI, max_newton=MAX_NEWTON, inner_eps=INNER_EPS0,
           inner_eps_min=INNER_EPS_MIN, max_pairs=None, eps1=duality.LR_EPS1, eps2=duality.LR_EPS2,
           init_eps=duality.ME_INIT_EPS, report_dual=True, subproblem="log-odds"):
    """Options: eps (own stop on the max dual violation), xi, max_newton,
    subproblem (LR: "log-odds", Newton on the log-odds of the nearer side, or "alg4", the paper's
    Algorithm 4; Maxent always uses Algorithm 4),
    inner_eps / inner_eps_min (eps' schedule), eps1/eps2 (LR start (36)),
    init_eps (Maxent start (51)), max_pairs (cap on the pair updates of
    Algorithm 6 per context visit; default: none but the safety cap, i.e. each
    block solved to eps' as in the paper. On CoNLL-2000-P, max_pairs = |Y|
    gives about the same progress per pass at ~40% of the time),
    report_dual (compute D every pass; costs O(l) logs, O(l |Y|) for Maxent)."""
    if objective_kind(objective) == "binary":
        if subproblem not in SUBPROBLEM_SOLVERS:
            raise InvalidInputError(f"subproblem must be one of {tuple(SUBPROBLEM_SOLVERS)}, got {subproblem!r}")
        yield from _lr_dual_cd(objective, w, rng, SUBPROBLEM_SOLVERS[subproblem], "cddual", eps, xi, max_newton, inner_eps,
                               inner_eps_min, eps1, eps2, report_dual)
    else:
        yield from _maxent_dual_cd(objective, w, rng, eps, xi, max_newton, inner_eps, inner_eps_min, max_pairs,
                                   init_eps, report_dual)


def cddual_ls(objective, w, rng, eps=EPS, inner_eps=INNER_EPS0, inner_eps_min=INNER_EPS_MIN,
              eps1=duality.LR_EPS1, eps2=duality.LR_EPS2, report_dual=True):
    yield from _lr_dual_cd(objective, w, rng, dk.LINE_SEARCH, "cddual-ls", eps, XI, 1, inner_eps,
                           inner_eps_min, eps1, eps2, report_dual)


def bn(objective, w, rng, eps=EPS, max_newton=MAX_NEWTON, inner_eps=INNER_EPS0, inner_eps_min=INNER_EPS_MIN,
       eps1=duality.LR_EPS1, eps2=duality.LR_EPS2, report_dual=True):
    yield from _lr_dual_cd(objective, w, rng, dk.BISECTION, "bn", eps, XI, max_newton, inner_eps,
                           inner_eps_min, eps1, eps2, report_dual)


label_orthogonal = duality.label_orthogonal
