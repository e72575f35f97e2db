"""Compiled passes of randomized online EG (Collins et al. 2008; Yu et al. 2011, Algorithm 8).

Dual variables live on scaled simplices (LIBLINEAR scale, see kernels/dual_cd):
LR instance i has (alpha_i, C_i - alpha_i) summing to C_i, Maxent context x
has beta_x summing to C c(x). The update (52) is multiplicative and
normalized, so it does not depend on that scaling.

The adaptive step of Collins et al. (section 7) / Algorithm 8 is shared by the
LR and Maxent visits through three helpers: :func:`eg_proposal` (the normalized
multiplicative update (52) in log space), :func:`improves` (the acceptance test
on the exact dual change) and :func:`next_rate` (x ``growth`` after a success,
halving after a failure).

The change of the dual (54) costs O(|Y|) under (48) (O(|Y| m) in general).
Its entropy part is written as  sum_y d_y log b'_y + b_y log1p(d_y / b_y)
(d = b' - b) for small relative moves, which is the difference
b' log b' - b log b without subtracting two large, nearly equal numbers
(C up to 1e5).
"""
import numpy as np
from numba import njit

from .dual_cd import TINY, context_matrix, context_terms, gram_and_scores, scatter_delta
from .maxent import dense_context_scores, dense_scatter_context
from .memory import LINES_AHEAD, prefetch_lr_visit_lines, scalar_at


@njit(cache=True, inline="always")
def _entropy_change(b, d, new, log_new):
    """new log new - b log b for new = b + d > 0, with log(new) given.

    Small relative moves use d log new + b log1p(d / b) (no cancellation);
    large ones the plain difference (log1p(d / b) would round d / b to -1).
    """
    if d == 0.0:
        return 0.0
    if abs(d) <= 0.5 * b:
        return d * log_new + b * np.log1p(d / b)
    return new * log_new - b * np.log(b)


# ------------------------------------------------------------ the shared adaptive EG step
HALVE = 0.5
ROUNDING = 1e-13       # dual changes below ROUNDING * the block's mass (C c(x), or C_i for LR) count as 'no worse'
                       # (see _diagonal_eg_visit); the part passes scale theirs by the change's own terms


@njit(cache=True, inline="always")
def eg_proposal(log_b, G, eta, log_total, log_new, new):
    """(52) in log space: log_new_y = log b_y - eta G_y - lz, normalized so that sum new = exp(log_total).

    Returns lz, so that callers have log new_y - log b_y = -(eta G_y + lz) without a subtraction."""
    K = log_b.shape[0]
    m = -np.inf
    for yy in range(K):
        log_new[yy] = log_b[yy] - eta * G[yy]
        if log_new[yy] > m:
            m = log_new[yy]
    z = 0.0
    for yy in range(K):
        new[yy] = np.exp(log_new[yy] - m)               # the only exp per label: new = e / z * total
        z += new[yy]
    lz = m + np.log(z) - log_total
    scale = np.exp(log_total) / z
    for yy in range(K):
        log_new[yy] -= lz
        new[yy] *= scale
    return lz


@njit(cache=True, inline="always")
def improves(change, tol):
    """Keep a trial step only if the exact dual change is finite and not above ``tol``."""
    return np.isfinite(change) and change <= tol


@njit(cache=True, inline="always")
def next_rate(eta, j, accepted, growth):
    """Per-example rate rule: x growth (1.05) after an accepted step, halve after a rejected trial."""
    if accepted:
        eta[j] *= growth
    else:
        eta[j] *= HALVE


# ------------------------------------------------------------ LR
@njit(cache=True)
def lr_eg_pass(picks, indptr, indices, data, y, cost, qdiag, alpha, alpha_c, w, eta, max_trial, growth):
    """len(picks) EG steps on instances drawn by the caller.

    Two-coordinate EG on (alpha_i, C_i - alpha_i): with r = log(alpha/(C - alpha))
    the update (52) is r' = r - eta (b + r), where b = y_i w^T x_i.
    Returns (#accepted, #trials, max |grad_i D| at the visited points).
    """
    accepted = 0
    trials = 0
    vmax = 0.0
    for s_ in range(picks.shape[0]):
        prefetch_lr_visit_lines(picks, s_, LINES_AHEAD, indptr, indices, data, alpha, alpha_c, eta)
        i = picks[s_]
        C = cost[i]
        dot = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            dot += data[k] * scalar_at(w, indices[k])      # a scalar load: no gathers (kernels.memory)
        a = qdiag[i]
        b = y[i] * dot
        c1, c2 = alpha[i], alpha_c[i]
        r = np.log(c1 / c2)
        g = b + r
        if abs(g) > vmax:
            vmax = abs(g)
        if g == 0.0:
            continue
        for _ in range(max_trial):
            trials += 1
            rn = r - eta[i] * g
            if rn > 0.0:
                e = np.exp(-rn)
                n1, n2 = C / (1.0 + e), C * e / (1.0 + e)
            else:
                e = np.exp(rn)
                n1, n2 = C * e / (1.0 + e), C / (1.0 + e)
            if n1 < TINY * C:                        # underflow: move to the floor (as in _diagonal_eg_visit),
                n1, n2 = TINY * C, C - TINY * C         # so that log(alpha / (C - alpha)) stays finite
            elif n2 < TINY * C:
                n1, n2 = C - TINY * C, TINY * C
            z = n1 - c1 if c1 <= c2 else c2 - n2
            change = (_entropy_change(c1, z, n1, np.log(n1)) + _entropy_change(c2, -z, n2, np.log(n2))
                      + b * z + 0.5 * a * z * z)
            ok = improves(change, ROUNDING * C)
            next_rate(eta, i, ok, growth)
            if ok:
                coef = z * y[i]
                for k in range(indptr[i], indptr[i + 1]):
                    w[np.uint64(indices[k])] += coef * data[k]
                alpha[i], alpha_c[i] = n1, n2
                accepted += 1
                break
    return accepted, trials, vmax


# ------------------------------------------------------------ Maxent
@njit(cache=True, inline="always")
def _block_gradient(x, beta, v, log_b, G):
    """log_b = log beta_x and G = log_b - v, (53) up to a constant; returns (max G, min G)."""
    gmax, gmin = -np.inf, np.inf
    for yy in range(v.shape[0]):
        log_b[yy] = np.log(beta[x, yy])
        G[yy] = log_b[yy] - v[yy]
        gmax, gmin = max(gmax, G[yy]), min(gmin, G[yy])
    return gmax, gmin


@njit(cache=True, inline="always")
def _diagonal_eg_visit(x, total, v, kd, beta, eta, max_trial, growth, log_b, G, log_new, new, delta):
    """Algorithm 8 at context x under (48) (K^i diagonal, entries kd): trial steps until the dual improves.

    The change (54) is O(|Y|) and needs no logarithm beyond the proposal's:
    new log new - b log b = d log new + b (log new - log b), and (52) gives
    log new - log b = -(eta G + lz) directly (no cancellation, C up to 1e5).
    Returns (trials, accepted, violation max G - min G); on acceptance beta[x]
    holds the new point and delta = new - old.
    """
    K = v.shape[0]
    gmax, gmin = _block_gradient(x, beta, v, log_b, G)
    if gmax == gmin:
        return 0, False, 0.0
    log_total = np.log(total)
    floor = TINY * total
    trials = 0
    for _ in range(max_trial):
        trials += 1
        rate = eta[x]
        lz = eg_proposal(log_b, G, rate, log_total, log_new, new)
        change = 0.0
        for yy in range(K):
            step = -(rate * G[yy] + lz)                  # log new - log b
            if new[yy] < floor:
                # the proposal underflows: take the move to the floor instead (the change below is the exact
                # change of that point, so the test stays exact). Rejecting it would halve eta_x on every visit
                # when the optimum itself is below the floor (p(y|x) < 1e-300), and freeze the whole block.
                new[yy] = floor
                log_new[yy] = np.log(floor)
                step = log_new[yy] - log_b[yy]
            b = beta[x, yy]
            d = new[yy] - b
            delta[yy] = d
            change += d * log_new[yy] + b * step - d * v[yy] + 0.5 * kd[yy] * d * d
        # a change at the rounding floor of the block (|change| <= 1e-13 C c(x)) is not a failure: treating
        # it as one halves eta_x up to max_trial times per visit, irreversibly (x1.05 per success)
        ok = improves(change, ROUNDING * total)
        next_rate(eta, x, ok, growth)
        if ok:
            for yy in range(K):
                beta[x, yy] = new[yy]
            return trials, True, gmax - gmin
    return trials, False, gmax - gmin


@njit(cache=True)
def maxent_eg_pass(picks, dense, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, ctx_count, C,
                   beta, w, eta, max_trial, growth):
    """len(picks) EG steps under (48): K^i diagonal, so (54) costs O(|Y|).

    ``dense``: the problem is in the all-pairs layout (feature p*K + y), so rows of W
    are read and written contiguously and the gather and the update (50) vectorize
    over the labels; otherwise the features are found through the predicate map.
    """
    K = beta.shape[1]
    v, kd, G, new = np.empty(K), np.empty(K), np.empty(K), np.empty(K)
    log_new, log_b, delta = np.empty(K), np.empty(K), np.empty(K)
    accepted, trials, vmax = 0, 0, 0.0
    for x in picks:
        total = C * ctx_count[x]
        if total <= 0.0:
            continue
        if dense:
            dense_context_scores(x, w, K, ctx_ptr, ctx_pred, ctx_val, v)
            sq = 0.0                                       # K_yy = ||phi(x)||^2 for every y
            for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
                sq += 1.0 if ctx_val.shape[0] == 0 else ctx_val[k] * ctx_val[k]
            for yy in range(K):
                kd[yy] = sq
        else:
            context_terms(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, v, kd)
        t, ok, gap = _diagonal_eg_visit(x, total, v, kd, beta, eta, max_trial, growth, log_b, G, log_new, new,
                                        delta)
        trials += t
        vmax = max(vmax, gap)
        if ok:
            if dense:
                for yy in range(K):
                    delta[yy] = -delta[yy]                 # (50): w -= sum_y delta_y f(x, y)
                dense_scatter_context(x, delta, K, ctx_ptr, ctx_pred, ctx_val, w)
            else:
                scatter_delta(x, delta, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, w)
            accepted += 1
    return accepted, trials, vmax


@njit(cache=True)
def maxent_eg_pass_general(picks, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, ctx_count, C,
                           beta, w, eta, max_trial, growth, slot, touched, F):
    """EG with the full K^i: the quadratic part of (54) is 1/2 ||F^T delta||^2."""
    K = beta.shape[1]
    v = np.empty(K)
    G = np.empty(K)
    new = np.empty(K)
    log_new = np.empty(K)
    log_b = np.empty(K)
    delta = np.empty(K)
    Kmat = np.empty((K, K))
    accepted, trials, vmax = 0, 0, 0.0
    for x in picks:
        total = C * ctx_count[x]
        if total <= 0.0:
            continue
        m = context_matrix(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, slot, touched, F)
        gram_and_scores(F, m, touched, w, Kmat, v)
        gmax, gmin = _block_gradient(x, beta, v, log_b, G)
        vmax = max(vmax, gmax - gmin)
        if gmax == gmin:
            continue
        for _ in range(max_trial):
            trials += 1
            eg_proposal(log_b, G, eta[x], np.log(total), log_new, new)
            change = 0.0
            for yy in range(K):
                if new[yy] < TINY * total:                # underflow: move to the floor (see _diagonal_eg_visit)
                    new[yy] = TINY * total
                    log_new[yy] = np.log(new[yy])
                d = new[yy] - beta[x, yy]
                delta[yy] = d
                change += _entropy_change(beta[x, yy], d, new[yy], log_new[yy]) - d * v[yy]
            if np.isfinite(change):
                quad = 0.0
                for y1 in range(K):
                    for y2 in range(K):
                        quad += delta[y1] * Kmat[y1, y2] * delta[y2]
                change += 0.5 * quad
            ok = improves(change, ROUNDING * total)
            next_rate(eta, x, ok, growth)
            if ok:
                for c in range(m):
                    acc = 0.0
                    for yy in range(K):
                        acc += delta[yy] * F[yy, c]
                    w[touched[c]] -= acc
                for yy in range(K):
                    beta[x, yy] = new[yy]
                accepted += 1
                break
    return accepted, trials, vmax
