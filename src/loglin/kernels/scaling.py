"""Compiled sub-problem solvers of Huang, Hsieh, Chang & Lin (2010) for Maxent.

Everything is in loglin's scale f = C * N * L (sigma^2 = C * N), so the
papers' Q_t of eq. (11) reads

    Q_t(z) = r_t (w_t z + z^2 / 2) - C z N Ptilde(f_t)

and every sum  sum_x Ptilde(x) ...  becomes  C sum_x c(x) ... .

Sequential methods (SCGIS, CD) keep S_w(x, y) and T_w(x) of eq. (1) and
update them by eqs. (18)-(19) after each sub-problem. To keep them finite for
any w they are stored *per context up to a positive factor*:

    S[y, x] = S_w(x, y) / m(x),   T[x] = T_w(x) / m(x),

(only the ratio P_w(y|x) = S / T is ever used). S is label-major (K x X):
feature t = (predicate p, label y) reads S[y, x] for the sorted contexts x of
column p, so long columns stream through memory instead of touching one
cache line per context. Guards (see :func:`_update_context`):

* a context whose T[x] exceeds 1e150 is rescaled to T[x] = 1;
* T[x] is a running sum with absolute error ~ eps * (largest T[x] since it
  was last summed exactly), so it is re-summed from S once it falls below
  1e-6 of that; all of T is re-summed at the start of every outer iteration;
* entries that underflowed (S < 1e-290) cannot be scaled back up, so a
  context is rebuilt from w (its scores, K exps) when such an entry is about
  to grow, when T[x] falls below 1e-150, or when T[x] is not finite.

In the line search, 1 + P (e^{zf} - 1) is re-formed without cancellation
when it is below 1e-4 (P near 1 and a large negative step).

Features are read in column form. Sequential kernels need every feature to
occupy one (predicate, label) pair of the map (predicate x label features):
``feat_pred[t]``, ``feat_label[t]`` (-1 when t never occurs), so that the
contexts of column ``feat_pred[t]`` of phi are exactly the (x, y) with
f_t(x, y) != 0, each once.

Counters (one int64 array per pass) are indexed by the constants below.
"""
import math

import numpy as np
from numba import njit, prange

from .maxent import context_scores

N_EXP, N_LOG, NEWTON, LINE_SEARCH, UNIT, SKIP, RESCALE = range(7)
COUNTER_NAMES = ("n_exp", "n_log", "newton_steps", "line_search_steps", "unit_steps",
                 "upper_bound_skips", "rescaled_rows")

SCGIS, CD = 0, 1                 # sub-problem of a sequential pass
TINY_T, HUGE_T = 1e-150, 1e150   # rebuild / rescale a row of S outside this range
TINY_S = 1e-290                  # an S entry below this has lost precision to underflow
CANCEL = 1e-6                    # re-sum T[x] if it drops below CANCEL * old T[x]
MAX_EXP_STEP = 30.0              # a Newton step may move z * f^s by at most this
MAX_EXP_TOTAL = 50.0             # an exactly solved sub-problem moves z * f^s by at most this
SMALL_ARG = 1e-4                 # below this 1 + P (e^{zf} - 1) is re-formed without cancellation
MAX_NEWTON = 100                 # Newton iterations per exactly-solved sub-problem
MAX_LINE_SEARCH = 60             # lambda = 1, beta, ..., beta^59


# ------------------------------------------------------------ S_w and T_w


@njit(cache=True)
def _fill_row(x, w, rows, S, T, scores):
    """S[:, x] = exp(sum_t w_t f_t(x, .) - max), T[x] = sum_y S[y, x]."""
    ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat = rows
    context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, scores)
    m = scores.max()
    total = 0.0
    for y in range(scores.shape[0]):
        S[y, x] = math.exp(scores[y] - m)
        total += S[y, x]
    T[x] = total


@njit(cache=True, parallel=True)
def init_scores(w, rows, S, T):
    """S_w and T_w of eq. (1) for every context (X * K exp operations)."""
    n_labels = S.shape[0]
    n_ctx = S.shape[1]
    nb = min(n_ctx, 64)
    for b in prange(nb):
        scores = np.empty(n_labels)
        for x in range(b * n_ctx // nb, (b + 1) * n_ctx // nb):
            _fill_row(x, w, rows, S, T, scores)


@njit(cache=True, parallel=True)
def resum_totals(S, T, T_top):
    """T[x] = sum_y S[y, x] exactly (undoes drift from repeated eq. (19))."""
    n_ctx = S.shape[1]
    nb = min(n_ctx, 64)
    for b in prange(nb):
        lo, hi = b * n_ctx // nb, (b + 1) * n_ctx // nb
        T[lo:hi] = 0.0
        for y in range(S.shape[0]):
            for x in range(lo, hi):
                T[x] += S[y, x]
        T_top[lo:hi] = T[lo:hi]


@njit(cache=True, inline="always")
def _update_context(x, y, factor, S, T, T_top):
    """Eqs. (18)-(19) for one (x, y): S *= factor, T += S_old (factor - 1).

    The running sum carries an absolute error of about eps * T_top, the
    largest T[x] since the row was last summed exactly; so the row is re-summed
    once T[x] < CANCEL * T_top. A row whose T grows past HUGE_T is rescaled
    (small entries may underflow to 0). Returns 0, 1 (row rescaled or
    re-summed), or 2: the caller must rebuild the row from w, because an
    underflowed entry is being scaled up, or T fell below TINY_T (so entries
    that underflowed may no longer be negligible), or T is not finite.
    """
    s_old = S[y, x]
    if s_old < TINY_S and factor > 1.0:
        return 2                 # S_w > 0 underflowed earlier (0 or subnormal): its true value may matter now
    s_new = s_old * factor
    S[y, x] = s_new
    t_new = T[x] + (s_new - s_old)
    top = max(T_top[x], t_new)
    status = 0
    if not t_new > CANCEL * top:
        t_new = 0.0
        for k in range(S.shape[0]):
            t_new += S[k, x]
        top = t_new
        status = 1
    if not (t_new > TINY_T and t_new < np.inf):
        return 2                 # shrunk or degenerate row: entries that underflowed may matter
    if t_new > HUGE_T:
        inv = 1.0 / t_new
        for k in range(S.shape[0]):
            S[k, x] *= inv
        t_new = top = 1.0
        status = 1
    T[x] = t_new
    T_top[x] = top
    return status


@njit(cache=True)
def _update_column(t, z, w, rows, cols, feat_pred, feat_label, S, T, T_top, scores, counters):
    """w_t += z and the matching updates (18)-(19) of S_w, T_w."""
    w[t] += z
    col_ptr, col_ctx, col_val = cols
    p, y = feat_pred[t], feat_label[t]
    binary = col_val.shape[0] == 0
    factor = 1.0
    if binary:
        factor = math.exp(z)     # one exp for the whole column (section 4.3)
        counters[N_EXP] += 1
    for k in range(col_ptr[p], col_ptr[p + 1]):
        if not binary:
            factor = math.exp(z * col_val[k])
            counters[N_EXP] += 1
        x = col_ctx[k]
        status = _update_context(x, y, factor, S, T, T_top)
        if status == 2:
            _fill_row(x, w, rows, S, T, scores)      # degenerate row: rebuild from w
            T_top[x] = T[x]
            counters[N_EXP] += S.shape[0]
        if status != 0:
            counters[RESCALE] += 1


@njit(cache=True, inline="always")
def _column_moments(p, y, cols, ctx_count, S, T):
    """E = sum c(x) P v,  V2 = sum c(x) P v^2,  M2 = sum c(x) (P v)^2 over column p.

    With f_t(x, y) = v on the column, E is sum_{x,y} c(x) P_w(y|x) f_t(x,y)
    (eq. 32 / 41), and V2 - M2 the data part of A_t^CD''(0), eq. (31).
    """
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    E = V2 = M2 = 0.0
    for k in range(col_ptr[p], col_ptr[p + 1]):
        x = col_ctx[k]
        v = 1.0 if binary else col_val[k]
        pv = S[y, x] / T[x] * v
        c = ctx_count[x]
        E += c * pv
        V2 += c * pv * v
        M2 += c * pv * pv
    return E, V2, M2


# ---------------------------------------------- GIS / SCGIS: O(1) Newton steps


@njit(cache=True)
def newton_exp_surrogate(r, w_t, C, emp_t, E, fs, tol, counters):
    """Minimize A_t(z) = Q_t(z) + C E (e^{z fs} - 1) / fs by Newton's method (26)-(27).

    A_t^GIS (fs = f^#) and A_t^SCGIS (fs = f_t^#) of Table 1: after E is known
    each step costs O(1) (Table 2). At least one step is taken, then steps
    continue until |A_t'(z)| <= tol. Guards: a step moves z fs by at most
    MAX_EXP_STEP and the result by at most MAX_EXP_TOTAL (E may have
    underflowed to 0 while the true E is tiny; the surrogate is then only
    trustworthy for moderate z), and z is halved until A_t(z) <= 0, so the
    update never increases f whatever Newton did.
    """
    z = 0.0
    limit = MAX_EXP_TOTAL / fs if fs > 0 else np.inf
    for it in range(MAX_NEWTON):
        ez = 1.0
        if z != 0.0 and fs > 0:
            ez = math.exp(z * fs)
            counters[N_EXP] += 1
        g = r * (w_t + z) - C * emp_t + C * E * ez
        if it > 0 and abs(g) <= tol:
            break
        h = r + C * E * fs * ez
        if not h > 0.0:
            break
        counters[NEWTON] += 1
        step = -g / h
        if fs > 0 and abs(step) * fs > MAX_EXP_STEP:
            step = math.copysign(MAX_EXP_STEP / fs, step)
        z_new = min(max(z + step, -limit), limit)
        if z_new == z:
            break
        z = z_new
    for k in range(MAX_LINE_SEARCH):
        if fs > 0:
            grow = math.expm1(z * fs) / fs
            counters[N_EXP] += 1
        else:
            grow = z
        if r * (w_t * z + 0.5 * z * z) - C * emp_t * z + C * E * grow <= 0.0:
            return z
        z *= 0.5
    return 0.0


@njit(cache=True, parallel=True)
def gis_pass(w, reg, C, emp, expect, f_sharp, tol, z_out, counters):
    """Algorithm 2 with A_t^GIS: n independent sub-problems from one E = (41)."""
    n = w.shape[0]
    per = np.zeros((n, 2), dtype=np.int64)
    for t in prange(n):
        c = np.zeros(7, dtype=np.int64)
        z_out[t] = newton_exp_surrogate(reg[t], w[t], C, emp[t], expect[t], f_sharp, tol, c)
        per[t, 0] = c[N_EXP]
        per[t, 1] = c[NEWTON]
    counters[N_EXP] += per[:, 0].sum()
    counters[NEWTON] += per[:, 1].sum()


# ----------------------------------------------------------------------- IIS


@njit(cache=True)
def _iis_sums(t, z, occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy):
    """sum c P f_t e^{z f#(x,y)} and sum c P f_t f#(x,y) e^{z f#(x,y)}, eq. (28)."""
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    a = b = 0.0
    n_exp = 0
    for o in range(occ_ptr[t], occ_ptr[t + 1]):
        j = occ_entry[o]
        p, y = map_pred[j], map_label[j]
        for k in range(col_ptr[p], col_ptr[p + 1]):
            x = col_ctx[k]
            v = 1.0 if binary else col_val[k]
            fs = fsharp_xy[x, y]
            e = 1.0
            if z != 0.0:
                e = math.exp(z * fs)
                n_exp += 1
            term = ctx_count[x] * prob[x, y] * v * e
            a += term
            b += term * fs
    return a, b, n_exp


@njit(cache=True, parallel=True)
def iis_pass(w, reg, C, emp, occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy,
             f_sharp, tol, z_out, counters):
    """Algorithm 2 with A_t^IIS: each Newton direction (28) costs O(l-bar) exps."""
    n = w.shape[0]
    per = np.zeros((n, 2), dtype=np.int64)
    for t in prange(n):
        z = 0.0
        n_exp = 0
        steps = 0
        for it in range(MAX_NEWTON):
            a, b, k = _iis_sums(t, z, occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob,
                                fsharp_xy)
            n_exp += k
            g = reg[t] * (w[t] + z) - C * emp[t] + C * a
            if it > 0 and abs(g) <= tol:
                break
            h = reg[t] + C * b
            if not h > 0.0:
                break
            steps += 1
            step = -g / h
            if f_sharp > 0 and abs(step) * f_sharp > MAX_EXP_STEP:
                step = math.copysign(MAX_EXP_STEP / f_sharp, step)
            z_new = z + step
            if f_sharp > 0:
                z_new = min(max(z_new, -MAX_EXP_TOTAL / f_sharp), MAX_EXP_TOTAL / f_sharp)
            if z_new == z:
                break
            z = z_new
        z_out[t] = z
        per[t, 0] = n_exp
        per[t, 1] = steps
    counters[N_EXP] += per[:, 0].sum()
    counters[NEWTON] += per[:, 1].sum()


# ------------------------------------------------------------------------ CD


@njit(cache=True, inline="always")
def _cd_log_ratio(p, y, z, cols, ctx_count, S, T, counters):
    """sum_x c(x) log(T_{w+z e_t}(x) / T_w(x)) = sum_x c(x) log(1 + P_w(y|x)(e^{z f_t(x,y)} - 1)), eq. (17).

    Where 1 + P (e^{zf} - 1) is small (P near 1, large negative step) it is
    re-formed as (sum_{y' != y} S + S e^{zf}) / T without cancellation;
    a zero or non-finite ratio rejects the step (returns inf).
    """
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    total = 0.0
    em1 = 0.0
    if binary:
        em1 = math.expm1(z)
        counters[N_EXP] += 1
    for k in range(col_ptr[p], col_ptr[p + 1]):
        x = col_ctx[k]
        if not binary:
            em1 = math.expm1(z * col_val[k])
            counters[N_EXP] += 1
        u = S[y, x] / T[x] * em1
        if 1.0 + u >= SMALL_ARG or not u == u:
            total += ctx_count[x] * math.log1p(u)
        else:
            rest = 0.0
            for yy in range(S.shape[0]):
                if yy != y:
                    rest += S[yy, x]
            v = 1.0 if binary else col_val[k]
            arg = (rest + S[y, x] * math.exp(z * v)) / T[x]     # not em1 + 1: it rounds to 0
            counters[N_EXP] += 1
            if not (arg > 0.0 and arg < np.inf):
                return np.inf
            total += ctx_count[x] * math.log(arg)
    counters[N_LOG] += col_ptr[p + 1] - col_ptr[p]
    return total


@njit(cache=True)
def cd_direction_and_step(p, y, w_t, r, C, emp_t, gamma, beta, use_bound, f_max, omega, cols, ctx_count,
                          S, T, counters):
    """Algorithm 3, steps 1-2: one Newton direction (34) and backtracking on (35).

    With ``use_bound`` the O(1) test (38) on the upper bound (39) is tried
    first at each lambda, and the O(|Omega_t|) evaluation of A_t^CD(z), eq.
    (17), is skipped when it holds. For 0/1 data e^{z f_t(x,y)} = e^z, so a
    line-search step costs one exp (section 4.3). Returns the accepted z
    (0 when no lambda passes).
    """
    E, V2, M2 = _column_moments(p, y, cols, ctx_count, S, T)
    g = r * w_t + C * (E - emp_t)            # A_t^CD'(0), eq. (30)
    h = r + C * (V2 - M2)                    # A_t^CD''(0), eq. (31)
    if g == 0.0 or not h > 0.0:
        return 0.0
    counters[NEWTON] += 1
    d = -g / h                               # eq. (34)
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    lam = 1.0
    for trial in range(MAX_LINE_SEARCH):
        z = lam * d
        counters[LINE_SEARCH] += 1
        q = r * (w_t * z + 0.5 * z * z) - C * z * emp_t      # Q_t(z), eq. (11)
        target = gamma * z * g                                # right side of (35)
        if use_bound and omega > 0.0 and f_max > 0.0:
            counters[N_EXP] += 1
            counters[N_LOG] += 1
            arg = 1.0 + math.expm1(z * f_max) * E / (f_max * omega)
            if arg >= SMALL_ARG and q + C * omega * math.log(arg) <= target:   # (38)-(39)
                counters[SKIP] += 1
                if trial == 0:
                    counters[UNIT] += 1
                return z
        total = _cd_log_ratio(p, y, z, cols, ctx_count, S, T, counters)
        if q + C * total <= target:                            # (35) with A_t^CD of (17)
            if trial == 0:
                counters[UNIT] += 1
            return z
        lam *= beta
    return 0.0


# ------------------------------------------------------------ Algorithm 1


@njit(cache=True)
def sequential_pass(method, order, w, reg, C, emp, newton_tol, gamma, beta, use_bound,
                    rows, cols, feat_pred, feat_label, pred_max, pred_count, ctx_count, S, T, T_top, counters):
    """One outer iteration of Algorithm 1: for t in order, solve A_t, w_t += z, eqs. (18)-(19).

    ``method`` is SCGIS (A_t^SCGIS minimized by Newton to |A_t'| <= newton_tol)
    or CD (Algorithm 3). ``pred_max[p]`` is f_t^# (eq. 14) and ``pred_count[p]``
    is N Ptilde_t (eq. 40) for the features on predicate p.
    """
    scores = np.empty(S.shape[0])
    for i in range(order.shape[0]):
        t = order[i]
        p = feat_pred[t]
        r = reg[t]
        if p < 0:                        # f_t == 0 everywhere: A_t = Q_t
            if r > 0.0:
                w[t] += C * emp[t] / r - w[t]
            continue
        y = feat_label[t]
        if method == SCGIS:
            E, V2, M2 = _column_moments(p, y, cols, ctx_count, S, T)
            z = newton_exp_surrogate(r, w[t], C, emp[t], E, pred_max[p], newton_tol, counters)
        else:
            z = cd_direction_and_step(p, y, w[t], r, C, emp[t], gamma, beta, use_bound, pred_max[p],
                                      pred_count[p], cols, ctx_count, S, T, counters)
        if z != 0.0 and math.isfinite(z):
            _update_column(t, z, w, rows, cols, feat_pred, feat_label, S, T, T_top, scores, counters)


# ------------------------------------------------------------- f^# helpers


@njit(cache=True, parallel=True)
def feature_sums(n_labels, rows, out):
    """out[x, y] = f^#(x, y) = sum_t f_t(x, y) (IIS); returns f^# = max (GIS)."""
    ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat = rows
    n_ctx = ctx_ptr.shape[0] - 1
    n_feat = 0
    for j in range(map_feat.shape[0]):
        n_feat = max(n_feat, map_feat[j] + 1)
    ones = np.ones(n_feat)
    best = np.zeros(n_ctx)
    for x in prange(n_ctx):
        s = np.empty(n_labels)
        context_scores(x, ones, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, s)
        if out.shape[0] > 0:
            out[x, :] = s
        best[x] = s.max()
    return best.max() if n_ctx > 0 else 0.0
