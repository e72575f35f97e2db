"""Compiled passes of dual coordinate descent (Yu, Huang & Lin 2011).

Scale: LIBLINEAR's, where the regularizer is 1/2 ||w||^2 (sigma^2 = 1 in the
paper's formulas). Every one-variable sub-problem has the form of eq. (18)

    min_z  (c1 + z) log(c1 + z) + (c2 - z) log(c2 - z) + a/2 z^2 + b z,   -c1 <= z <= c2,

and is solved on the distance to the nearer bound, Z1 = c1 + z or Z2 = c2 - z
(section 3.3), so that neither C - alpha nor a log of a cancelled difference
is ever computed. The solvers return both Z1 and Z2.

Three sub-problem solvers (the variants the paper compares), one function each:
    modified_newton    (ALG4)        - Algorithm 4, Newton with the xi-shrink for steps leaving (0, s)
    newton_line_search (LINE_SEARCH) - one Newton step with backtracking line search, eq. (21)
    bisection_newton   (BISECTION)   - Algorithm 9, bisection to the "correct" side (57), then Newton
solve_subproblem dispatches on the variant code for the LR pass. The solvers are inlined into
the passes (inline="always"): under FAST, how LLVM fuses and reorders the arithmetic depends on
the surrounding code, and the last bits of Z feed the next sub-problem.
"""
import numpy as np
from numba import njit

from .maxent import _scatter_context, _value, dense_scatter_context
from .memory import LINES_AHEAD, prefetch, prefetch_lr_visit_lines, scalar_at

ALG4, LINE_SEARCH, BISECTION, LOG_ODDS = 0, 1, 2, 3
XI0 = 0.1               # xi_0 of the initial point (35); any value in (0, 0.5]
LS_BETA, LS_GAMMA = 0.5, 0.01   # line search of CDdual-ls (section 6.1)
LS_MAX = 40
TINY = 1e-300           # Z >= TINY * s keeps Z > 0 and log(Z1 / Z2) finite
LOG_TINY = -690.0       # log-odds floor of log_odds_newton: about log(TINY), exp(-LOG_TINY) stays finite
# NaN/inf semantics are kept (no "nnan"/"ninf"), the guards below rely on them. Column indices are read
# unsigned (np.uint64): no negative-index wraparound per non-zero (0064). The sparse dot products read w by
# ``scalar_at``: under reassociation LLVM would turn them into vector gathers, slower than scalar loads (0066).
FAST = {"nsz", "arcp", "contract", "reassoc"}


# ------------------------------------------------------------ sub-problem (18)
@njit(cache=True, inline="always")
def _gprime(Z, s, a, c, bt):
    """g_t'(Z) of eq. (32)."""
    return np.log(Z / (s - Z)) + a * (Z - c) + bt


@njit(cache=True, inline="always")
def _nearer_side(a, b, c1, c2, g0):
    """t of (34) and g_t's data: (t, c_t, c_other, b_t, g_t'(c_t)); g_2'(Z2) = -g'(z), so b and g0 flip for t = 2.

    t = 1 if z_m >= -b/a, i.e. g'(z_m) = a z_m + b >= 0 (also right for a = 0)."""
    if a * 0.5 * (c2 - c1) + b >= 0.0:
        return 1, c1, c2, b, g0
    return 2, c2, c1, -b, -g0


@njit(cache=True, inline="always")
def _initial_point(a, c, bt, s, gt0):
    """Z_t^0 of (35) and g_t'(Z_t^0); at Z_t^0 = c_t (z = 0) the caller's g'(0) is reused."""
    Z = c if c < 0.5 * s else XI0 * c
    return Z, (gt0 if Z == c else _gprime(Z, s, a, c, bt))    # this form compiles as before: same bits


@njit(cache=True, inline="always")
def _both_distances(t, Z, s, out):
    """(Z1, Z2) into out from Z_t, the last step of Algorithms 4 and 9."""
    if t == 1:
        out[0], out[1] = Z, s - Z
    else:
        out[0], out[1] = s - Z, Z


@njit(cache=True, inline="always")
def _newton_on_g_t(Z, gp, a, c, bt, s, eps, xi, max_newton):
    """Newton on g_t until |g_t'| <= eps; a step leaving (0, s) is replaced by Algorithm 4's shrink."""
    steps = 0
    while abs(gp) > eps and steps < max_newton:
        width = Z * (s - Z)
        if not width > 0.0:                         # Z at a bound to rounding (s near underflow): no Newton left
            break
        d = -gp / (a + s / width)                   # g_t''(Z) = a + s / (Z (s - Z))
        if Z + d <= 0.0:                            # Algorithm 4: Z <- xi Z
            Z = max(xi * Z, TINY * s)
        elif Z + d >= s:                            # cannot happen in exact arithmetic
            Z = s - xi * (s - Z)
        else:
            Z += d
        if not (0.0 < Z < s):
            break
        gp = _gprime(Z, s, a, c, bt)
        steps += 1
    return Z, steps


@njit(cache=True, fastmath=FAST, inline="always")
def modified_newton(a, b, c1, c2, s, g0, eps, xi, max_newton, out):
    """Algorithm 4: solve (18) by Newton on g_t of the nearer bound, shrinking Z_t <- xi Z_t
    whenever a step would leave (0, s); write (Z1, Z2) into out, return #Newton steps.

    ``s`` is c1 + c2 given by the caller (C_i for LR, so that alpha_i +
    (C_i - alpha_i) = C_i holds exactly); ``g0`` = g'(0) = b + log(c1/c2),
    which the caller has already computed (and found larger than ``eps``).
    """
    t, c, other, bt, gt0 = _nearer_side(a, b, c1, c2, g0)
    Z, gp = _initial_point(a, c, bt, s, gt0)
    Z, steps = _newton_on_g_t(Z, gp, a, c, bt, s, eps, xi, max_newton)
    _both_distances(t, Z, s, out)
    return steps


@njit(cache=True, fastmath=FAST, inline="always")
def bisection_newton(a, b, c1, c2, s, g0, eps, xi, max_newton, out):
    """Algorithm 9 (solver ``bn``): halve Z_t from (35) until g_t'(Z_t) <= 0, the "correct" side (57),
    then Newton; arguments and result as :func:`modified_newton`, whose shrink never fires from there
    in exact arithmetic."""
    t, c, other, bt, gt0 = _nearer_side(a, b, c1, c2, g0)
    Z, gp = _initial_point(a, c, bt, s, gt0)
    while gp > 0.0 and Z > TINY * s:
        Z *= 0.5
        gp = _gprime(Z, s, a, c, bt)
    Z, steps = _newton_on_g_t(Z, gp, a, c, bt, s, eps, xi, max_newton)
    _both_distances(t, Z, s, out)
    return steps


@njit(cache=True, fastmath=FAST, inline="always")
def log_odds_newton(a, b, c1, c2, s, g0, eps, xi, max_newton, out):
    """Newton on g_t' of the nearer side (34), each step in the variable that makes the dominant term of
    g_t'' linear: the log-odds u = log(Z_t / (s - Z_t)) while the barrier's s / (Z_t (s - Z_t)) is larger
    than a, else Z_t itself (Algorithm 4's step and shrink).

    In u, g_t' = h(u) = u + a (Z_t(u) - c_t) + b_t with Z_t(u) = s e^u / (1 + e^u) and
    h'(u) = 1 + a Z_t (s - Z_t) / s: from a start far from the root (alpha_i = 1e-8 of (36) while the
    root is ~C/2) one step lands near it, where Newton on Z grows Z by about a factor (1 + |g_t'|) per
    step. By (34) the root has Z_t <= s/2 (u <= 0), where h is increasing and convex: a u-step from the
    left lands right of the root and is capped at u = 0. Where a dominates (a Z_t (s - Z_t) / s > 1),
    h is exponential-like in u and Newton on Z_t converges instead. Same root and stopping test
    |g_t'| <= eps as Algorithm 4; arguments and result as :func:`modified_newton`, and out[2] = log(Z1 / Z2)
    (``out`` has length 3)."""
    t, c, other, bt, gt0 = _nearer_side(a, b, c1, c2, g0)
    u = g0 - b if t == 1 else b - g0               # log(c / other): g'(0) = b + log(c1 / c2), no second log
    Z, W, gp = c, other, gt0
    steps = 0
    while abs(gp) > eps and steps < max_newton:
        spread = a * (Z * W / s)
        if spread <= 1.0:                          # barrier-dominated: step in the log-odds
            un = u - gp / (1.0 + spread)
            if un > 0.0:                           # past s/2: only rounding puts the root there
                if u == 0.0:
                    break
                un = 0.0
            u = max(un, LOG_TINY)
            e = np.exp(u)                          # u <= 0: no overflow
            W = s / (1.0 + e)
            Z = W * e
        else:                                      # a-dominated: Algorithm 4's step on Z_t
            d = -gp / (a + s / (Z * W))
            if Z + d <= 0.0:
                Z = max(xi * Z, TINY * s)
            elif Z + d >= s:
                Z = s - xi * (s - Z)
            else:
                Z += d
            W = s - Z
            u = np.log(Z / W)
        gp = u + a * (Z - c) + bt
        steps += 1
    _both_distances(t, Z, s, out)
    out[2] = u if t == 1 else -u                   # log(Z1 / Z2), kept by the LR pass for its next visit
    return steps


@njit(cache=True, inline="always")
def _g_t_change(step, a, c, other, bt):
    """g_t(c + step) - g_t(c), with the x log x differences written as
    step log(c + step) + c log1p(step / c) (no cancellation of large terms)."""
    Z, W = c + step, other - step
    return (step * np.log(Z) + c * np.log1p(step / c) - step * np.log(W) + other * np.log1p(-step / other)
            + 0.5 * a * step * step + bt * step)


@njit(cache=True, fastmath=FAST, inline="always")
def newton_line_search(a, b, c1, c2, s, g0, out):
    """CDdual-ls (section 6.1): one Newton step on g_t from z = 0, backtracked until the
    sufficient decrease (21) holds; (Z1, Z2) into out, returns 1 (one Newton step)."""
    t, c, other, bt, gt0 = _nearer_side(a, b, c1, c2, g0)
    d = -gt0 / (a + s / (c * other))
    Z = c
    lam = 1.0
    for _ in range(LS_MAX):
        step = lam * d
        if -c < step < other and _g_t_change(step, a, c, other, bt) <= LS_GAMMA * lam * gt0 * d:
            Z = c + step
            break
        lam *= LS_BETA
    _both_distances(t, Z, s, out)
    return 1


@njit(cache=True, fastmath=FAST)
def solve_subproblem(a, b, c1, c2, s, g0, eps, xi, max_newton, variant, out):
    """Solve (18) by the sub-problem solver ``variant`` (ALG4, LINE_SEARCH, BISECTION or LOG_ODDS)."""
    if variant == LOG_ODDS:
        return log_odds_newton(a, b, c1, c2, s, g0, eps, xi, max_newton, out)
    if variant == LINE_SEARCH:
        return newton_line_search(a, b, c1, c2, s, g0, out)
    if variant == BISECTION:
        return bisection_newton(a, b, c1, c2, s, g0, eps, xi, max_newton, out)
    return modified_newton(a, b, c1, c2, s, g0, eps, xi, max_newton, out)


# ------------------------------------------------------------ LR, Algorithm 5
@njit(cache=True, fastmath=FAST)
def lr_dual_pass(order, indptr, indices, data, y, cost, qdiag, alpha, alpha_c, log_odds, w,
                 inner_eps, xi, max_newton, variant):
    """One outer iteration of Algorithm 5 over instances in ``order``.

    alpha_c[i] holds C_i - alpha_i, kept from the Z2 returned by the
    sub-problem solver (never recomputed by subtraction); log_odds[i] holds log(alpha_i / (C_i - alpha_i)),
    so that a visit takes no log (LOG_ODDS returns it; the other variants take one log per update).
    w = sum y_i alpha_i x_i is maintained by (24). Returns (#Newton steps, max |grad_i D| at the
    visited points, #instances changed).
    """
    out = np.empty(3)
    newton = 0
    changed = 0
    vmax = 0.0
    for s_ in range(order.shape[0]):
        prefetch_lr_visit_lines(order, s_, LINES_AHEAD, indptr, indices, data, alpha, alpha_c, qdiag)
        if s_ + LINES_AHEAD < order.shape[0]:
            prefetch(log_odds, order[s_ + LINES_AHEAD])
        i = order[s_]
        yi = y[i]
        dot = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            dot += data[k] * scalar_at(w, indices[k])
        a = qdiag[i]
        b = yi * dot                                   # (23)
        c1, c2 = alpha[i], alpha_c[i]
        g = b + log_odds[i]                            # grad_i D(alpha), eq. (20) at z = 0
        if abs(g) > vmax:
            vmax = abs(g)
        if abs(g) <= inner_eps:
            continue
        newton += solve_subproblem(a, b, c1, c2, cost[i], g, inner_eps, xi, max_newton, variant, out)
        # z = Z1 - alpha_i, or -(Z2 - (C - alpha_i)): take the form on the moving side
        z = out[0] - c1 if c1 <= c2 else c2 - out[1]
        if z != 0.0:
            coef = z * yi
            for k in range(indptr[i], indptr[i + 1]):
                w[np.uint64(indices[k])] += coef * data[k]             # (24)
            changed += 1
        alpha[i], alpha_c[i] = out[0], out[1]
        log_odds[i] = out[2] if variant == LOG_ODDS else np.log(out[0] / out[1])
    return newton, vmax, changed


@njit(cache=True, fastmath=FAST)
def lr_first_pass(order, indptr, indices, data, y, cost, qdiag, alpha, alpha_c, log_odds, w,
                  inner_eps, xi, max_newton, variant):
    """The first pass of a cold start, with the set-up pass folded in: alpha is the start (36), w = 0
    holds none of it, and each visit computes Q_ii = ||x_i||^2 in the loop of its dot product and
    log(alpha_i / (C_i - alpha_i)), then adds its whole new alpha_i (not the change) into w. After the
    pass w = w(alpha) (22) again. Before their own visit, the other instances' alpha_j of (36)
    (<= 1e-8) are missing from w: g_i misses sum_j y_j alpha_j x_j'x_i, a change of the start's order
    against eps' >= 1e-8 of the sub-problem (docs/decisions/0064). Returns as :func:`lr_dual_pass`."""
    out = np.empty(3)
    newton = 0
    changed = 0
    vmax = 0.0
    for s_ in range(order.shape[0]):
        prefetch_lr_visit_lines(order, s_, LINES_AHEAD, indptr, indices, data, alpha, alpha_c, cost)
        i = order[s_]
        yi = y[i]
        dot = 0.0
        q = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            dot += v * scalar_at(w, indices[k])
            q += v * v
        qdiag[i] = q
        c1, c2 = alpha[i], alpha_c[i]
        b = yi * dot + c1 * q                          # (23), alpha_i's own term included
        lo = np.log(c1 / c2)
        g = b + lo
        if abs(g) > vmax:
            vmax = abs(g)
        new = c1
        if abs(g) > inner_eps:
            newton += solve_subproblem(q, b, c1, c2, cost[i], g, inner_eps, xi, max_newton, variant, out)
            # (36) starts on the alpha side (c1 <= c2), where Z1 is alpha_i itself
            new = out[0] if c1 <= c2 else cost[i] - out[1]
            if new != c1:
                changed += 1
            alpha[i], alpha_c[i] = out[0], out[1]
            lo = out[2] if variant == LOG_ODDS else np.log(out[0] / out[1])
        log_odds[i] = lo
        coef = new * yi
        for k in range(indptr[i], indptr[i + 1]):
            w[np.uint64(indices[k])] += coef * data[k]                 # (24), the whole alpha_i
    return newton, vmax, changed


@njit(cache=True, fastmath=FAST)
def lr_start(indptr, indices, data, y, alpha, n_features):
    """Q_ii = ||x_i||^2 and w(alpha) = sum_i y_i alpha_i x_i (22) in one pass over the rows."""
    l = indptr.shape[0] - 1
    qdiag = np.empty(l)
    w = np.zeros(n_features)
    for i in range(l):
        q = 0.0
        coef = y[i] * alpha[i]
        for k in range(indptr[i], indptr[i + 1]):
            v = data[k]
            q += v * v
            w[np.uint64(indices[k])] += coef * v
        qdiag[i] = q
    return qdiag, w


@njit(cache=True)
def lr_entropy(alpha, alpha_c, cost):
    """sum_i C_i H(alpha_i / C_i) = -sum alpha log(alpha/C) + (C - alpha) log((C - alpha)/C)."""
    total = 0.0
    for i in range(alpha.shape[0]):
        C = cost[i]
        if C <= 0.0:
            continue
        lc = np.log(C)
        a, ac = alpha[i], alpha_c[i]
        if a > 0.0:
            total -= a * (np.log(a) - lc)
        if ac > 0.0:
            total -= ac * (np.log(ac) - lc)
    return total


# ------------------------------------------------------------ Maxent, Algorithms 6-7
@njit(cache=True, fastmath=FAST)
def context_terms(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, v, kd):
    """v_y = w^T f(x, y) and K_yy = ||f(x, y)||^2, for maps with each feature once.

    With every feature in a single map entry, f(x, y) for distinct predicates
    of x touches distinct features, so ||f(x, y)||^2 is a sum of squares.
    """
    v[:] = 0.0
    kd[:] = 0.0
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        val = _value(ctx_val, k)
        for j in range(map_ptr[p], map_ptr[p + 1]):
            yy = map_label[j]
            v[yy] += val * w[map_feat[j]]
            kd[yy] += val * val


@njit(cache=True, fastmath=FAST)
def scatter_delta(x, delta, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, w):
    """w <- w - sum_y delta_y f(x, y)   (eq. 50 in LIBLINEAR scale)."""
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        val = _value(ctx_val, k)
        for j in range(map_ptr[p], map_ptr[p + 1]):
            w[map_feat[j]] -= val * delta[map_label[j]]


@njit(cache=True, inline="always")
def _argmax_argmin(G):
    hi, lo = 0, 0
    for yy in range(1, G.shape[0]):
        if G[yy] > G[hi]:
            hi = yy
        if G[yy] < G[lo]:
            lo = yy
    return hi, lo


@njit(cache=True, inline="always")
def _block_start(x, beta, v, zhat, G, vmax):
    """zhat = beta_x and G = log zhat - v, the gradient (49) / (46) before any pair moves; returns (argmax G,
    argmin G, the largest max G - min G of the pass so far)."""
    for yy in range(v.shape[0]):
        zhat[yy] = beta[x, yy]
        G[yy] = np.log(zhat[yy]) - v[yy]
    hi, lo = _argmax_argmin(G)
    return hi, lo, max(vmax, G[hi] - G[lo])


@njit(cache=True, inline="always")
def _block_accept(x, zhat, beta, G):
    """beta_x = zhat; G = the change of beta_x (for the update of w)."""
    for yy in range(zhat.shape[0]):
        G[yy] = zhat[yy] - beta[x, yy]
        beta[x, yy] = zhat[yy]


@njit(cache=True, fastmath=FAST)
def maxent_dual_pass(order, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, beta, w,
                     inner_eps, xi, max_newton, max_pairs):
    """One outer iteration of Algorithm 7 with Algorithm 6 inside, assuming (48).

    beta[x, y] is alpha_{x,y} scaled to the simplex sum_y beta = C c(x).
    Gradient (49) with sigma^2 = 1 and the constant 1 dropped:
    G_y = log zhat_y + K_yy (zhat_y - beta_y) - v_y.
    Returns (#pair updates, #Newton steps, max_x (max G - min G) at visit,
    #contexts whose block was moved).
    """
    K = beta.shape[1]
    v = np.empty(K)
    kd = np.empty(K)
    G = np.empty(K)
    zhat = np.empty(K)
    out = np.empty(2)
    pairs, newton, vmax, updated = 0, 0, 0.0, 0
    for x in order:
        pairs_before = pairs
        context_terms(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, v, kd)
        hi, lo, vmax = _block_start(x, beta, v, zhat, G, vmax)
        for _ in range(max_pairs):
            if G[hi] - G[lo] <= inner_eps:
                break
            y1, y2 = hi, lo
            a = kd[y1] + kd[y2]                                          # (47)
            b = kd[y1] * (zhat[y1] - beta[x, y1]) - kd[y2] * (zhat[y2] - beta[x, y2]) - v[y1] + v[y2]
            c1, c2 = zhat[y1], zhat[y2]
            newton += modified_newton(a, b, c1, c2, c1 + c2, G[y1] - G[y2], inner_eps, xi, max_newton, out)
            pairs += 1
            zhat[y1], zhat[y2] = out[0], out[1]
            G[y1] = np.log(zhat[y1]) + kd[y1] * (zhat[y1] - beta[x, y1]) - v[y1]
            G[y2] = np.log(zhat[y2]) + kd[y2] * (zhat[y2] - beta[x, y2]) - v[y2]
            hi, lo = _argmax_argmin(G)
        if pairs > pairs_before:
            updated += 1
            _block_accept(x, zhat, beta, G)
            scatter_delta(x, G, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, w)
    return pairs, newton, vmax, updated


# -- general features: (48) fails, so K^i has off-diagonal entries (eq. 46)
@njit(cache=True)
def context_matrix(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, slot, touched, F):
    """Dense rows F[y, :m] = f(x, y) over the m distinct features of x; return m.

    ``slot`` (length n, all -1 on entry and on exit) maps a feature to its
    column; ``touched`` lists the features of the columns.
    """
    m = 0
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        for j in range(map_ptr[p], map_ptr[p + 1]):
            t = map_feat[j]
            if slot[t] < 0:
                slot[t] = m
                touched[m] = t
                F[:, m] = 0.0
                m += 1
    for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
        p = ctx_pred[k]
        val = _value(ctx_val, k)
        for j in range(map_ptr[p], map_ptr[p + 1]):
            F[map_label[j], slot[map_feat[j]]] += val
    for c in range(m):
        slot[touched[c]] = -1
    return m


@njit(cache=True, fastmath=FAST)
def gram_and_scores(F, m, touched, w, Kmat, v):
    """K^i = F F^T and v = F w over the first m columns."""
    K = F.shape[0]
    for y1 in range(K):
        acc = 0.0
        for c in range(m):
            acc += F[y1, c] * w[touched[c]]
        v[y1] = acc
        for y2 in range(y1, K):
            acc = 0.0
            for c in range(m):
                acc += F[y1, c] * F[y2, c]
            Kmat[y1, y2] = acc
            Kmat[y2, y1] = acc


@njit(cache=True)
def max_row_width(ctx_ptr, ctx_pred, map_ptr):
    """Upper bound on the number of distinct features of one context."""
    best = 0
    for x in range(ctx_ptr.shape[0] - 1):
        m = 0
        for k in range(ctx_ptr[x], ctx_ptr[x + 1]):
            p = ctx_pred[k]
            m += map_ptr[p + 1] - map_ptr[p]
        best = max(best, m)
    return best


@njit(cache=True, fastmath=FAST)
def maxent_dual_pass_general(order, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, beta, w,
                             inner_eps, xi, max_newton, max_pairs, slot, touched, F):
    """Algorithm 7 / 6 with the full K^i: gradient (46), coefficients (45)."""
    K = beta.shape[1]
    v = np.empty(K)
    Kz = np.empty(K)
    G = np.empty(K)
    zhat = np.empty(K)
    Kmat = np.empty((K, K))
    out = np.empty(2)
    pairs, newton, vmax, updated = 0, 0, 0.0, 0
    for x in order:
        pairs_before = pairs
        m = context_matrix(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, slot, touched, F)
        gram_and_scores(F, m, touched, w, Kmat, v)
        Kz[:] = 0.0
        hi, lo, vmax = _block_start(x, beta, v, zhat, G, vmax)
        for _ in range(max_pairs):
            if G[hi] - G[lo] <= inner_eps:
                break
            y1, y2 = hi, lo
            a = Kmat[y1, y1] + Kmat[y2, y2] - 2.0 * Kmat[y1, y2]
            b = Kz[y1] - Kz[y2] - v[y1] + v[y2]
            c1, c2 = zhat[y1], zhat[y2]
            newton += modified_newton(a, b, c1, c2, c1 + c2, G[y1] - G[y2], inner_eps, xi, max_newton, out)
            pairs += 1
            d = out[0] - c1 if c1 <= c2 else c2 - out[1]
            zhat[y1], zhat[y2] = out[0], out[1]
            for yy in range(K):
                Kz[yy] += d * (Kmat[yy, y1] - Kmat[yy, y2])
                G[yy] = np.log(zhat[yy]) + Kz[yy] - v[yy]
            hi, lo = _argmax_argmin(G)
        if pairs > pairs_before:
            updated += 1
            _block_accept(x, zhat, beta, G)
            for c in range(m):
                acc = 0.0
                for yy in range(K):
                    acc += G[yy] * F[yy, c]
                w[touched[c]] -= acc
    return pairs, newton, vmax, updated


# ------------------------------------------------------------ Maxent dual helpers
@njit(cache=True)
def maxent_init_beta(ctx_count, obs_ptr, obs_label, obs_count, C, eps, beta):
    """Initial point (51), scaled by C: beta_x = C c(x, .) with eps C c(x) spread on unseen labels."""
    K = beta.shape[1]
    for x in range(beta.shape[0]):
        beta[x, :] = 0.0
        total = C * ctx_count[x]
        if total <= 0.0:
            continue
        n_seen = 0
        for o in range(obs_ptr[x], obs_ptr[x + 1]):
            if obs_count[o] > 0.0:
                beta[x, obs_label[o]] += C * obs_count[o]
        for yy in range(K):
            if beta[x, yy] > 0.0:
                n_seen += 1
        n_unseen = K - n_seen
        if n_unseen == 0:
            continue
        for yy in range(K):
            if beta[x, yy] > 0.0:
                beta[x, yy] *= 1.0 - eps
            else:
                beta[x, yy] = eps * total / n_unseen


@njit(cache=True)
def maxent_w_of_beta(n_features, C, ctx_count, obs_ptr, obs_label, obs_count,
                     ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, beta, dense):
    """w(beta) = sum_{x,y} (C c(x, y) - beta_{x,y}) f(x, y)   (eq. 39 in LIBLINEAR scale).

    ``dense``: the all-pairs layout (feature p*K + y), whose rows are updated by a vectorized loop
    (an EG restart recomputes w this way every few passes: ~10x faster than through the map)."""
    K = beta.shape[1]
    w = np.zeros(n_features)
    delta = np.empty(K)
    for x in range(beta.shape[0]):
        for yy in range(K):
            delta[yy] = -beta[x, yy]
        for o in range(obs_ptr[x], obs_ptr[x + 1]):
            delta[obs_label[o]] += C * obs_count[o]
        if dense:
            dense_scatter_context(x, delta, K, ctx_ptr, ctx_pred, ctx_val, w)
        else:
            _scatter_context(x, delta, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, w)
    return w


@njit(cache=True)
def maxent_entropy(beta, C, ctx_count):
    """sum_x C c(x) H(beta_x / (C c(x))) = -sum beta log(beta / (C c(x)))."""
    total = 0.0
    for x in range(beta.shape[0]):
        scale = C * ctx_count[x]
        if scale <= 0.0:
            continue
        ls = np.log(scale)
        for yy in range(beta.shape[1]):
            b = beta[x, yy]
            if b > 0.0:
                total -= b * (np.log(b) - ls)
    return total
