"""Algorithm 3 of Huang, Hsieh, Chang & Lin (2010): the CD sub-problem, one Newton step plus line search.

Scale and storage of S_w, T_w (whole or a block of one column, ``link``) as in
:mod:`loglin.kernels.scaled_scores`.
CD evaluates A_t^CD (eq. 17) and applies (18)-(19) in the same column pass
and undoes the step from a saved copy in the rare case that (35) fails.
In the line search, 1 + P (e^{zf} - 1) is re-formed without cancellation
when it is below 1e-4 (P near 1 and a large negative step).
"""
import math

import numpy as np
from numba import njit

from .lanes import (LANES, add_lane, combine_lanes, start_lanes, vadd, vdiv, vload, vmul, vsplat, vsub, vsum, vtail,
                    vwhere_gt)
from .scaled_scores import (BOUND_TERMS, COUNT, LINE_SEARCH, N_EXP, N_LOG, NEWTON, SERIES, SERIES_LOW, SERIES_MAX,
                            SERIES_NEGLIGIBLE, SERIES_TERMS, SKIP, TOP, TOTAL, UNIT, _column_moments, _repair,
                            _scale_entry, _store_row, _update_column, add_bound_powers, add_high_powers,
                            add_series_powers, add_series_vector, start_series_powers)

SMALL_ARG = 1e-4                 # below this 1 + P (e^{zf} - 1) is re-formed without cancellation
MAX_LINE_SEARCH = 60             # lambda = 1, beta, ..., beta^59
# e^z - 1 where the bounds _series_bound and _split_bound are tried: from e^z = 1e-3 on, 1 + P (e^z - 1) >= e^z
# stays above SMALL_ARG, so the exact evaluation would take log1p of the same P and the bounds hold for it too
BOUND_LOW, BOUND_HIGH = -0.999, 1e3
SUMS = SERIES_TERMS + 7          # M_1..M_24, then the sums of _column_split_sums


@njit(cache=True)
def _other_scores(x, y, S, R, link):
    """sum_{y' != y} S[x, y'] over the whole row of context x (a block holds only some labels)."""
    S_all, R_all, ctx, label = link
    rest = 0.0
    if ctx.shape[0] == 0:
        for yy in range(S.shape[1]):
            if yy != y:
                rest += S[x, yy]
        return rest
    gx = ctx[x]
    _store_row(x, gx, S, R, S_all, R_all, label)
    for yy in range(S_all.shape[1]):
        if yy != label[y]:
            rest += S_all[gx, yy]
    return rest


@njit(cache=True)
def _log_ratio_without_cancellation(x, y, v, z, S, R, counters, link):
    """log(1 + P (e^{zv} - 1)) re-formed as log((sum_{y' != y} S + S e^{zv}) / T) where 1 + P (e^{zv} - 1) is
    small (P near 1, large negative step); a zero or non-finite ratio gives nan, which rejects the step.
    Not inlined: ``link`` in the inlined column loop would cost reference counting per element."""
    rest = _other_scores(x, y, S, R, link)
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
    adds to M_k only while its term (P |e^z - 1|)^k / k of the series can be
    above rounding (see :mod:`loglin.kernels.scaled_scores`): to M_1, M_2 if
    P <= SERIES_NEGLIGIBLE, to M_1..M_12 if P <= SERIES_HIGH, else to all.
    M_1..M_12 in lanes (:data:`loglin.kernels.scaled_scores.LANES`, locals: registers), M_13..M_24 in row order.
    """
    col_ptr, col_ctx, _ = cols
    lo = col_ptr[p]
    m = start_series_powers(sums)
    for k in range(lo, col_ptr[p + 1]):
        x = col_ctx[k]
        c, P = R[x, COUNT], S[x, y] / R[x, TOTAL]
        m = add_lane(m, (k - lo) % LANES, add_series_powers, c, P)
        add_high_powers(c, P, sums)
    combine_lanes(m, sums)


@njit(cache=True, inline="always")
def _column_bound_powers(p, y, cols, S, R, sums):
    """sums[k-1] = M_k for k = 1..BOUND_TERMS only (bit-equal to those of :func:`_column_power_sums`)."""
    col_ptr, col_ctx, _ = cols
    lo = col_ptr[p]
    b = start_lanes((0.0, 0.0, 0.0))
    for k in range(lo, col_ptr[p + 1]):
        x = col_ctx[k]
        b = add_lane(b, (k - lo) % LANES, add_bound_powers, R[x, COUNT], S[x, y] / R[x, TOTAL])
    combine_lanes(b, sums)


@njit(cache=True, inline="always")
def _log_series(em1, sums, terms):
    """sum_{k <= terms} (-1)^(k+1) (e^z - 1)^k M_k / k: the series of sum_x c(x) log(1 + P_x (e^z - 1))."""
    total = 0.0
    power = 1.0
    for j in range(terms):
        power *= em1
        term = power * sums[j] / (j + 1)
        total += term if j % 2 == 0 else -term
    return total


@njit(cache=True, inline="always")
def _series_bound(em1, sums):
    """An upper bound of sum_x c(x) log(1 + P_x (e^z - 1)), eq. (17) for 0/1 data, from M_1..M_BOUND_TERMS.

    Taylor's remainder of log(1 + v) after an odd number of terms is -v^(N+1) / ((N+1) (1+xi)^(N+1)) <= 0
    for every v > -1, so the series cut after BOUND_TERMS (odd) terms bounds each context's log from above,
    for any step, not only |e^z - 1| <= SERIES_MAX. M_3.. leave out the contexts with P <= SERIES_NEGLIGIBLE
    (:func:`loglin.kernels.scaled_scores.add_series_powers`); their terms from the third on add up to at
    most |e^z - 1|^3 SERIES_NEGLIGIBLE^2 M_1 (|e^z - 1| SERIES_NEGLIGIBLE <= 1/2), which is added.
    """
    a = abs(em1)
    return _log_series(em1, sums, BOUND_TERMS) + a * a * a * (SERIES_NEGLIGIBLE * SERIES_NEGLIGIBLE) * sums[0]


@njit(cache=True, inline="always")
def _add_split_terms(acc, c, P):
    """One context's terms of :func:`_column_split_sums`; selects, not branches: P's side of 1/2 is unpredictable."""
    l1, l2, l3, n_hi, h1, h2, h3 = acc
    high = P > 0.5
    v = 1.0 - P if high else P
    a = c * v
    b = a * v
    d = b * v
    l1 += 0.0 if high else a
    l2 += 0.0 if high else b
    l3 += 0.0 if high else d
    n_hi += c if high else 0.0
    h1 += a if high else 0.0
    h2 += b if high else 0.0
    h3 += d if high else 0.0
    return l1, l2, l3, n_hi, h1, h2, h3


@njit(cache=True, error_model="numpy")
def _column_split_sums(p, y, cols, S, R, out):
    """out[:7] = (L_1, L_2, L_3, N_hi, H_1, H_2, H_3) over column p, label y (0/1 data) for :func:`_split_bound`:
    L_k = sum c(x) P^k over the contexts with P <= 1/2, N_hi = sum c(x) and H_k = sum c(x) (1 - P)^k over
    those with P > 1/2 (1 - P is then exact: Sterbenz). Gathered only when the bound from M_1..M_3 fails.
    In lanes, as M_1..M_3."""
    col_ptr, col_ctx, _ = cols
    lo = col_ptr[p]
    acc = start_lanes((0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    for k in range(lo, col_ptr[p + 1]):
        x = col_ctx[k]
        acc = add_lane(acc, (k - lo) % LANES, _add_split_terms, R[x, COUNT], S[x, y] / R[x, TOTAL])
    combine_lanes(acc, out)


@njit(cache=True, inline="always")
def _add_split_vector(acc, c, P, zero, one):
    """:func:`_add_split_terms` of LANES contexts at once (vectors, kernels.lanes): the same operations per lane."""
    l1, l2, l3, n_hi, h1, h2, h3 = acc
    v = vwhere_gt(P, 0.5, vsub(one, P), P)
    a = vmul(c, v)
    b = vmul(a, v)
    d = vmul(b, v)
    l1 = vadd(l1, vwhere_gt(P, 0.5, zero, a))
    l2 = vadd(l2, vwhere_gt(P, 0.5, zero, b))
    l3 = vadd(l3, vwhere_gt(P, 0.5, zero, d))
    n_hi = vadd(n_hi, vwhere_gt(P, 0.5, c, zero))
    h1 = vadd(h1, vwhere_gt(P, 0.5, a, zero))
    h2 = vadd(h2, vwhere_gt(P, 0.5, b, zero))
    h3 = vadd(h3, vwhere_gt(P, 0.5, d, zero))
    return l1, l2, l3, n_hi, h1, h2, h3


@njit(cache=True, error_model="numpy")
def _block_split_sums(s, T, c, out):
    """:func:`_column_split_sums` of a block's column as 1-D contiguous arrays (S, T, c): the same arithmetic
    and lanes, LANES rows at once (the last ones padded with zero terms)."""
    zero, one = vsplat(0.0), vsplat(1.0)
    acc = zero, zero, zero, zero, zero, zero, zero
    n = s.shape[0]
    whole = n - n % LANES
    for i in range(0, whole, LANES):
        acc = _add_split_vector(acc, vload(c, i), vdiv(vload(s, i), vload(T, i)), zero, one)
    if whole < n:
        acc = _add_split_vector(acc, vtail(c, whole, n, 0.0), vdiv(vtail(s, whole, n, 0.0), vtail(T, whole, n, 1.0)),
                                zero, one)
    for j in range(7):
        out[j] = vsum(acc[j])


@njit(cache=True, error_model="numpy")
def _block_power_sums(s, T, c, sums):
    """:func:`_column_power_sums` of a block's column as 1-D contiguous arrays (S, T, c): the same arithmetic
    and lanes, M_1..M_12 of LANES rows at once (the last ones padded with zero terms), M_13..M_24 in row order."""
    start_series_powers(sums)
    zero = vsplat(0.0)
    m = zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero, zero
    n = s.shape[0]
    whole = n - n % LANES
    for i in range(0, whole, LANES):
        m = add_series_vector(m, vload(c, i), vdiv(vload(s, i), vload(T, i)), zero)
    if whole < n:
        m = add_series_vector(m, vtail(c, whole, n, 0.0), vdiv(vtail(s, whole, n, 0.0), vtail(T, whole, n, 1.0)), zero)
    for j in range(SERIES_LOW):
        sums[j] = vsum(m[j])
    for i in range(n):
        add_high_powers(c[i], s[i] / T[i], sums)


@njit(cache=True, inline="always")
def _split_bound(z, em1, out):
    """An upper bound of sum_x c(x) log(1 + P_x (e^z - 1)) (eq. 17, 0/1 data) for large steps, from
    :func:`_column_split_sums`: where P <= 1/2 the three-term series in P (e^z - 1), and where P > 1/2

        log(1 + P (e^z - 1)) = z + log(1 + (1 - P) (e^{-z} - 1)),

    the three-term series in (1 - P) (e^{-z} - 1); both bound the log from above (odd number of terms,
    :func:`_series_bound`) and both arguments are at most 1/2 |e^{+-z} - 1|, so the omitted terms are
    small where the bound from M_1..M_3 is loose: P near 1, or e^z - 1 beyond 1. Used for
    BOUND_LOW <= e^z - 1 <= BOUND_HIGH.
    """
    u = math.expm1(-z)
    low = em1 * out[0] - em1 * em1 * out[1] / 2 + em1 * em1 * em1 * out[2] / 3
    high = z * out[3] + u * out[4] - u * u * out[5] / 2 + u * u * u * out[6] / 3
    return low + high


@njit(cache=True, inline="always")
def _series_log_ratio(em1, sums):
    """sum_x c(x) log(1 + P_x (e^z - 1)) = sum_k (-1)^(k+1) (e^z - 1)^k M_k / k, eq. (17) for 0/1 data.

    The alternating series converges for |e^z - 1| < 1 (P_x <= 1); used only for
    |e^z - 1| <= SERIES_MAX, where the omitted terms are below rounding. O(1) per
    line-search step instead of O(|Omega_t|) logs.
    """
    return _log_series(em1, sums, SERIES_TERMS)


@njit(cache=True, inline="always")
def _expm1_and_exp(a, counters):
    """(e^a - 1, e^a), both to full relative precision: one exp unless a < -1/2."""
    counters[N_EXP] += 1
    em1 = math.expm1(a)
    if a > -0.5:
        return em1, 1.0 + em1
    counters[N_EXP] += 1
    return em1, math.exp(a)


@njit(cache=True, error_model="numpy")
def _step_and_measure(t, p, y, z, w, rows, cols, S, R, saved, scores, counters, link):
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
        u = S[x, y] / R[x, TOTAL] * em1                      # log(T_new(x) / T_w(x)) = log(1 + u), eq. (17)
        if 1.0 + u >= SMALL_ARG or not u == u:
            total += R[x, COUNT] * math.log1p(u)
        else:
            total += R[x, COUNT] * _log_ratio_without_cancellation(x, y, v, z, S, R, counters, link)
        i = k - lo
        saved[i, 0] = S[x, y]
        saved[i, 1] = R[x, TOTAL]
        saved[i, 2] = R[x, TOP]
        saved[i, 3] = _scale_entry(x, y, factor, S, R)
    counters[N_LOG] += hi - lo
    return total


@njit(cache=True)
def _finish_step(p, y, w, rows, cols, S, R, saved, scores, counters, link):
    """The step is accepted: repair the rows :func:`_step_and_measure` marked."""
    col_ptr, col_ctx, _ = cols
    lo = col_ptr[p]
    for k in range(lo, col_ptr[p + 1]):
        status = saved[k - lo, 3]
        if status != 0.0:
            _repair(col_ctx[k], int(status), w, rows, S, R, scores, counters, link)


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


@njit(cache=True, inline="always")
def _unit_or_update(t, z, trial, fused, w, rows, cols, S, R, scores, counters, p, y, link):
    """A step accepted without a column pass: counted (a unit step at trial 0) and applied by (18)-(19) now,
    unless the caller fuses the update with the next feature's sums."""
    if trial == 0:
        counters[UNIT] += 1
    if not fused:
        _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y, link)


@njit(cache=True, error_model="numpy")
def cd_step(t, p, y, w, r, C, emp_t, gamma, beta, use_bound, f_max, omega, rows, cols, S, R, saved, sums,
            scores, counters, link, fused):
    """Algorithm 3 for coordinate t: Newton direction (34), backtracking on (35), w_t += z, (18)-(19).

    With ``use_bound`` the O(1) test (38) on the upper bound (39) is tried
    first at each lambda; when it holds the O(|Omega_t|) evaluation of
    A_t^CD(z), eq. (17), is skipped. Otherwise the evaluation and the update
    share one column pass (:func:`_step_and_measure`), undone if (35) fails.
    For 0/1 data e^{z f_t(x,y)} = e^z: one exp per line-search step (section
    4.3), and (35) is decided in O(1) where possible: by the upper bound
    :func:`_series_bound` from M_1..M_3 (gathered with E), then by
    :func:`_split_bound` (its sums in an extra pass, only when the first
    fails), then for small steps by the power series :func:`_series_log_ratio`
    (M_4..M_24 in an extra pass); only what is left evaluates (17) over the
    column. A bound that holds implies (35), so the same lambda is accepted.
    With ``fused`` (0/1 data) ``sums`` hold M_1..M_3 of that column, and a
    step accepted in O(1) is left to the caller, who applies it in the pass
    that gathers the next feature's sums
    (:func:`loglin.kernels.scaled_scores.block_pass`).
    Returns (the accepted z or 0, whether w_t += z and (18)-(19) are left to do).
    """
    w_t = w[t]
    binary = cols[2].shape[0] == 0
    full = not fused                         # fused: sums hold only M_1..M_BOUND_TERMS
    split = False                            # sums[SERIES_TERMS:] hold those of _column_split_sums
    if binary:
        if full:
            _column_power_sums(p, y, cols, S, R, sums)
        E, V2, M2 = sums[0], sums[0], sums[1]
    else:
        E, V2, M2 = _column_moments(p, y, cols, S, R)
    g = r * w_t + C * (E - emp_t)            # A_t^CD'(0), eq. (30)
    h = r + C * (V2 - M2)                    # A_t^CD''(0), eq. (31)
    if g == 0.0 or not h > 0.0:
        return 0.0, False
    counters[NEWTON] += 1
    d = -g / h                               # eq. (34)
    lam = 1.0
    for trial in range(MAX_LINE_SEARCH):
        z = lam * d
        counters[LINE_SEARCH] += 1
        q = r * (w_t * z + 0.5 * z * z) - C * z * emp_t      # Q_t(z), eq. (11)
        target = gamma * z * g                                # right side of (35)
        em1_bound = np.nan
        if use_bound and omega > 0.0 and f_max > 0.0:
            counters[N_EXP] += 1
            counters[N_LOG] += 1
            em1_bound = math.expm1(z * f_max)
            arg = 1.0 + em1_bound * E / (f_max * omega)
            if arg >= SMALL_ARG and q + C * omega * math.log(arg) <= target:   # (38)-(39)
                counters[SKIP] += 1
                _unit_or_update(t, z, trial, fused, w, rows, cols, S, R, scores, counters, p, y, link)
                return z, fused
        if binary:
            counters[N_EXP] += 1
            # one exp per line-search step (section 4.3): (38)'s when f_max = 1 (0/1 data), z * 1.0 being z
            em1 = em1_bound if f_max == 1.0 and em1_bound == em1_bound else math.expm1(z)
            inside = em1 >= BOUND_LOW and em1 <= BOUND_HIGH
            accepted = inside and q + C * _series_bound(em1, sums) <= target         # implies (35)
            if not accepted and inside:      # the caller's pending update is applied: sums of S as it is now
                if not split:
                    if fused:                # a block: its columns are contiguous (as in block_pass)
                        _block_split_sums(S.T[y], R.T[TOTAL], R.T[COUNT], sums[SERIES_TERMS:])
                    else:
                        _column_split_sums(p, y, cols, S, R, sums[SERIES_TERMS:])
                    split = True
                counters[N_EXP] += 1
                accepted = q + C * _split_bound(z, em1, sums[SERIES_TERMS:]) <= target     # implies (35)
            small = abs(em1) <= SERIES_MAX
            if not accepted and small:
                if not full:                 # only when fused: a block
                    _block_power_sums(S.T[y], R.T[TOTAL], R.T[COUNT], sums)
                    full = True
                accepted = q + C * _series_log_ratio(em1, sums) <= target      # (35), A_t^CD by its series
            if accepted or small:
                counters[SERIES] += 1
            if accepted:
                _unit_or_update(t, z, trial, fused, w, rows, cols, S, R, scores, counters, p, y, link)
                return z, fused
            if small:
                lam *= beta
                continue
        total = _step_and_measure(t, p, y, z, w, rows, cols, S, R, saved, scores, counters, link)
        if q + C * total <= target:                            # (35) with A_t^CD of (17)
            if trial == 0:
                counters[UNIT] += 1
            _finish_step(p, y, w, rows, cols, S, R, saved, scores, counters, link)
            return z, False
        _undo_step(t, p, y, w_t, w, cols, S, R, saved)
        lam *= beta
    return 0.0, False
