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

CG stops when ||r|| <= eta_k ||g_k||. On binary LR the forcing term is eta_k = min(0.3, (||g_k|| / ||g_0||)^(1/4))
(loose while far from w*, tightening as the gradient falls: Dembo, Eisenstat & Steihaug 1982 give a
superlinear rate for eta_k -> 0), and the trust region starts unbounded: it takes its first finite radius
from the first rejected step (actual < eta0 x predicted reduction), so until then TRON takes the truncated Newton
steps as they come. Elsewhere eta_k = 0.1 and the first radius is ||g_0||, cut to the first step's length,
as in Lin et al. (2008) (docs/decisions/0060).
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


def default_forcing(objective) -> tuple[float, float, float]:
    """(cg_tol, forcing, radius) for ``objective``: (0.3, 0.25, inf) on binary LR, else (0.1, 0, 1)
    (docs/decisions/0060)."""
    if objective_kind(objective) == "binary":
        return 0.3, 0.25, math.inf
    return 0.1, 0.0, 1.0


def tron(objective, w, rng, cg_tol: float | None = None, precondition: float | None = None, max_cg: int = MAX_CG,
         checkpoint=None, forcing: float | None = None, radius: float | None = None):
    """Outer iteration = one trust-region step (accepted or not). ``precondition``: the mix a of M
    (default :func:`default_precondition`); ``max_cg``: CG steps per outer iteration at most;
    ``cg_tol``, ``forcing``: CG stops when ||r|| <= min(cg_tol, (||g|| / ||g_0||)^forcing) ||g|| (forcing 0: a
    fixed cg_tol); ``radius``: the first trust region is radius * ||g_0||_M^-1, cut to the first step's length
    when finite (defaults: :func:`default_forcing`);
    ``checkpoint`` (:class:`~loglin.solvers.checkpoint.SolverCheckpoint`): the radius is recorded there after
    every iteration, and a radius recorded by an earlier run (at ``w``) is where this one starts."""
    defaults = default_forcing(objective)
    cg_tol = defaults[0] if cg_tol is None else cg_tol
    forcing = defaults[1] if forcing is None else forcing
    radius = defaults[2] if radius is None else radius
    if precondition is None:
        precondition = default_precondition(objective)
    if not 0 <= precondition <= 1:
        raise ValueError(f"precondition must be in [0, 1], got {precondition}")
    if not (isinstance(max_cg, (int, np.integer)) and max_cg >= 1):
        raise ValueError(f"max_cg must be a positive integer, got {max_cg!r}")
    if not 0 <= forcing <= 1:
        raise ValueError(f"forcing must be in [0, 1], got {forcing}")
    if not radius > 0:
        raise ValueError(f"radius must be positive, got {radius}")
    f, g = objective.fun_grad(w)
    objective.accept()
    m = preconditioner(objective, precondition)
    delta = radius * math.sqrt(dot(g, g / m))
    first = math.isfinite(delta)
    g0_norm = safe_norm(g)
    if checkpoint is not None and checkpoint.holds("tron"):
        state = checkpoint.restore("tron", objective.n, ())
        delta, first = float(state["delta"]), False
        g0_norm = float(state.get("g0_norm", g0_norm))
    while True:
        g_norm = safe_norm(g)
        eta = cg_tol if forcing == 0 or not g0_norm > 0 else min(cg_tol, (g_norm / g0_norm) ** forcing)
        s, r, cg_iters = truncated_cg(objective, g, delta, eta * g_norm, m, int(max_cg))
        w_new = w + s
        gs = dot(g, s)
        predicted = -0.5 * (gs - dot(s, r))
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
            checkpoint.record("tron", {"w": w.copy()}, {"delta": delta, "g0_norm": g0_norm})
        # delta 0 in the trace: no bound yet (an infinite radius would not be valid JSON in the trace files)
        yield Step(w=w, f=f, grad_norm=safe_norm(g),
                   counters={"cg_iterations": cg_iters, "accepted": int(accepted),
                             "delta": delta if math.isfinite(delta) else 0.0},
                   done=stalled)
