"""Randomized online exponentiated gradient on the dual (EG), for LR and Maxent.

One implementation of two papers' descriptions of the same method:

* Yu, Huang & Lin (2011), Algorithm 8 and eqs. (52)-(54): pick an instance
  (context) at random, move its block of dual variables by the normalized
  multiplicative update (52) and keep the move only if the dual decreases
  ((54), O(|Y|) under (48)); a failed trial halves that example's rate
  eta_i, at most ``max_trial`` times, a success multiplies it by 1.05.
* Collins, Globerson, Koo, Carreras & Bartlett (2008), LLEG-Online
  (Figure 2) on the multi-class log-linear dual D-LL (4), with the step-size
  rules of section 7 (the same halving / x1.05), ``eta="auto"`` (eta_ini, the
  largest rate of a halving grid whose updates improve the dual on >= 95% of
  a random 10% of the data), random or cyclic ("deterministic") order, C
  annealing (section 7.1.1, ``C_schedule``) and warm starts over a path of C
  (section 7.1.2, ``state=`` an :class:`EGState`). ``eg-ll`` is this solver
  with Collins et al.'s defaults (``eta="auto"``, ``max_trial=30``, 1% of
  the mass off the observed labels at the start); see structured/multiclass_eg.

For LR the block of instance i is (alpha_i, C_i - alpha_i); for Maxent it is
beta_x on the simplex of total C c(x) over *merged* contexts (Collins' one
block per observed event j is the same dual after summing the blocks of
equal contexts, beta_x = C sum_j c_j u_j; see :mod:`loglin.duality`). One
outer iteration = l picks (``updates_per_step`` to change it). The start is
the one of the dual CD methods ((36) / (51)), or the dual point of a
non-zero initial w. The trace counts *effective iterations*: every trial
rate is a visit of its example, divided by l (plus the visits spent
choosing eta_ini).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import duality
from ..errors import InvalidInputError
from ..kernels import eg as ek
from .base import Step, objective_kind
from .dual_cd import GeneralScratch, lr_state, maxent_state

# The EG constants of every EG solver (flat, multi-class and structured: loglin.structured.eg imports them).
ETA0 = 0.5                  # initial per-example learning rate (Yu et al.)
MAX_TRIAL = 10              # halvings per visit on LR / Maxent (left to the user by Yu et al.)
MAX_TRIAL_COLLINS = 30      # Collins et al. section 7's maxTrial: structured EG and eg-ll
GROWTH = 1.05               # x1.05 after an accepted step (both papers)
ETA_GRID = tuple(0.5 ** k for k in range(0, 11))   # eta_ini candidates: 1, 1/2, ..., 1/1024
ETA_FRACTION, ETA_TARGET = 0.10, 0.95               # Collins et al. section 7: 10% of the data, 95%
REFRESH_EVERY = 20          # epochs between exact recomputations of w(beta) (rounding drift)
BLOCK = 64                  # order="blocks": examples per block (64 Maxent blocks of 44 labels: ~22 KB)


class EGState:
    """A Maxent dual point kept between runs (warm starts along a C path, section 7.1.2).

    ``beta`` sums to C c(x) over each context at the current ``C``; changing C
    rescales beta and w(beta) together (both are linear in C at fixed
    u = beta / (C c(x))). ``rates`` are the per-context learning rates.
    """

    loss = "ll"

    def __init__(self, problem, init_eps=duality.ME_INIT_EPS, C=1.0):
        self.problem = problem
        self.C = float(C)
        self.beta = duality.maxent_initial_beta(problem, self.C, init_eps)
        self.w = duality.maxent_w_of_beta(problem, self.C, self.beta)
        self.rates = None

    @classmethod
    def from_objective(cls, objective, w, init_eps):
        state = cls.__new__(cls)
        state.problem, state.C, state.rates = objective.problem, float(objective.C), None
        work = np.array(w, dtype=np.float64)
        state.beta, _ = maxent_state(state.problem, state.C, work, init_eps)   # (51), or beta from a non-zero w
        state.w = work
        return state

    def at(self, C):
        """Rescale the point to the dual of C."""
        C = float(C)
        if C != self.C:
            scale = C / self.C
            self.beta *= scale
            self.w *= scale
            self.C = C
        return self

    def refresh(self):
        self.w = duality.maxent_w_of_beta(self.problem, self.C, self.beta)

    def primal_weights(self, C):
        return self.w * (float(C) / self.C)

    def dual(self, C):
        scale = float(C) / self.C
        return duality.maxent_dual_objective(self.problem, float(C), self.beta * scale, self.w * scale)


def eg(objective, w, rng, eta=ETA0, eta0=None, max_trial=MAX_TRIAL, order="random", C_schedule=None, state=None,
       updates_per_step=None, eps=0.0, eps1=duality.LR_EPS1, eps2=duality.LR_EPS2, init_eps=duality.ME_INIT_EPS,
       report_dual=True):
    """Options: eta (initial rate, or "auto" for Collins' eta_ini on 10% of the data; eta0 is a synonym),
    max_trial, order ("random" with replacement as in both papers, "permutation": a new random order each
    pass (as LIBLINEAR's dual CD), "blocks": the examples are shuffled once in memory, then each pass visits
    the blocks of BLOCK consecutive ones in a new random order, in sequence inside a block: a pass is ~1.5x
    cheaper than a random one, since a random visit mostly waits for memory, but the fixed blocks can cost
    passes (measured: about as many as "permutation" on CoNLL2000-P; on a9a the dual gap after 40 passes
    was 4.7e-2 against 2.0e-4), so it is an option, not the default - or "cyclic"), C_schedule (epoch -> C, Maxent: annealing),
    state (EGState to warm-start from and update, Maxent), updates_per_step (picks per outer iteration,
    default l), eps (stop when the largest dual violation seen in a pass is <= eps; 0 = never),
    eps1/eps2/init_eps (starting point), report_dual (compute D each pass)."""
    eta = eta if eta0 is None else eta0
    if not (eta == "auto" or (np.isscalar(eta) and float(eta) > 0)) or max_trial < 1:
        raise InvalidInputError(f"eta must be positive or 'auto' (got {eta!r}) and max_trial at least 1")
    if order not in ("random", "permutation", "blocks", "cyclic"):
        raise InvalidInputError(f"order must be 'random', 'permutation', 'blocks' or 'cyclic', got {order!r}")
    if order in ("permutation", "blocks") and updates_per_step not in (None, 0):
        raise InvalidInputError("order='permutation' visits every example once per step: leave updates_per_step unset")
    if getattr(objective, "loss", "ll") != "ll":
        raise InvalidInputError("eg solves the log-linear dual; for the max-margin objective use eg-mm")
    duality.require_regularized(objective, "eg")
    if objective_kind(objective) == "binary":
        if C_schedule is not None or state is not None:
            raise InvalidInputError("C_schedule and state are options of eg on Maxent problems")
        yield from _lr_eg(objective, w, rng, eta, max_trial, order, updates_per_step, eps, eps1, eps2,
                          report_dual)
    else:
        yield from _maxent_eg(objective, w, rng, eta, max_trial, order, C_schedule, state, updates_per_step, eps,
                              init_eps, report_dual)


# ---------------------------------------------------------------------- shared driver of the passes
def pick_order(active, rng, order, per_step, cursor):
    """The next picks of an online EG pass over ``active`` in ``order`` (every EG driver); returns (picks, cursor)."""
    if order == "random":
        return active[rng.integers(0, len(active), size=per_step)], cursor
    if order == "permutation":             # eg() allows it only with one pass per step
        return rng.permutation(active), cursor
    if order == "blocks":                  # a random order of blocks of consecutive examples (see eg())
        starts = rng.permutation(np.arange(0, len(active), BLOCK))
        idx = (starts[:, None] + np.arange(BLOCK)).ravel()
        return active[idx[idx < len(active)]], cursor
    idx = (cursor + np.arange(per_step)) % len(active)
    return active[idx], (cursor + per_step) % len(active)


def choose_eta_ini(try_rate, candidates, rng, grid=ETA_GRID, fraction=ETA_FRACTION, target=ETA_TARGET):
    """Collins et al. section 7, for every EG solver: the largest rate in ``grid`` whose single trial
    improves the dual on >= ``target`` of a random ``fraction`` of the ``candidates`` (example indices).
    ``try_rate(sample, eta) -> (accepted, trials)`` must leave the dual point as it found it.
    Returns (eta_ini, visits spent choosing it)."""
    sample = rng.choice(candidates, size=max(1, int(fraction * len(candidates))), replace=False)
    visits = 0
    for eta in grid:
        accepted, trials = try_rate(sample, eta)
        visits += trials
        if accepted >= target * len(sample):
            return eta, visits
    return grid[-1], visits


def _epochs(run_pass, active, rng, eta, max_trial, order, per_step, rates, C_of, set_C, eps, dual_of, extra):
    """The outer loop shared by LR and Maxent: yields (w-free) Step fields once per ``per_step`` picks."""
    n = len(active)
    visits = 0
    if np.isnan(rates[active[0]]):                  # NaN marks "not set": not a warm start with its own rates
        if eta == "auto":
            snapshot, restore = extra["undo"]
            saved = snapshot()

            def try_rate(picks, e):
                try:
                    accepted, trials, _ = run_pass(picks, np.full(rates.shape, e), 1, 1.0)
                finally:
                    restore(saved)
                return accepted, trials
            eta, visits = choose_eta_ini(try_rate, active, rng)
        rates[:] = float(eta)
    cursor = done = 0
    while True:
        C_now = C_of(done // n + 1)
        set_C(C_now)
        picks, cursor = pick_order(active, rng, order, per_step, cursor)
        accepted, trials, vmax = run_pass(picks, rates, max_trial, GROWTH)
        visits += trials
        done += per_step
        if (done // n) > ((done - per_step) // n) and (done // n) % REFRESH_EVERY == 0:
            extra["refresh"]()
        counters = {"accepted": int(accepted), "trials": int(trials), "max_violation": float(vmax),
                    "effective_iterations": visits / n, "eta_median": float(np.median(rates[active]))}
        counters.update(extra["counters"])
        if C_of is not extra["fixed_C"]:
            counters["C_current"] = C_now
        yield dual_of, counters, bool(vmax <= eps)          # dual_of: evaluated by the driver, off the clock


def _lr_eg(objective, w, rng, eta, max_trial, order, per_step, eps, eps1, eps2, report_dual):
    p = objective.problem
    alpha, alpha_c, active, qdiag = lr_state(p, w, eps1, eps2)
    if order == "blocks":                   # one shuffle of the rows in memory: blocks are random (see pick_order)
        perm = rng.permutation(p.n_instances)
        p = dataclasses.replace(p, X=p.X[perm], y=p.y[perm], cost=p.cost[perm])
        alpha, alpha_c, qdiag = alpha[perm], alpha_c[perm], qdiag[perm]
        active = np.flatnonzero(p.cost > 0).astype(np.int64)
    X = p.X
    if len(active) == 0:
        yield Step(w=w, done=True)
        return
    rates = np.full(p.n_instances, np.nan)

    def run_pass(picks, r, mt, growth):
        return ek.lr_eg_pass(picks, X.indptr, X.indices, X.data, p.y, p.cost, qdiag, alpha, alpha_c, w, r, mt,
                             growth)

    def snapshot():
        return alpha.copy(), alpha_c.copy(), w.copy()

    def restore(s):
        alpha[:], alpha_c[:], w[:] = s

    fixed = lambda epoch: None                       # noqa: E731 (LR has one C per instance)
    extra = {"undo": (snapshot, restore), "refresh": lambda: None, "counters": {}, "fixed_C": fixed}
    dual_of = (lambda: duality.lr_dual_objective(p, alpha, alpha_c, w)) if report_dual else None
    for dual, counters, done in _epochs(run_pass, active, rng, eta, max_trial, order,
                                        per_step or len(active), rates, fixed, lambda C: None, eps, dual_of, extra):
        yield Step(w=w, dual=dual, done=done, counters=counters)


def _maxent_eg(objective, w, rng, eta, max_trial, order, C_schedule, state, per_step, eps, init_eps, report_dual):
    p = objective.problem
    if state is None:
        state = EGState.from_objective(objective, w, init_eps)
    elif not isinstance(state, EGState) or state.problem is not p:
        raise InvalidInputError("state must be an loglin.solvers.eg.EGState of the same problem")
    fixed = lambda epoch: objective.C                # noqa: E731
    C_of = fixed if C_schedule is None else C_schedule
    state.at(C_of(1))
    if state.rates is None or len(state.rates) != p.n_contexts:
        state.rates = np.full(p.n_contexts, np.nan)
    if order == "blocks":
        # one shuffle of the contexts in memory, so that blocks of consecutive contexts are random ones
        # whatever the data's order (a file sorted by label would make every block one class); the caller's
        # state gets the point back in its own order when the run ends
        perm = rng.permutation(p.n_contexts)
        caller, p = state, p.with_contexts_in_order(perm)
        state = EGState.__new__(EGState)
        state.problem, state.C, state.w = p, caller.C, caller.w
        state.beta, state.rates = caller.beta[perm], caller.rates[perm]
        try:
            yield from _maxent_eg_passes(objective, w, rng, eta, max_trial, order, C_of, fixed, state, per_step,
                                         eps, report_dual)
        finally:
            caller.beta[perm], caller.rates[perm] = state.beta, state.rates
            caller.w, caller.C = state.w, state.C
        return
    yield from _maxent_eg_passes(objective, w, rng, eta, max_trial, order, C_of, fixed, state, per_step, eps,
                                 report_dual)


def maxent_eg_kernel(p):
    """(general, run) for the EG passes over problem p: run(picks, C, beta, w, rates, max_trial, growth) ->
    (accepted, trials, max violation), by the general-K^i kernel when a feature spans labels, else by the
    diagonal one (dense rows of W on the all-pairs layout)."""
    general = not duality.single_entry_features(p)
    scratch = GeneralScratch(p) if general else None
    tables = (p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat, p.ctx_count)
    dense = not general and bool(getattr(p, "dense_pairs", False))

    def run(picks, C, beta, w, rates, max_trial, growth):
        if general:
            return ek.maxent_eg_pass_general(picks, *tables, C, beta, w, rates, max_trial, growth,
                                             scratch.slot, scratch.touched, scratch.F)
        return ek.maxent_eg_pass(picks, dense, *tables, C, beta, w, rates, max_trial, growth)
    return general, run


def _maxent_eg_passes(objective, w, rng, eta, max_trial, order, C_of, fixed, state, per_step, eps, report_dual):
    p = state.problem
    active = np.flatnonzero(p.ctx_count > 0).astype(np.int64)
    general, kernel = maxent_eg_kernel(p)

    def run_pass(picks, r, mt, growth):
        return kernel(picks, state.C, state.beta, state.w, r, mt, growth)

    def snapshot():
        return state.beta.copy(), state.w.copy()

    def restore(s):
        state.beta[:], state.w[:] = s

    extra = {"undo": (snapshot, restore), "refresh": state.refresh, "counters": {"general_k": int(general)},
             "fixed_C": fixed}
    dual_of = (lambda: state.dual(objective.C)) if report_dual else None
    for dual, counters, done in _epochs(run_pass, active, rng, eta, max_trial, order, per_step or len(active),
                                        state.rates, C_of, state.at, eps, dual_of, extra):
        w[:] = state.w
        yield Step(w=w, dual=dual, done=done, counters=counters)
