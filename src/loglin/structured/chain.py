"""Inference on one linear chain: log-partition, marginals, Viterbi, loss-augmented Viterbi.

Thin Python entry points over the compiled passes in loglin.kernels.chain,
for tests, decoding and exploration. Inputs are *potentials*: node scores
U (n x K) and transition scores Tr (K x K); the score of a labelling y is
sum_t U[t, y_t] + sum_{t>0} Tr[y_{t-1}, y_t]  (parts of Collins et al. section 4).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import chain as ck


def _check(U, Tr):
    U = np.ascontiguousarray(U, dtype=np.float64)
    Tr = np.ascontiguousarray(Tr, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 1 or Tr.shape != (U.shape[1], U.shape[1]):
        raise InvalidInputError(f"need U of shape (n >= 1, K) and Tr of shape (K, K); got {U.shape}, {Tr.shape}")
    if not (np.all(np.isfinite(U)) and np.all(np.isfinite(Tr))):
        raise InvalidInputError("potentials must be finite")
    return U, Tr


def _tables(Tr):
    K = Tr.shape[0]
    Ecol, Erow = np.empty((K, K)), np.empty((K, K))
    colmax, rowmax = np.empty(K), np.empty(K)
    ck.transition_tables(Tr, Ecol, colmax, Erow, rowmax)
    return Ecol, colmax, Erow, rowmax


def log_partition(U, Tr) -> float:
    """log Z = log sum_y exp(score(y)) by the forward pass in log space."""
    U, Tr = _check(U, Tr)
    n, K = U.shape
    Ecol, colmax, _, _ = _tables(Tr)
    return float(ck.forward(U, n, Tr, Ecol, colmax, np.empty((n, K)), np.empty(K)))


def forward_backward(U, Tr):
    """(log Z, node marginals mu (n x K), edge marginals summed over positions (K x K))."""
    U, Tr = _check(U, Tr)
    n, K = U.shape
    Ecol, colmax, Erow, rowmax = _tables(Tr)
    alpha, beta, tmp = np.empty((n, K)), np.empty((n, K)), np.empty(K)
    log_z = ck.forward(U, n, Tr, Ecol, colmax, alpha, tmp)
    ck.backward(U, n, Tr, Erow, rowmax, beta, tmp)
    mu, edge = np.empty((n, K)), np.empty((K, K))
    ck.marginals(U, n, Tr, Ecol, colmax, alpha, beta, log_z, mu, edge, tmp)
    return float(log_z), mu, edge


def viterbi(U, Tr):
    """(best labelling as an int array, its score)."""
    U, Tr = _check(U, Tr)
    n, K = U.shape
    out = np.empty(n, dtype=np.int32)
    score = ck.viterbi(U, n, Tr, np.empty((n, K), dtype=np.int32), np.empty((n, K)), out, 0)
    return out, float(score)


def loss_augmented_viterbi(U, Tr, gold, weight=1.0):
    """argmax_y [weight * hamming(gold, y) + score(y)] (the max in eq. 3), and that maximum."""
    U, Tr = _check(U, Tr)
    gold = np.asarray(gold, dtype=np.int32)
    if gold.shape != (U.shape[0],) or gold.min() < 0 or gold.max() >= U.shape[1]:
        raise InvalidInputError("gold must hold one label id in [0, K) per position")
    V = U.copy()
    ck.add_hamming(V, U.shape[0], gold, 0, float(weight))
    return viterbi(V, Tr)


def sequence_score(U, Tr, labels) -> float:
    U, Tr = _check(U, Tr)
    labels = np.asarray(labels, dtype=np.int32)
    return float(ck.sequence_score(U, U.shape[0], Tr, labels, 0))
