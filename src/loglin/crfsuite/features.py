"""CRFsuite's feature generation on loglin's chain arrays, and inference with attribute values.

CRFsuite (crf1d) makes a state feature for each (attribute, label) pair seen
in training and a transition feature for each label bigram seen in training;
``feature.possible_states`` / ``feature.possible_transitions`` add every pair,
and ``feature.minfreq`` keeps only features whose frequency (sum of attribute
values, or bigram count) is at least min_freq. loglin's chain model always has
the K x K transition block (ChainProblem); a transition that CRFsuite would not
generate is *pinned*: its weight is held at 0 during training.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..kernels.maxent import _blocks
from ..structured.chain import backward, chain_data, forward, transition_tables, unary_scores
from ..structured.objective import ChainObjective
from ..structured.passes import decode_all
from ..structured.problem import ChainProblem as _ChainProblem


def state_feature_map(tok_ptr, tok_attr, tok_val, gold, n_attributes, K, all_possible_states, min_freq):
    """(map_ptr, map_label, map_feat, n_state) of the state features CRFsuite would generate."""
    tok_of = np.repeat(np.arange(len(tok_ptr) - 1), np.diff(tok_ptr))
    key = tok_attr.astype(np.int64) * K + gold[tok_of]
    weights = None if tok_val is None else tok_val
    freq = np.bincount(key, weights=weights, minlength=n_attributes * K)
    if all_possible_states:
        keep = freq >= min_freq
    else:
        seen = np.zeros(n_attributes * K, dtype=bool)
        seen[key] = True
        keep = seen & (freq >= min_freq)
    pairs = np.flatnonzero(keep)
    a, y = pairs // K, pairs % K
    map_ptr = np.zeros(n_attributes + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=n_attributes), out=map_ptr[1:])
    return map_ptr, y.astype(np.int32), np.arange(len(pairs), dtype=np.int64), len(pairs)


def pinned_transitions(seq_ptr, gold, K, all_possible_transitions, min_freq):
    """Flat indices y' K + y of the label bigrams CRFsuite would not make features of."""
    starts = np.zeros(len(gold), dtype=bool)
    starts[seq_ptr[:-1][np.diff(seq_ptr) > 0]] = True
    follow = np.flatnonzero(~starts)
    count = np.bincount(gold[follow - 1].astype(np.int64) * K + gold[follow], minlength=K * K)
    generated = np.ones(K * K, dtype=bool) if all_possible_transitions else count > 0
    return np.flatnonzero(~(generated & (count >= min_freq)))


class PinnedChainObjective(ChainObjective):
    """The CRF objective with some weights held at 0: their gradient is zeroed.

    Gradient solvers started at 0 (L-BFGS: every direction is a combination of
    gradients) then never move them.
    """

    def __init__(self, problem, C, loss="ll", pinned=None):
        super().__init__(problem, C, loss=loss)
        self.pinned = np.zeros(0, dtype=np.int64) if pinned is None else pinned

    def fun_grad(self, w, keep_cache=True):
        f, g = super().fun_grad(w, keep_cache)
        g[self.pinned] = 0.0
        return f, g


class ChainProblem(_ChainProblem):
    """A ChainProblem whose objective pins some transition weights at 0.

    Named ChainProblem because loglin.training recognises chain problems by
    their class name.
    """

    pinned = None          # feature ids held at 0 (set after construction)

    def objective(self, C, loss="ll"):
        return PinnedChainObjective(self, C, loss=loss, pinned=self.pinned)


def decode(w, n_state, K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr, tok_val):
    """Viterbi label ids of every token (flat int32 array)."""
    out = np.empty(int(seq_ptr[-1]), dtype=np.int32)
    data = chain_data(seq_ptr, tok_ptr, tok_attr, map_ptr, map_label, map_feat, n_state, K, tok_val=tok_val)
    decode_all(data, np.ascontiguousarray(w), _blocks(len(seq_ptr) - 1), out)
    return out


def marginals(w, n_state, K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr, tok_val):
    """P(y_t = y | x) of every token, an (N, K) array (forward-backward per sentence)."""
    out = np.zeros((int(seq_ptr[-1]), K))
    val = np.empty(0) if tok_val is None else tok_val
    Tr = np.ascontiguousarray(w[n_state:n_state + K * K].reshape(K, K))
    node_marginals(np.ascontiguousarray(w), Tr, seq_ptr, tok_ptr, tok_attr, val, map_ptr, map_label, map_feat, out)
    return out


@njit(cache=True, parallel=True)
def node_marginals(w, Tr, seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, out):
    K = Tr.shape[0]
    Ecol, Erow = np.empty((K, K)), np.empty((K, K))
    colmax, rowmax = np.empty(K), np.empty(K)
    transition_tables(Tr, Ecol, colmax, Erow, rowmax)
    for i in prange(seq_ptr.shape[0] - 1):
        lo, hi = seq_ptr[i], seq_ptr[i + 1]
        n = hi - lo
        if n == 0:
            continue
        U, alpha, beta, tmp = np.empty((n, K)), np.empty((n, K)), np.empty((n, K)), np.empty(K)
        unary_scores(lo, hi, w, 1.0, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
        log_z = forward(U, n, Tr, Ecol, colmax, alpha, tmp)
        backward(U, n, Tr, Erow, rowmax, beta, tmp)
        for t in range(n):
            for y in range(K):
                out[lo + t, y] = np.exp(alpha[t, y] + beta[t, y] - log_z)
