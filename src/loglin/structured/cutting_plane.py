"""Cutting-plane training of M3N (structural SVM), the max-margin baseline of Collins et al. (2008), section 8.

SVM-struct (Tsochantaridis et al. 2004) in its 1-slack form (Joachims, Finley & Yu 2009),
which solves the same P-MM as EG with margin rescaling (sum of the n slacks = one slack):

    min_w 1/2 ||w||^2 + C xi   s.t.  w . a_k >= b_k - xi  for every cut k,
    a_k = sum_i c_i (f(x_i, y_i) - f(x_i, yhat_ik)),   b_k = sum_i c_i e(y_i, yhat_ik).

Each outer iteration decodes every sentence with loss-augmented inference (the
structure's argmax: Viterbi, Eisner, ...) at the current w (one pass = one effective iteration), adds the cut of those
labellings, and re-solves the dual of the working-set QP

    max_alpha  b . alpha - 1/2 ||sum_k alpha_k a_k||^2,   alpha >= 0,  sum_k alpha_k <= C

by pairwise (SMO) steps over the scaled simplex, warm-started; w = sum_k alpha_k a_k.
That dual value is a lower bound on min P-MM (it is the optimum of a relaxation),
so primal minus it is a valid duality gap, like EG's.
Stops when the new cut is violated by at most ``epsilon`` (relative to the
working-set objective) or when the driver's gap tolerance is met.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from ..errors import InvalidInputError
from ..solvers.base import Step
from .objective import StructuredObjective

QP_TOL = 1e-10
QP_MAX_STEPS = 200000


@njit(cache=True)
def simplex_qp_smo(G, b, a, tol, max_steps):
    """min 1/2 a'Ga - b'a over {a >= 0, sum a = const} by pairwise (SMO) steps; a updated in place."""
    m = b.shape[0]
    g = G @ a - b
    steps = 0
    for steps in range(max_steps):
        i, j = 0, -1
        for k in range(m):
            if g[k] < g[i]:
                i = k
            if a[k] > 0.0 and (j < 0 or g[k] > g[j]):
                j = k
        scale = 1.0
        for k in range(m):
            scale = max(scale, abs(g[k]))
        if j < 0 or g[j] - g[i] <= tol * scale:
            break
        curv = G[i, i] + G[j, j] - 2.0 * G[i, j]
        t = a[j] if curv <= 0.0 else min(a[j], (g[j] - g[i]) / curv)
        a[i] += t
        a[j] -= t
        for k in range(m):
            g[k] += t * (G[k, i] - G[k, j])
    return steps



def solve_simplex_qp(G, b, C, alpha, tol=QP_TOL, max_steps=QP_MAX_STEPS):
    """max b.a - 1/2 a'Ga over a >= 0, sum a <= C (slack coordinate implicit); alpha updated in place."""
    m = len(b)
    # slack coordinate m with a = 0, b = 0 turns "sum <= C" into "sum = C"
    Gs = np.zeros((m + 1, m + 1))
    Gs[:m, :m] = G
    bs = np.append(b, 0.0)
    a = np.append(alpha, max(C - alpha.sum(), 0.0))
    simplex_qp_smo(Gs, bs, a, tol, max_steps)
    alpha[:] = a[:m]
    return float(b @ alpha - 0.5 * alpha @ G @ alpha)


def structured_cutting_plane(objective, w, rng, epsilon=1e-6):
    return one_slack_cutting_plane(objective, w, epsilon)


def one_slack_cutting_plane(objective, w, epsilon):
    """The 1-slack loop for any max-margin StructuredObjective: its ``_pass`` (loss-augmented decoding)
    is the separation oracle."""
    if not isinstance(objective, StructuredObjective) or objective.loss != "mm":
        structure = getattr(objective, "structure", "structured")
        raise InvalidInputError(f"cutting-plane trains the max-margin (M3N) {structure} objective")
    return _one_slack_steps(objective, w, epsilon)


def _one_slack_steps(objective, w, epsilon):
    p = objective.problem
    C = objective.C
    cuts, b = [], []
    G = np.zeros((0, 0))
    alpha = np.zeros(0)
    qp_value = 0.0
    passes = 0
    while True:
        loss, expect = objective._pass(w, True)
        passes += 1
        a_new = p.emp - expect
        b_new = loss + float(w @ a_new)
        xi = max(0.0, float(np.max(np.array(b) - sp.vstack(cuts) @ w))) if cuts else 0.0
        violation = b_new - float(w @ a_new) - xi
        f = 0.5 * float(w @ w) + C * loss
        if cuts and violation <= epsilon * max(1.0, abs(f) / C):
            yield Step(w=w, f=f, dual=qp_value, counters={"effective_iterations": float(passes),
                                                          "cuts": len(cuts)}, done=True)
            return
        a_sparse = sp.csr_matrix(a_new)
        new_col = np.array([float(a_sparse.multiply(ak).sum()) for ak in cuts] + [float(a_new @ a_new)])
        m = len(cuts)
        G2 = np.empty((m + 1, m + 1))
        G2[:m, :m] = G
        G2[m, :] = new_col
        G2[:, m] = new_col
        G = G2
        cuts.append(a_sparse)
        b.append(b_new)
        alpha = np.append(alpha, 0.0)
        qp_value = solve_simplex_qp(G, np.array(b), C, alpha)
        w[:] = np.asarray(sp.vstack(cuts).T @ alpha).ravel()
        yield Step(w=w, dual=qp_value, counters={"effective_iterations": float(passes), "cuts": len(cuts)})
