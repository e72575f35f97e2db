"""Exact k-best Viterbi for chain models: the k highest-scoring labellings of a sentence, best first.

The chart keeps, per (position t, label y), the k best scores of the paths y_0..y_t ending in y, sorted,
with back-pointers (previous label, its rank): the k-best extension of max-product (Huang & Chiang 2005,
algorithm 1 on the chain's lattice). The k best at (t, y) are the k largest of
{chart[t-1, y', r] + Tr[y', y]} + U[t, y]; each list chart[t-1, y'] is sorted, so they are merged by
repeatedly taking the largest head (the lists are exhausted lazily, as in their algorithm 2): by a scan
of the K heads per pick for small k, O(n K^2 k) per sentence, and from k = HEAP_FROM_K with the heads in
a heap, O(n K (K + k log K)), against Viterbi's O(n K^2); k = 1 runs Viterbi's own loop.
:func:`kbest2_into` is the same chart on the pair states of the second-order chain (chain2).

Ties are broken deterministically: equal scores come in increasing order of the last label, then the one
before it, and so on (the labelling read right to left); with k = 1 this is Viterbi's choice
(loglin.structured.chain.viterbi_into keeps the first maximum).

Constraints: a node score of -inf removes a label at a token (loglin.structured.constrained), a
transition of -inf a label pair (the IOB constraint ``allowed_after`` of loglin.tagging.beam, whose row
K is the sentence start). Labellings of score -inf are never returned, so a sentence may get fewer than
k. CRF scores become log-probabilities log P(y | x) = score(y) - log Z(x) with the unconstrained
partition function (forward algorithm), so the k values sum to at most 1 after exp.

The layout of a corpus's results is beam_decode's n-best layout: labels (tokens x k, -1 where a
sentence has fewer) and scores (sentences x k, -inf there).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..errors import InvalidInputError
from .chain import unary_scores, viterbi_into
from .chain_messages import forward, transition_tables
from .constrained import forbid_disallowed

NO_CONSTRAINT = np.ones((0, 0), dtype=np.bool_)
HEAP_FROM_K = 5      # from this k on the merge keeps the list heads in a heap (see the decision record)


@njit(cache=True, inline="always")
def _before(va, la, vb, lb):
    """Candidate (va, from label la) comes before (vb, lb): higher score, then the smaller previous label."""
    return va > vb or (va == vb and la < lb)


@njit(cache=True)
def _sift_down(hv, hl, i, m):
    while True:
        c = 2 * i + 1
        if c >= m:
            return
        if c + 1 < m and _before(hv[c + 1], hl[c + 1], hv[c], hl[c]):
            c += 1
        if not _before(hv[c], hl[c], hv[i], hl[i]):
            return
        hv[c], hv[i] = hv[i], hv[c]
        hl[c], hl[i] = hl[i], hl[c]
        i = c


@njit(cache=True)
def _merge_scan(prev, prev_count, tr, k, u, row, back_label, back_rank, heads):
    """row[r] = the r-th best of {prev[y', h] + tr[y']} + u by scanning the K list heads per pick
    (O(K k)); returns how many."""
    K = prev.shape[0]
    for yp in range(K):
        heads[yp] = 0
    for r in range(k):
        best, arg = -np.inf, -1
        for yp in range(K):                     # the largest head; ties: the smallest previous label
            h = heads[yp]
            if h < prev_count[yp]:
                v = prev[yp, h] + tr[yp]
                if v > best:
                    best, arg = v, yp
        if arg < 0:
            return r
        row[r] = best + u
        back_label[r] = arg
        back_rank[r] = heads[arg]
        heads[arg] += 1
    return k


@njit(cache=True)
def _merge_heap(prev, prev_count, tr, k, u, row, back_label, back_rank, heads, hv, hl):
    """As _merge_scan with the heads in a binary max-heap (O(K + k log K)); the same order."""
    K = prev.shape[0]
    m = 0
    for yp in range(K):
        heads[yp] = 0
        if prev_count[yp] > 0:
            v = prev[yp, 0] + tr[yp]
            if v > -np.inf:
                hv[m], hl[m] = v, yp
                m += 1
    for i in range(m // 2 - 1, -1, -1):
        _sift_down(hv, hl, i, m)
    r = 0
    while r < k and m > 0:
        arg = hl[0]
        row[r] = hv[0] + u
        back_label[r] = arg
        back_rank[r] = heads[arg]
        heads[arg] += 1
        r += 1
        h = heads[arg]
        if h < prev_count[arg] and prev[arg, h] + tr[arg] > -np.inf:
            hv[0] = prev[arg, h] + tr[arg]
        else:
            m -= 1
            hv[0], hl[0] = hv[m], hl[m]
        _sift_down(hv, hl, 0, m)
    return r


@njit(cache=True)
def kbest_into(U, n, Tr, k, chart, back_label, back_rank, count, heads, out_labels, out_scores, lo):
    """The k best labellings of U[:n], Tr into out_labels[lo:lo+n, :], their scores into out_scores[:];
    returns how many labellings of finite score there are (at most k).

    Workspace: chart (n, K, k) float, back_label and back_rank (n, K, k) int, count (n, K) int, heads (K) int.
    """
    K = U.shape[1]
    if k == 1:                                  # Viterbi itself (the same tie rule)
        best = viterbi_into(U, n, Tr, back_label[:n, :, 0], chart[:n, :, 0], out_labels[:, 0], lo)
        if best == -np.inf:
            return 0
        out_scores[0] = best
        return 1
    use_heap = k >= HEAP_FROM_K
    hv, hl = np.empty(K), np.empty(K, dtype=np.int64)
    TrT = np.ascontiguousarray(Tr.T)            # column y of Tr as a contiguous row
    for y in range(K):
        chart[0, y, 0] = U[0, y]
        count[0, y] = 1 if U[0, y] > -np.inf else 0
    for t in range(1, n):
        for y in range(K):
            count[t, y] = 0
            u = U[t, y]
            if u == -np.inf:
                continue
            if use_heap:
                count[t, y] = _merge_heap(chart[t - 1], count[t - 1], TrT[y], k, u, chart[t, y], back_label[t, y],
                                          back_rank[t, y], heads, hv, hl)
            else:
                count[t, y] = _merge_scan(chart[t - 1], count[t - 1], TrT[y], k, u, chart[t, y], back_label[t, y],
                                          back_rank[t, y], heads)
    for y in range(K):
        heads[y] = 0
    found = 0
    for j in range(k):
        best, arg = -np.inf, -1
        for y in range(K):
            h = heads[y]
            if h < count[n - 1, y] and chart[n - 1, y, h] > best:
                best, arg = chart[n - 1, y, h], y
        if arg < 0:
            break
        out_scores[j] = best
        y, r = arg, heads[arg]
        heads[arg] += 1
        for t in range(n - 1, -1, -1):
            out_labels[lo + t, j] = y
            if t > 0:
                y, r = back_label[t, y, r], back_rank[t, y, r]
        found += 1
    return found


@njit(cache=True)
def _sentence_nbest(lo, hi, w, Tr, Tr_iob, Ecol, colmax, tok_ptr, tok_attr, tok_val, map_ptr, map_label,
                    map_feat, allowed, allowed_after, k, log_prob, out_labels, out_scores, sent, U, V, alpha, tmp,
                    chart, back_label, back_rank, count, heads):
    n, K = hi - lo, Tr.shape[0]
    unary_scores(lo, hi, w, 1.0, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
    log_z = 0.0
    if log_prob:                                # P(y | x) of the model: the unconstrained partition function
        log_z = forward(U, n, Tr, Ecol, colmax, alpha, tmp)
    if allowed.shape[0] > 0:
        forbid_disallowed(U, lo, hi, allowed)
    scores = out_scores[sent]
    found = 0
    if allowed_after.shape[0] > 0:
        V[:n] = U[:n]
        for y in range(K):
            if not allowed_after[K, y]:
                V[0, y] = -np.inf
        found = kbest_into(V, n, Tr_iob, k, chart, back_label, back_rank, count, heads, out_labels, scores, lo)
    if found == 0:                  # no IOB constraint, or none of its labellings keeps the given labels
        found = kbest_into(U, n, Tr, k, chart, back_label, back_rank, count, heads, out_labels, scores, lo)
    for j in range(found):
        scores[j] -= log_z


@njit(cache=True, parallel=True)
def chain_nbest_kernel(seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, w, n_state, K,
                       allowed, allowed_after, k, log_prob, bounds, out_labels, out_scores):
    """The k best labellings of every sentence (see the module docstring for the arguments' meaning);
    sentences bounds[b]..bounds[b+1] share one thread's workspace."""
    Tr = w[n_state:n_state + K * K].reshape(K, K)
    Tr_iob = Tr.copy()
    if allowed_after.shape[0] > 0:
        for yp in range(K):
            for y in range(K):
                if not allowed_after[yp, y]:
                    Tr_iob[yp, y] = -np.inf
    Ecol, Erow = np.empty((K, K)), np.empty((K, K))
    colmax, rowmax = np.empty(K), np.empty(K)
    transition_tables(Tr, Ecol, colmax, Erow, rowmax)
    L = 1
    for i in range(seq_ptr.shape[0] - 1):
        L = max(L, seq_ptr[i + 1] - seq_ptr[i])
    for b in prange(bounds.shape[0] - 1):
        U, V, alpha, tmp = np.empty((L, K)), np.empty((L, K)), np.empty((L, K)), np.empty(K)
        chart = np.empty((L, K, k))
        back_label = np.empty((L, K, k), dtype=np.int32)
        back_rank = np.empty((L, K, k), dtype=np.int32)
        count = np.empty((L, K), dtype=np.int64)
        heads = np.empty(K, dtype=np.int64)
        for i in range(bounds[b], bounds[b + 1]):
            lo, hi = seq_ptr[i], seq_ptr[i + 1]
            if hi > lo:
                _sentence_nbest(lo, hi, w, Tr, Tr_iob, Ecol, colmax, tok_ptr, tok_attr, tok_val, map_ptr,
                                map_label, map_feat, allowed, allowed_after, k, log_prob, out_labels, out_scores, i,
                                U, V, alpha, tmp, chart, back_label, back_rank, count, heads)


@njit(cache=True)
def kbest2_into(U, n, E, T, k, chart, back_label, back_rank, count, heads, out_labels, out_scores):
    """The k best labellings of a second-order chain (node scores U, pair scores E[y', y], triple scores
    T[y'', y', y]; loglin.structured.chain2) into out_labels[0:n, :] and out_scores; returns how many.

    The chart is the pair-state one of chain2.viterbi2 with k entries per state (t, y_{t-1}, y_t), merged
    over y_{t-2}. Workspace: chart (n, K, K, k), back_label and back_rank (n, K, K, k), count (n, K, K),
    heads (K, K). Ties: as the first-order kernel (the labelling read right to left)."""
    K = U.shape[1]
    if n == 1:
        for y in range(K):
            heads[0, y] = 0
        found = 0
        for j in range(k):
            best, arg = -np.inf, -1
            for y in range(K):
                if heads[0, y] == 0 and U[0, y] > best:
                    best, arg = U[0, y], y
            if arg < 0:
                break
            heads[0, arg] = 1
            out_labels[0, j] = arg
            out_scores[j] = best
            found += 1
        return found
    for a in range(K):
        for b in range(K):
            v = U[0, a] + U[1, b] + E[a, b]
            chart[1, a, b, 0] = v
            count[1, a, b] = 1 if v > -np.inf else 0
    for t in range(2, n):
        for b in range(K):
            for c in range(K):
                count[t, b, c] = 0
                u = E[b, c] + U[t, c]
                if u == -np.inf:
                    continue
                for a in range(K):
                    heads[0, a] = 0
                for r in range(k):
                    best, arg = -np.inf, -1
                    for a in range(K):
                        h = heads[0, a]
                        if h < count[t - 1, a, b]:
                            v = chart[t - 1, a, b, h] + T[a, b, c]
                            if v > best:
                                best, arg = v, a
                    if arg < 0:
                        break
                    chart[t, b, c, r] = best + u
                    back_label[t, b, c, r] = arg
                    back_rank[t, b, c, r] = heads[0, arg]
                    heads[0, arg] += 1
                    count[t, b, c] = r + 1
    heads[:, :] = 0
    found = 0
    for j in range(k):
        best, ba, bb = -np.inf, -1, -1
        for b in range(K):                      # ties: the smallest last label, then the one before
            for a in range(K):
                h = heads[a, b]
                if h < count[n - 1, a, b] and chart[n - 1, a, b, h] > best:
                    best, ba, bb = chart[n - 1, a, b, h], a, b
        if ba < 0:
            break
        out_scores[j] = best
        a, b, r = ba, bb, heads[ba, bb]
        heads[ba, bb] += 1
        out_labels[n - 1, j], out_labels[n - 2, j] = b, a
        for t in range(n - 1, 1, -1):
            prev, r = back_label[t, a, b, r], back_rank[t, a, b, r]
            out_labels[t - 2, j] = prev
            a, b = prev, a
        found += 1
    return found


def kbest_viterbi2(U, E, T, k):
    """The k best labellings of a second-order chain: [(labels, score)], best first (raw scores)."""
    U = np.ascontiguousarray(U, dtype=np.float64)
    E = np.ascontiguousarray(E, dtype=np.float64)
    T = np.ascontiguousarray(T, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 1:
        raise InvalidInputError(f"need U of shape (n >= 1, K); got {U.shape}")
    n, K = U.shape
    if E.shape != (K, K) or T.shape != (K, K, K):
        raise InvalidInputError(f"need E of shape (K, K) and T of shape (K, K, K); got {E.shape}, {T.shape}")
    k = check_n(k)
    labels = np.full((n, k), -1, dtype=np.int32)
    scores = np.full(k, -np.inf)
    found = kbest2_into(U, n, E, T, k, np.empty((n, K, K, k)), np.empty((n, K, K, k), dtype=np.int32),
                        np.empty((n, K, K, k), dtype=np.int32), np.empty((n, K, K), dtype=np.int64),
                        np.empty((K, K), dtype=np.int64), labels, scores)
    return [(labels[:, j].copy(), float(scores[j])) for j in range(found)]


def check_n(n, what="labellings") -> int:
    """n as an int when it is a valid number of best ``what`` (1 to limits.MAX_BEAM), else InvalidInputError."""
    from ..limits import MAX_BEAM
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= int(n) <= MAX_BEAM:
        raise InvalidInputError(f"n (the number of best {what}) must be an integer from 1 to {MAX_BEAM}, got {n!r}")
    return int(n)


def chain_n_best(w, n_state, K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr, tok_val=None, *, n,
                 allowed=None, allowed_after=None, log_prob=True):
    """(labels (tokens x n, -1 past a sentence's last labelling), scores (sentences x n, -inf there)) of the
    n best labellings of every sentence of a first-order chain model with weights w.

    ``allowed``: (tokens x K) mask of labels a token may take (constrained decoding); ``allowed_after``:
    (K+1) x K mask of label pairs (row K: sentence start), dropped for a sentence it leaves no labelling;
    ``log_prob``: scores minus log Z (a CRF's log-probabilities) rather than raw scores (M3N)."""
    n = check_n(n)
    n_tok, n_sent = int(seq_ptr[-1]), len(seq_ptr) - 1
    labels = np.full((n_tok, n), -1, dtype=np.int32)
    scores = np.full((n_sent, n), -np.inf)
    from ..kernels.maxent import _blocks
    chain_nbest_kernel(seq_ptr, tok_ptr, tok_attr, np.empty(0) if tok_val is None else tok_val, map_ptr,
                       map_label, map_feat, np.ascontiguousarray(w, dtype=np.float64), int(n_state), int(K),
                       NO_CONSTRAINT if allowed is None else allowed,
                       NO_CONSTRAINT if allowed_after is None else allowed_after, n, bool(log_prob),
                       _blocks(n_sent), labels, scores)
    return labels, scores


def n_best_lists(labels, scores, seq_ptr, names) -> list:
    """Per sentence [(label names, score), ...], best first, from the (labels, scores) layout."""
    names = np.asarray([str(x) for x in names], dtype=object)
    out = []
    for i in range(len(seq_ptr) - 1):
        block = labels[seq_ptr[i]:seq_ptr[i + 1]]
        out.append([(names[block[:, r]].tolist(), float(scores[i, r])) for r in range(scores.shape[1])
                    if np.isfinite(scores[i, r])])
    return out


def kbest_viterbi(U, Tr, k, allowed=None, allowed_after=None):
    """The k best labellings of node scores U (n x K) and transition scores Tr (K x K): [(labels, score)],
    best first (raw scores; -inf entries of U or Tr forbid labels or pairs). For tests and exploration."""
    U = np.array(U, dtype=np.float64)
    Tr = np.array(Tr, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 1 or Tr.shape != (U.shape[1], U.shape[1]):
        raise InvalidInputError(f"need U of shape (n >= 1, K) and Tr of shape (K, K); got {U.shape}, {Tr.shape}")
    n, K = U.shape
    k = check_n(k)
    if allowed is not None:
        U[~np.asarray(allowed, dtype=bool)] = -np.inf
    if allowed_after is not None:
        after = np.asarray(allowed_after, dtype=bool)
        Tr[~after[:K]] = -np.inf
        U[0, ~after[K]] = -np.inf
    labels = np.full((n, k), -1, dtype=np.int32)
    scores = np.full(k, -np.inf)
    found = kbest_into(U, n, Tr, k, np.empty((n, K, k)), np.empty((n, K, k), dtype=np.int32),
                       np.empty((n, K, k), dtype=np.int32), np.empty((n, K), dtype=np.int64),
                       np.empty(K, dtype=np.int64), labels, scores, 0)
    return [(labels[:, j].copy(), float(scores[j])) for j in range(found)]
