"""The projective dependency tree as a structure: Eisner's chart, inside-outside, loss-augmented Eisner.

Parts are arcs r = (h, m): head h in 0..n (0 = the artificial root), modifier
m in 1..n (Collins et al. 2008, section 8). A sentence with n words owns a
block of (n+1)^2 arc *slots* starting at ``arc_off[i]``; slot h (n+1) + m holds
arc (h, m) (slots with m = 0 or h = m are unused and have no features).
``feat_ptr`` / ``feat_idx`` give each slot's feature ids (CSR over slots, all
values 1). The slot block is also the part block of the structure contract
(loglin.structured.contract).

* :func:`inside` / :func:`outside_marginals`: Eisner's (1996) O(n^3) chart in
  log space - log Z over all projective trees and the arc marginals
  mu[h, m] = P(arc (h, m) | x) (the backward pass runs on chart-item
  probabilities, so it needs one exp per split point and no logs);
* :func:`eisner_into`: the best projective tree (the same chart with max).

The Python functions at the end are thin entry points for tests and exploration:
the score of a tree with heads h(m) is sum_m S[h(m), m]; trees are projective and
rooted at 0 (the root may have several children).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from ..errors import InvalidInputError
from . import contract as sc

NEG_INF = -np.inf


class TreeData(NamedTuple):
    """A parser problem's arrays as one structure value for the compiled passes."""
    sent_ptr: np.ndarray       # (n + 1,) word offsets
    arc_off: np.ndarray        # (n + 1,) arc slot offsets
    feat_ptr: np.ndarray       # (slots + 1,)
    feat_idx: np.ndarray       # feature ids of the slots
    heads: np.ndarray          # int32 gold heads (any heads when only decoding)
    max_len: int


def tree_data(sent_ptr, arc_off, feat_ptr, feat_idx, heads=None):
    """TreeData of encoded sentences; without gold heads it serves decoding only."""
    heads = np.zeros(int(sent_ptr[-1]), dtype=np.int32) if heads is None else heads
    return TreeData(sent_ptr, arc_off, feat_ptr, feat_idx, heads, int(np.diff(sent_ptr).max(initial=1)) or 1)


@njit(cache=True)
def arc_scores(w, scale, i, arc_off, sent_ptr, feat_ptr, feat_idx, S):
    """S[h, m] = scale * w . f(x_i, h, m) for every arc of sentence i; returns n."""
    n = sent_ptr[i + 1] - sent_ptr[i]
    base = arc_off[i]
    for h in range(n + 1):
        for m in range(n + 1):
            r = base + h * (n + 1) + m
            acc = 0.0
            for j in range(feat_ptr[r], feat_ptr[r + 1]):
                acc += w[np.uint64(feat_idx[j])]
            S[h, m] = scale * acc
    return n


@njit(cache=True)
def longest_sentence(sent_ptr):
    """1 + the most words of any sentence: the side of a score matrix that holds every sentence's arcs."""
    longest = 1
    for i in range(sent_ptr.shape[0] - 1):
        longest = max(longest, sent_ptr[i + 1] - sent_ptr[i])
    return longest + 1


@njit(cache=True)
def inside(S, n, IL, IR, CL, CR, B):
    """log Z of the arc-factored distribution over projective trees rooted at 0.

    C[s, t] complete spans (L: head t, R: head s), I[s, t] incomplete spans
    (an arc between s and t); B[s, t] = log sum_r exp(CR[s, r] + CL[r+1, t]).
    """
    for s in range(n + 1):
        CL[s, s] = 0.0
        CR[s, s] = 0.0
    for k in range(1, n + 1):
        for s in range(n + 1 - k):
            t = s + k
            mx = NEG_INF
            for r in range(s, t):
                v = CR[s, r] + CL[r + 1, t]
                if v > mx:
                    mx = v
            if mx == NEG_INF:
                b = NEG_INF
            else:
                acc = 0.0
                for r in range(s, t):
                    acc += np.exp(CR[s, r] + CL[r + 1, t] - mx)
                b = mx + np.log(acc)
            B[s, t] = b
            IR[s, t] = b + S[s, t]
            IL[s, t] = b + S[t, s] if s > 0 else NEG_INF
            mx = NEG_INF
            for r in range(s, t):
                v = CL[s, r] + IL[r, t]
                if v > mx:
                    mx = v
            if mx == NEG_INF:
                CL[s, t] = NEG_INF
            else:
                acc = 0.0
                for r in range(s, t):
                    acc += np.exp(CL[s, r] + IL[r, t] - mx)
                CL[s, t] = mx + np.log(acc)
            mx = NEG_INF
            for r in range(s + 1, t + 1):
                v = IR[s, r] + CR[r, t]
                if v > mx:
                    mx = v
            acc = 0.0
            for r in range(s + 1, t + 1):
                acc += np.exp(IR[s, r] + CR[r, t] - mx)
            CR[s, t] = mx + np.log(acc)
    return CR[0, n]


@njit(cache=True)
def outside_marginals(n, IL, IR, CL, CR, B, mIL, mIR, mCL, mCR, mu):
    """Arc marginals mu[h, m] by back-propagating chart-item probabilities (d log Z / d S)."""
    for s in range(n + 1):
        for t in range(n + 1):
            mIL[s, t] = 0.0
            mIR[s, t] = 0.0
            mCL[s, t] = 0.0
            mCR[s, t] = 0.0
            mu[s, t] = 0.0
    mCR[0, n] = 1.0
    for k in range(n, 0, -1):
        for s in range(n + 1 - k):
            t = s + k
            g = mCL[s, t]
            if g > 0.0:
                for r in range(s, t):
                    p = g * np.exp(CL[s, r] + IL[r, t] - CL[s, t])
                    mCL[s, r] += p
                    mIL[r, t] += p
            g = mCR[s, t]
            if g > 0.0:
                for r in range(s + 1, t + 1):
                    p = g * np.exp(IR[s, r] + CR[r, t] - CR[s, t])
                    mIR[s, r] += p
                    mCR[r, t] += p
            mu[t, s] = mIL[s, t]
            mu[s, t] = mIR[s, t]
            g = mIL[s, t] + mIR[s, t]
            if g > 0.0:
                for r in range(s, t):
                    p = g * np.exp(CR[s, r] + CL[r + 1, t] - B[s, t])
                    mCR[s, r] += p
                    mCL[r + 1, t] += p


@njit(cache=True)
def eisner_into(S, n, IL, IR, CL, CR, back, heads):
    """Best projective tree: heads[m - 1] = head of word m; returns its score.

    back[0..3, s, t] are the split points of CL, CR, IL / IR (shared), kept for the traceback.
    """
    for s in range(n + 1):
        CL[s, s] = 0.0
        CR[s, s] = 0.0
    for k in range(1, n + 1):
        for s in range(n + 1 - k):
            t = s + k
            best, arg = NEG_INF, s
            for r in range(s, t):
                v = CR[s, r] + CL[r + 1, t]
                if v > best:
                    best, arg = v, r
            back[2, s, t] = arg
            IR[s, t] = best + S[s, t]
            IL[s, t] = best + S[t, s] if s > 0 else NEG_INF
            best, arg = NEG_INF, s
            for r in range(s, t):
                v = CL[s, r] + IL[r, t]
                if v > best:
                    best, arg = v, r
            CL[s, t] = best
            back[0, s, t] = arg
            best, arg = NEG_INF, t
            for r in range(s + 1, t + 1):
                v = IR[s, r] + CR[r, t]
                if v > best:
                    best, arg = v, r
            CR[s, t] = best
            back[1, s, t] = arg
    # traceback with an explicit stack of (s, t, kind): 0 CL, 1 CR, 2 IL, 3 IR
    stack = np.empty((3 * (n + 1) + 4, 3), dtype=np.int64)
    top = 0
    stack[0, 0], stack[0, 1], stack[0, 2] = 0, n, 1
    top = 1
    while top > 0:
        top -= 1
        s, t, kind = stack[top, 0], stack[top, 1], stack[top, 2]
        if s == t:
            continue
        if kind == 0:
            r = back[0, s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 0
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 2
            top += 2
        elif kind == 1:
            r = back[1, s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 3
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r, t, 1
            top += 2
        else:
            if kind == 3:
                heads[t - 1] = s
            else:
                heads[s - 1] = t
            r = back[2, s, t]
            stack[top, 0], stack[top, 1], stack[top, 2] = s, r, 1
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2] = r + 1, t, 0
            top += 2
    return CR[0, n]


@njit(cache=True)
def add_hamming(S, n, heads, lo, weight):
    """Loss augmentation: S[h, m] += weight for every arc that is not in the gold tree (per-word Hamming loss)."""
    for m in range(1, n + 1):
        g = heads[lo + m - 1]
        for h in range(n + 1):
            if h != g and h != m:
                S[h, m] += weight


@njit(cache=True)
def arcs_score(S, n, heads, lo):
    total = 0.0
    for m in range(1, n + 1):
        total += S[heads[lo + m - 1], m]
    return total


@njit(cache=True)
def scatter_arcs(i, coef, n, arc_off, feat_ptr, feat_idx, acc):
    """acc[f] += coef[h, m] for every feature f of every arc (h, m) of sentence i."""
    base = arc_off[i]
    for h in range(n + 1):
        for m in range(1, n + 1):
            c = coef[h, m]
            if c != 0.0:
                r = base + h * (n + 1) + m
                for j in range(feat_ptr[r], feat_ptr[r + 1]):
                    acc[np.uint64(feat_idx[j])] += c




@njit(cache=True)
def touch_bound_tree(sent_ptr, arc_off, feat_ptr):
    """Largest number of feature occurrences in one sentence's arcs (bounds the distinct features touched)."""
    best = 0
    for i in range(sent_ptr.shape[0] - 1):
        n = sent_ptr[i + 1] - sent_ptr[i]
        k = feat_ptr[arc_off[i] + (n + 1) * (n + 1)] - feat_ptr[arc_off[i]]
        if k > best:
            best = k
    return best


# ------------------------------------------------------------------ the structure contract for TreeData
def _is_tree(data):
    return sc.is_structure(data, TreeData)


@njit(cache=True, inline="always")
def _len(data, i):
    return data.sent_ptr[i + 1] - data.sent_ptr[i]


@njit(cache=True, inline="always")
def _square(a, k, size, n):
    """The k-th (n+1) x (n+1) table of a flat workspace with tables of ``size`` entries."""
    return a[k * size:k * size + (n + 1) * (n + 1)].reshape((n + 1, n + 1))


@njit(cache=True, inline="always")
def _chart(fws, first, max_len, n):
    """Five (n+1) x (n+1) chart tables of the workspace from table ``first`` on (9 tables of (max_len+1)^2)."""
    size = (max_len + 1) * (max_len + 1)
    return (_square(fws, first, size, n), _square(fws, first + 1, size, n), _square(fws, first + 2, size, n),
            _square(fws, first + 3, size, n), _square(fws, first + 4, size, n))


@overload(sc.n_instances)
def _n_instances(data):
    if _is_tree(data):
        return lambda data: data.sent_ptr.shape[0] - 1


@overload(sc.workspace_size)
def _workspace_size(data):
    if _is_tree(data):
        def impl(data):
            L = data.max_len + 1
            return 10 * L * L, 3 * L * L
        return impl


@overload(sc.max_parts)
def _max_parts(data):
    if _is_tree(data):
        return lambda data: (data.max_len + 1) * (data.max_len + 1)


@overload(sc.part_size)
def _part_size(data, i):
    if _is_tree(data):
        return lambda data, i: (_len(data, i) + 1) * (_len(data, i) + 1)


@overload(sc.label_count)
def _label_count(data, i):
    if _is_tree(data):
        return lambda data, i: _len(data, i)


@overload(sc.label_offset)
def _label_offset(data, i):
    if _is_tree(data):
        return lambda data, i: data.sent_ptr[i]


@overload(sc.part_scores)
def _part_scores(data, i, w, scale, s):
    if _is_tree(data):
        def impl(data, i, w, scale, s):
            arc_scores(w, scale, i, data.arc_off, data.sent_ptr, data.feat_ptr, data.feat_idx,
                       _square(s, 0, 0, _len(data, i)))
        return impl


@overload(sc.log_partition)
def _log_partition(data, i, s, fws, iws, mu, want_marginals, reuse):
    if _is_tree(data):
        def impl(data, i, s, fws, iws, mu, want_marginals, reuse):
            n = _len(data, i)
            IL, IR, CL, CR, B = _chart(fws, 0, data.max_len, n)
            log_z = inside(_square(s, 0, 0, n), n, IL, IR, CL, CR, B)
            if want_marginals:
                mIL, mIR, mCL, mCR, _ = _chart(fws, 5, data.max_len, n)
                outside_marginals(n, IL, IR, CL, CR, B, mIL, mIR, mCL, mCR, _square(mu, 0, 0, n))
            return log_z
        return impl


@overload(sc.argmax)
def _argmax(data, i, s, fws, iws, labels):
    if _is_tree(data):
        def impl(data, i, s, fws, iws, labels):
            n = _len(data, i)
            IL, IR, CL, CR, _ = _chart(fws, 0, data.max_len, n)
            back = iws[:3 * (n + 1) * (n + 1)].reshape((3, n + 1, n + 1))
            return eisner_into(_square(s, 0, 0, n), n, IL, IR, CL, CR, back, labels)
        return impl


@overload(sc.loss_augment)
def _loss_augment(data, i, s, weight):
    if _is_tree(data):
        def impl(data, i, s, weight):
            n = _len(data, i)
            add_hamming(_square(s, 0, 0, n), n, data.heads, data.sent_ptr[i], weight)
        return impl


@overload(sc.expected_loss)
def _expected_loss(data, i, mu):
    if _is_tree(data):
        def impl(data, i, mu):
            n, lo = _len(data, i), data.sent_ptr[i]
            t = 0.0
            for m in range(1, n + 1):        # sum over non-gold arcs = words minus the gold arcs' mass
                t += 1.0 - mu[data.heads[lo + m - 1] * (n + 1) + m]
            return t
        return impl


@overload(sc.gold_labels)
def _gold_labels(data, i):
    if _is_tree(data):
        return lambda data, i: data.heads[data.sent_ptr[i]:data.sent_ptr[i + 1]]


@overload(sc.labelling_score)
def _labelling_score(data, i, s, labels):
    if _is_tree(data):
        def impl(data, i, s, labels):
            n = _len(data, i)
            return arcs_score(_square(s, 0, 0, n), n, labels, 0)
        return impl


@overload(sc.add_labelling)
def _add_labelling(data, i, labels, c, coef):
    if _is_tree(data):
        def impl(data, i, labels, c, coef):
            n = _len(data, i)
            for m in range(1, n + 1):
                coef[labels[m - 1] * (n + 1) + m] += c
        return impl


@overload(sc.scatter)
def _scatter(data, i, coef, acc):
    if _is_tree(data):
        def impl(data, i, coef, acc):
            n = _len(data, i)
            scatter_arcs(i, _square(coef, 0, 0, n), n, data.arc_off, data.feat_ptr, data.feat_idx, acc)
        return impl


@overload(sc.scatter_tracked)
def _scatter_tracked(data, i, coef, d, mark, stamp, touched):
    if _is_tree(data):
        def impl(data, i, coef, d, mark, stamp, touched):
            n, base = _len(data, i), data.arc_off[i]
            nt = 0
            for h in range(n + 1):
                for m in range(1, n + 1):
                    r = h * (n + 1) + m
                    cf = coef[r]
                    for j in range(data.feat_ptr[base + r], data.feat_ptr[base + r + 1]):
                        f = np.uint64(data.feat_idx[j])
                        if mark[f] != stamp:
                            mark[f] = stamp
                            d[f] = 0.0
                            touched[nt] = f
                            nt += 1
                        d[f] += cf
            return nt
        return impl


@overload(sc.touch_bound)
def _touch_bound(data):
    if _is_tree(data):
        return lambda data: touch_bound_tree(data.sent_ptr, data.arc_off, data.feat_ptr) + 1


# ------------------------------------------------------------------ Python entry points (tests, exploration)
def _check(S):
    S = np.ascontiguousarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 2:
        raise InvalidInputError(f"need an (n+1) x (n+1) score matrix with n >= 1, got shape {S.shape}")
    n = S.shape[0] - 1
    mask = ~np.eye(n + 1, dtype=bool)
    mask[:, 0] = False
    if not np.all(np.isfinite(S[mask])):
        raise InvalidInputError("arc scores must be finite")
    return S, n


def _charts(n):
    return [np.empty((n + 1, n + 1)) for _ in range(5)]


def log_partition(S) -> float:
    S, n = _check(S)
    return float(inside(S, n, *_charts(n)))


def marginals(S):
    """(log Z, mu) with mu[h, m] the probability of arc (h, m)."""
    S, n = _check(S)
    IL, IR, CL, CR, B = ch = _charts(n)
    log_z = inside(S, n, *ch)
    mu = np.empty((n + 1, n + 1))
    outside_marginals(n, IL, IR, CL, CR, B, *_charts(n)[:4], mu)
    return float(log_z), mu


def eisner(S):
    """(heads as an int array, head of word m at position m - 1; the tree's score)."""
    S, n = _check(S)
    heads = np.empty(n, dtype=np.int32)
    score = eisner_into(S, n, *_charts(n)[:4], np.empty((3, n + 1, n + 1), dtype=np.int64), heads)
    return heads, float(score)


def loss_augmented_eisner(S, gold, weight=1.0):
    """argmax_y [weight * (words with a wrong head) + score(y)] and that maximum."""
    S, n = _check(S)
    gold = np.asarray(gold, dtype=np.int32)
    if gold.shape != (n,) or gold.min() < 0 or gold.max() > n:
        raise InvalidInputError(f"gold must hold one head in [0, {n}] per word")
    V = S.copy()
    add_hamming(V, n, gold, 0, float(weight))
    return eisner(V)


def tree_score(S, heads) -> float:
    S, n = _check(S)
    return float(arcs_score(S, n, np.asarray(heads, dtype=np.int32), 0))
