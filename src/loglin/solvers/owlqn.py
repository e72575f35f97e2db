"""Orthant-wise limited-memory quasi-Newton (OWL-QN, Andrew & Gao 2007) for L1 / elastic-net objectives.

L-BFGS on the smooth part s(w) of F(w) = s(w) + sum_t l1_t |w_t| (:mod:`loglin.penalty`), with the
paper's three changes: the direction is -H v for the pseudo-gradient v, with the components whose
sign disagrees with -v set to 0 (section 3.2); each trial point is projected onto the orthant of
the current point (a coordinate that would cross zero stays at 0); and the backtracking line
search asks F(x) <= F(w) + gamma v.(x - w) (near the optimum, where that decrease is below F's
rounding, a smaller pseudo-gradient norm at x decides instead). The curvature pairs (s, y) come from the gradients of
s alone. On an objective without an L1 term (l1 = 0) it is L-BFGS with a backtracking search.
"""
import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..kernels.vector import dot, lbfgs_direction
from ..penalty import l1_norm, nonzeros, pseudo_gradient
from .base import Step
from .lbfgs import remember_pair
from .stopping import safe_norm

GAMMA = 1e-4            # sufficient decrease (Andrew & Gao's gamma)
BACKTRACK = 0.5         # step shrink factor per rejected trial
MAX_TRIALS = 60         # 0.5^60 ~ 1e-18: past this the step is below rounding
ROUNDING = 16 * np.finfo(float).eps     # |F(x) - F(w)| this small relative to F is rounding noise


@njit(cache=True)
def constrain_direction(d, v):
    """Zero the components of the direction d whose sign is not that of -v (the pseudo-gradient's)."""
    for t in range(d.shape[0]):
        if d[t] * v[t] >= 0.0:
            d[t] = 0.0


@njit(cache=True)
def orthant_step(out, w, alpha, d, v):
    """out = pi(w + alpha d): coordinates leaving the orthant of w (of -v where w_t = 0) are set to 0.
    Returns v.(out - w), the predicted change of the line search's test."""
    change = 0.0
    for t in range(w.shape[0]):
        x = w[t] + alpha * d[t]
        side = w[t] if w[t] != 0.0 else -v[t]
        out[t] = x if x * side > 0.0 else 0.0
        change += v[t] * (out[t] - w[t])
    return change


def owlqn(objective, w, rng, memory: int = 10):
    """Yield one OWL-QN iteration at a time; ``w`` is updated in place."""
    memory = int(memory)
    if memory < 1:
        raise InvalidInputError(f"memory must be at least 1, got {memory}")
    l1 = getattr(objective, "l1", None)
    l1 = np.zeros(objective.n) if l1 is None else l1
    smooth = getattr(objective, "smooth_fun_grad", None)
    smooth = smooth if smooth is not None else (lambda x, keep_cache=False: objective.fun_grad(x, keep_cache))
    n = w.shape[0]
    S, Y = np.empty((memory, n)), np.empty((memory, n))
    rho = np.empty(memory)
    d, v, trial, v_trial = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    kept, newest, gamma = 0, -1, 1.0
    s_w, g = smooth(w)
    F = s_w + l1_norm(w, l1)
    pseudo_gradient(g, w, l1, v)
    first = True
    while True:
        order = (np.arange(newest - kept + 1, newest + 1) % memory).astype(np.int64)
        lbfgs_direction(v, S, Y, rho, gamma, order, d)
        constrain_direction(d, v)
        if kept == 0 or dot(v, d) >= 0:         # no pairs, or no descent left after the sign constraint
            kept = 0
            np.negative(v, out=d)
        alpha = 1.0 / max(safe_norm(v), 1e-12) if (first or kept == 0) else 1.0
        alpha = min(alpha, 1.0)
        first = False
        accepted, evals = False, 0
        for _ in range(MAX_TRIALS):
            evals += 1
            predicted = orthant_step(trial, w, alpha, d, v)
            s_x, g_x = smooth(trial)
            F_x = s_x + l1_norm(trial, l1)
            if np.isfinite(F_x) and F_x <= F + GAMMA * predicted:
                accepted = True
                break
            if abs(F_x - F) <= ROUNDING * abs(F):       # the decrease is below F's rounding: let v decide
                pseudo_gradient(g_x, trial, l1, v_trial)
                if safe_norm(v_trial) < safe_norm(v):
                    accepted = True
                    break
            alpha *= BACKTRACK
        if accepted and np.array_equal(trial, w):
            accepted = False                    # a step below w's rounding: no progress is possible
        if not accepted:
            if kept > 0:                       # the quasi-Newton model misled the search: forget it once
                kept = 0
                continue
            yield Step(w=w, f=F, grad_norm=safe_norm(v), counters={"line_search_evals": evals,
                                                                   "nonzeros": nonzeros(w)}, done=True)
            return
        row = (newest + 1) % memory
        np.subtract(trial, w, out=S[row])
        np.subtract(g_x, g, out=Y[row])
        sy, yy = dot(S[row], Y[row]), dot(Y[row], Y[row])
        w[:] = trial
        F, g = F_x, g_x
        pseudo_gradient(g, w, l1, v)
        newest, kept, gamma = remember_pair(row, sy, yy, rho, newest, kept, gamma, memory)   # pairs of s
        yield Step(w=w, f=F, grad_norm=safe_norm(v),
                   counters={"line_search_evals": evals, "step": alpha, "nonzeros": nonzeros(w)})
