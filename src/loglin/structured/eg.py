"""Exponentiated-gradient training of CRFs and M3Ns on their duals (Collins et al. 2008).

Part-based EG (Figure 3, Lemma 1): every sentence keeps part variables s_i
with u_i = p(s_i); an EG step on u_i is s_i' = s_i - eta g_i with

    Q_LL:  g_ir = s_ir - w . f(x_i, r)        Q_MM:  g_ir = -e_ir - w . f(x_i, r),    w = C w(u)

(our C is 1/C' of the paper, see loglin.structured.dual). Solvers, for every structure
(chain, second-order chain, node, tree: the table's ``eg`` and ``eg-batch``):

* :func:`structured_eg`       online EG: ``order="random"`` draws k_t uniformly (Figure 2),
                              ``order="cyclic"`` visits sentences in a fixed order (the
                              deterministic variant of section 7.1), ``order="permutation"`` a new
                              random order each epoch (train()'s default for M3N chains);
* :func:`structured_eg_batch` batch EG (Figure 1): all sentences at once from the same w(u).

Learning rates (section 7): one rate per sentence, started at eta_ini, halved
until the dual improves (never below eta_ini / RATE_RANGE), multiplied by 1.05 after each update; eta_ini is
chosen on 10% of the data as the largest rate of a halving grid under which
at least 95% of the updates improve the dual. Batch EG uses one global rate
with the same halving/x1.05 rule. *Effective iterations* count every tried
rate as a visit of its example, divided by n.

Options also give C annealing (section 7.1.1, ``C_schedule``) and warm
starts (``state=``) for the regularization path of section 7.1.2
(:func:`regularization_path`). The loss (CRF or M3N) comes from the
structured objective the solver is given; the dual state is the
:class:`~loglin.structured.dual.PartDualState` of its problem, for any structure.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..solvers.base import Step
from ..solvers.eg import GROWTH, REFRESH_EVERY
from ..solvers.eg import MAX_TRIAL_COLLINS as MAX_TRIAL
from ..solvers.eg import pick_order
from ..solvers.eg import choose_eta_ini as _choose_eta_ini
from .dual import PartDualState
from .objective import StructuredObjective

# Online EG's per-sentence rates never fall below eta_ini / RATE_RANGE: near the M3N optimum a step's exact
# dual change is below the rounding of its forward-backward, the change test then rejects at random and the
# halvings outweigh the x1.05 growth until the step is a floating-point no-op (docs/decisions/0031)
RATE_RANGE = 2.0 ** 10


# structures whose fresh EG state keeps s only: one more forward-backward a visit for half the part memory;
# the other structures' inference (inside-outside, second-order chains) weighs more, they keep the marginals
RECOMPUTE_MARGINALS = ("chain",)


def part_state(objective, state=None):
    """The warm-start ``state`` checked against the objective, or a fresh part dual state of its problem.

    A fresh state of a chain keeps the part variables s only, not their marginals (``store_marginals=False``):
    a visit recomputes them, the same iterates for half the memory of the parts (docs/decisions/0039); pass
    ``state=PartDualState(problem, loss)`` to keep them."""
    if not isinstance(objective, StructuredObjective):
        raise InvalidInputError("the structured EG solvers train structured objectives (CRF / M3N); for Maxent "
                                "problems use eg, eg-ll, eg-batch, eg-mm or eg-mm-batch")
    if state is None:
        return PartDualState(objective.problem, objective.loss,
                             store_marginals=objective.structure not in RECOMPUTE_MARGINALS)
    return check_state(objective, state)


def check_state(objective, state):
    owner = getattr(state.problem, "source", None) or state.problem      # a Maxent problem's node view: its source
    if owner is not objective.problem or state.loss != getattr(objective, "loss", "ll"):
        raise InvalidInputError("the warm-start dual state belongs to another problem or loss")
    return state


def collins_annealing(C_target, C_start=None, hold=5, rate=0.7):
    """Section 7.1.1 in our scale (C = 1/C'): C' = C'_0 for t <= hold, C' = C'_T + (C'_0 - C'_T) rate^(t - hold) after.

    Default C'_0 = 10 C'_T (the paper: C' = 10 -> 1). Returns epoch -> C.
    """
    target_p = 1.0 / C_target
    start_p = 10.0 * target_p if C_start is None else 1.0 / C_start

    def schedule(epoch):
        if epoch <= hold:
            return 1.0 / start_p
        return 1.0 / (target_p + (start_p - target_p) * rate ** (epoch - hold))
    return schedule


def choose_eta_ini(state, C, rng):
    """loglin.solvers.eg.choose_eta_ini on a part dual state (each rate tried, then undone: try_online)."""
    def try_rate(sample, eta):
        accepted, trials, _ = state.try_online(C, sample, np.full(state.n_blocks, eta), adapt=False, max_trial=1)
        return accepted, trials
    return _choose_eta_ini(try_rate, np.arange(state.n_blocks), rng)


def eg_online(objective, w, rng, state, order="random", eta="auto", C_schedule=None, updates_per_step=None,
              max_trial=MAX_TRIAL, rate_range=RATE_RANGE):
    """Online EG (Figure 2 / Figure 3) on any dual state with ``online`` steps; one driver step per epoch.

    ``order``: "random" (with replacement, Figure 2), "permutation" (a new random order each epoch) or
    "cyclic"; ``rate_range``: no rate is halved below eta_ini / rate_range (a visit that reaches that floor
    ends without a step)."""
    n = state.n_blocks
    C_of = (lambda epoch: objective.C) if C_schedule is None else C_schedule
    if order not in ("random", "cyclic", "permutation"):
        raise InvalidInputError(f"order must be 'random', 'cyclic' or 'permutation', got {order!r}")
    if order == "permutation" and updates_per_step not in (None, 0):
        raise InvalidInputError("order='permutation' visits every sentence once per step: leave updates_per_step unset")
    if not rate_range >= 1:
        raise InvalidInputError(f"rate_range must be at least 1, got {rate_range!r}")
    visits = 0
    if eta == "auto":
        eta, visits = choose_eta_ini(state, C_of(1), rng)
    eta = float(eta)
    if not eta > 0:
        raise InvalidInputError(f"eta must be positive, got {eta}")
    rates = getattr(state, "rates", None)
    if rates is None or len(rates) != n:
        rates = np.full(n, eta)
    state.rates = rates
    floor = eta / float(rate_range)
    per_step = n if updates_per_step is None else max(1, int(updates_per_step))
    every = np.arange(n, dtype=np.int64)
    cursor, done = 0, 0
    while True:
        C = C_of(done // n + 1)
        picks, cursor = pick_order(every, rng, order, per_step, cursor)
        accepted, trials, _ = state.online(C, picks, rates, True, max_trial, floor)
        visits += trials
        done += per_step
        if (done // n) > ((done - per_step) // n) and (done // n) % REFRESH_EVERY == 0:
            state.refresh()
        w[:] = state.primal_weights(C)
        yield Step(w=w, dual=lambda: state.dual(objective.C),               # evaluated off the clock
                   counters={"effective_iterations": visits / n, "accepted": accepted, "C_current": C,
                             "eta_median": float(np.median(rates))})


def passes_against(state, C, context, rates, rng, passes=1, max_trial=MAX_TRIAL, floor=0.0):
    """``passes`` online EG passes (a fresh random order each) over every sentence of ``state`` in which the
    steps read w(u) as ``context`` plus the change they make, not as the state's own w(u) (a shard's local
    subproblem, loglin.scale.cocoa_eg). The state's w(u) gains that change; returns (change, accepted, trials)."""
    own = state.wu
    seen = np.array(context, dtype=np.float64)
    state.wu = seen                                 # eg_online_pass reads and updates the vector it is given
    accepted = trials = 0
    try:
        for _ in range(int(passes)):
            a, t, _ = state.online(C, rng.permutation(state.n_blocks), rates, True, max_trial, floor)
            accepted, trials = accepted + a, trials + t
    finally:
        state.wu = own
    change = seen - context
    own += change
    return change, accepted, trials


def choose_eta_against(state, C, context, rng):
    """:func:`choose_eta_ini` for steps that read w(u) as ``context`` (see :func:`passes_against`)."""
    trial = state.copy()
    trial.wu = np.array(context, dtype=np.float64)
    return choose_eta_ini(trial, C, rng)


def eg_batch(objective, w, rng, state, eta=1.0, max_trial=MAX_TRIAL):
    """Batch EG (Figure 1) with one global rate: halve until Q decreases, x1.05 after a step."""
    n = state.n_blocks
    C = objective.C
    eta = float(eta)
    visits = 0
    while True:
        q_old = state.Q(C)
        accepted = False
        for _ in range(max_trial):
            visits += n
            q_new = state.batch_try(eta, C)
            if np.isfinite(q_new) and q_new <= q_old + 1e-13 * abs(q_old):
                state.batch_commit()
                eta *= GROWTH
                accepted = True
                break
            eta *= 0.5
        w[:] = state.primal_weights(C)
        yield Step(w=w, dual=lambda C=C: state.dual(C), counters={"effective_iterations": visits / n, "eta": eta},
                   done=not accepted)


def structured_eg(objective, w, rng, state=None, **options):
    return eg_online(objective, w, rng, part_state(objective, state), **options)


def structured_eg_batch(objective, w, rng, state=None, **options):
    return eg_batch(objective, w, rng, part_state(objective, state), **options)


structured_eg.forwards_options_to = eg_online          # the option check (loglin.solvers.options) reads these
structured_eg_batch.forwards_options_to = eg_batch


def regularization_path(make_objective, solver, Cs, state, *, gap_tol=1e-3, max_iter=200, evaluate=None,
                        **options):
    """Section 7.1.2: solve for each C in turn (increasing C = decreasing C'), warm-starting the dual.

    ``make_objective(C)`` builds the objective, ``state`` is the dual state the
    solver mutates (kept between values of C). Returns one dict per C with the
    effective iterations spent, the primal/dual values and the metric.
    """
    from ..solvers.base import minimize
    rows, total = [], 0.0
    for C in Cs:
        objective = make_objective(C)
        res = minimize(objective, solver, w0=state.primal_weights(C), gap_tol=gap_tol, max_iter=max_iter,
                       tol=0.0, state=state, evaluate=evaluate, **options)
        last = res.trace.records[-1]
        its = last.get("effective_iterations", float(res.iterations))
        total += its
        rows.append({"C": C, "C_collins": 1.0 / C, "iterations": its, "total_iterations": total,
                     "primal": last["objective"], "dual": last.get("dual_objective"),
                     "relative_gap": (last["objective"] - last["dual_objective"]) / abs(last["objective"]),
                     "metric": last.get("metric"), "stop_reason": res.stop_reason, "w": res.w})
    return rows
