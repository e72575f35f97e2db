"""One driver for every solver: timing, trace, stopping, Ctrl-C.

A solver is a generator function ``solver(objective, w0, rng, **options)``
that performs one *outer iteration* per ``next()`` and yields a
:class:`Step`. The driver times only the solver's own work (the papers'
plots exclude evaluation), fills in what the solver did not compute
(objective, gradient norm) outside the timed region, records the trace,
and decides when to stop:

* ||grad f(w)|| <= tol * ||grad f(0)||   (LIBLINEAR's relative rule), or
* a relative duality gap <= gap_tol for solvers that report a dual, or
* max_iter outer iterations, a time limit, a callback returning True,
  or Ctrl-C (the best iterate so far is kept).
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..trace import Trace
from .protocol import objective_kind  # noqa: F401  (the solver modules import it from here)


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


def minimize(objective, solver: str = "tron", w0=None, *, tol: float = 1e-3, max_iter: int = 1000,
             time_limit: float | None = None, gap_tol: float | None = None, callback=None,
             evaluate=None, progress: bool = False, random_state=None, trace: Trace | None = None,
             clock: str = "wall", record_spacing: float | None = None, **options) -> Result:
    """Minimize ``objective`` with the named solver; see the module docstring.

    ``evaluate(w) -> float`` is a held-out metric recorded in the trace
    (not timed). ``callback(record) -> bool`` sees every trace record and
    may return True to stop. ``clock="cpu"`` measures ``seconds`` (and the
    time limit) in process CPU time, keeping wall time as ``wall_seconds``:
    on a shared machine wall time is mostly waiting for a core.

    ``record_spacing=r`` thins the trace of a long run (the untimed f and
    ||grad f|| can cost more than an iteration of GIS or CD): after the first
    FULL_RECORDS iterations, an iteration is evaluated and recorded only once
    the solver's clock has grown by the factor 1 + r since the last record,
    and the last iteration always is. The gradient, gap and callback tests
    then run at recorded iterations only; integer counters of the skipped
    iterations are added into the next record, so their sums stay exact.
    """
    from . import resolve                      # the solver table (loglin.solvers) checks kind, loss and needs
    solver_function = resolve(solver, objective)
    solver = getattr(solver_function, "__name__", "solver") if callable(solver) else solver
    if tol < 0 or max_iter < 0:
        raise ValueError("tol and max_iter must be non-negative")
    if record_spacing is not None and not record_spacing > 0:
        raise ValueError(f"record_spacing must be positive, got {record_spacing!r}")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu', got {clock!r}")
    w = np.zeros(objective.n) if w0 is None else np.array(w0, dtype=np.float64)
    if w.shape != (objective.n,) or not np.all(np.isfinite(w)):
        raise ValueError(f"w0 must be a finite vector of length {objective.n}")
    rng = np.random.default_rng(random_state)
    trace = trace if trace is not None else Trace(solver=solver)

    g0_norm = float(np.linalg.norm(objective.fun_grad(np.zeros(objective.n), keep_cache=False)[1]))
    f_w, g_w = objective.fun_grad(w, keep_cache=False)
    best = _Best(w, f_w)
    wall_column = {"wall_seconds": 0.0} if clock == "cpu" else {}
    record = trace.add(iteration=0, seconds=0.0, **wall_column, objective=f_w, grad_norm=float(np.linalg.norm(g_w)),
                       rel_grad=_ratio(np.linalg.norm(g_w), g0_norm), metric=_metric(evaluate, w))
    if callback is not None and callback(record):
        return _result(best, objective, 0, 0.0, False, "callback", trace, solver)

    def evaluate_and_record(step):              # off the clock
        f, gnorm = step.f, step.grad_norm
        if gnorm is None:
            f_g, g = objective.fun_grad(step.w, keep_cache=False)
            f, gnorm = (f_g if f is None else f), float(np.linalg.norm(g))
        elif f is None:
            f = objective.fun(step.w)
        best.offer(step.w, f)
        dual = step.dual() if callable(step.dual) else step.dual      # reporting, not solving
        gap = None if dual is None else f - dual
        return trace.add(iteration=it, seconds=elapsed, **wall_column, objective=f, grad_norm=gnorm,
                         rel_grad=_ratio(gnorm, g0_norm), dual_objective=dual, duality_gap=gap,
                         metric=_metric(evaluate, step.w), **skipped.merged_with(step.counters))

    gen = solver_function(objective, w, rng, **options)
    tick = time.process_time if clock == "cpu" else time.perf_counter
    elapsed, wall, it, reason, converged = 0.0, 0.0, 0, "max_iter", False
    skipped, unrecorded = _Skipped(), None
    bar = _progress_bar(progress, max_iter, solver)
    try:
        while it < max_iter:
            start, wall_start = tick(), time.perf_counter()
            try:
                step = next(gen)
            except StopIteration:
                reason, converged = "solver finished", True
                if unrecorded is not None:
                    evaluate_and_record(unrecorded)
                break
            elapsed += tick() - start
            wall += time.perf_counter() - wall_start
            if clock == "cpu":
                wall_column["wall_seconds"] = wall
            it += 1
            if bar is not None:
                bar.update(1)
            if unrecorded is not None:              # the previous iteration stays out of the trace
                skipped.add(unrecorded.counters)
                unrecorded = None
            last = (step.done or it >= max_iter or (time_limit is not None and elapsed >= time_limit))
            if (record_spacing is not None and not last and it > FULL_RECORDS
                    and elapsed < trace.records[-1]["seconds"] * (1 + record_spacing)):
                unrecorded = step
                continue
            record = evaluate_and_record(step)
            f, gnorm, gap = record["objective"], record["grad_norm"], record.get("duality_gap")
            if bar is not None:
                bar.set_postfix(f=f"{f:.6g}", rel_grad=f"{record['rel_grad']:.2e}")
            if not math.isfinite(f):
                reason = "diverged (objective is not finite)"
                break
            if gnorm <= tol * g0_norm:
                reason, converged = "gradient tolerance", True
                break
            if gap_tol is not None and gap is not None and gap <= gap_tol * abs(f):
                reason, converged = "duality gap tolerance", True
                break
            if step.done:
                reason, converged = "solver finished", True
                break
            if callback is not None and callback(record):
                reason = "callback"
                break
            if time_limit is not None and elapsed >= time_limit:
                reason = "time limit"
                break
    except KeyboardInterrupt:
        reason = "interrupted"
        print("\nloglin: interrupted; keeping the best model so far", file=sys.stderr)
    finally:
        gen.close()
        if bar is not None:
            bar.close()
    return _result(best, objective, it, elapsed, converged, reason, trace, solver)


FULL_RECORDS = 20      # iterations always recorded before record_spacing thins the trace


class _Skipped:
    """Integer counters of iterations left out of a thinned trace, added into the next record."""

    def __init__(self):
        self.sums = {}

    def add(self, counters):
        for name, v in counters.items():
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
        gnorm = float(np.linalg.norm(objective.fun_grad(best.w, keep_cache=False)[1]))
    return Result(w=best.w, f=best.f, grad_norm=gnorm, iterations=it, train_seconds=elapsed,
                  converged=converged, stop_reason=reason, trace=trace, solver=solver)


def _ratio(a, b):
    return float(a / b) if b > 0 else 0.0


def _metric(evaluate, w):
    return None if evaluate is None else float(evaluate(w))


def _progress_bar(progress, total, solver):
    if not progress:
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=f"loglin {solver}", unit="it", leave=False, file=sys.stderr)


def __getattr__(name):
    """Old import paths (``from loglin.solvers.base import SOLVERS, _load_all_solvers``) kept for callers
    not yet moved to :mod:`loglin.solvers`; the table needs no loading."""
    if name == "SOLVERS":
        from . import SOLVERS
        return SOLVERS
    if name == "_load_all_solvers":
        return lambda: None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
