"""Limited-memory BFGS (Liu & Nocedal 1989), the papers' quasi-Newton baseline.

Our own implementation rather than SciPy's L-BFGS-B so that every iteration
is a driver step (trace, time limit, Ctrl-C) and the line search can reuse
the objective's fused value+gradient pass. ``benchmarks/`` compares it with
SciPy's on the same objective.

Line search: start at alpha = 1 (1/||g|| on the first iteration), enforce the
Armijo condition and the strong-Wolfe curvature condition by bracketing with
safeguarded cubic interpolation (Nocedal & Wright, Algorithms 3.5-3.6).
"""
import math

import numpy as np

from ..errors import InvalidInputError
from ..kernels.vector import axpy_into, dot, lbfgs_direction, take_step
from .base import Step
from .stopping import safe_norm

C1, C2 = 1e-4, 0.9


def _cubic_min(a, fa, ga, b, fb, gb):
    """Minimizer of the cubic interpolating (a, fa, ga), (b, fb, gb), kept inside [a, b]."""
    d1 = ga + gb - 3 * (fa - fb) / (a - b)
    disc = d1 * d1 - ga * gb
    lo, hi = min(a, b), max(a, b)
    if disc >= 0:
        d2 = math.copysign(math.sqrt(disc), b - a)
        t = b - (b - a) * (gb + d2 - d1) / (gb - ga + 2 * d2)
        if lo + 0.1 * (hi - lo) <= t <= hi - 0.1 * (hi - lo):
            return t
    return 0.5 * (a + b)


def wolfe_line_search(objective, w, f, g, d, alpha, max_evals=25, trial=None):
    """Return (alpha, f, g, evaluations) satisfying the strong Wolfe conditions.

    ``trial`` is a work vector for the points w + alpha d (allocated if None)."""
    trial = np.empty_like(w) if trial is None else trial

    def at(alpha):
        axpy_into(trial, w, alpha, d)
        return objective.fun_grad(trial, keep_cache=False)

    gd0 = dot(g, d)
    prev_a, prev_f, prev_gd = 0.0, f, gd0
    evals = 0
    lo = hi = None
    while evals < max_evals:
        evals += 1
        f_a, g_a = at(alpha)
        gd = dot(g_a, d)
        if f_a > f + C1 * alpha * gd0 or (evals > 1 and f_a >= prev_f) or not math.isfinite(f_a):
            lo, hi = (prev_a, prev_f, prev_gd), (alpha, f_a, gd)
            break
        if abs(gd) <= -C2 * gd0:
            return alpha, f_a, g_a, evals
        if gd >= 0:
            lo, hi = (alpha, f_a, gd), (prev_a, prev_f, prev_gd)
            break
        prev_a, prev_f, prev_gd = alpha, f_a, gd
        alpha *= 2.0
    else:
        return alpha, f_a, g_a, evals
    best = None
    while evals < max_evals:
        (a_lo, f_lo, gd_lo), (a_hi, f_hi, gd_hi) = lo, hi
        if not math.isfinite(f_hi):
            alpha = 0.5 * (a_lo + a_hi)
        else:
            alpha = _cubic_min(a_lo, f_lo, gd_lo, a_hi, f_hi, gd_hi)
        evals += 1
        f_a, g_a = at(alpha)
        gd = dot(g_a, d)
        if f_a > f + C1 * alpha * gd0 or f_a >= f_lo or not math.isfinite(f_a):
            hi = (alpha, f_a, gd)
        else:
            best = (alpha, f_a, g_a)
            if abs(gd) <= -C2 * gd0:
                return alpha, f_a, g_a, evals
            if gd * (a_hi - a_lo) >= 0:
                hi = lo
            lo = (alpha, f_a, gd)
        if abs(hi[0] - lo[0]) < 1e-16 * max(1.0, abs(lo[0])):
            break
    if best is not None:
        return best[0], best[1], best[2], evals
    return 0.0, f, g, evals


def remember_pair(row, sy, yy, rho, newest, kept, gamma, memory):
    """(newest, kept, gamma) after the pair (s, y) just written to ``row`` of the ring: kept when its
    curvature s'y is usable (always under strong Wolfe, up to rounding), else dropped, which loses the
    oldest pair too if the ring was full (the new pair overwrote it)."""
    if sy > 1e-10 * yy:
        rho[row] = 1.0 / sy
        return row, min(kept + 1, memory), sy / yy
    return newest, kept - 1 if kept == memory else kept, gamma


def lbfgs(objective, w, rng, memory: int = 10, checkpoint=None):
    """The last ``memory`` pairs (s, y) live in the rows of two preallocated arrays used as a ring.
    ``checkpoint`` (:class:`~loglin.solvers.checkpoint.SolverCheckpoint`): the ring is recorded there after
    every iteration, and a ring recorded by an earlier run (at ``w``) is where this one starts."""
    memory = int(memory)
    if memory < 1:
        raise InvalidInputError(f"memory must be at least 1, got {memory}")
    n = w.shape[0]
    S, Y = np.zeros((memory, n)), np.zeros((memory, n))
    rho = np.zeros(memory)     # zeros: a saved solver state (checkpoint) holds no stale bytes
    d, trial = np.empty(n), np.empty(n)
    kept = 0                    # pairs stored
    newest = -1                 # row of the newest pair
    gamma = 1.0                 # H0 = gamma I, gamma = s'y / y'y of the newest pair
    f, g = objective.fun_grad(w, keep_cache=False)
    first = True
    if checkpoint is not None and checkpoint.holds("lbfgs"):
        saved = checkpoint.restore("lbfgs", n, ("S", "Y", "rho"))
        if saved["S"].shape != S.shape:
            raise InvalidInputError(f"the L-BFGS checkpoint holds {len(saved['S'])} pairs, memory is {memory}")
        S, Y, rho = saved["S"], saved["Y"], saved["rho"]
        kept, newest, gamma, first = int(saved["kept"]), int(saved["newest"]), float(saved["gamma"]), False
    evals_lost = 0              # evaluations of a failed line search before the steepest-descent retry
    while True:
        order = (np.arange(newest - kept + 1, newest + 1) % memory).astype(np.int64)
        lbfgs_direction(g, S, Y, rho, gamma, order, d)
        if kept == 0 or dot(g, d) >= 0:     # no pairs, or not a descent direction: steepest descent
            kept = 0
            np.negative(g, out=d)
        alpha0 = 1.0 / max(safe_norm(g), 1e-12) if (first or kept == 0) else 1.0
        first = False
        alpha, f_new, g_new, evals = wolfe_line_search(objective, w, f, g, d, min(alpha0, 1.0), trial=trial)
        if alpha == 0.0 and kept > 0:       # the quasi-Newton model misled the search: forget it once
            kept, evals_lost = 0, evals
            continue
        evals, evals_lost = evals + evals_lost, 0
        if alpha == 0.0:
            yield Step(w=w, f=f, grad_norm=safe_norm(g),
                       counters={"line_search_evals": evals}, done=True)
            return
        row = (newest + 1) % memory
        sy, yy = take_step(w, S[row], Y[row], alpha, d, g_new, g)
        f, g = f_new, g_new
        newest, kept, gamma = remember_pair(row, sy, yy, rho, newest, kept, gamma, memory)
        if checkpoint is not None:      # the ring changes again only after the next line search succeeded
            checkpoint.record("lbfgs", {"w": w, "S": S, "Y": Y, "rho": rho},
                              {"kept": kept, "newest": newest, "gamma": gamma})
        yield Step(w=w, f=f, grad_norm=safe_norm(g),
                   counters={"line_search_evals": evals, "step": alpha})
