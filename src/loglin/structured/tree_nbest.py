"""Exact k-best first-order projective parsing: the k highest-scoring trees of a sentence, best first.

Eisner's chart (loglin.structured.tree) is a hypergraph whose items are the complete spans CL[s, t]
(head t), CR[s, t] (head s) and the incomplete spans IL[s, t], IR[s, t] (an arc between s and t); every
projective tree has exactly one derivation in it, so the k best derivations are the k best trees. Each
item keeps the k best values of its sub-derivations, sorted, with back-pointers (split point r, rank i in
the left child's list, rank j in the right child's): Huang & Chiang (2005), "Better k-best parsing",
algorithm 1 on Eisner's hypergraph, each item's list filled by the lazy frontier of their algorithm 2
(a heap seeded with the best candidate (r, 0, 0) of every split; popping (r, i, j) pushes (r, i + 1, j)
and, when i = 0, (r, i, j + 1), which reaches every pair once). The incomplete spans share one list:
IR[s, t] = B[s, t] + S[s, t] and IL[s, t] = B[s, t] + S[t, s] with B[s, t] the k best of
CR[s, r] + CL[r + 1, t] (tree.inside's B). Cost O(n^3 + n^2 k log(n + k)) per sentence against Eisner's
O(n^3); k = 1 runs Eisner's own loop (tree.eisner_into).

Ties are broken deterministically: an item's candidates are ordered by higher score, then the smaller
split point r, then the smaller rank i, then the smaller rank j. For a tree this is the order of its
derivation's key, compared lexicographically, key(item) = (-score(item), r, key(left), key(right))
(score(item): the sum of the arc scores inside it; the top item is CR[0, n]); with k = 1 it is
eisner_into's choice (the first maximum, the smallest split). Trees of score -inf are never returned.

The root is word 0 and may take several children, as in tree.py. The layout of a corpus's results is
the chain n-best layout (loglin.structured.nbest): heads (words x k, -1 past a sentence's last tree) and
scores (sentences x k, -inf there).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .tree import _check, arc_scores, eisner_into, inside, longest_sentence

B_ITEM, CL_ITEM, CR_ITEM = 0, 1, 2          # the item lists kept; IL / IR are B plus an arc score


@njit(cache=True, inline="always")
def _before(va, ra, ia, ja, vb, rb, ib, jb):
    """Candidate a comes before candidate b: higher score, then smaller split, left rank, right rank."""
    if va != vb:
        return va > vb
    if ra != rb:
        return ra < rb
    if ia != ib:
        return ia < ib
    return ja < jb


@njit(cache=True)
def _sift_down(hv, hr, hi, hj, p, m):
    while True:
        c = 2 * p + 1
        if c >= m:
            return
        if c + 1 < m and _before(hv[c + 1], hr[c + 1], hi[c + 1], hj[c + 1], hv[c], hr[c], hi[c], hj[c]):
            c += 1
        if not _before(hv[c], hr[c], hi[c], hj[c], hv[p], hr[p], hi[p], hj[p]):
            return
        hv[c], hv[p] = hv[p], hv[c]
        hr[c], hr[p] = hr[p], hr[c]
        hi[c], hi[p] = hi[p], hi[c]
        hj[c], hj[p] = hj[p], hj[c]
        p = c


@njit(cache=True)
def _sift_up(hv, hr, hi, hj, c):
    while c > 0:
        p = (c - 1) // 2
        if not _before(hv[c], hr[c], hi[c], hj[c], hv[p], hr[p], hi[p], hj[p]):
            return
        hv[c], hv[p] = hv[p], hv[c]
        hr[c], hr[p] = hr[p], hr[c]
        hi[c], hi[p] = hi[p], hi[c]
        hj[c], hj[p] = hj[p], hj[c]
        c = p


@njit(cache=True, inline="always")
def _entry(val, cnt, kind, s, t, rank, arc):
    """The value of rank ``rank`` of item (kind, s, t) plus ``arc`` (-inf when the list is shorter)."""
    if rank < cnt[kind, s, t]:
        return val[kind, s, t, rank] + arc
    return -np.inf


@njit(cache=True)
def _fill(val, cnt, split, rank_l, rank_r, k, out, s, t, lk, la, rk, ra, lo_r, hi_r, left_shift, right_shift,
          hv, hr, hi, hj):
    """The k best of {left(r)[i] + right(r)[j] : lo_r <= r < hi_r} into item (out, s, t).

    left(r) is item (lk, s, r + left_shift) plus arc score la[r] (0 without one), right(r) item
    (rk, r + right_shift, t) plus ra[r]; the lazy frontier of Huang & Chiang's algorithm 2."""
    m = 0
    for r in range(lo_r, hi_r):
        v = _entry(val, cnt, lk, s, r + left_shift, 0, la[r]) + _entry(val, cnt, rk, r + right_shift, t, 0, ra[r])
        if v > -np.inf:
            hv[m], hr[m], hi[m], hj[m] = v, r, 0, 0
            m += 1
    for p in range(m // 2 - 1, -1, -1):
        _sift_down(hv, hr, hi, hj, p, m)
    q = 0
    while q < k and m > 0:
        v, r, i, j = hv[0], hr[0], hi[0], hj[0]
        val[out, s, t, q] = v
        split[out, s, t, q] = r
        rank_l[out, s, t, q] = i
        rank_r[out, s, t, q] = j
        q += 1
        m -= 1                                  # pop: the last entry to the top
        hv[0], hr[0], hi[0], hj[0] = hv[m], hr[m], hi[m], hj[m]
        _sift_down(hv, hr, hi, hj, 0, m)
        lv = _entry(val, cnt, lk, s, r + left_shift, i + 1, la[r])
        if lv > -np.inf:
            w = lv + _entry(val, cnt, rk, r + right_shift, t, j, ra[r])
            if w > -np.inf:
                hv[m], hr[m], hi[m], hj[m] = w, r, i + 1, j
                m += 1
                _sift_up(hv, hr, hi, hj, m - 1)
        if i == 0:
            rv = _entry(val, cnt, rk, r + right_shift, t, j + 1, ra[r])
            if rv > -np.inf:
                w = _entry(val, cnt, lk, s, r + left_shift, 0, la[r]) + rv
                if w > -np.inf:
                    hv[m], hr[m], hi[m], hj[m] = w, r, 0, j + 1
                    m += 1
                    _sift_up(hv, hr, hi, hj, m - 1)
    cnt[out, s, t] = q


@njit(cache=True)
def kbest_eisner_into(S, n, k, val, cnt, split, rank_l, rank_r, zeros, arc_row, hv, hr, hi, hj, stack, chart, back,
                      out_heads, out_scores, lo):
    """The k best projective trees of arc scores S[:n+1, :n+1]: the head of word m in tree q at
    out_heads[lo + m - 1, q], its score at out_scores[q]; returns how many trees of finite score (at most k).

    Workspace (:func:`workspace`, L >= n + 1): val (3, L, L, k), split / rank_l / rank_r (3, L, L, k), cnt
    (3, L, L), zeros and arc_row (L), the heap hv / hr / hi / hj (L + 2k), stack (3 L + 4, 4); chart (4, L, L)
    and back (3, L, L) serve Eisner's loop when k = 1."""
    if k == 1:                                  # Eisner itself (the same tie rule)
        best = eisner_into(S, n, chart[0, :n + 1, :n + 1], chart[1, :n + 1, :n + 1], chart[2, :n + 1, :n + 1],
                           chart[3, :n + 1, :n + 1], back[:, :n + 1, :n + 1], out_heads[lo:lo + n, 0])
        if best == -np.inf:
            return 0
        out_scores[0] = best
        return 1
    for s in range(n + 1):
        zeros[s] = 0.0
        for kind in range(3):
            cnt[kind, s, s] = 0
        val[CL_ITEM, s, s, 0] = 0.0
        val[CR_ITEM, s, s, 0] = 0.0
        cnt[CL_ITEM, s, s] = 1
        cnt[CR_ITEM, s, s] = 1
    for width in range(1, n + 1):
        for s in range(n + 1 - width):
            t = s + width
            # B[s, t]: CR[s, r] + CL[r + 1, t], s <= r < t
            _fill(val, cnt, split, rank_l, rank_r, k, B_ITEM, s, t, CR_ITEM, zeros, CL_ITEM, zeros, s, t, 0, 1,
                  hv, hr, hi, hj)
            # CL[s, t]: CL[s, r] + IL[r, t], s <= r < t, IL[r, t] = B[r, t] + S[t, r] (no arc into the root)
            for r in range(s, t):
                arc_row[r] = S[t, r] if r > 0 else -np.inf
            _fill(val, cnt, split, rank_l, rank_r, k, CL_ITEM, s, t, CL_ITEM, zeros, B_ITEM, arc_row, s, t, 0, 0,
                  hv, hr, hi, hj)
            # CR[s, t]: IR[s, r] + CR[r, t], s < r <= t, IR[s, r] = B[s, r] + S[s, r]
            for r in range(s + 1, t + 1):
                arc_row[r] = S[s, r]
            _fill(val, cnt, split, rank_l, rank_r, k, CR_ITEM, s, t, B_ITEM, arc_row, CR_ITEM, zeros, s + 1, t + 1,
                  0, 0, hv, hr, hi, hj)
    found = cnt[CR_ITEM, 0, n]
    for q in range(found):
        out_scores[q] = val[CR_ITEM, 0, n, q]
        # traceback with an explicit stack of (s, t, kind, rank): kind 0 CL, 1 CR, 2 IL, 3 IR
        stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, n, 1, q
        top = 1
        while top > 0:
            top -= 1
            s, t, kind, rank = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
            if s == t:
                continue
            item = CL_ITEM if kind == 0 else (CR_ITEM if kind == 1 else B_ITEM)
            r, i, j = split[item, s, t, rank], rank_l[item, s, t, rank], rank_r[item, s, t, rank]
            if kind == 0:
                left, right = (s, r, 0), (r, t, 2)
            elif kind == 1:
                left, right = (s, r, 3), (r, t, 1)
            else:
                if kind == 3:
                    out_heads[lo + t - 1, q] = s
                else:
                    out_heads[lo + s - 1, q] = t
                left, right = (s, r, 1), (r + 1, t, 0)
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = left[0], left[1], left[2], i
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2], stack[top + 1, 3] = right[0], right[1], \
                right[2], j
            top += 2
    return found


@njit(cache=True)
def workspace(L, k):
    """The arrays of :func:`kbest_eisner_into` for sentences of up to L - 1 words."""
    kk = k if k > 1 else 0
    LL = L if k > 1 else 0
    one = 1 if k == 1 else 0
    H = L + 2 * k + 1
    return (np.empty((3, LL, LL, kk)), np.empty((3, LL, LL), dtype=np.int64),
            np.empty((3, LL, LL, kk), dtype=np.int32), np.empty((3, LL, LL, kk), dtype=np.int32),
            np.empty((3, LL, LL, kk), dtype=np.int32), np.empty(L), np.empty(L), np.empty(H),
            np.empty(H, dtype=np.int64), np.empty(H, dtype=np.int64), np.empty(H, dtype=np.int64),
            np.empty((3 * L + 4, 4), dtype=np.int64), np.empty((4, L * one, L * one)),
            np.empty((3, L * one, L * one), dtype=np.int64))


def check_n_trees(n) -> int:
    """n as an int when it is a valid number of best trees (1 to limits.MAX_BEAM), else InvalidInputError."""
    from .nbest import check_n
    return check_n(n, "trees")


def kbest_eisner(S, k):
    """The k best projective trees of the arc score matrix S ((n+1) x (n+1), S[h, m] the score of arc h -> m,
    0 the root): [(heads, score)], best first, heads[m - 1] the head of word m (raw scores). For tests and
    exploration."""
    S, n = _check(S)
    k = check_n_trees(k)
    heads = np.full((n, k), -1, dtype=np.int32)
    scores = np.full(k, -np.inf)
    found = kbest_eisner_into(S, n, k, *workspace(n + 1, k), heads, scores, 0)
    return [(heads[:, q].copy(), float(scores[q])) for q in range(found)]


@njit(cache=True, parallel=True)
def tree_nbest_kernel(sent_ptr, arc_off, feat_ptr, feat_idx, w, k, log_prob, bounds, out_heads, out_scores):
    """The k best trees of every sentence (arc features as tree.TreeData's); sentences bounds[b]..bounds[b+1]
    share one thread's workspace. ``log_prob``: scores minus log Z (a CRF's log P(tree | x))."""
    L = longest_sentence(sent_ptr)
    for b in prange(bounds.shape[0] - 1):
        val, cnt, split, rank_l, rank_r, zeros, arc_row, hv, hr, hi, hj, stack, chart, back = workspace(L, k)
        S = np.empty((L, L))
        inside_chart = np.empty((5, L, L)) if log_prob else np.empty((5, 0, 0))
        for i in range(bounds[b], bounds[b + 1]):
            n = sent_ptr[i + 1] - sent_ptr[i]
            if n == 0:
                continue
            Si = S[:n + 1, :n + 1]
            arc_scores(w, 1.0, i, arc_off, sent_ptr, feat_ptr, feat_idx, Si)
            scores = out_scores[i]
            found = kbest_eisner_into(Si, n, k, val, cnt, split, rank_l, rank_r, zeros, arc_row, hv, hr, hi, hj,
                                      stack, chart, back, out_heads, scores, sent_ptr[i])
            if log_prob:
                log_z = inside(Si, n, inside_chart[0, :n + 1, :n + 1], inside_chart[1, :n + 1, :n + 1],
                               inside_chart[2, :n + 1, :n + 1], inside_chart[3, :n + 1, :n + 1],
                               inside_chart[4, :n + 1, :n + 1])
                for q in range(found):
                    scores[q] -= log_z


def tree_n_best(w, sent_ptr, arc_off, feat_ptr, feat_idx, *, n, log_prob=True):
    """(heads (words x n, -1 past a sentence's last tree), scores (sentences x n, -inf there)) of the n best
    projective trees of every encoded sentence (loglin.parsing.features.ArcFeatureSpace.encode's arrays)
    under weights w; ``log_prob``: log P(tree | x) of a CRF rather than the raw score w . f (M3N)."""
    from ..kernels.maxent import _blocks
    n = check_n_trees(n)
    n_words, n_sent = int(sent_ptr[-1]), len(sent_ptr) - 1
    heads = np.full((n_words, n), -1, dtype=np.int32)
    scores = np.full((n_sent, n), -np.inf)
    tree_nbest_kernel(sent_ptr, arc_off, feat_ptr, feat_idx, np.ascontiguousarray(w, dtype=np.float64), n,
                      bool(log_prob), _blocks(n_sent), heads, scores)
    return heads, scores


def n_best_trees(heads, scores, sent_ptr) -> list:
    """Per sentence [(heads, score), ...], best first, from the (heads, scores) layout."""
    out = []
    for i in range(len(sent_ptr) - 1):
        block = heads[sent_ptr[i]:sent_ptr[i + 1]]
        out.append([(block[:, q].copy(), float(scores[i, q])) for q in range(scores.shape[1])
                    if np.isfinite(scores[i, q])])
    return out
