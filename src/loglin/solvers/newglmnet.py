"""newGLMNET (Yuan, Ho & Lin 2012), LIBLINEAR -s 6's method, for L1 / elastic-net logistic regression.

F(w) = sum_t l1_t |w_t| + s(w), s(w) = 1/2 sum_t l2_t w_t^2 + sum_i C_i log(1 + exp(-y_i w.x_i))
(:mod:`loglin.penalty`: l1 = rho r, l2 = (1 - rho) r). Each outer iteration is one Newton step:

* one kernel pass computes grad s, the pseudo-gradient's 1-, max- and 2-norms and the *working
  set* with the paper's outer shrinking (section 5): a weight at 0 whose gradient is well inside
  its subdifferential, |grad_t| < l1_t - M_out / l (M_out the previous step's largest violation,
  l the number of examples), stays at 0 for this step; everything else enters (the first step,
  with no M_out yet, takes the weights that are non-zero or violate their optimality condition);
* the quadratic model q(d) = grad s.d + 1/2 d'Hd + sum_t l1_t |w_t + d_t|, H = X'DX + diag(l2) + nu I,
  D_i = C_i sigma_i (1 - sigma_i), is minimized by cyclic coordinate descent over the working set,
  each coordinate in closed form (soft thresholding, eq. (11)), keeping X d up to date so a
  coordinate costs one pass over its column; the inner level shrinks too (a coordinate at
  w_t + d_t = 0 with |G_t| < l1_t - M_in / l, M_in the previous pass's largest violation, leaves
  the passes until they stop, when the full working set is checked once more);
* the inner passes stop once the model's violation (1-norm of its minimum-norm subgradient) is at
  most inner_tol times the outer violation at w0, or after MAX_INNER passes; inner_tol starts at
  1 and shrinks 4x whenever one pass met it (the adaptive inner stopping of section 5);
* a backtracking line search on F with the sufficient decrease sigma * lambda * Delta,
  Delta = grad s.d + sum_t l1_t (|w_t + d_t| - |w_t|) (eq. (20), gamma = 0); F's penalty part is
  updated over the working set only (d is 0 elsewhere) and the trial pass over the examples also
  gives the next sigma-weights and D; near the optimum, where that decrease is below F's rounding,
  a smaller pseudo-gradient decides instead.
No BLAS call is made in the loop: the kernels do every O(n) and O(l) sum.
"""
import math

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from ..penalty import nonzeros
from .base import Step

NU = 1e-12            # added to H's diagonal: a zero column still has a finite Newton step
SIGMA = 0.01          # sufficient decrease of the line search
BACKTRACK = 0.5
MAX_LINE_SEARCH = 40
MAX_INNER = 100       # coordinate passes per Newton step
ROUNDING = 16 * np.finfo(float).eps     # |F(x) - F(w)| this small relative to F is rounding noise
INNER_SHRINK = 0.25   # the inner tolerance tightens by this factor when one pass met it
RETRY_SHRINK = 0.01   # ... and by this one when the step it gave failed the line search
MAX_RETRIES = 5
STALL_STEPS = 30      # Newton steps within F's rounding that may pass without a new smallest pseudo-gradient ...
STALL_FRACTION = 0.9  # ... (below this fraction of the smallest so far) before the solver reports it is done


@njit(cache=True)
def _log1p_exp_neg(zi):
    """(log(1 + e^{-z}), sigma(z))."""
    if zi >= 0:
        e = math.exp(-zi)
        return math.log1p(e), 1.0 / (1.0 + e)
    e = math.exp(zi)
    return math.log1p(e) - zi, e / (1.0 + e)


@njit(cache=True)
def _margins_and_curvature(z, y, cost, sig_weight, D):
    """From z_i = y_i w.x_i: the loss sum_i C_i log(1 + e^{-z_i}), sig_weight_i = C_i (sigma_i - 1) y_i
    (the loss gradient is X' sig_weight) and D_i = C_i sigma_i (1 - sigma_i)."""
    loss = 0.0
    for i in range(z.shape[0]):
        term, sigma = _log1p_exp_neg(z[i])
        loss += cost[i] * term
        sig_weight[i] = cost[i] * (sigma - 1.0) * y[i]
        D[i] = cost[i] * sigma * (1.0 - sigma)
    return loss


@njit(cache=True)
def _pseudo_component(g, w, l1):
    """The minimum-norm subgradient's component (Andrew & Gao 2007, section 3.2)."""
    if w > 0:
        return g + l1
    if w < 0:
        return g - l1
    if g + l1 < 0:
        return g + l1
    if g - l1 > 0:
        return g - l1
    return 0.0


@njit(cache=True)
def _column_dot(start, end, values, indices, vector):
    """sum_k values[k] vector[indices[k]] over k in [start, end), in four partial sums: no single
    chain of dependent additions bounds the loop's speed."""
    a0 = a1 = a2 = a3 = 0.0
    k = start
    while k + 4 <= end:
        a0 += values[k] * vector[indices[k]]
        a1 += values[k + 1] * vector[indices[k + 1]]
        a2 += values[k + 2] * vector[indices[k + 2]]
        a3 += values[k + 3] * vector[indices[k + 3]]
        k += 4
    while k < end:
        a0 += values[k] * vector[indices[k]]
        k += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True)
def _unit_column_dot(start, end, weights, indices, vector):
    """sum_k weights[i] vector[i], i = indices[k]: a column whose values are all 1 (binary features)
    needs no value array, and its D X column is D itself."""
    a0 = a1 = a2 = a3 = 0.0
    k = start
    while k + 4 <= end:
        i0, i1, i2, i3 = indices[k], indices[k + 1], indices[k + 2], indices[k + 3]
        a0 += weights[i0] * vector[i0]
        a1 += weights[i1] * vector[i1]
        a2 += weights[i2] * vector[i2]
        a3 += weights[i3] * vector[i3]
        k += 4
    while k < end:
        i0 = indices[k]
        a0 += weights[i0] * vector[i0]
        k += 1
    return (a0 + a1) + (a2 + a3)


@njit(cache=True)
def _unit_columns(indptr, data):
    """Which columns hold only the value 1."""
    unit = np.ones(indptr.shape[0] - 1, dtype=np.bool_)
    for j in range(unit.shape[0]):
        for k in range(indptr[j], indptr[j + 1]):
            if data[k] != 1.0:
                unit[j] = False
                break
    return unit


@njit(cache=True)
def _gradient_and_working_set(indptr, indices, data, sig_weight, w, l1, l2, shrink_margin, g, working):
    """grad s = X' sig_weight + l2 * w column by column (X in CSC) into g, and in the same pass the
    working set (w_t != 0 or |grad_t| >= l1_t - shrink_margin) into working[:count]. Returns
    (count, 1-norm, max-norm, 2-norm of the pseudo-gradient); the 2-norm is scaled by the max
    against overflow, inf / NaN propagate."""
    count = 0
    total = 0.0
    top = 0.0
    bad = False
    for j in range(g.shape[0]):
        gj = _column_dot(indptr[j], indptr[j + 1], data, indices, sig_weight) + l2[j] * w[j]
        g[j] = gj
        v = abs(_pseudo_component(gj, w[j], l1[j]))
        if not v <= 1.7976931348623157e308:
            bad = True
        total += v
        top = max(top, v)
        if w[j] != 0.0 or abs(gj) >= l1[j] - shrink_margin:
            working[count] = j
            count += 1
    if bad or top == 0.0:
        return count, total, top, total if bad else 0.0
    squares = 0.0
    for j in range(g.shape[0]):
        s = _pseudo_component(g[j], w[j], l1[j]) / top
        squares += s * s
    return count, total, top, top * math.sqrt(squares)


@njit(cache=True)
def _newton_direction(indptr, indices, data, unit, D, g, w, l1, l2, working, m, seed, max_inner, threshold,
                      d, Xd, DX):
    """Coordinate descent on the quadratic model over ``working`` in a fresh random order per pass,
    with inner shrinking; d (on ``working``) and Xd (= X d) are zeroed first. A pass measures the
    model's violation sum_j |v_j| (its minimum-norm subgradient at the d it had when visiting j);
    the passes stop once it is <= threshold over the whole working set. Returns the passes."""
    np.random.seed(seed)
    n_work = working.shape[0]
    for i in range(Xd.shape[0]):
        Xd[i] = 0.0
    Hdiag = np.empty(n_work)
    for a in range(n_work):
        j = working[a]
        d[j] = 0.0
        h = 0.0
        if unit[j]:
            for k in range(indptr[j], indptr[j + 1]):
                h += D[indices[k]]
        else:
            for k in range(indptr[j], indptr[j + 1]):
                DX[k] = D[indices[k]] * data[k]     # column j of D X: one gather less per inner visit
                h += DX[k] * data[k]
        Hdiag[a] = h + l2[j] + NU
    passes = 0
    active = np.arange(n_work)
    n_active = n_work
    shrink_margin = np.inf
    while passes < max_inner:
        passes += 1
        for s in range(n_active - 1, 0, -1):          # Fisher-Yates over the active prefix
            r = np.random.randint(0, s + 1)
            active[s], active[r] = active[r], active[s]
        violation = 0.0
        largest = 0.0
        s = 0
        while s < n_active:
            a = active[s]
            j = working[a]
            H = Hdiag[a]
            if unit[j]:
                G = g[j] + l2[j] * d[j] + _unit_column_dot(indptr[j], indptr[j + 1], D, indices, Xd)
            else:
                G = g[j] + l2[j] * d[j] + _column_dot(indptr[j], indptr[j + 1], DX, indices, Xd)
            u = w[j] + d[j]
            if u > 0:
                v = abs(G + l1[j])
            elif u < 0:
                v = abs(G - l1[j])
            else:
                v = max(G - l1[j], -G - l1[j], 0.0)
                if v == 0.0 and abs(G) < l1[j] - shrink_margin:   # well inside: leave the passes
                    n_active -= 1
                    active[s], active[n_active] = active[n_active], active[s]
                    continue
            violation += v
            largest = max(largest, v)
            if G + l1[j] <= H * u:
                z = -(G + l1[j]) / H
            elif G - l1[j] >= H * u:
                z = -(G - l1[j]) / H
            else:
                z = -u
            if z != 0.0:
                d[j] += z
                if unit[j]:
                    for k in range(indptr[j], indptr[j + 1]):
                        Xd[indices[k]] += z
                else:
                    for k in range(indptr[j], indptr[j + 1]):
                        Xd[indices[k]] += z * data[k]
            s += 1
        if violation <= threshold:
            if n_active == n_work:
                break
            n_active = n_work                         # check the shrunk coordinates once more
            shrink_margin = np.inf
            continue
        shrink_margin = largest / m
    return passes


@njit(cache=True)
def _penalty(w, l1, l2):
    """sum_t l1_t |w_t| + 1/2 l2_t w_t^2."""
    total = 0.0
    for j in range(w.shape[0]):
        total += l1[j] * abs(w[j]) + 0.5 * l2[j] * w[j] * w[j]
    return total


@njit(cache=True)
def _direction_terms(working, g, w, d, l1):
    """(grad s.d, sum_t l1_t (|w_t + d_t| - |w_t|)) over the working set (d is 0 elsewhere)."""
    gd = 0.0
    l1_change = 0.0
    for a in range(working.shape[0]):
        j = working[a]
        gd += g[j] * d[j]
        l1_change += l1[j] * (abs(w[j] + d[j]) - abs(w[j]))
    return gd, l1_change


@njit(cache=True)
def _penalty_change(working, w, d, l1, l2, step):
    """The penalty at w + step d minus the one at w, over the working set."""
    change = 0.0
    for a in range(working.shape[0]):
        j = working[a]
        x = w[j] + step * d[j]
        change += l1[j] * (abs(x) - abs(w[j])) + 0.5 * l2[j] * (x * x - w[j] * w[j])
    return change


@njit(cache=True)
def _trial_loss(z, y, Xd, step, cost, z_out, sig_weight, D):
    """The loss at z' = z + step y (X d), with z', sig_weight and D there written out."""
    loss = 0.0
    for i in range(z.shape[0]):
        zi = z[i] + step * y[i] * Xd[i]
        z_out[i] = zi
        term, sigma = _log1p_exp_neg(zi)
        loss += cost[i] * term
        sig_weight[i] = cost[i] * (sigma - 1.0) * y[i]
        D[i] = cost[i] * sigma * (1.0 - sigma)
    return loss


@njit(cache=True)
def _take_step(working, w, d, step, out):
    for a in range(working.shape[0]):
        j = working[a]
        out[j] = w[j] + step * d[j]


def newglmnet(objective, w, rng, max_inner: int = MAX_INNER):
    """Yield one Newton step (inner CD + line search) at a time; ``w`` is updated in place."""
    if not 1 <= int(max_inner) <= 10 ** 6:
        raise InvalidInputError(f"max_inner must be an integer in [1, 1e6], got {max_inner}")
    max_inner = int(max_inner)
    problem = objective.problem
    X = problem.X.tocsc()
    X.sort_indices()
    # unsigned row indices: numba then skips the negative-index wraparound on every gather and scatter
    indices = X.indices.astype(np.uint32 if X.shape[0] < 2 ** 32 else np.uint64)
    indptr, data = X.indptr, X.data
    unit = _unit_columns(indptr, data)
    y = problem.y.astype(np.float64)
    cost = problem.cost
    l1 = getattr(objective, "l1", None)
    l1 = np.zeros(w.shape[0]) if l1 is None else np.asarray(l1, dtype=np.float64)
    l2 = np.asarray(objective.reg, dtype=np.float64)
    m, n = X.shape
    z = y * (problem.X @ w)
    sig_weight, D = np.empty(m), np.empty(m)
    z_trial, sig_trial, D_trial = np.empty(m), np.empty(m), np.empty(m)
    g, d, Xd, g_trial = np.empty(n), np.zeros(n), np.empty(m), np.empty(n)
    DX = np.empty(data.shape[0])
    work_buffer, trial_buffer = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    loss = _margins_and_curvature(z, y, cost, sig_weight, D)
    penalty = _penalty(w, l1, l2)
    F = loss + penalty
    count, violation, largest, pg_norm = _gradient_and_working_set(     # no previous step: violators only
        indptr, indices, data, sig_weight, w, l1, l2, 0.0, g, work_buffer)
    first_violation = violation
    inner_tol, retries = 1.0, 0
    smallest_pg, stalled = pg_norm, 0
    while True:
        working = work_buffer[:count]
        passes = _newton_direction(indptr, indices, data, unit, D, g, w, l1, l2, working, m,
                                   int(rng.integers(0, 2 ** 31)), max_inner, inner_tol * first_violation, d, Xd, DX)
        if passes == 1:                 # the model was solved loosely at once: ask more of the next one
            inner_tol *= INNER_SHRINK
        gd, l1_change = _direction_terms(working, g, w, d, l1)
        delta = gd + l1_change
        step, accepted = 1.0, False
        for trial in range(MAX_LINE_SEARCH):
            loss_t = _trial_loss(z, y, Xd, step, cost, z_trial, sig_trial, D_trial)
            penalty_t = penalty + _penalty_change(working, w, d, l1, l2, step)
            F_t = loss_t + penalty_t
            if F_t <= F + SIGMA * step * delta:
                accepted = True
                break
            if abs(F_t - F) <= ROUNDING * abs(F):       # a decrease below F's rounding: the pseudo-gradient decides
                wd = w.copy()
                _take_step(working, w, d, step, wd)
                trial_norm = _gradient_and_working_set(indptr, indices, data, sig_trial, wd, l1, l2, np.inf,
                                                       g_trial, trial_buffer)[3]
                if trial_norm < pg_norm:
                    accepted = True
                    break
            step *= BACKTRACK
        if (not accepted or delta >= 0) and retries < MAX_RETRIES and passes < max_inner:
            retries += 1                # a loosely solved model misled the step: solve it more accurately
            inner_tol *= RETRY_SHRINK
            continue
        if not accepted or delta >= 0:
            yield Step(w=w, f=F, grad_norm=pg_norm, counters={"inner_passes": passes,
                       "line_search_evals": trial + 1, "nonzeros": nonzeros(w)}, done=True)
            return
        retries = 0
        n_working = int(working.shape[0])
        _take_step(working, w, d, step, w)
        z, z_trial = z_trial, z
        sig_weight, sig_trial = sig_trial, sig_weight
        D, D_trial = D_trial, D
        penalty = _penalty(w, l1, l2)   # exact again: no drift from the working-set updates
        F_before, F = F, loss_t + penalty
        count, violation, largest, pg_norm = _gradient_and_working_set(
            indptr, indices, data, sig_weight, w, l1, l2, largest / m, g, work_buffer)
        # steps whose decrease F cannot resolve and that no longer shrink the pseudo-gradient: a bounded stall
        if pg_norm <= STALL_FRACTION * smallest_pg:
            smallest_pg, stalled = pg_norm, 0
        elif abs(F - F_before) > ROUNDING * abs(F_before):
            stalled = 0
        else:
            stalled += 1
        yield Step(w=w, f=F, grad_norm=pg_norm,
                   counters={"inner_passes": passes, "line_search_evals": trial + 1, "step": step,
                             "working_set": n_working, "nonzeros": nonzeros(w)}, done=stalled >= STALL_STEPS)
        if stalled >= STALL_STEPS:
            return
