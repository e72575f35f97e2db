"""newGLMNET (Yuan, Ho & Lin 2012), LIBLINEAR -s 6's method, for L1 / elastic-net logistic regression.

F(w) = sum_t l1_t |w_t| + s(w), s(w) = 1/2 sum_t l2_t w_t^2 + sum_i C_i log(1 + exp(-y_i w.x_i))
(:mod:`loglin.penalty`: l1 = rho r, l2 = (1 - rho) r). Each outer iteration is one Newton step:

* the quadratic model q(d) = grad s.d + 1/2 d'Hd + sum_t l1_t |w_t + d_t|, H = X'DX + diag(l2) + nu I,
  D_i = C_i sigma_i (1 - sigma_i), is minimized by cyclic coordinate descent over the *working set*
  (weights that are non-zero or violate their optimality condition; the rest are optimal for the
  current gradient and stay at 0), each coordinate in closed form (soft thresholding, eq. (11) of
  the paper), keeping X d up to date so a coordinate costs one pass over its column;
* the inner passes stop once the model's violation (1-norm of its minimum-norm subgradient) is at
  most inner_tol times the outer violation at w0, or after MAX_INNER passes; inner_tol starts at
  1 and shrinks 4x whenever one pass met it, so early Newton steps are solved loosely and late
  ones accurately (the adaptive inner stopping of section 5);
* a backtracking line search on F with the sufficient decrease sigma * lambda * Delta,
  Delta = grad s.d + sum_t l1_t (|w_t + d_t| - |w_t|) (eq. (20), gamma = 0); near the optimum,
  where that decrease is below F's rounding, a smaller pseudo-gradient decides instead.
"""
import math

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..penalty import nonzeros, pseudo_gradient
from .base import Step
from .stopping import safe_norm

NU = 1e-12            # added to H's diagonal: a zero column still has a finite Newton step
SIGMA = 0.01          # sufficient decrease of the line search
BACKTRACK = 0.5
MAX_LINE_SEARCH = 40
MAX_INNER = 100       # coordinate passes per Newton step
ROUNDING = 16 * np.finfo(float).eps     # |F(x) - F(w)| this small relative to F is rounding noise
INNER_SHRINK = 0.25   # the inner tolerance tightens by this factor when one pass met it
RETRY_SHRINK = 0.01   # ... and by this one when the step it gave failed the line search
MAX_RETRIES = 5


@njit(cache=True)
def _margins_and_curvature(z, y, cost, sig_weight, D):
    """From z_i = y_i w.x_i: the loss sum_i C_i log(1 + e^{-z_i}), sig_weight_i = C_i (sigma_i - 1) y_i
    (the loss gradient is X' sig_weight) and D_i = C_i sigma_i (1 - sigma_i)."""
    loss = 0.0
    for i in range(z.shape[0]):
        if z[i] >= 0:
            e = math.exp(-z[i])
            loss += cost[i] * math.log1p(e)
            sigma = 1.0 / (1.0 + e)
        else:
            e = math.exp(z[i])
            loss += cost[i] * (math.log1p(e) - z[i])
            sigma = e / (1.0 + e)
        sig_weight[i] = cost[i] * (sigma - 1.0) * y[i]
        D[i] = cost[i] * sigma * (1.0 - sigma)
    return loss


@njit(cache=True)
def _gradient(indptr, indices, data, sig_weight, w, l2, out):
    """grad s = X' sig_weight + l2 * w, column by column (X in CSC)."""
    for j in range(out.shape[0]):
        acc = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            acc += data[k] * sig_weight[indices[k]]
        out[j] = acc + l2[j] * w[j]


@njit(cache=True)
def _violation(g, w, l1):
    """sum_t |v_t| for the pseudo-gradient v (the outer optimality measure in the 1-norm)."""
    total = 0.0
    for j in range(g.shape[0]):
        if w[j] > 0:
            v = abs(g[j] + l1[j])
        elif w[j] < 0:
            v = abs(g[j] - l1[j])
        else:
            v = max(g[j] - l1[j], -g[j] - l1[j], 0.0)
        total += v
    return total


@njit(cache=True)
def _newton_direction(indptr, indices, data, D, g, w, l1, l2, working, seed, max_inner, threshold, d, Xd):
    """Coordinate descent on the quadratic model over ``working`` in a fresh random order per pass;
    d and Xd (= X d) start at 0. A pass measures the model's violation sum_j |v_j| (its
    minimum-norm subgradient at the d it had when visiting j); the passes stop once it is
    <= threshold. Returns the number of passes."""
    np.random.seed(seed)
    n_work = working.shape[0]
    Hdiag = np.empty(n_work)
    for a in range(n_work):
        j = working[a]
        h = 0.0
        for k in range(indptr[j], indptr[j + 1]):
            h += D[indices[k]] * data[k] * data[k]
        Hdiag[a] = h + l2[j] + NU
    passes = 0
    order = np.arange(n_work)
    for _ in range(max_inner):
        passes += 1
        np.random.shuffle(order)
        violation = 0.0
        for a in order:
            j = working[a]
            H = Hdiag[a]
            G = g[j] + l2[j] * d[j]
            for k in range(indptr[j], indptr[j + 1]):
                i = indices[k]
                G += D[i] * data[k] * Xd[i]
            u = w[j] + d[j]
            if u > 0:
                violation += abs(G + l1[j])
            elif u < 0:
                violation += abs(G - l1[j])
            else:
                violation += max(G - l1[j], -G - l1[j], 0.0)
            if G + l1[j] <= H * u:
                z = -(G + l1[j]) / H
            elif G - l1[j] >= H * u:
                z = -(G - l1[j]) / H
            else:
                z = -u
            if z != 0.0:
                d[j] += z
                for k in range(indptr[j], indptr[j + 1]):
                    Xd[indices[k]] += z * data[k]
        if violation <= threshold:
            break
    return passes


@njit(cache=True)
def _l1_terms(w, d, l1, step):
    """(sum_t l1_t |w_t|, sum_t l1_t |w_t + step d_t|)."""
    now = 0.0
    after = 0.0
    for j in range(w.shape[0]):
        now += l1[j] * abs(w[j])
        after += l1[j] * abs(w[j] + step * d[j])
    return now, after


@njit(cache=True)
def _trial_loss(z, y, Xd, step, cost, z_out):
    """sum_i C_i log(1 + e^{-z_i'}) at z' = z + step y (X d), written to z_out."""
    loss = 0.0
    for i in range(z.shape[0]):
        zi = z[i] + step * y[i] * Xd[i]
        z_out[i] = zi
        if zi >= 0:
            loss += cost[i] * math.log1p(math.exp(-zi))
        else:
            loss += cost[i] * (math.log1p(math.exp(zi)) - zi)
    return loss


def newglmnet(objective, w, rng, max_inner: int = MAX_INNER):
    """Yield one Newton step (inner CD + line search) at a time; ``w`` is updated in place."""
    if not 1 <= int(max_inner) <= 10 ** 6:
        raise InvalidInputError(f"max_inner must be an integer in [1, 1e6], got {max_inner}")
    max_inner = int(max_inner)
    problem = objective.problem
    X = problem.X.tocsc()
    X.sort_indices()
    indptr, indices, data = X.indptr, X.indices, X.data
    y = problem.y.astype(np.float64)
    cost = problem.cost
    l1 = getattr(objective, "l1", None)
    l1 = np.zeros(w.shape[0]) if l1 is None else l1
    l2 = np.asarray(objective.reg, dtype=np.float64)
    m = X.shape[0]
    z = y * (problem.X @ w)
    sig_weight, D, z_trial = np.empty(m), np.empty(m), np.empty(m)
    g, d, Xd = np.empty(w.shape[0]), np.empty(w.shape[0]), np.empty(m)
    sig_trial, D_trial, g_trial = np.empty(m), np.empty(m), np.empty(w.shape[0])
    loss = _margins_and_curvature(z, y, cost, sig_weight, D)
    _gradient(indptr, indices, data, sig_weight, w, l2, g)
    F = loss + 0.5 * float(np.dot(l2 * w, w)) + _l1_terms(w, w, l1, 0.0)[0]
    inner_tol, retries = 1.0, 0
    first_violation = _violation(g, w, l1)
    while True:
        working = np.flatnonzero((w != 0) | (g > l1) | (g < -l1)).astype(np.int64)
        d[:] = 0.0
        Xd[:] = 0.0
        passes = _newton_direction(indptr, indices, data, D, g, w, l1, l2, working,
                                   int(rng.integers(0, 2 ** 31)), max_inner, inner_tol * first_violation, d, Xd)
        if passes == 1:                 # the model was solved loosely at once: ask more of the next one
            inner_tol *= INNER_SHRINK
        l1_now, l1_full = _l1_terms(w, d, l1, 1.0)
        delta = float(np.dot(g, d)) + l1_full - l1_now
        step, accepted = 1.0, False
        for trial in range(MAX_LINE_SEARCH):
            loss_t = _trial_loss(z, y, Xd, step, cost, z_trial)
            wd = w + step * d
            F_t = loss_t + 0.5 * float(np.dot(l2 * wd, wd)) + _l1_terms(wd, wd, l1, 0.0)[0]
            if F_t <= F + SIGMA * step * delta:
                accepted = True
                break
            if abs(F_t - F) <= ROUNDING * abs(F):       # a decrease below F's rounding: the pseudo-gradient decides
                _margins_and_curvature(z_trial, y, cost, sig_trial, D_trial)
                _gradient(indptr, indices, data, sig_trial, wd, l2, g_trial)
                if _pseudo_norm(g_trial, wd, l1) < _pseudo_norm(g, w, l1):
                    accepted = True
                    break
            step *= BACKTRACK
        if (not accepted or delta >= 0) and retries < MAX_RETRIES and passes < max_inner:
            retries += 1                # a loosely solved model misled the step: solve it more accurately
            inner_tol *= RETRY_SHRINK
            continue
        if not accepted or delta >= 0:
            yield Step(w=w, f=F, grad_norm=_pseudo_norm(g, w, l1), counters={"inner_passes": passes,
                       "line_search_evals": trial + 1, "nonzeros": nonzeros(w)}, done=True)
            return
        retries = 0
        w[:] = wd
        z, z_trial = z_trial, z
        F = F_t
        _margins_and_curvature(z, y, cost, sig_weight, D)
        _gradient(indptr, indices, data, sig_weight, w, l2, g)
        yield Step(w=w, f=F, grad_norm=_pseudo_norm(g, w, l1),
                   counters={"inner_passes": passes, "line_search_evals": trial + 1, "step": step,
                             "working_set": int(working.shape[0]), "nonzeros": nonzeros(w)})


def _pseudo_norm(g, w, l1):
    v = np.empty_like(g)
    pseudo_gradient(g, w, l1, v)
    return safe_norm(v)
