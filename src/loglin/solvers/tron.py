"""TRON: trust-region Newton with conjugate gradient.

Lin, Weng & Keerthi (2008), "Trust region Newton method for large-scale
logistic regression", as applied to Maxent by Huang et al. (2010, section 5).
The Hessian is never formed: CG needs only Hessian-vector products, which the
objective computes in one pass from the cache of the last accepted gradient.
Constants are those of the paper (eta0 = 1e-4, eta1 = 0.25, eta2 = 0.75;
sigma1 = 0.25, sigma2 = 0.5, sigma3 = 4).
"""
import math

import numpy as np

from ..kernels.vector import cg_direction, cg_step, dot
from .base import Step, register_solver

ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0


def truncated_cg(objective, g, delta, cg_tol):
    """Approximately solve H s = -g inside ||s|| <= delta (Steihaug's CG).

    Returns the step s, the residual r = -g - H s, and the CG iteration count.
    The vector updates are fused kernels (kernels.vector): no temporaries per CG step.
    """
    s = np.zeros_like(g)
    r = -g
    d = r.copy()
    r_r = dot(r, r)
    iters = 0
    while math.sqrt(r_r) > cg_tol:
        iters += 1
        Hd = objective.hess_vec(d)
        alpha = r_r / dot(d, Hd)
        s_s, r_r_new = cg_step(s, r, d, Hd, alpha)
        if math.sqrt(s_s) > delta:
            # step back and go to the trust-region boundary along d
            cg_step(s, r, d, Hd, -alpha)
            std, sts, dtd = dot(s, d), dot(s, s), dot(d, d)
            rad = math.sqrt(std * std + dtd * (delta * delta - sts))
            alpha = (delta * delta - sts) / (std + rad) if std >= 0 else (rad - std) / dtd
            cg_step(s, r, d, Hd, alpha)
            break
        cg_direction(d, r, r_r_new / r_r)
        r_r = r_r_new
    return s, r, iters


@register_solver("tron", summary="trust-region Newton-CG (Lin, Weng & Keerthi 2008)",
                 paper="Huang et al. 2010 sec. 5; Yu et al. 2011 sec. 6")
def tron(objective, w, rng, cg_tol: float = 0.1):
    """Outer iteration = one trust-region step (accepted or not)."""
    f, g = objective.fun_grad(w)
    objective.accept()
    delta = float(np.linalg.norm(g))
    first = True
    while True:
        s, r, cg_iters = truncated_cg(objective, g, delta, cg_tol * np.linalg.norm(g))
        w_new = w + s
        gs = float(g @ s)
        predicted = -0.5 * (gs - float(s @ r))
        f_new, g_new = objective.fun_grad(w_new)
        actual = f - f_new
        s_norm = float(np.linalg.norm(s))
        if first:
            delta = min(delta, s_norm)
            first = False
        # interpolate the step length that would minimize the 1-D quadratic fit
        denom = f_new - f - gs
        alpha = SIGMA3 if denom <= 0 else max(SIGMA1, -0.5 * gs / denom)
        if actual < ETA0 * predicted:
            delta = min(max(alpha, SIGMA1) * s_norm, SIGMA2 * delta)
        elif actual < ETA1 * predicted:
            delta = max(SIGMA1 * delta, min(alpha * s_norm, SIGMA2 * delta))
        elif actual < ETA2 * predicted:
            delta = max(SIGMA1 * delta, min(alpha * s_norm, SIGMA3 * delta))
        else:
            delta = max(delta, min(alpha * s_norm, SIGMA3 * delta))
        accepted = actual > ETA0 * predicted
        if accepted:
            w[:] = w_new
            f, g = f_new, g_new
            objective.accept()
        stalled = (abs(actual) <= 0 and predicted <= 0) or (
            abs(actual) <= 1e-12 * abs(f) and abs(predicted) <= 1e-12 * abs(f))
        yield Step(w=w, f=f, grad_norm=float(np.linalg.norm(g)),
                   counters={"cg_iterations": cg_iters, "accepted": int(accepted), "delta": delta},
                   done=stalled)
