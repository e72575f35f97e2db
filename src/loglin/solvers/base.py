"""One driver for every solver: timing, trace, stopping, Ctrl-C.

A solver is a generator function ``solver(objective, w0, rng, **options)``
that performs one *outer iteration* per ``next()`` and yields a
:class:`Step`. The driver times only the solver's own work (the papers'
plots exclude evaluation), fills in what the solver did not compute
(objective, gradient norm) outside the timed region, records the trace,
and decides when to stop (:mod:`loglin.solvers.stopping` has the optimality test):

* converged: LIBLINEAR's ||grad f(w)|| <= tol * ||grad f(0)|| AND a certified bound
  ||grad f||^2 / (2 mu) <= f_tol * |f| (scale-aware), or a relative duality gap
  <= gap_tol for solvers that report a dual; a solver's own "done" counts only if one
  of these holds there;
* otherwise max_iter, a time limit (wall time of the whole call, evaluation included),
  a callback returning True, or SIGINT / SIGTERM (the best iterate so far is kept);
  these runs end with ``converged=False`` and a ``ConvergenceWarning``.
"""
from __future__ import annotations

import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import ConvergenceWarning, LoglinError
from ..signals import StopOnSignal, command_elapsed, training_started
from ..trace import Trace
from .progress import Progress
from .protocol import objective_kind  # noqa: F401  (the solver modules import it from here)
from .stopping import L1_GAP_FLOOR, StoppingRule, advice, safe_norm, strong_convexity


@dataclass
class Step:
    """What a solver reports after one outer iteration."""

    w: np.ndarray
    f: float | None = None
    grad_norm: float | None = None
    dual: float | Callable[[], float] | None = None     # a callable is evaluated by the driver, off the clock
    counters: dict = field(default_factory=dict)
    done: bool = False           # the solver cannot make progress / has its own stop


@dataclass
class Result:
    w: np.ndarray
    f: float
    grad_norm: float
    iterations: int
    train_seconds: float
    converged: bool
    stop_reason: str
    trace: Trace
    solver: str
    advice: str = ""            # the ConvergenceWarning's text when not converged
    signal: str | None = None   # "SIGINT" / "SIGTERM" when a signal stopped the run


def minimize(objective, solver: str = "tron", w0=None, *, tol: float = 1e-3, max_iter: int = 1000,
             time_limit: float | None = None, gap_tol: float | None = None, callback=None,
             evaluate=None, progress: bool = False, random_state=None, trace: Trace | None = None,
             clock: str = "wall", record_spacing: float | str | None = "auto", f_tol: float | None = None,
             warn: bool = True, **options) -> Result:
    """Minimize ``objective`` with the named solver; see the module docstring.

    ``evaluate(w) -> float`` is a held-out metric recorded in the trace
    (not timed). ``callback(record) -> bool`` sees every trace record and
    may return True to stop. ``clock="cpu"`` measures ``seconds`` (and the
    time limit) in process CPU time, keeping wall time as ``wall_seconds``:
    on a shared machine wall time is mostly waiting for a core.

    ``time_limit`` (seconds): with the default ``clock="wall"`` it bounds the wall time of
    the whole call, evaluation included (the user's meaning), and inside a training command
    (:func:`loglin.signals.command_clock`) counts from the command's start; with ``clock="cpu"`` (the
    experiments' measuring mode) it bounds the solver's own CPU seconds. ``f_tol``: the
    certified relative suboptimality required to call the run converged (default ``tol``,
    or DEFAULT_F_TOL when tol = 0). ``warn``: issue a ConvergenceWarning when the run
    stops without a verified optimum.

    ``record_spacing=r`` thins the trace of a long run (the untimed f and
    ||grad f|| can cost more than an iteration of GIS or CD): after the first
    FULL_RECORDS iterations, an iteration is evaluated and recorded only once
    the solver's clock or the iteration count has grown by the factor 1 + r since
    the last record (the count: a first record holding a long compilation must
    not hold back the tests), and the last iteration always is. The gradient, gap and callback tests
    then run at recorded iterations only; integer counters of the skipped
    iterations are added into the next record, so their sums stay exact.
    ``"auto"`` (default): with the wall clock, every iteration for the first
    AUTO_FULL_SECONDS, then AUTO_RECORD_SPACING, so that evaluation cannot
    dominate a long run; with ``clock="cpu"`` (the papers' plots) every iteration.
    With ``"auto"``, the wall clock, a binary LR objective, tol > 0 and neither ``callback`` nor
    ``evaluate`` (the caller wants the optimum, not the trace), the iterates of a solver that does not
    report its gradient norm (the dual methods) are also evaluated only once the solver has worked
    EVALUATION_BALANCE x as long as the last evaluation took since the last record: a dual CD pass can
    cost less than the f-and-gradient pass that tests it, and the user would pay more for the tests
    than for the solving. "Converged" still means the tests held at a recorded iterate.
    """
    from . import resolve                      # the solver table (loglin.solvers) checks kind, loss and needs
    solver_function = resolve(solver, objective)
    solver = getattr(solver_function, "__name__", "solver") if callable(solver) else solver
    kind = objective_kind(objective)
    if not (tol >= 0 and max_iter >= 0):
        raise ValueError("tol and max_iter must be non-negative")
    auto_spacing = record_spacing == "auto"
    if auto_spacing:
        record_spacing = AUTO_RECORD_SPACING if clock == "wall" else None
    if record_spacing is not None and not (isinstance(record_spacing, (int, float)) and record_spacing > 0):
        raise ValueError(f"record_spacing must be positive, got {record_spacing!r}")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu', got {clock!r}")
    if f_tol is not None and not f_tol >= 0:
        raise ValueError(f"f_tol must be non-negative, got {f_tol!r}")
    if time_limit is not None and not time_limit >= 0:
        raise ValueError(f"time_limit must be non-negative, got {time_limit!r}")
    started = time.perf_counter()
    if time_limit is not None and clock == "wall":     # in a command, its earlier work used part of the limit
        time_limit = max(0.0, time_limit - command_elapsed())
    training_started()
    w = np.zeros(objective.n) if w0 is None else np.array(w0, dtype=np.float64)
    if w.shape != (objective.n,) or not np.all(np.isfinite(w)):
        raise ValueError(f"w0 must be a finite vector of length {objective.n}")
    rng = np.random.default_rng(random_state)
    trace = trace if trace is not None else Trace(solver=solver)

    with StopOnSignal() as stop:
        f_0, g_0 = objective.fun_grad(np.zeros(objective.n), keep_cache=False)
        g0_norm = safe_norm(g_0)
        f_tol = f_tol if f_tol is not None else (tol if tol > 0 else DEFAULT_F_TOL)
        rule = StoppingRule(tol, g0_norm, strong_convexity(objective), f_tol, gap_tol)
        # without w0 the start is that zero vector: one pass, not the same one twice
        f_w, g_w = (f_0, g_0) if w0 is None else objective.fun_grad(w, keep_cache=False)
        best = _Best(w, f_w)
        wall_column = {"wall_seconds": 0.0} if clock == "cpu" else {}
        gnorm_w = safe_norm(g_w)
        record = trace.add(iteration=0, seconds=0.0, **wall_column, objective=f_w, grad_norm=gnorm_w,
                           rel_grad=_ratio(gnorm_w, g0_norm), metric=_metric(evaluate, w))
        state = _RunState()
        try:
            if callback is not None and callback(record):
                state.reason = "callback"
        except KeyboardInterrupt:
            state.reason = "interrupted"
        if state.reason not in ("callback", "interrupted"):
            try:
                _run(objective, solver_function(objective, w, rng, **options), state, rule, trace, best, stop,
                     g0_norm=g0_norm, max_iter=max_iter, time_limit=time_limit, clock=clock, started=started,
                     record_spacing=record_spacing, auto_spacing=auto_spacing, callback=callback,
                     evaluate=evaluate, progress=progress, solver=solver, wall_column=wall_column,
                     balance=(auto_spacing and clock == "wall" and kind == "binary" and tol > 0
                              and callback is None and evaluate is None))
            except LoglinError as exc:      # an evaluation failed (a lost shard): the caller may keep the best
                exc.best = Result(w=best.w.copy(), f=best.f, grad_norm=float("nan"), iterations=state.it,
                                  train_seconds=state.elapsed, converged=False, stop_reason=str(exc), trace=trace,
                                  solver=solver)
                raise
    result = _result(best, objective, state.it, state.elapsed, state.converged, state.reason, trace, solver)
    if stop.requested:
        result.signal = stop.name
    if not result.converged:
        last = trace.records[-1] if trace.records else {}
        gap, f_last = last.get("duality_gap"), last.get("objective")
        rel_gap = abs(gap) / abs(f_last) if gap is not None and f_last else None
        penalty = getattr(objective, "penalty", "l2")
        if gap_tol is None and rel_gap is not None and strong_convexity(objective) <= 0:
            shown_gap_tol = max(rule.f_tol, L1_GAP_FLOOR)        # what certified_by_gradient asked of the gap
        else:
            shown_gap_tol = gap_tol
        result.advice = advice(solver, state.reason, state.it, result.f, result.grad_norm, g0_norm, tol,
                               state.scale_blocked, result.signal, flat=kind in ("maxent", "binary"),
                               rel_gap=rel_gap, gap_tol=shown_gap_tol, penalty=penalty, kind=kind)
        if warn:
            warnings.warn(result.advice, ConvergenceWarning, stacklevel=2)
    return result


class _RunState:
    """What the loop leaves behind: iterations, solver seconds, and why it stopped."""

    def __init__(self):
        self.it, self.elapsed, self.reason, self.converged, self.scale_blocked = 0, 0.0, "max_iter", False, False


def _run(objective, gen, state, rule, trace, best, stop, *, g0_norm, max_iter, time_limit, clock, started,
         record_spacing, auto_spacing, callback, evaluate, progress, solver, wall_column, balance=False):
    """The outer loop of :func:`minimize`: one solver step, then (off the clock) evaluation and the tests."""
    tick = time.process_time if clock == "cpu" else time.perf_counter
    dual_bound = getattr(objective, "dual_bound", None)
    wall = 0.0
    skipped, unrecorded = _Skipped(), None
    evaluation_cost = 0.0                       # solver-clock seconds the last evaluation took

    def out_of_time():
        if time_limit is None:
            return False
        if clock == "cpu":
            return state.elapsed >= time_limit
        return time.perf_counter() - started >= time_limit

    def evaluate_and_record(step):              # off the clock
        f, gnorm = step.f, step.grad_norm
        if gnorm is None:
            f_g, g = objective.fun_grad(step.w, keep_cache=False)
            f, gnorm = (f_g if f is None else f), safe_norm(g)
        elif f is None:
            f = objective.fun(step.w)
        best.offer(step.w, f)
        dual = step.dual() if callable(step.dual) else step.dual      # reporting, not solving
        if dual is None and dual_bound is not None:                   # L1: a certificate for the pseudo-gradient
            dual = dual_bound(step.w)
        gap = None if dual is None else f - dual
        return trace.add(iteration=state.it, seconds=state.elapsed, **wall_column, objective=f, grad_norm=gnorm,
                         rel_grad=_ratio(gnorm, g0_norm), dual_objective=dual, duality_gap=gap,
                         metric=_metric(evaluate, step.w), **skipped.merged_with(step.counters))

    def verdict(record, finished):
        v = rule.check(record["objective"], record["grad_norm"], record.get("duality_gap"), finished)
        state.scale_blocked = v.scale_blocked
        return v

    bar = Progress(solver, rule.tol, rule.gap_tol) if progress else None
    shown = 0                                   # iterations already counted by the progress display
    try:
        while state.it < max_iter:
            if stop.requested:
                state.reason = "interrupted"
                break
            start, wall_start = tick(), time.perf_counter()
            try:
                step = next(gen)
            except StopIteration:
                record = evaluate_and_record(unrecorded) if unrecorded is not None else trace.records[-1]
                v = verdict(record, True)
                state.converged = v.converged
                state.reason = "solver finished" if v.converged else "solver stopped before the optimality test held"
                break
            state.elapsed += tick() - start
            wall += time.perf_counter() - wall_start
            if clock == "cpu":
                wall_column["wall_seconds"] = wall
            state.it += 1
            if unrecorded is not None:              # the previous iteration stays out of the trace
                skipped.add(unrecorded.counters)
                unrecorded = None
            last = step.done or state.it >= max_iter or out_of_time() or stop.requested
            thinning = record_spacing is not None and (
                not auto_spacing or time.perf_counter() - started > AUTO_FULL_SECONDS)
            if (thinning and not last and state.it > FULL_RECORDS
                    and state.elapsed < trace.records[-1]["seconds"] * (1 + record_spacing)
                    and state.it < trace.records[-1]["iteration"] * (1 + record_spacing)):
                unrecorded = step
                continue
            if (balance and not last and step.grad_norm is None
                    and state.elapsed - trace.records[-1]["seconds"] < EVALUATION_BALANCE * evaluation_cost):
                unrecorded = step
                continue
            evaluation_start = tick()
            record = evaluate_and_record(step)
            evaluation_cost = tick() - evaluation_start
            f = record["objective"]
            if bar is not None:
                bar.update(record, state.it - shown)
                shown = state.it
            if not math.isfinite(f):
                state.reason = "diverged (objective is not finite)"
                break
            v = verdict(record, step.done)
            if v.converged:
                state.reason, state.converged = v.reason, True
                break
            if step.done:
                state.reason = "solver stopped before the optimality test held"
                break
            if stop.requested:
                state.reason = "interrupted"
                break
            if callback is not None and callback(record):
                state.reason = "callback"
                break
            if out_of_time():
                state.reason = "time limit"
                break
    except KeyboardInterrupt:                   # without our handlers (not the main thread), or a second Ctrl-C
        state.reason = "interrupted"
        print("\nloglin: interrupted; keeping the best model so far", file=sys.stderr)
    finally:
        gen.close()
        if bar is not None:
            bar.close()


FULL_RECORDS = 20      # iterations always recorded before record_spacing thins the trace
AUTO_RECORD_SPACING = 0.05   # default thinning with the wall clock: evaluation cannot dominate a long run ...
AUTO_FULL_SECONDS = 10.0     # ... once it has run this long (short runs keep every iteration)
EVALUATION_BALANCE = 1.0   # solver time between evaluations of a dual method's iterates, x one evaluation (0027)
DEFAULT_F_TOL = 1e-3   # certified relative suboptimality when tol = 0 (dual solvers' own stops)


# integer counters that describe the iterate rather than count work: a thinned trace keeps the next record's own
STATE_COUNTERS = frozenset({"nonzeros", "working_set", "general_k", "cuts", "shards", "phase"})


class _Skipped:
    """Integer counters of iterations left out of a thinned trace, added into the next record."""

    def __init__(self):
        self.sums = {}

    def add(self, counters):
        for name, v in counters.items():
            if name in STATE_COUNTERS:
                continue
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                self.sums[name] = self.sums.get(name, 0) + int(v)

    def merged_with(self, counters):
        merged = dict(counters)
        for name, v in self.sums.items():
            merged[name] = int(merged.get(name, 0)) + v
        self.sums = {}
        return merged


class _Best:
    """Copy of the lowest-objective iterate (what Ctrl-C leaves the user with)."""

    def __init__(self, w, f):
        self.w, self.f = w.copy(), f

    def offer(self, w, f):
        if math.isfinite(f) and f <= self.f:
            self.w[:] = w
            self.f = f


def _result(best, objective, it, elapsed, converged, reason, trace, solver):
    gnorm = trace.records[-1]["grad_norm"] if trace.records else float("nan")
    if trace.records and best.f != trace.records[-1]["objective"]:
        gnorm = safe_norm(objective.fun_grad(best.w, keep_cache=False)[1])
    return Result(w=best.w, f=best.f, grad_norm=gnorm, iterations=it, train_seconds=elapsed,
                  converged=converged, stop_reason=reason, trace=trace, solver=solver)


def _ratio(a, b):
    if not math.isfinite(b):
        return float("nan")
    return float(a / b) if b > 0 else 0.0


def _metric(evaluate, w):
    return None if evaluate is None else float(evaluate(w))


