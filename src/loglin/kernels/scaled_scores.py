"""S_w(x, y) and T_w(x) of Huang, Hsieh, Chang & Lin (2010), eq. (1), kept by eqs. (18)-(19).

Sequential methods (SCGIS, CD) keep S_w(x, y) and T_w(x) and update them
after each sub-problem. To keep them finite for any w they are stored *per
context up to a positive factor*:

    S[x, y] = S_w(x, y) / m(x),   T[x] = T_w(x) / m(x),

(only the ratio P_w(y|x) = S / T is ever used). S is X x K. T[x], the
largest T[x] since its last exact sum (T_top) and the count c(x) share one
32-byte record R[x], so a column pass touches two cache lines per (x, y).
Guards (:func:`_scale_entry`, :func:`_repair_row`):

* a context whose T[x] exceeds 1e150 is rescaled to T[x] = 1;
* T[x] is a running sum with absolute error ~ eps * T_top, so it is
  re-summed from S once it falls below 1e-6 of T_top; all of T is re-summed
  at the start of every outer iteration;
* entries that underflowed (S < 1e-290) cannot be scaled back up, so a
  context is rebuilt from w (its scores, K exps) when such an entry is about
  to grow, or when the exact T[x] is below 1e-150 or not finite.

Counters (one int64 array per pass, of every scaling and CD kernel) are
indexed by the constants below.

Blocks. A sequential pass visits the features of one predicate p one after
the other, each over the same column of contexts. It therefore copies
S[x, y] and R[x] of that column, for the labels of a run of those features,
into a compact label-major block (:func:`load_block`), works there (each
feature's pass is then a stride-1 stream) and copies it back
(:func:`store_block`); on 0/1 data the copy in also gathers the first
feature's sums and the copy back applies the last step (one pass less each),
and the passes in between are :func:`block_pass`. The column kernels take the block like S and R, with
identity contexts; ``link = (S, R, ctx, label)`` maps its row i and column j
to the global S[ctx[i], label[j]] for the rare steps that need a whole row
(:func:`_repair`). An empty ``ctx`` means S and R are the global ones.
"""
import math

import numpy as np
from numba import njit, prange

from .lanes import LANES, add_lane, combine_lanes, start_lanes, vadd, vdiv, vload, vmul, vsplat, vsum, vtail, vwhere_gt
from .maxent import context_scores
from .memory import LINE_VALUES, prefetch, prefetch_write

N_EXP, N_LOG, NEWTON, LINE_SEARCH, UNIT, SKIP, RESCALE, SERIES = range(8)
COUNTER_NAMES = ("n_exp", "n_log", "newton_steps", "line_search_steps", "unit_steps",
                 "upper_bound_skips", "rescaled_rows", "series_evaluations")

TINY_T, HUGE_T = 1e-150, 1e150   # rebuild / rescale a row of S outside this range
TINY_S = 1e-290                  # an S entry below this has lost precision to underflow
CANCEL = 1e-6                    # re-sum T[x] if it drops below CANCEL * old T[x]
# CD's A_t^CD(z) of 0/1 features by the power series sum_k (-1)^(k+1) (e^z - 1)^k M_k / k
# (kernels.primal_cd) when |e^z - 1| <= SERIES_MAX. A context's terms beyond those kept are below
# 2e-16 of its first term P |e^z - 1|: (1e-7 / 4)^2 / 3 for P <= SERIES_NEGLIGIBLE (M_1, M_2 kept),
# (1/16)^12 / 13 for P <= SERIES_HIGH (M_1..M_12), (1/4)^24 / 25 otherwise (all SERIES_TERMS).
SERIES_MAX = 0.25
SERIES_TERMS = 24
SERIES_LOW = 12                  # terms held in registers (unrolled) for every context above SERIES_NEGLIGIBLE
SERIES_NEGLIGIBLE = 1e-7
SERIES_HIGH = 0.25
# The sums a 0/1 column pass gathers first: M_1..M_BOUND_TERMS (odd), enough for the upper bound of
# kernels.primal_cd._series_bound; the rest of the series only when that bound does not decide (35).
BOUND_TERMS = 3


# ------------------------------------------------------------ S_w and T_w
# Per-context record R[x] = (T[x], T_top[x], c(x), unused): one 32-byte record, so a
# column pass touches two cache lines per (x, y), S[x, y] and R[x], not four.

TOTAL, TOP, COUNT = 0, 1, 2      # fields of a context record
RECORD = 4
BLOCK_AHEAD = 8                  # rows ahead whose lines a block copy asks for (software prefetch)
BLOCK_CHUNK = 256                # rows of a block pass's vectorized loops (kept in L1 between them)


def context_records(ctx_count):
    """R with c(x) filled in; T and T_top are set by :func:`init_scores`. Its data start on a 64-byte line,
    so that no 32-byte record straddles two lines."""
    n = ctx_count.shape[0]
    storage = np.zeros(n * RECORD + LINE_VALUES)
    start = (-(storage.ctypes.data // 8)) % LINE_VALUES
    R = storage[start:start + n * RECORD].reshape((n, RECORD))
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


@njit(cache=True, inline="always")
def add_series_powers(m, count, P):
    """The power sums m = (M_1..M_12) (one lane of :func:`~loglin.kernels.lanes.add_lane`) plus one context's
    terms count P^k.

    The terms kept per context are those that can be above rounding (module notes): M_1, M_2 always,
    M_3..M_12 for P > SERIES_NEGLIGIBLE, M_13..M_24 for P > SERIES_HIGH (:func:`add_high_powers`).
    M_1..M_3 are those of :func:`add_bound_powers` (the same products).
    """
    m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12 = m
    a = count * P
    m1 += a
    a *= P
    m2 += a
    q = P if P > SERIES_NEGLIGIBLE else 0.0     # a select, not a branch: P's size is unpredictable
    a *= q
    m3 += a
    a *= q
    m4 += a
    a *= q
    m5 += a
    a *= q
    m6 += a
    a *= q
    m7 += a
    a *= q
    m8 += a
    a *= q
    m9 += a
    a *= q
    m10 += a
    a *= q
    m11 += a
    a *= q
    m12 += a
    return m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12


@njit(cache=True, inline="always")
def add_high_powers(count, P, sums):
    """M_13..M_24 (sums[12:]) plus one context's terms count P^k if P > SERIES_HIGH, in row order; the
    products as in :func:`add_series_powers` (there q = P)."""
    if P > SERIES_HIGH:
        a = count * P
        for j in range(1, SERIES_TERMS):
            a *= P
            if j >= SERIES_LOW:
                sums[j] += a


@njit(cache=True, inline="always")
def add_bound_powers(m, count, P):
    """M_1..M_BOUND_TERMS (one lane of :func:`~loglin.kernels.lanes.add_lane`) plus one context's terms count P,
    count P^2 and count P^3 (the last only for P > SERIES_NEGLIGIBLE, see :func:`add_series_powers`)."""
    m1, m2, m3 = m
    a = count * P
    m1 += a
    a *= P
    m2 += a
    q = P if P > SERIES_NEGLIGIBLE else 0.0
    a *= q
    m3 += a
    return m1, m2, m3


# Lanes. CD's sums over a column (M_1..M_12, the split sums of kernels.primal_cd) are kept as LANES partial
# sums: the context at position k of the column (its row in a block) adds to partial k % LANES, and the
# partials are combined as (s_0 + s_1) + (s_2 + s_3) (kernels.lanes). The additions of one sum are then
# independent four by four, and the block passes add four rows at once as one vector; the scalar kernels
# (plain pass, copy in) keep four scalars. Every kernel that gathers a sum uses this one association, so
# they agree bit for bit (decision 0065; before, row order).


@njit(cache=True, inline="always")
def add_bound_vector(m, count, P, zero):
    """:func:`add_bound_powers` of LANES contexts at once (vectors, kernels.lanes): the same operations per lane."""
    m1, m2, m3 = m
    a = vmul(count, P)
    m1 = vadd(m1, a)
    a = vmul(a, P)
    m2 = vadd(m2, a)
    a = vmul(a, vwhere_gt(P, SERIES_NEGLIGIBLE, P, zero))
    m3 = vadd(m3, a)
    return m1, m2, m3


@njit(cache=True, inline="always")
def add_series_vector(m, count, P, zero):
    """:func:`add_series_powers` of LANES contexts at once (vectors): the same operations per lane."""
    m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12 = m
    a = vmul(count, P)
    m1 = vadd(m1, a)
    a = vmul(a, P)
    m2 = vadd(m2, a)
    q = vwhere_gt(P, SERIES_NEGLIGIBLE, P, zero)
    a = vmul(a, q)
    m3 = vadd(m3, a)
    a = vmul(a, q)
    m4 = vadd(m4, a)
    a = vmul(a, q)
    m5 = vadd(m5, a)
    a = vmul(a, q)
    m6 = vadd(m6, a)
    a = vmul(a, q)
    m7 = vadd(m7, a)
    a = vmul(a, q)
    m8 = vadd(m8, a)
    a = vmul(a, q)
    m9 = vadd(m9, a)
    a = vmul(a, q)
    m10 = vadd(m10, a)
    a = vmul(a, q)
    m11 = vadd(m11, a)
    a = vmul(a, q)
    m12 = vadd(m12, a)
    return m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12


@njit(cache=True, inline="always")
def start_series_powers(sums):
    """Zero M_13..M_24 in sums and return scalar lanes of M_1..M_12 = 0 (held as locals: registers)."""
    for j in range(SERIES_LOW, SERIES_TERMS):
        sums[j] = 0.0
    return start_lanes((0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))


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
def _repair(x, status, w, rows, S, R, scores, counters, link):
    """:func:`_repair_row` of row x of S, R, which may be a block (see the module notes)."""
    S_all, R_all, ctx, label = link
    if ctx.shape[0] == 0:
        _repair_row(x, status, w, rows, S, R, scores, counters)
        return
    gx = ctx[x]
    _store_row(x, gx, S, R, S_all, R_all, label)
    _repair_row(gx, status, w, rows, S_all, R_all, scores, counters)
    for j in range(label.shape[0]):
        S[x, j] = S_all[gx, label[j]]
    for f in range(RECORD):
        R[x, f] = R_all[gx, f]


@njit(cache=True, inline="always")
def _store_row(x, gx, S, R, S_all, R_all, label):
    """Row x of a block back to context gx: its S entries, T and T_top (c(x) never changes in a block)."""
    for j in range(label.shape[0]):
        S_all[gx, label[j]] = S[x, j]
    R_all[gx, TOTAL] = R[x, TOTAL]
    R_all[gx, TOP] = R[x, TOP]


@njit(cache=True, inline="always")
def _prefetch_row(i, ctx, first, last, S_all, R_all, write):
    """Ask for every line of S_all[ctx[i], first..last] and of R_all[ctx[i]] before they are copied
    (kernels/memory.py): a row's lines are not adjacent to the previous row's, so the hardware does not."""
    if i < ctx.shape[0]:
        base = ctx[i] * S_all.shape[1]
        for k in range(base + first, base + last, LINE_VALUES):
            if write:
                prefetch_write(S_all, k)
            else:
                prefetch(S_all, k)
        if write:
            prefetch_write(S_all, base + last)
            prefetch_write(R_all, ctx[i] * RECORD)
        else:
            prefetch(S_all, base + last)
            prefetch(R_all, ctx[i] * RECORD)


@njit(cache=True, inline="always")
def _label_span(label):
    first = last = label[0]
    for j in range(1, label.shape[0]):
        first = min(first, label[j])
        last = max(last, label[j])
    return first, last


@njit(cache=True, inline="always")
def _step_and_columns(t, z, j_old, w, S_flat, R_flat, n, counters):
    """With ``j_old >= 0``, w_t += z and its factor exp(z) (one exp for the whole column, section 4.3; else
    1); and the block's column ``j_old`` of S, T and T_top as 1-D views."""
    factor = 1.0
    if j_old >= 0:
        w[t] += z
        factor = math.exp(z)
        counters[N_EXP] += 1
    jo = max(j_old, 0)
    return factor, S_flat[jo * n:(jo + 1) * n], R_flat[TOTAL * n:(TOTAL + 1) * n], R_flat[TOP * n:(TOP + 1) * n]


@njit(cache=True, error_model="numpy")
def load_block(ctx, label, S_all, R_all, S_flat, R_flat, sums, gather, powers):
    """The block of contexts ``ctx`` x labels ``label``: (S, R) as label-major views, see the module notes.

    With ``gather``, the copy also gathers the sums of the block's column 0 as :func:`block_pass` does (one
    pass less): M_1..M_BOUND_TERMS (``powers``, CD) or E (sums[0], SCGIS), the same arithmetic.
    """
    n, m = ctx.shape[0], label.shape[0]
    S = S_flat[:m * n].reshape((m, n)).T
    R = R_flat[:RECORD * n].reshape((RECORD, n)).T
    first, last = _label_span(label)
    m1 = 0.0
    lanes = start_lanes((0.0, 0.0, 0.0))
    for i in range(n):
        _prefetch_row(i + BLOCK_AHEAD, ctx, first, last, S_all, R_all, False)
        x = ctx[i]
        for j in range(m):
            S[i, j] = S_all[x, label[j]]
        R[i, TOTAL] = R_all[x, TOTAL]            # the record's fourth value is unused
        R[i, TOP] = R_all[x, TOP]
        R[i, COUNT] = R_all[x, COUNT]
        if gather:
            P = S_all[x, label[0]] / R_all[x, TOTAL]
            if powers:
                lanes = add_lane(lanes, i % LANES, add_bound_powers, R_all[x, COUNT], P)
            else:
                m1 += R_all[x, COUNT] * (P * 1.0)     # as _column_moments with v = 1
    if gather:
        if powers:
            combine_lanes(lanes, sums)
        else:
            sums[0] = m1
    return S, R


@njit(cache=True)
def store_block(ctx, label, S, R, S_all, R_all, t, z, j_old, w, rows, S_flat, R_flat, scores, counters, link):
    """Copy a block back to the global S and R (inverse of :func:`load_block`); with ``j_old >= 0`` the copy
    first applies w_t += z and eqs. (18)-(19) to column ``j_old`` of each row, as :func:`block_pass` does (one
    pass less, the same arithmetic; the rows are independent, so the order of rows and copies does not matter)."""
    n = ctx.shape[0]
    first, last = _label_span(label)
    update = j_old >= 0
    factor, S_old, T, T_top = _step_and_columns(t, z, j_old, w, S_flat, R_flat, n, counters)
    for i in range(n):
        _prefetch_row(i + BLOCK_AHEAD, ctx, first, last, S_all, R_all, True)
        if update:
            s_old = S_old[i]                 # (18)-(19) written out, as in _update_column (decision 0033)
            s_new = s_old * factor
            t_new = T[i] + (s_new - s_old)
            grows_from_underflow = s_old < TINY_S and factor > 1.0
            if not grows_from_underflow and t_new > CANCEL * T_top[i] and t_new > TINY_T and t_new < HUGE_T:
                S_old[i] = s_new
                T[i] = t_new
                T_top[i] = t_new if t_new > T_top[i] else T_top[i]
            else:
                status = 2
                if not grows_from_underflow:
                    S_old[i] = s_new
                    status = 1
                _repair(i, status, w, rows, S, R, scores, counters, link)
        _store_row(i, ctx[i], S, R, S_all, R_all, label)


@njit(cache=True)
def _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y, link):
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
        s_old = S[x, y]                      # _scale_entry written out: the inlined call is slower here (decision 0033)
        status = 2
        if not (s_old < TINY_S and factor > 1.0):
            s_new = s_old * factor
            S[x, y] = s_new
            t_new = R[x, TOTAL] + (s_new - s_old)
            status = 1
            if t_new > CANCEL * R[x, TOP] and t_new > TINY_T and t_new < HUGE_T:
                R[x, TOTAL] = t_new
                if t_new > R[x, TOP]:
                    R[x, TOP] = t_new
                status = 0
        if status != 0:
            _repair(x, status, w, rows, S, R, scores, counters, link)


@njit(cache=True, inline="always")
def _scale_chunk(factor, s, T, T_top, ok):
    """Eqs. (18)-(19) on rows of a block's column where :func:`_scale_entry`'s fast path applies, as selects
    (no branch: the loop is vectorized); the other rows are left as they were, ok[k] = 0. Returns their number."""
    left = 0
    for k in range(s.shape[0]):
        s_old = s[k]
        s_new = s_old * factor
        total = T[k]
        top = T_top[k]
        t_new = total + (s_new - s_old)
        fast = (not (s_old < TINY_S and factor > 1.0)) & (t_new > CANCEL * top) & (t_new > TINY_T) & (t_new < HUGE_T)
        s[k] = s_new if fast else s_old
        T[k] = t_new if fast else total
        T_top[k] = t_new if fast and t_new > top else top
        ok[k] = 1.0 if fast else 0.0
        left += 0 if fast else 1
    return left


@njit(cache=True, inline="always")
def _chunk_ratios(s, T, P):
    """P[k] = s[k] / T[k]: P_w(y|x) of a chunk of a block's column, a vectorized loop (divisions in parallel)."""
    for k in range(s.shape[0]):
        P[k] = s[k] / T[k]


@njit(cache=True, error_model="numpy")
def block_pass(t, z, j_old, j, w, rows, S_flat, R_flat, S, R, scores, counters, link, sums, powers, scratch):
    """One pass over a 0/1 block (:func:`load_block`; ``S_flat``, ``R_flat`` its storage, ``S``, ``R`` its views):
    with ``j_old >= 0``, w_t += z and eqs. (18)-(19) on column ``j_old`` (:func:`_update_column`); with
    ``j >= 0``, in the same pass, the sums of column ``j``: M_1..M_BOUND_TERMS of
    :func:`loglin.kernels.primal_cd._column_bound_powers` (``powers``, CD) or E (sums[0], SCGIS). Each row
    is updated before it is read, so the sums are those of the updated S, T. The same arithmetic and the
    same association of each sum as those kernels, on the block's columns as 1-D contiguous arrays, in chunks of
    BLOCK_CHUNK rows: the update and each row's terms as vectorized loops (rows needing a repair, rare, are
    left to a scalar loop), then CD's M_1..M_3 LANES rows at a time as vectors (:mod:`loglin.kernels.lanes`,
    with the ratios P), or SCGIS's ratios as a vectorized loop and E in row order. ``scratch``: 2 x
    BLOCK_CHUNK values.
    """
    n = S.shape[0]
    update = j_old >= 0
    gather = j >= 0
    factor, S_old, T, T_top = _step_and_columns(t, z, j_old, w, S_flat, R_flat, n, counters)
    S_new = S_flat[max(j, 0) * n:(max(j, 0) + 1) * n]
    c = R_flat[COUNT * n:(COUNT + 1) * n]
    ratio, ok = scratch[0], scratch[1]
    m1 = 0.0
    zero = vsplat(0.0)
    v = zero, zero, zero                         # M_1..M_3 in lanes
    for lo in range(0, n, BLOCK_CHUNK):          # BLOCK_CHUNK % LANES == 0: chunks keep the rows' lanes
        hi = min(lo + BLOCK_CHUNK, n)
        if update and _scale_chunk(factor, S_old[lo:hi], T[lo:hi], T_top[lo:hi], ok) > 0:
            for i in range(lo, hi):
                if ok[i - lo] == 0.0:        # as _update_column: write S unless it grows from underflow, repair
                    s_old = S_old[i]
                    status = 2
                    if not (s_old < TINY_S and factor > 1.0):
                        S_old[i] = s_old * factor
                        status = 1
                    _repair(i, status, w, rows, S, R, scores, counters, link)
        if gather and powers:
            for i in range(lo, hi - (hi - lo) % LANES, LANES):        # P = S / T as _chunk_ratios
                v = add_bound_vector(v, vload(c, i), vdiv(vload(S_new, i), vload(T, i)), zero)
        elif gather:
            _chunk_ratios(S_new[lo:hi], T[lo:hi], ratio)
            for i in range(lo, hi):
                m1 += c[i] * (ratio[i - lo] * 1.0)       # as _column_moments with v = 1 (row order)
    if gather and powers:
        whole = n - n % LANES                    # the last rows, lanes padded with zero terms (c = 0, P = 0)
        if whole < n:
            v = add_bound_vector(v, vtail(c, whole, n, 0.0), vdiv(vtail(S_new, whole, n, 0.0), vtail(T, whole, n, 1.0)),
                                 zero)
        sums[0], sums[1], sums[2] = vsum(v[0]), vsum(v[1]), vsum(v[2])
    elif gather:
        sums[0] = m1


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
