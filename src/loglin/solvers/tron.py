"""TRON: trust-region Newton with conjugate gradient.

Lin, Weng & Keerthi (2008), "Trust region Newton method for large-scale
logistic regression", as applied to Maxent by Huang et al. (2010, section 5).
The Hessian is never formed: CG needs only Hessian-vector products, which the
objective computes in one pass from the cache of the last accepted gradient.
Constants are those of the paper (eta0 = 1e-4, eta1 = 0.25, eta2 = 0.75;
sigma1 = 0.25, sigma2 = 0.5, sigma3 = 4).

``precondition=a`` preconditions CG by the diagonal M = (1 - a) I + a diag(H)
of Hsia, Chiang & Lin (2018), "Preconditioned conjugate gradient methods in
truncated Newton frameworks for large-scale linear classification" (LIBLINEAR
uses a = 0.01); the trust region is then a ball in the M-norm
||s||_M = sqrt(s'Ms). The default a = 0 is the papers' plain CG: on our data
neither a = 0.01 nor a = 1 wins everywhere (docs/decisions/0005-tron-plain-cg-by-default.md), except
on low-dimensional binary LR (features < LOW_DIMENSIONAL x instances, a9a), where the default is a = 1
(docs/decisions/0023).
"""
import math

import numpy as np

from ..kernels.vector import dot, m_products, pcg_direction, pcg_step
from .base import Step
from .protocol import objective_kind
from .stopping import safe_norm

MAX_CG = 1000          # CG steps per outer iteration at most (exact arithmetic needs <= n)
ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0


def truncated_cg(objective, g, delta, cg_tol, m, max_steps=MAX_CG):
    """Approximately solve H s = -g inside ||s||_M <= delta (Steihaug's CG, preconditioned by diag(m)).

    Stops when ||r|| <= cg_tol (r = -g - H s, Euclidean as in LIBLINEAR), after ``max_steps``
    steps, or when the curvature d'Hd is not a positive finite number (overflowed data: no step
    can be trusted). Returns s, r and the CG iteration count. The vector updates are fused kernels
    (kernels.vector): no temporaries per CG step.
    """
    s = np.zeros_like(g)
    r = -g
    d = r / m
    r_z = dot(r, d)
    r_r = dot(r, r)
    iters = 0
    while math.sqrt(r_r) > cg_tol and iters < max_steps:
        iters += 1
        Hd = objective.hess_vec(d)
        curvature = dot(d, Hd)
        if not (0.0 < curvature < math.inf):
            break
        alpha = r_z / curvature
        s_ms, r_r, r_z_new = pcg_step(s, r, d, Hd, alpha, m)
        if math.sqrt(s_ms) > delta:
            # step back and go to the trust-region boundary along d
            pcg_step(s, r, d, Hd, -alpha, m)
            std, sts, dtd = m_products(s, d, m)
            rad = math.sqrt(std * std + dtd * (delta * delta - sts))
            alpha = (delta * delta - sts) / (std + rad) if std >= 0 else (rad - std) / dtd
            pcg_step(s, r, d, Hd, alpha, m)
            break
        pcg_direction(d, r, m, r_z_new / r_z)
        r_z = r_z_new
    return s, r, iters


def preconditioner(objective, mix):
    """diag(M) = (1 - mix) + mix diag(H) at the accepted point (all ones for mix = 0: plain CG)."""
    if mix == 0 or not hasattr(objective, "hess_diag"):
        return np.ones(objective.n)
    return (1.0 - mix) + mix * objective.hess_diag()


LOW_DIMENSIONAL = 0.05      # features / instances below which binary LR preconditions by diag(H) (0023)


def default_precondition(objective) -> float:
    """a = 1 on low-dimensional binary LR, else 0 (plain CG)."""
    problem = getattr(objective, "problem", None)
    if objective_kind(objective) != "binary" or problem is None or not hasattr(problem, "n_instances"):
        return 0.0
    return 1.0 if problem.n_features < LOW_DIMENSIONAL * problem.n_instances else 0.0


def tron(objective, w, rng, cg_tol: float = 0.1, precondition: float | None = None, max_cg: int = MAX_CG,
         checkpoint=None):
    """Outer iteration = one trust-region step (accepted or not). ``precondition``: the mix a of M
    (default :func:`default_precondition`); ``max_cg``: CG steps per outer iteration at most;
    ``checkpoint`` (:class:`~loglin.solvers.checkpoint.SolverCheckpoint`): the radius is recorded there after
    every iteration, and a radius recorded by an earlier run (at ``w``) is where this one starts."""
    if precondition is None:
        precondition = default_precondition(objective)
    if not 0 <= precondition <= 1:
        raise ValueError(f"precondition must be in [0, 1], got {precondition}")
    if not (isinstance(max_cg, (int, np.integer)) and max_cg >= 1):
        raise ValueError(f"max_cg must be a positive integer, got {max_cg!r}")
    f, g = objective.fun_grad(w)
    objective.accept()
    m = preconditioner(objective, precondition)
    delta = math.sqrt(dot(g, g / m))
    first = True
    if checkpoint is not None and checkpoint.holds("tron"):
        delta, first = float(checkpoint.restore("tron", objective.n, ())["delta"]), False
    while True:
        s, r, cg_iters = truncated_cg(objective, g, delta, cg_tol * safe_norm(g), m, int(max_cg))
        w_new = w + s
        gs = float(g @ s)
        predicted = -0.5 * (gs - float(s @ r))
        f_new, g_new = objective.fun_grad(w_new)
        actual = f - f_new
        s_norm = math.sqrt(m_products(s, s, m)[0])
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
            m = preconditioner(objective, precondition)
        stalled = (abs(actual) <= 0 and predicted <= 0) or (
            abs(actual) <= 1e-12 * abs(f) and abs(predicted) <= 1e-12 * abs(f))
        if checkpoint is not None:      # w is updated before accept(), which a lost shard can fail: a copy
            checkpoint.record("tron", {"w": w.copy()}, {"delta": delta})
        yield Step(w=w, f=f, grad_norm=safe_norm(g),
                   counters={"cg_iterations": cg_iters, "accepted": int(accepted), "delta": delta},
                   done=stalled)
