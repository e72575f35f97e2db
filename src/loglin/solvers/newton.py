"""Newton's method with the Hessian formed, for binary LR with few features.

When the features are few (n in the hundreds) and the instances many, the n x n Hessian
X^T D X + diag(reg) costs about one pass over the rows that adds each row's non-zero pairs,
and its Cholesky factor O(n^3 / 3) is negligible: an exact Newton direction then costs less
than the tens of Hessian-vector products of truncated Newton-CG (TRON; Lin, Weng & Keerthi 2008,
whose CG on a9a takes ~40 products per outer step). Newton's quadratic convergence
(Nocedal & Wright 2006, Theorem 3.5) needs ~6 steps from w = 0 to rounding.

The first steps use a sub-sampled Hessian (Byrd, Chin, Neveitt & Nocedal 2011): every k-th row,
scaled by k, with k = ``strides`` (default 4, 2, then 1). Far from the optimum the curvature of a
quarter of the rows directs the step as well as all of them; near it the full Hessian gives the
quadratic tail. Every step is globalized by backtracking on the sufficient decrease
f(w + a s) <= f(w) + c a g's (Armijo, c = 1e-4), halving a from 1.
"""
from __future__ import annotations

import numpy as np

from ..kernels.vector import cholesky_solve
from .base import Step
from .stopping import safe_norm

ARMIJO = 1e-4
MAX_HALVINGS = 40
DEFAULT_STRIDES = (4, 2, 1)
MAX_FEATURES = 2000         # the dense Hessian is n x n per thread: 32 MB at 2000


def newton_direction(hessian, g):
    """-H^{-1} g from the lower triangle of H (Cholesky, compiled; H is overwritten); a tiny ridge if
    rounding leaves H singular (an unregularized weight whose feature is nowhere non-zero)."""
    diag = np.diag(hessian).copy()
    scale = float(np.max(np.abs(diag))) or 1.0
    s = np.empty_like(g)
    keep = hessian.copy()
    ridge = 0.0
    for _ in range(8):
        if cholesky_solve(hessian, g, s) and np.all(np.isfinite(s)):
            return -s
        ridge = max(ridge * 100.0, 1e-12 * scale)
        hessian[:] = keep
        hessian[np.diag_indices_from(hessian)] = diag + ridge
    return -g / scale


def newton(objective, w, rng, strides=DEFAULT_STRIDES):
    """Outer iteration = one Newton step with backtracking. ``strides``: the Hessian of the k-th
    step uses every strides[k]-th row (the last entry repeats; (1,) is plain Newton)."""
    strides = tuple(int(k) for k in np.atleast_1d(strides))
    if not strides or min(strides) < 1:
        raise ValueError(f"strides must be positive integers, got {strides!r}")
    if objective.n > MAX_FEATURES:
        raise ValueError(f"newton forms the n x n Hessian: {objective.n} features is more than "
                         f"{MAX_FEATURES}; use tron")
    f, g = objective.fun_grad(w)
    objective.accept()
    k = 0
    while True:
        s = newton_direction(objective.hessian(strides[min(k, len(strides) - 1)]), g)
        k += 1
        gs = float(g @ s)
        if not gs < 0:                                  # no descent direction left: at the optimum
            yield Step(w=w, f=f, grad_norm=safe_norm(g), done=True)
            return
        a, halvings = 1.0, 0
        while True:
            f_new, g_new = objective.fun_grad(w + a * s)
            if f_new <= f + ARMIJO * a * gs or halvings >= MAX_HALVINGS:
                break
            a *= 0.5
            halvings += 1
        improved = f_new < f
        stalled = not improved or abs(f - f_new) <= 1e-15 * abs(f)
        if improved:
            w += a * s
            f, g = f_new, g_new
            objective.accept()
        yield Step(w=w, f=f, grad_norm=safe_norm(g), counters={"step_length": a, "halvings": halvings},
                   done=stalled)
