"""Compiled sub-problem solvers of Huang, Hsieh, Chang & Lin (2010) for Maxent.

Everything is in loglin's scale f = C * N * L (sigma^2 = C * N), so the
papers' Q_t of eq. (11) reads

    Q_t(z) = r_t (w_t z + z^2 / 2) - C z N Ptilde(f_t)

and every sum  sum_x Ptilde(x) ...  becomes  C sum_x c(x) ... .

Sequential methods (SCGIS, CD) keep S_w(x, y) and T_w(x) of eq. (1) and
update them by eqs. (18)-(19) after each sub-problem. To keep them finite for
any w they are stored *per context up to a positive factor*:

    S[x, y] = S_w(x, y) / m(x),   T[x] = T_w(x) / m(x),

(only the ratio P_w(y|x) = S / T is ever used). S is label-major (K x X):
feature t = (predicate p, label y) reads S[x, y] for the sorted contexts x of
column p, so long columns stream through memory instead of touching one
cache line per context. T[x], the largest T[x] since its last exact sum
(T_top) and the count c(x) share one 32-byte record R[x], so a column pass
touches two cache lines per (x, y). Guards (:func:`_scale_entry`,
:func:`_repair_row`):

* a context whose T[x] exceeds 1e150 is rescaled to T[x] = 1;
* T[x] is a running sum with absolute error ~ eps * T_top, so it is
  re-summed from S once it falls below 1e-6 of T_top; all of T is re-summed
  at the start of every outer iteration;
* entries that underflowed (S < 1e-290) cannot be scaled back up, so a
  context is rebuilt from w (its scores, K exps) when such an entry is about
  to grow, or when the exact T[x] is below 1e-150 or not finite.

CD evaluates A_t^CD (eq. 17) and applies (18)-(19) in the same column pass
and undoes the step from a saved copy in the rare case that (35) fails.

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

N_EXP, N_LOG, NEWTON, LINE_SEARCH, UNIT, SKIP, RESCALE, SERIES = range(8)
COUNTER_NAMES = ("n_exp", "n_log", "newton_steps", "line_search_steps", "unit_steps",
                 "upper_bound_skips", "rescaled_rows", "series_evaluations")

SCGIS, CD = 0, 1                 # sub-problem of a sequential pass
TINY_T, HUGE_T = 1e-150, 1e150   # rebuild / rescale a row of S outside this range
TINY_S = 1e-290                  # an S entry below this has lost precision to underflow
CANCEL = 1e-6                    # re-sum T[x] if it drops below CANCEL * old T[x]
MAX_EXP_STEP = 30.0              # a Newton step may move z * f^s by at most this
MAX_EXP_TOTAL = 50.0             # an exactly solved sub-problem moves z * f^s by at most this
SMALL_ARG = 1e-4                 # below this 1 + P (e^{zf} - 1) is re-formed without cancellation
MAX_NEWTON = 100                 # Newton iterations per exactly-solved sub-problem
MAX_LINE_SEARCH = 60             # lambda = 1, beta, ..., beta^59
SERIES_TERMS = 12                # (unrolled in _column_power_sums) A_t^CD of 0/1 features by its power series when |e^z - 1| <= SERIES_MAX:
SERIES_MAX = 0.0625              # the truncation error is below 0.0625^12 / 13 ~ 3e-16 of the first term
SERIES_NEGLIGIBLE = 1e-6         # P_w(y|x) below this adds only to M_1 and M_2 of the series


# ------------------------------------------------------------ S_w and T_w
# Per-context record R[x] = (T[x], T_top[x], c(x), unused): one 32-byte record, so a
# column pass touches two cache lines per (x, y), S[x, y] and R[x], not four.

TOTAL, TOP, COUNT = 0, 1, 2      # fields of a context record
RECORD = 4


def context_records(ctx_count):
    """R with c(x) filled in; T and T_top are set by :func:`init_scores`."""
    R = np.zeros((ctx_count.shape[0], RECORD))
    R[:, COUNT] = ctx_count
    return R


@njit(cache=True)
def _fill_row(x, w, rows, S, R, scores):
    """S[x, :] = exp(sum_t w_t f_t(x, .) - max), T[x] = T_top[x] = sum_y S[x, y]."""
    ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat = rows
    context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, scores)
    m = scores.max()
    total = 0.0
    for y in range(scores.shape[0]):
        S[x, y] = math.exp(scores[y] - m)
        total += S[x, y]
    R[x, TOTAL] = total
    R[x, TOP] = total


@njit(cache=True, parallel=True)
def init_scores(w, rows, S, R):
    """S_w and T_w of eq. (1) for every context (X * K exp operations)."""
    n_labels = S.shape[1]
    n_ctx = S.shape[0]
    nb = min(n_ctx, 64)
    for b in prange(nb):
        scores = np.empty(n_labels)
        for x in range(b * n_ctx // nb, (b + 1) * n_ctx // nb):
            _fill_row(x, w, rows, S, R, scores)


@njit(cache=True, parallel=True)
def resum_totals(S, R):
    """T[x] = sum_y S[x, y] exactly (undoes drift from repeated eq. (19))."""
    n_ctx = S.shape[0]
    nb = min(n_ctx, 64)
    for b in prange(nb):
        lo, hi = b * n_ctx // nb, (b + 1) * n_ctx // nb
        for x in range(lo, hi):
            _resum_row(x, S, R)


@njit(cache=True)
def _resum_row(x, S, R):
    total = 0.0
    for k in range(S.shape[1]):
        total += S[x, k]
    R[x, TOTAL] = total
    R[x, TOP] = total
    return total


@njit(cache=True, inline="always")
def _scale_entry(x, y, factor, S, R):
    """Eqs. (18)-(19) for one (x, y) on the fast path: S *= factor, T += S_old (factor - 1).

    Returns 0 when done, or the repair the row needs first (nothing written):
    1 re-sum T from S after writing S (the running sum would lose its relative
    accuracy: T[x] < CANCEL * T_top, or T left [TINY_T, HUGE_T]), 2 rebuild the
    row from w (an entry that underflowed, S < TINY_S, is about to grow: its true
    value may matter now).
    """
    s_old = S[x, y]
    if s_old < TINY_S and factor > 1.0:
        return 2
    s_new = s_old * factor
    S[x, y] = s_new
    t_new = R[x, TOTAL] + (s_new - s_old)
    if t_new > CANCEL * R[x, TOP] and t_new > TINY_T and t_new < HUGE_T:
        R[x, TOTAL] = t_new
        if t_new > R[x, TOP]:
            R[x, TOP] = t_new
        return 0
    return 1


@njit(cache=True)
def _repair_row(x, status, w, rows, S, R, scores, counters):
    """Finish eq. (19) for a row :func:`_scale_entry` left: re-sum, rescale, or rebuild from w.

    A row whose T exceeds HUGE_T is rescaled to T = 1 (small entries may
    underflow to 0); one whose T fell below TINY_T or is not finite (entries
    that underflowed may no longer be negligible) is rebuilt (K exps).
    """
    counters[RESCALE] += 1
    if status == 1:
        total = _resum_row(x, S, R)
        if total > HUGE_T and total < np.inf:
            inv = 1.0 / total
            for k in range(S.shape[1]):
                S[x, k] *= inv
            R[x, TOTAL] = R[x, TOP] = 1.0
            return
        if total > TINY_T and total < np.inf:
            return
    _fill_row(x, w, rows, S, R, scores)
    counters[N_EXP] += S.shape[1]


@njit(cache=True)
def _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y):
    """w_t += z and the matching updates (18)-(19) of S_w, T_w on column p, label y."""
    w[t] += z
    col_ptr, col_ctx, col_val = cols
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
        status = _scale_entry(x, y, factor, S, R)
        if status != 0:
            _repair_row(x, status, w, rows, S, R, scores, counters)


@njit(cache=True, inline="always")
def _column_moments(p, y, cols, S, R):
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
        pv = S[x, y] / R[x, TOTAL] * v
        c = R[x, COUNT]
        E += c * pv
        V2 += c * pv * v
        M2 += c * pv * pv
    return E, V2, M2


# ---------------------------------- Table 1: A_t^GIS, A_t^SCGIS, A_t^IIS on one Newton loop
# A_t(z) = Q_t(z) + C sum_{x,y} c(x) P_w(y|x) f_t(x,y) (e^{z f^s(x,y)} - 1) / f^s(x,y), eq. (72), with
# f^s = f^# (GIS), f_t^# (SCGIS) or f^#(x,y) (IIS). For GIS and SCGIS f^s is one number and the sum is
# E (e^{z f^s} - 1) / f^s, E of eq. (41) / (32): O(1) per evaluation (Table 2). For IIS it runs over
# the (x, y) of feature t: O(l-bar) exps per evaluation, eq. (28). ``iis`` is None for GIS and SCGIS,
# else IIS's data (occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy).


@njit(cache=True, inline="always")
def _growth(z, fs):
    """(e^{z fs} - 1) / fs, and its limit z at fs = 0."""
    return math.expm1(z * fs) / fs if fs > 0 else z


@njit(cache=True)
def _iis_sums(t, z, iis, excess, counters):
    """Over the (x, y) of feature t, with f# = f^#(x, y): (sum c P f_t e^{z f#}, sum c P f_t f# e^{z f#}),
    the sums of eq. (28); with ``excess``, (sum c P f_t (e^{z f#} - 1) / f#, 0) of A_t^IIS (Table 1)."""
    occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy = iis
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    a = b = 0.0
    for o in range(occ_ptr[t], occ_ptr[t + 1]):
        j = occ_entry[o]
        p, y = map_pred[j], map_label[j]
        for k in range(col_ptr[p], col_ptr[p + 1]):
            x = col_ctx[k]
            v = 1.0 if binary else col_val[k]
            fs = fsharp_xy[x, y]
            weight = ctx_count[x] * prob[x, y] * v
            if excess:
                if fs > 0:
                    counters[N_EXP] += 1
                a += weight * _growth(z, fs)
                continue
            e = 1.0
            if z != 0.0:
                e = math.exp(z * fs)
                counters[N_EXP] += 1
            term = weight * e
            a += term
            b += term * fs
    return a, b


@njit(cache=True)
def _surrogate_slopes(t, z, C, E, fs, iis, counters):
    """C times the sums of A_t'(z) and A_t''(z) beyond Q_t' and Q_t'' (eqs. 26-28)."""
    if iis is None:
        ez = 1.0
        if z != 0.0 and fs > 0:
            ez = math.exp(z * fs)
            counters[N_EXP] += 1
        return C * E * ez, C * E * fs * ez
    a, b = _iis_sums(t, z, iis, False, counters)
    return C * a, C * b


@njit(cache=True)
def _surrogate_excess(t, z, C, E, fs, iis, counters):
    """A_t(z) - Q_t(z): C times the sum of Table 1."""
    if iis is None:
        if fs > 0:
            counters[N_EXP] += 1
        return C * E * _growth(z, fs)
    return C * _iis_sums(t, z, iis, True, counters)[0]


@njit(cache=True)
def minimize_surrogate(t, r, w_t, C, emp_t, E, fs, tol, iis, counters):
    """Minimize A_t(z) of Table 1 by Newton's method (26)-(28), safeguarded so that A_t(z) <= 0.

    ``fs``: f^# (GIS), f_t^# (SCGIS), or the largest f^#(x, y) (IIS, which reads its own
    f^#(x, y) from ``iis``). At least one step is taken, then steps continue until
    |A_t'(z)| <= tol. Guards: a step moves z fs by at most MAX_EXP_STEP and the result by
    at most MAX_EXP_TOTAL (E may have underflowed to 0 while the true E is tiny; the
    surrogate is then only trustworthy for moderate z), and z is halved until
    A_t(z) <= A_t(0) = 0, so that the update never increases f (the bound (33)).

    Where A_t costs O(l-bar) exps (IIS), the slopes Newton already has certify A_t(z) <= 0
    first, and A_t itself is evaluated only when they do not: A_t is convex, so
    A_t(z) <= z A_t'(z); and its third derivative is non-negative (f >= 0, assumption (5)),
    so A_t' is convex and, for z > 0, A_t(z) <= z (A_t'(0) + A_t'(z)) / 2 (trapezoid rule).
    """
    z = z_seen = g0 = g = 0.0
    limit = MAX_EXP_TOTAL / fs if fs > 0 else np.inf
    for it in range(MAX_NEWTON):
        slope, curvature = _surrogate_slopes(t, z, C, E, fs, iis, counters)
        g = r * (w_t + z) - C * emp_t + slope
        z_seen = z
        if it == 0:
            g0 = g
        elif abs(g) <= tol:
            break
        h = r + curvature
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
    if iis is not None and z == z_seen and (z * g <= 0.0 or (z > 0.0 and g0 + g <= 0.0)):
        return z
    for k in range(MAX_LINE_SEARCH):
        if r * (w_t * z + 0.5 * z * z) - C * emp_t * z + _surrogate_excess(t, z, C, E, fs, iis, counters) <= 0.0:
            return z
        z *= 0.5
    return 0.0


@njit(cache=True, parallel=True)
def gis_pass(w, reg, C, emp, expect, f_sharp, tol, z_out, counters):
    """Algorithm 2 with A_t^GIS: n independent sub-problems from one E = (41)."""
    n = w.shape[0]
    per = np.zeros((n, 2), dtype=np.int64)
    for t in prange(n):
        c = np.zeros(len(COUNTER_NAMES), dtype=np.int64)
        z_out[t] = minimize_surrogate(t, reg[t], w[t], C, emp[t], expect[t], f_sharp, tol, None, c)
        per[t, 0] = c[N_EXP]
        per[t, 1] = c[NEWTON]
    counters[N_EXP] += per[:, 0].sum()
    counters[NEWTON] += per[:, 1].sum()


# ----------------------------------------------------------------------- IIS


@njit(cache=True, parallel=True)
def iis_pass(w, reg, C, emp, occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy,
             f_sharp, tol, z_out, counters):
    """Algorithm 2 with A_t^IIS: each Newton direction (28) costs O(l-bar) exps."""
    n = w.shape[0]
    per = np.zeros((n, 2), dtype=np.int64)
    for t in prange(n):
        iis = (occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy)   # (a parfor takes no tuple)
        c = np.zeros(len(COUNTER_NAMES), dtype=np.int64)
        z_out[t] = minimize_surrogate(t, reg[t], w[t], C, emp[t], 0.0, f_sharp, tol, iis, c)
        per[t, 0] = c[N_EXP]
        per[t, 1] = c[NEWTON]
    counters[N_EXP] += per[:, 0].sum()
    counters[NEWTON] += per[:, 1].sum()


# ------------------------------------------------------------------------ CD


@njit(cache=True, inline="always")
def _log_ratio_term(x, y, v, z, em1, S, R, counters):
    """log(T_{w+z e_t}(x) / T_w(x)) = log(1 + P_w(y|x)(e^{z v} - 1)), the summand of eq. (17).

    Where 1 + P (e^{zv} - 1) is small (P near 1, large negative step) it is
    re-formed as (sum_{y' != y} S + S e^{zv}) / T without cancellation; a zero
    or non-finite ratio gives -inf / nan, which rejects the step.
    """
    u = S[x, y] / R[x, TOTAL] * em1
    if 1.0 + u >= SMALL_ARG or not u == u:
        return math.log1p(u)
    rest = 0.0
    for yy in range(S.shape[1]):
        if yy != y:
            rest += S[x, yy]
    arg = (rest + S[x, y] * math.exp(z * v)) / R[x, TOTAL]     # not em1 + 1: it rounds to 0
    counters[N_EXP] += 1
    if not (arg > 0.0 and arg < np.inf):
        return np.nan
    return math.log(arg)


@njit(cache=True, inline="always")
def _column_power_sums(p, y, cols, S, R, sums):
    """sums[k-1] = M_k = sum_x c(x) P_w(y|x)^k over column p, k = 1..SERIES_TERMS (0/1 data).

    M_1 = E of eq. (32) and M_1 - M_2 the data part of A_t^CD''(0), eq. (31);
    the rest make A_t^CD(z) an O(1) sum (:func:`_series_log_ratio`). A context
    with P <= SERIES_NEGLIGIBLE adds only to M_1 and M_2: its later terms in
    the series are below (P SERIES_MAX)^2 < 1e-15 of its first. Accumulators
    are locals (registers), not the output array.
    """
    col_ptr, col_ctx, _ = cols
    m1 = m2 = m3 = m4 = m5 = m6 = m7 = m8 = m9 = m10 = m11 = m12 = 0.0
    for k in range(col_ptr[p], col_ptr[p + 1]):
        x = col_ctx[k]
        P = S[x, y] / R[x, TOTAL]
        a = R[x, COUNT] * P
        m1 += a
        a *= P
        m2 += a
        if P > SERIES_NEGLIGIBLE:
            a *= P
            m3 += a
            a *= P
            m4 += a
            a *= P
            m5 += a
            a *= P
            m6 += a
            a *= P
            m7 += a
            a *= P
            m8 += a
            a *= P
            m9 += a
            a *= P
            m10 += a
            a *= P
            m11 += a
            a *= P
            m12 += a
    sums[0], sums[1], sums[2], sums[3], sums[4], sums[5] = m1, m2, m3, m4, m5, m6
    sums[6], sums[7], sums[8], sums[9], sums[10], sums[11] = m7, m8, m9, m10, m11, m12


@njit(cache=True, inline="always")
def _series_log_ratio(em1, sums):
    """sum_x c(x) log(1 + P_x (e^z - 1)) = sum_k (-1)^(k+1) (e^z - 1)^k M_k / k, eq. (17) for 0/1 data.

    The alternating series converges for |e^z - 1| < 1 (P_x <= 1); used only for
    |e^z - 1| <= SERIES_MAX, where the omitted terms are below rounding. O(1) per
    line-search step instead of O(|Omega_t|) logs.
    """
    total = 0.0
    power = 1.0
    for j in range(SERIES_TERMS):
        power *= em1
        term = power * sums[j] / (j + 1)
        total += term if j % 2 == 0 else -term
    return total


@njit(cache=True, inline="always")
def _expm1_and_exp(a, counters):
    """(e^a - 1, e^a), both to full relative precision: one exp unless a < -1/2."""
    counters[N_EXP] += 1
    em1 = math.expm1(a)
    if a > -0.5:
        return em1, 1.0 + em1
    counters[N_EXP] += 1
    return em1, math.exp(a)


@njit(cache=True)
def _step_and_measure(t, p, y, z, w, rows, cols, S, R, saved, scores, counters):
    """w_t += z with (18)-(19) *and* sum_x c(x) log(T_new(x) / T_w(x)) of eq. (17), in one column pass.

    Near the optimum lambda = 1 is accepted almost always (Theorem 6), so the
    O(|Omega_t|) evaluation of A_t^CD and the update share one pass over the
    column instead of two. ``saved`` keeps the old S[x, y], T[x], T_top[x] so
    that :func:`_undo_step` can put them back when (35) fails. Rows that need a
    repair (:func:`_repair_row`) are marked in ``saved[k, 3]`` and repaired only
    once the step is accepted. Returns the sum (nan if a ratio was not finite).
    """
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    w[t] += z
    factor = em1 = 0.0
    if binary:
        em1, factor = _expm1_and_exp(z, counters)      # for the whole column (section 4.3)
    lo, hi = col_ptr[p], col_ptr[p + 1]
    total = 0.0
    v = 1.0
    for k in range(lo, hi):
        x = col_ctx[k]
        if not binary:
            v = col_val[k]
            em1, factor = _expm1_and_exp(z * v, counters)
        total += R[x, COUNT] * _log_ratio_term(x, y, v, z, em1, S, R, counters)
        i = k - lo
        saved[i, 0] = S[x, y]
        saved[i, 1] = R[x, TOTAL]
        saved[i, 2] = R[x, TOP]
        saved[i, 3] = _scale_entry(x, y, factor, S, R)
    counters[N_LOG] += hi - lo
    return total


@njit(cache=True)
def _finish_step(p, y, w, rows, cols, S, R, saved, scores, counters):
    """The step is accepted: repair the rows :func:`_step_and_measure` marked."""
    col_ptr, col_ctx, _ = cols
    lo = col_ptr[p]
    for k in range(lo, col_ptr[p + 1]):
        status = saved[k - lo, 3]
        if status != 0.0:
            _repair_row(col_ctx[k], int(status), w, rows, S, R, scores, counters)


@njit(cache=True)
def _undo_step(t, p, y, w_t, w, cols, S, R, saved):
    """The step is rejected: w_t, S[x, y], T[x], T_top[x] exactly as they were."""
    w[t] = w_t
    col_ptr, col_ctx, _ = cols
    lo = col_ptr[p]
    for k in range(lo, col_ptr[p + 1]):
        x = col_ctx[k]
        S[x, y] = saved[k - lo, 0]
        R[x, TOTAL] = saved[k - lo, 1]
        R[x, TOP] = saved[k - lo, 2]


@njit(cache=True)
def cd_step(t, p, y, w, r, C, emp_t, gamma, beta, use_bound, f_max, omega, rows, cols, S, R, saved, sums,
            scores, counters):
    """Algorithm 3 for coordinate t: Newton direction (34), backtracking on (35), w_t += z, (18)-(19).

    With ``use_bound`` the O(1) test (38) on the upper bound (39) is tried
    first at each lambda; when it holds the O(|Omega_t|) evaluation of
    A_t^CD(z), eq. (17), is skipped. Otherwise the evaluation and the update
    share one column pass (:func:`_step_and_measure`), undone if (35) fails.
    For 0/1 data e^{z f_t(x,y)} = e^z: one exp per line-search step (section
    4.3), and for small steps A_t^CD(z) is the O(1) power series of
    :func:`_series_log_ratio` over sums gathered with E in the same pass.
    Returns the accepted z (0 when no lambda passes).
    """
    w_t = w[t]
    binary = cols[2].shape[0] == 0
    if binary:
        _column_power_sums(p, y, cols, S, R, sums)
        E, V2, M2 = sums[0], sums[0], sums[1]
    else:
        E, V2, M2 = _column_moments(p, y, cols, S, R)
    g = r * w_t + C * (E - emp_t)            # A_t^CD'(0), eq. (30)
    h = r + C * (V2 - M2)                    # A_t^CD''(0), eq. (31)
    if g == 0.0 or not h > 0.0:
        return 0.0
    counters[NEWTON] += 1
    d = -g / h                               # eq. (34)
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
                _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y)
                return z
        if binary:
            counters[N_EXP] += 1
            em1 = math.expm1(z)              # one exp per line-search step (section 4.3)
            if abs(em1) <= SERIES_MAX:
                counters[SERIES] += 1
                if q + C * _series_log_ratio(em1, sums) <= target:      # (35), A_t^CD by its series
                    if trial == 0:
                        counters[UNIT] += 1
                    _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y)
                    return z
                lam *= beta
                continue
        total = _step_and_measure(t, p, y, z, w, rows, cols, S, R, saved, scores, counters)
        if q + C * total <= target:                            # (35) with A_t^CD of (17)
            if trial == 0:
                counters[UNIT] += 1
            _finish_step(p, y, w, rows, cols, S, R, saved, scores, counters)
            return z
        _undo_step(t, p, y, w_t, w, cols, S, R, saved)
        lam *= beta
    return 0.0


# ------------------------------------------------------------ Algorithm 1


@njit(cache=True)
def sequential_pass(method, order, w, reg, C, emp, newton_tol, gamma, beta, use_bound,
                    rows, cols, feat_pred, feat_label, pred_max, pred_count, S, R, counters):
    """One outer iteration of Algorithm 1: for t in order, solve A_t, w_t += z, eqs. (18)-(19).

    ``method`` is SCGIS (A_t^SCGIS minimized by Newton to |A_t'| <= newton_tol)
    or CD (Algorithm 3, which applies its own step). ``pred_max[p]`` is f_t^#
    (eq. 14) and ``pred_count[p]`` is N Ptilde_t (eq. 40) for the features on
    predicate p. S, R: see the module notes.
    """
    scores = np.empty(S.shape[1])
    col_ptr = cols[0]
    longest = 0
    for p in range(col_ptr.shape[0] - 1):
        longest = max(longest, col_ptr[p + 1] - col_ptr[p])
    saved = np.empty((longest if method == CD else 0, 4))
    sums = np.zeros(SERIES_TERMS)
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
            E, V2, M2 = _column_moments(p, y, cols, S, R)
            z = minimize_surrogate(t, r, w[t], C, emp[t], E, pred_max[p], newton_tol, None, counters)
            if z != 0.0 and math.isfinite(z):
                _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y)
        else:
            cd_step(t, p, y, w, r, C, emp[t], gamma, beta, use_bound, pred_max[p], pred_count[p], rows, cols,
                    S, R, saved, sums, scores, counters)


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
