"""Compiled iterative scaling of Huang, Hsieh, Chang & Lin (2010) for Maxent: the Table 1
surrogates A_t^GIS, A_t^IIS, A_t^SCGIS on one safeguarded Newton loop, the parallel passes
(Algorithm 2: GIS, IIS) and the sequential pass (Algorithm 1: SCGIS, and CD with the
sub-problem of :mod:`loglin.kernels.primal_cd`).

Everything is in loglin's scale f = C * N * L (sigma^2 = C * N), so the
papers' Q_t of eq. (11) reads

    Q_t(z) = r_t (w_t z + z^2 / 2) - C z N Ptilde(f_t)

and every sum  sum_x Ptilde(x) ...  becomes  C sum_x c(x) ... . S_w and T_w
of the sequential methods: :mod:`loglin.kernels.scaled_scores`.

Features are read in column form. Sequential kernels need every feature to
occupy one (predicate, label) pair of the map (predicate x label features):
``feat_pred[t]``, ``feat_label[t]`` (-1 when t never occurs), so that the
contexts of column ``feat_pred[t]`` of phi are exactly the (x, y) with
f_t(x, y) != 0, each once.
"""
import math

import numpy as np
from numba import njit, prange

from .maxent import context_scores
from .primal_cd import SUMS, cd_step
from .scaled_scores import (BLOCK_CHUNK, COUNTER_NAMES, N_EXP, NEWTON, RECORD, _column_moments, _update_column,
                            block_pass, load_block, store_block)

SCGIS, CD = 0, 1                 # sub-problem of a sequential pass
MAX_EXP_STEP = 30.0              # a Newton step may move z * f^s by at most this
MAX_EXP_TOTAL = 50.0             # an exactly solved sub-problem moves z * f^s by at most this
MAX_NEWTON = 100                 # Newton iterations per exactly-solved sub-problem
MAX_HALVINGS = 60                # z, z/2, ..., z/2^59 tried by the descent safeguard
BLOCK_ENTRIES = 1 << 21          # entries of S in one block of a sequential pass (16 MB)


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
    for k in range(MAX_HALVINGS):
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
        iis = (occ_ptr, occ_entry, map_pred, map_label, cols, ctx_count, prob, fsharp_xy)   # per t: prange takes no tuple
        c = np.zeros(len(COUNTER_NAMES), dtype=np.int64)
        z_out[t] = minimize_surrogate(t, reg[t], w[t], C, emp[t], 0.0, f_sharp, tol, iis, c)
        per[t, 0] = c[N_EXP]
        per[t, 1] = c[NEWTON]
    counters[N_EXP] += per[:, 0].sum()
    counters[NEWTON] += per[:, 1].sum()


# ------------------------------------------------------------ Algorithm 1


@njit(cache=True)
def _solve_feature(method, t, p, y, w, reg, C, emp, newton_tol, gamma, beta, use_bound, f_max, omega,
                   rows, cols, S, R, saved, sums, scores, counters, link):
    """Sub-problem t on column p, label y of S, R (global, or a block: ``link``), then w_t += z, (18)-(19)."""
    r = reg[t]
    if method == SCGIS:
        E, V2, M2 = _column_moments(p, y, cols, S, R)
        z = minimize_surrogate(t, r, w[t], C, emp[t], E, f_max, newton_tol, None, counters)
        if z != 0.0 and math.isfinite(z):
            _update_column(t, z, w, rows, cols, S, R, scores, counters, p, y, link)
    else:
        cd_step(t, p, y, w, r, C, emp[t], gamma, beta, use_bound, f_max, omega, rows, cols, S, R, saved, sums,
                scores, counters, link, np.bool_(False))


@njit(cache=True)
def sequential_pass(method, order, w, reg, C, emp, newton_tol, gamma, beta, use_bound,
                    rows, cols, feat_pred, feat_label, pred_max, pred_count, S, R, counters,
                    block_entries=BLOCK_ENTRIES):
    """One outer iteration of Algorithm 1: for t in order, solve A_t, w_t += z, eqs. (18)-(19).

    ``method`` is SCGIS (A_t^SCGIS minimized by Newton to |A_t'| <= newton_tol)
    or CD (Algorithm 3, which applies its own step). ``pred_max[p]`` is f_t^#
    (eq. 14) and ``pred_count[p]`` is N Ptilde_t (eq. 40) for the features on
    predicate p. A run of consecutive features on one predicate is solved on a
    block of S, R (:func:`loglin.kernels.scaled_scores.load_block`): the same
    arithmetic in the same order, on stride-1 data; a block holds at most
    ``block_entries`` entries of S (1: blocks only of one entry). S, R: see the module notes.
    """
    n_labels = S.shape[1]
    scores = np.empty(n_labels)
    col_ptr, col_ctx, col_val = cols
    binary = col_val.shape[0] == 0
    longest = 1
    for p in range(col_ptr.shape[0] - 1):
        longest = max(longest, col_ptr[p + 1] - col_ptr[p])
    saved = np.empty((longest if method == CD else 0, 4))
    sums = np.zeros(SUMS)
    block_entries = min(block_entries, n_labels * longest)
    S_flat = np.empty(block_entries)
    R_flat = np.empty(RECORD * longest)
    labels = np.empty(n_labels, dtype=np.int64)
    scratch = np.empty((2, BLOCK_CHUNK))
    local_ptr = np.zeros(2, dtype=col_ptr.dtype)
    local_ctx = np.arange(longest).astype(col_ctx.dtype)
    whole = (S, R, col_ctx[:0], labels[:0])
    run_of_label = np.full(n_labels, -1, dtype=np.int64)     # a block holds each label once
    # typed, not literal: a literal 0 or True would compile every callee once more (Literal[int], Literal[bool])
    block_column, fused = np.int64(0), np.bool_(True)
    i = 0
    while i < order.shape[0]:
        t = order[i]
        p = feat_pred[t]
        if p < 0:                        # f_t == 0 everywhere: A_t = Q_t
            r = reg[t]
            if r > 0.0:
                w[t] += C * emp[t] / r - w[t]
            i += 1
            continue
        lo, hi = col_ptr[p], col_ptr[p + 1]
        run = i + 1
        run_of_label[feat_label[t]] = i
        while run < order.shape[0] and run - i < block_entries // (hi - lo) and feat_pred[order[run]] == p:
            if run_of_label[feat_label[order[run]]] == i:
                break
            run_of_label[feat_label[order[run]]] = i
            run += 1
        # CD on 0/1 data: one feature alone is also solved on a block, whose copies gather M_1..M_3 (not all
        # the power sums of the plain pass) and apply its step
        if run - i == 1 and not (method == CD and binary and hi - lo <= block_entries):
            _solve_feature(method, t, p, feat_label[t], w, reg, C, emp, newton_tol, gamma, beta, use_bound,
                           pred_max[p], pred_count[p], rows, cols, S, R, saved, sums, scores, counters, whole)
            i = run
            continue
        for q in range(i, run):
            labels[q - i] = feat_label[order[q]]
        ctx, label = col_ctx[lo:hi], labels[:run - i]
        S_block, R_block = load_block(ctx, label, S, R, S_flat, R_flat, sums, binary, method == CD)
        local_ptr[1] = hi - lo
        local_cols = (local_ptr, local_ctx[:hi - lo], col_val[lo:hi])
        link = (S, R, ctx, label)
        pending, t_old, z_old = False, order[i], 0.0      # t_old: read only once pending
        for q in range(i, run):
            t = order[q]
            if not binary:
                _solve_feature(method, t, block_column, q - i, w, reg, C, emp, newton_tol, gamma, beta, use_bound,
                               pred_max[p], pred_count[p], rows, local_cols, S_block, R_block, saved, sums, scores,
                               counters, link)
                continue
            # 0/1 data: the last accepted step's (18)-(19) and this feature's sums share one pass (the first
            # feature's sums: load_block's)
            if q > i:
                block_pass(t_old, z_old, q - i - 1 if pending else -1, q - i, w, rows, S_flat, R_flat, S_block,
                           R_block, scores, counters, link, sums, method == CD, scratch)
            if method == SCGIS:
                z = minimize_surrogate(t, reg[t], w[t], C, emp[t], sums[0], pred_max[p], newton_tol, None, counters)
                pending = z != 0.0 and math.isfinite(z)
            else:
                z, pending = cd_step(t, block_column, q - i, w, reg[t], C, emp[t], gamma, beta, use_bound,
                                     pred_max[p], pred_count[p], rows, local_cols, S_block, R_block, saved, sums,
                                     scores, counters, link, fused)
            t_old, z_old = t, z
        # the last accepted step's (18)-(19) in the copy back
        store_block(ctx, label, S_block, R_block, S, R, t_old, z_old, run - i - 1 if pending else -1, w, rows,
                    S_flat, R_flat, scores, counters, link)
        i = run


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
