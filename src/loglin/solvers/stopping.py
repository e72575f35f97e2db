"""When a run has converged: one optimality test for every solver and every scale of data.

LIBLINEAR's relative rule ||grad f(w)|| <= tol ||grad f(0)|| alone is fooled by scale: one
large feature value inflates ||grad f(0)|| and the test passes far from the optimum (or
||grad f(0)|| overflows to inf and every point passes). The objectives here are
mu-strongly convex with mu = min(reg) (1/2 sum reg_j w_j^2 plus a convex loss), so for any
(sub)gradient g at w

    f(w) - f* <= ||g||^2 / (2 mu)                                   (certificate)

and the dual objective D(alpha) <= f* of the dual solvers gives f(w) - f* <= f(w) - D(alpha).
The rule: **converged** when a certified bound on f(w) - f* is at most ``f_tol * |f(w)|`` and,
for the gradient route, LIBLINEAR's relative test holds as well (the user's ``tol``):

* gradient route: ||g|| <= tol ||g0|| (skipped when ||g0|| is not finite) and
  ||g||^2 / (2 mu) <= f_tol |f|;
* duality-gap route: f - D <= gap_tol |f| (gap_tol defaults to f_tol for solvers that stop
  on their own test and report a dual);
* a solver that stops by itself (its own test, or no progress possible) has converged when
  either certificate holds there.

The certificate is loose when the loss has large curvature (large C), so a first-order method
may need more iterations than the relative test alone asked for; a run that cannot certify
ends with ``converged=False`` and a :class:`~loglin.errors.ConvergenceWarning`, never silently.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..kernels.vector import dot


def safe_norm(v) -> float:
    """Euclidean norm without overflow of the squares (scaled by max |v_i| first); inf/NaN propagate."""
    v = np.asarray(v, dtype=np.float64)
    if v.size == 0:
        return 0.0
    top = float(np.max(np.abs(v)))
    if not math.isfinite(top):
        return float("nan") if np.isnan(v).any() else float("inf")
    if top == 0.0:
        return 0.0
    scaled = (v / top).ravel()
    return top * math.sqrt(float(dot(scaled, scaled)))       # Numba's: np.dot would wake BLAS threads


def strong_convexity(objective) -> float:
    """mu with f mu-strongly convex: the smallest regularization weight (0 if some weight is free)."""
    reg = getattr(objective, "reg", None)
    if reg is None or len(reg) == 0:
        return 0.0
    return max(0.0, float(np.min(reg)))


# The L1 dual point (the loss gradient's dual scaled into the constraints) is off by the largest
# pseudo-gradient entry, so its gap is first order in it: near 1e-8 relative, newGLMNET's steps fall
# below F's rounding before the gap does (0041). A tighter f_tol is met through this floor.
L1_GAP_FLOOR = 1e-7


@dataclass
class Verdict:
    converged: bool
    reason: str = ""
    scale_blocked: bool = False     # the relative test held but the certificate did not: a scale problem


@dataclass
class StoppingRule:
    """See the module docstring. ``tol = 0`` turns the gradient route off (dual solvers' runs)."""

    tol: float
    g0_norm: float
    mu: float
    f_tol: float
    gap_tol: float | None = None

    def certified_by_gradient(self, f: float, gnorm: float, gap: float | None = None) -> bool:
        """||g||^2 / (2 mu) <= f_tol |f|, compared as ||g|| <= sqrt(2 mu f_tol |f|) (no overflow). Without
        strong convexity (pure L1) a known duality gap must be at most max(f_tol, L1_GAP_FLOOR) |f| instead."""
        if self.mu <= 0:
            if gap is not None and math.isfinite(gap):
                return gap <= max(self.f_tol, L1_GAP_FLOOR) * abs(f)
            return True             # no certificate exists: the relative test decides alone
        return gnorm <= math.sqrt(2.0 * self.mu * self.f_tol) * math.sqrt(abs(f))

    def check(self, f: float, gnorm: float, gap: float | None, finished: bool = False) -> Verdict:
        """Test (f, ||g||, gap) at one iterate. ``finished``: the solver's own test says it is done (or it
        can make no progress); that counts only if a certificate holds there, and then even when the
        relative test asks for more than rounding allows."""
        if not (math.isfinite(f) and math.isfinite(gnorm)):
            return Verdict(False)
        gap_tol = self.gap_tol if self.gap_tol is not None else (self.f_tol if finished else None)
        if gap_tol is not None and gap is not None and math.isfinite(gap) and gap <= gap_tol * abs(f):
            return Verdict(True, "solver finished" if finished else "duality gap tolerance")
        relative = self.tol > 0 and (not math.isfinite(self.g0_norm) or gnorm <= self.tol * self.g0_norm)
        if finished:        # stalled at rounding level: the certificate decides (the relative test if none)
            certificate = self.mu > 0 or (gap is not None and math.isfinite(gap))
            if self.certified_by_gradient(f, gnorm, gap) and (certificate or relative or self.tol == 0):
                return Verdict(True, "solver finished")
        elif relative:
            if self.certified_by_gradient(f, gnorm, gap):
                return Verdict(True, "gradient tolerance")
            return Verdict(False, scale_blocked=True)
        return Verdict(False)


def advice(solver: str, reason: str, iterations: int, f: float, gnorm: float, g0_norm: float, tol: float,
           scale_blocked: bool, signal_name: str | None = None, flat: bool = True, rel_gap: float | None = None,
           gap_tol: float | None = None, penalty: str = "l2", kind: str | None = None) -> str:
    """The ConvergenceWarning's text: what happened and what the user can do about it. A dual solver
    (``rel_gap`` known) is described by its relative duality gap, and by the gradient only if tol > 0. With an
    L1 ``penalty`` the other solvers named are those of the table that handle it for ``kind``."""
    rel = gnorm / g0_norm if g0_norm > 0 and math.isfinite(g0_norm) else float("nan")
    measures = []
    if rel_gap is not None:
        measures.append(f"relative duality gap = {rel_gap:.2e}" + (f" (gap_tol = {gap_tol:g})" if gap_tol else ""))
    if rel_gap is None or tol > 0:
        measures.append(f"||grad|| = {gnorm:.3g}, ||grad|| / ||grad(0)|| = {rel:.2e} (tol = {tol:g})")
    head = (f"{solver} stopped ({reason}) after {iterations} iterations without a verified optimum: "
            f"f = {f:.8g}, {', '.join(measures)}.")
    tips = []
    sparse = penalty in ("l1", "elasticnet")
    if scale_blocked and sparse and rel_gap is not None:
        tips.append("the relative pseudo-gradient test held but the duality gap, which certifies the optimum at "
                    "any scale of the features, is still above the tolerance")
    elif scale_blocked:
        tips.append("the relative gradient test held but the gradient is still large for this objective, "
                    "which happens when feature values span many orders of magnitude: scale the features "
                    "(e.g. to [-1, 1]) or lower the bias value")
    if reason == "interrupted":
        tips.append(f"the best model so far is kept{f' (stopped by {signal_name})' if signal_name else ''}")
    elif reason in ("max_iter", "time limit"):
        tips.append("raise the iteration or time limit")
    elif reason.startswith("diverged"):
        tips.append("the objective overflowed: scale the features or lower C")
    elif reason.startswith("solver stopped"):
        tips.append("the solver could make no more progress, which badly scaled features often cause: "
                    "scale them, or lower C")
    elif reason != "callback":
        tips.append("loosen tol")
    if sparse and reason != "interrupted":
        from . import serving               # the table's L1 solvers (lbfgs, tron and the dual methods are L2 only)
        others = [s for s in serving(kind, "ll", penalty) if s != solver] if kind else []
        if others:
            tips.append(f"try another solver for penalty {penalty!r} ({', '.join(others)})")
    elif solver == "tron" and reason != "interrupted":
        tips.append("try TRON with diagonal preconditioning (-O precondition=0.01), which copes with "
                    "badly scaled features, or another solver (lbfgs) as a cross-check")
    elif reason != "interrupted":
        others = (" (tron: second order)" if flat else " (eg: the dual, with a gap certificate)" if solver == "lbfgs"
                  else " (lbfgs for a CRF; bcfw, eg or cutting-plane for an M3N)")
        tips.append("try another solver" + others)
    return head + " " + "; ".join(tips) + "."
