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

from .base import Step, register_solver

C1, C2 = 1e-4, 0.9


def two_loop(g, s_list, y_list, rho_list):
    """H_k g by the two-loop recursion, H_0 = (s'y / y'y) I."""
    q = g.copy()
    alphas = []
    for s, y, rho in zip(reversed(s_list), reversed(y_list), reversed(rho_list)):
        a = rho * float(s @ q)
        alphas.append(a)
        q -= a * y
    if s_list:
        q *= float(s_list[-1] @ y_list[-1]) / float(y_list[-1] @ y_list[-1])
    for (s, y, rho), a in zip(zip(s_list, y_list, rho_list), reversed(alphas)):
        b = rho * float(y @ q)
        q += (a - b) * s
    return q


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


def wolfe_line_search(objective, w, f, g, d, alpha, max_evals=25):
    """Return (alpha, f, g, evaluations) satisfying the strong Wolfe conditions."""
    gd0 = float(g @ d)
    prev_a, prev_f, prev_gd = 0.0, f, gd0
    evals = 0
    lo = hi = None
    while evals < max_evals:
        evals += 1
        f_a, g_a = objective.fun_grad(w + alpha * d, keep_cache=False)
        gd = float(g_a @ d)
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
        f_a, g_a = objective.fun_grad(w + alpha * d, keep_cache=False)
        gd = float(g_a @ d)
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


@register_solver("lbfgs", kinds=("maxent", "binary", "chain", "tree"), summary="limited-memory BFGS with a strong-Wolfe line search",
                 paper="Liu & Nocedal 1989; baseline in all three papers")
def lbfgs(objective, w, rng, memory: int = 10):
    f, g = objective.fun_grad(w, keep_cache=False)
    s_list, y_list, rho_list = [], [], []
    first = True
    while True:
        d = -two_loop(g, s_list, y_list, rho_list)
        if float(g @ d) >= 0:      # not a descent direction: restart from steepest descent
            s_list.clear(); y_list.clear(); rho_list.clear()
            d = -g
        alpha0 = 1.0 / max(np.linalg.norm(g), 1e-12) if first else 1.0
        first = False
        alpha, f_new, g_new, evals = wolfe_line_search(objective, w, f, g, d, min(alpha0, 1.0))
        if alpha == 0.0:
            yield Step(w=w, f=f, grad_norm=float(np.linalg.norm(g)),
                       counters={"line_search_evals": evals}, done=True)
            return
        s = alpha * d
        y = g_new - g
        sy = float(s @ y)
        w += s
        f, g = f_new, g_new
        if sy > 1e-10 * float(y @ y):
            s_list.append(s); y_list.append(y); rho_list.append(1.0 / sy)
            if len(s_list) > memory:
                s_list.pop(0); y_list.pop(0); rho_list.pop(0)
        yield Step(w=w, f=f, grad_norm=float(np.linalg.norm(g)),
                   counters={"line_search_evals": evals, "step": alpha})
