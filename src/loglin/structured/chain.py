"""The linear chain as a structure: forward-backward, Viterbi and Hamming loss on one sentence.

Layout (see loglin.structured.problem): sentence i holds tokens
``seq_ptr[i] .. seq_ptr[i+1]``; token t has attributes
``tok_attr[tok_ptr[t]:tok_ptr[t+1]]`` (values ``tok_val``, empty = all 1);
an attribute map (``map_ptr, map_label, map_feat``) sends attribute a to
its (label, state feature) pairs, exactly like the predicate map of a
MaxentProblem. Transition weights follow the ``n_state`` state features as a
K x K block, w[n_state + y' K + y].

A labelling y of a sentence of length n is the set of parts node (t, y_t),
t = 0..n-1, and edge (t, y_{t-1}, y_t), t = 1..n-1 (Collins et al. 2008,
section 4). A sentence's part block (loglin.structured.contract) is n K node
scores U[t, y] followed by K x K edge scores Tr[y', y] shared by all positions:
the edge features of a chain CRF are the transition indicators, so the EG
variables keep that form too.

Forward-backward (loglin.structured.chain_messages) runs in scaled probability
space, and in log space for a sentence whose score range is too wide for that.

The Python functions at the end (log_partition, forward_backward, viterbi,
...) are thin entry points for tests and exploration.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import overload

from ..errors import InvalidInputError
from . import contract as sc
from .chain_messages import sentence_inference
from .chain_messages import (SCALED_RANGE, TINY, backward, forward, marginals,  # noqa: F401  (re-exported)
                             scaled_backward_marginals, scaled_forward, transition_exp, transition_tables)


class ChainData(NamedTuple):
    """A chain problem's arrays as one structure value for the compiled passes."""
    seq_ptr: np.ndarray
    tok_ptr: np.ndarray
    tok_attr: np.ndarray
    tok_val: np.ndarray          # empty: all values 1
    map_ptr: np.ndarray
    map_label: np.ndarray
    map_feat: np.ndarray
    gold: np.ndarray             # int32 label per token (any labels when only decoding)
    n_state: int
    K: int
    max_len: int


def chain_data(seq_ptr, tok_ptr, tok_attr, map_ptr, map_label, map_feat, n_state, K, tok_val=None, gold=None):
    """ChainData of encoded sentences; without gold labels it serves decoding only."""
    n_tok = int(seq_ptr[-1])
    gold = np.zeros(n_tok, dtype=np.int32) if gold is None else gold
    tok_val = np.empty(0) if tok_val is None else tok_val
    max_len = int(np.diff(seq_ptr).max(initial=1)) or 1
    return ChainData(seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, gold, int(n_state), int(K),
                     max_len)



@njit(cache=True, inline="always")
def _value(val, k):
    return 1.0 if val.shape[0] == 0 else val[k]


@njit(cache=True)
def unary_scores(lo, hi, w, scale, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U):
    """U[t - lo, y] = scale * sum of state weights firing at token t with label y."""
    K = U.shape[1]
    for t in range(lo, hi):
        r = t - lo
        for y in range(K):
            U[r, y] = 0.0
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = scale * _value(tok_val, k)
            for j in range(map_ptr[a], map_ptr[a + 1]):
                U[r, np.uint64(map_label[j])] += v * w[np.uint64(map_feat[j])]


@njit(cache=True)
def scatter_node(lo, hi, coef, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, acc):
    """acc[t] += sum over tokens of coef[t - lo, y] f_t(token, y)  (transpose of unary_scores)."""
    for t in range(lo, hi):
        r = t - lo
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = _value(tok_val, k)
            for j in range(map_ptr[a], map_ptr[a + 1]):
                acc[np.uint64(map_feat[j])] += v * coef[r, np.uint64(map_label[j])]


@njit(cache=True)
def chain_score(U, n, Tr, labels, lo):
    """sum_t U[t, y_t] + sum_t Tr[y_{t-1}, y_t] for the labelling labels[lo:lo+n]."""
    s = U[0, labels[lo]]
    for t in range(1, n):
        s += U[t, labels[lo + t]] + Tr[labels[lo + t - 1], labels[lo + t]]
    return s


@njit(cache=True)
def viterbi_into(U, n, Tr, back, delta, out, lo):
    """Best labelling into out[lo:lo+n]; returns its score."""
    K = U.shape[1]
    for y in range(K):
        delta[0, y] = U[0, y]
    for t in range(1, n):
        for y in range(K):
            best, arg = -np.inf, 0
            for yp in range(K):
                v = delta[t - 1, yp] + Tr[yp, y]
                if v > best:
                    best, arg = v, yp
            delta[t, y] = best + U[t, y]
            back[t, y] = arg
    best, arg = -np.inf, 0
    for y in range(K):
        if delta[n - 1, y] > best:
            best, arg = delta[n - 1, y], y
    out[lo + n - 1] = arg
    for t in range(n - 1, 0, -1):
        arg = back[t, arg]
        out[lo + t - 1] = arg
    return best


@njit(cache=True)
def add_hamming(U, n, gold, lo, weight):
    """Loss-augment node potentials: U[t, y] += weight * [y != y_t] (per-token Hamming loss)."""
    K = U.shape[1]
    for t in range(n):
        g = gold[lo + t]
        for y in range(K):
            if y != g:
                U[t, y] += weight


@njit(cache=True)
def scatter_tracked(lo, hi, coef, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, d, mark, stamp,
                    touched, m):
    """d[t] += sum coef[t - lo, y] f_t(token, y), recording first-touched features; returns the new count."""
    for t in range(lo, hi):
        r = t - lo
        for k in range(tok_ptr[t], tok_ptr[t + 1]):
            a = tok_attr[k]
            v = _value(tok_val, k)
            for j in range(map_ptr[a], map_ptr[a + 1]):
                f = np.uint64(map_feat[j])
                if mark[f] != stamp:
                    mark[f] = stamp
                    touched[m] = f
                    m += 1
                    d[f] = 0.0
                d[f] += v * coef[r, np.uint64(map_label[j])]
    return m




@njit(cache=True)
def touch_bound_chain(seq_ptr, tok_ptr, tok_attr, map_ptr):
    """Largest number of map entries one sentence touches."""
    best = 0
    for i in range(seq_ptr.shape[0] - 1):
        m = 0
        for t in range(seq_ptr[i], seq_ptr[i + 1]):
            for k in range(tok_ptr[t], tok_ptr[t + 1]):
                a = tok_attr[k]
                m += map_ptr[a + 1] - map_ptr[a]
        best = max(best, m)
    return best


# ------------------------------------------------------------------ the structure contract for ChainData
@njit(cache=True, inline="always")
def _len(data, i):
    return data.seq_ptr[i + 1] - data.seq_ptr[i]


def register_sentence_contract(cls, shared_size):
    """Implement the contract functions all chain-like structures share, for the NamedTuple class ``cls``.

    Such a structure has ChainData's sentence, token and attribute-map fields; a sentence's part
    block is n K node parts (features from the attribute map) followed by ``shared_size(data)``
    parts shared by all positions whose features are w[n_state : n_state + shared_size], in order.
    The structure itself gives workspace_size, log_partition, argmax, labelling_score, add_labelling.
    """
    def mine(data):
        return sc.is_structure(data, cls)

    @overload(sc.n_instances)
    def _n_instances(data):
        if mine(data):
            return lambda data: data.seq_ptr.shape[0] - 1

    @overload(sc.max_parts)
    def _max_parts(data):
        if mine(data):
            return lambda data: data.max_len * data.K + shared_size(data)

    @overload(sc.part_size)
    def _part_size(data, i):
        if mine(data):
            return lambda data, i: _len(data, i) * data.K + shared_size(data)

    @overload(sc.label_count)
    def _label_count(data, i):
        if mine(data):
            return lambda data, i: _len(data, i)

    @overload(sc.label_offset)
    def _label_offset(data, i):
        if mine(data):
            return lambda data, i: data.seq_ptr[i]

    @overload(sc.part_scores)
    def _part_scores(data, i, w, scale, s):
        if mine(data):
            def impl(data, i, w, scale, s):
                lo, hi, K = data.seq_ptr[i], data.seq_ptr[i + 1], data.K
                o = (hi - lo) * K
                unary_scores(lo, hi, w, scale, data.tok_ptr, data.tok_attr, data.tok_val, data.map_ptr,
                             data.map_label, data.map_feat, s[:o].reshape((hi - lo, K)))
                for j in range(shared_size(data)):
                    s[o + j] = scale * w[data.n_state + j]
            return impl

    @overload(sc.loss_augment)
    def _loss_augment(data, i, s, weight):
        if mine(data):
            def impl(data, i, s, weight):
                n = _len(data, i)
                add_hamming(s[:n * data.K].reshape((n, data.K)), n, data.gold, data.seq_ptr[i], weight)
            return impl

    @overload(sc.expected_loss)
    def _expected_loss(data, i, mu):
        if mine(data):
            def impl(data, i, mu):
                lo, K = data.seq_ptr[i], data.K
                v = 0.0
                for t in range(_len(data, i)):
                    g = data.gold[lo + t]
                    for y in range(K):
                        if y != g:
                            v += mu[t * K + y]
                return v
            return impl

    @overload(sc.gold_labels)
    def _gold_labels(data, i):
        if mine(data):
            return lambda data, i: data.gold[data.seq_ptr[i]:data.seq_ptr[i + 1]]

    @overload(sc.scatter)
    def _scatter(data, i, coef, acc):
        if mine(data):
            def impl(data, i, coef, acc):
                lo, hi, K = data.seq_ptr[i], data.seq_ptr[i + 1], data.K
                o = (hi - lo) * K
                scatter_node(lo, hi, coef[:o].reshape((hi - lo, K)), data.tok_ptr, data.tok_attr, data.tok_val,
                             data.map_ptr, data.map_label, data.map_feat, acc)
                for j in range(shared_size(data)):
                    acc[data.n_state + j] += coef[o + j]
            return impl

    @overload(sc.scatter_tracked)
    def _scatter_tracked(data, i, coef, d, mark, stamp, touched):
        if mine(data):
            def impl(data, i, coef, d, mark, stamp, touched):
                lo, hi, K = data.seq_ptr[i], data.seq_ptr[i + 1], data.K
                o = (hi - lo) * K
                m = scatter_tracked(lo, hi, coef[:o].reshape((hi - lo, K)), data.tok_ptr, data.tok_attr,
                                    data.tok_val, data.map_ptr, data.map_label, data.map_feat, d, mark, stamp,
                                    touched, 0)
                for j in range(shared_size(data)):
                    f = data.n_state + j
                    mark[f] = stamp
                    touched[m] = f
                    m += 1
                    d[f] = coef[o + j]
                return m
            return impl

    @overload(sc.touch_bound)
    def _touch_bound(data):
        if mine(data):
            return lambda data: (touch_bound_chain(data.seq_ptr, data.tok_ptr, data.tok_attr, data.map_ptr)
                                 + shared_size(data))


@njit(cache=True, inline="always")
def _edge_block(data):
    return data.K * data.K


register_sentence_contract(ChainData, _edge_block)


@njit(cache=True, inline="always")
def _views(s, n, K):
    return s[:n * K].reshape((n, K)), s[n * K:n * K + K * K].reshape((K, K))


@overload(sc.workspace_size)
def _workspace_size(data):
    if sc.is_structure(data, ChainData):
        def impl(data):
            L, K = data.max_len, data.K
            return _table_size(L, K), L * K
        return impl


@njit(cache=True, inline="always")
def _table_size(L, K):
    return 3 * L * K + 4 * K * K + 3 * K + L + 3


@njit(cache=True)
def _tables(fws, L, K):
    """alpha, beta, delta (= exp node scores), Ecol, Erow, E, ET, colmax, rowmax, tmp, c, info."""
    LK, KK = L * K, K * K
    alpha = fws[:LK].reshape((L, K))
    beta = fws[LK:2 * LK].reshape((L, K))
    delta = fws[2 * LK:3 * LK].reshape((L, K))
    o = 3 * LK
    Ecol = fws[o:o + KK].reshape((K, K))
    Erow = fws[o + KK:o + 2 * KK].reshape((K, K))
    E = fws[o + 2 * KK:o + 3 * KK].reshape((K, K))
    ET = fws[o + 3 * KK:o + 4 * KK].reshape((K, K))
    o += 4 * KK
    return (alpha, beta, delta, Ecol, Erow, E, ET, fws[o:o + K], fws[o + K:o + 2 * K], fws[o + 2 * K:o + 3 * K],
            fws[o + 3 * K:o + 3 * K + L], fws[o + 3 * K + L:o + 3 * K + L + 3])


@overload(sc.log_partition)
def _log_partition(data, i, s, fws, iws, mu, want_marginals, reuse):
    if sc.is_structure(data, ChainData):
        def impl(data, i, s, fws, iws, mu, want_marginals, reuse):
            n, K = _len(data, i), data.K
            U, Tr = _views(s, n, K)
            mu_node, edge = _views(mu, n, K)
            return sentence_inference(U, n, Tr, _tables(fws, data.max_len, K), reuse, want_marginals, mu_node,
                                      edge)
        return impl


@overload(sc.argmax)
def _argmax(data, i, s, fws, iws, labels):
    if sc.is_structure(data, ChainData):
        def impl(data, i, s, fws, iws, labels):
            n, K, L = _len(data, i), data.K, data.max_len
            U, Tr = _views(s, n, K)
            delta = _tables(fws, L, K)[2]
            return viterbi_into(U, n, Tr, iws[:L * K].reshape((L, K)), delta, labels, 0)
        return impl


@overload(sc.labelling_score)
def _labelling_score(data, i, s, labels):
    if sc.is_structure(data, ChainData):
        def impl(data, i, s, labels):
            n = _len(data, i)
            U, Tr = _views(s, n, data.K)
            return chain_score(U, n, Tr, labels, 0)
        return impl


@njit(cache=True, inline="always")
def add_chain_labelling(data, i, labels, c, coef):
    """coef += c * (node and edge part counts of the labelling); any chain-like data."""
    n, K = _len(data, i), data.K
    for t in range(n):
        coef[t * K + labels[t]] += c
    for t in range(1, n):
        coef[n * K + labels[t - 1] * K + labels[t]] += c


@overload(sc.add_labelling)
def _add_labelling(data, i, labels, c, coef):
    if sc.is_structure(data, ChainData):
        return lambda data, i, labels, c, coef: add_chain_labelling(data, i, labels, c, coef)


# ------------------------------------------------------------------ Python entry points (tests, exploration)
def _check(U, Tr):
    U = np.ascontiguousarray(U, dtype=np.float64)
    Tr = np.ascontiguousarray(Tr, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 1 or Tr.shape != (U.shape[1], U.shape[1]):
        raise InvalidInputError(f"need U of shape (n >= 1, K) and Tr of shape (K, K); got {U.shape}, {Tr.shape}")
    if not (np.all(np.isfinite(U)) and np.all(np.isfinite(Tr))):
        raise InvalidInputError("potentials must be finite")
    return U, Tr


def forward_backward(U, Tr, want_marginals=True):
    """(log Z, node marginals mu (n x K), edge marginals summed over positions (K x K))."""
    U, Tr = _check(U, Tr)
    n, K = U.shape
    mu, edge = np.empty((n, K)), np.empty((K, K))
    tables = _tables(np.empty(_table_size(n, K)), n, K)
    log_z = sentence_inference(U, n, Tr, tables, False, want_marginals, mu, edge)
    return float(log_z), mu, edge


def log_partition(U, Tr) -> float:
    """log Z = log sum_y exp(score(y)) by the forward pass."""
    return forward_backward(U, Tr, want_marginals=False)[0]


def viterbi(U, Tr):
    """(best labelling as an int array, its score)."""
    U, Tr = _check(U, Tr)
    n, K = U.shape
    out = np.empty(n, dtype=np.int32)
    score = viterbi_into(U, n, Tr, np.empty((n, K), dtype=np.int64), np.empty((n, K)), out, 0)
    return out, float(score)


def loss_augmented_viterbi(U, Tr, gold, weight=1.0):
    """argmax_y [weight * hamming(gold, y) + score(y)] (the max in eq. 3), and that maximum."""
    U, Tr = _check(U, Tr)
    gold = np.asarray(gold, dtype=np.int32)
    if gold.shape != (U.shape[0],) or gold.min() < 0 or gold.max() >= U.shape[1]:
        raise InvalidInputError("gold must hold one label id in [0, K) per position")
    V = U.copy()
    add_hamming(V, U.shape[0], gold, 0, float(weight))
    return viterbi(V, Tr)


def sequence_score(U, Tr, labels) -> float:
    U, Tr = _check(U, Tr)
    labels = np.asarray(labels, dtype=np.int32)
    return float(chain_score(U, U.shape[0], Tr, labels, 0))
