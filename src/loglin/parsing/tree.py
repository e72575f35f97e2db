"""Inference on one sentence from an arc score matrix S[h, m] (h = 0 the root, m = 1..n).

Thin entry points over loglin.kernels.dependency for tests and exploration;
the score of a tree with heads h(m) is sum_m S[h(m), m]; trees are projective
and rooted at 0 (the root may have several children).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import dependency as dk


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
    return float(dk.inside(S, n, *_charts(n)))


def marginals(S):
    """(log Z, mu) with mu[h, m] the probability of arc (h, m)."""
    S, n = _check(S)
    IL, IR, CL, CR, B = ch = _charts(n)
    log_z = dk.inside(S, n, *ch)
    mu = np.empty((n + 1, n + 1))
    dk.outside_marginals(n, IL, IR, CL, CR, B, *_charts(n)[:4], mu)
    return float(log_z), mu


def eisner(S):
    """(heads as an int array, head of word m at position m - 1; the tree's score)."""
    S, n = _check(S)
    heads = np.empty(n, dtype=np.int32)
    score = dk.eisner(S, n, *_charts(n)[:4], np.empty((3, n + 1, n + 1), dtype=np.int64), heads)
    return heads, float(score)


def loss_augmented_eisner(S, gold, weight=1.0):
    """argmax_y [weight * (words with a wrong head) + score(y)] and that maximum."""
    S, n = _check(S)
    gold = np.asarray(gold, dtype=np.int32)
    if gold.shape != (n,) or gold.min() < 0 or gold.max() > n:
        raise InvalidInputError(f"gold must hold one head in [0, {n}] per word")
    V = S.copy()
    dk.add_hamming(V, n, gold, 0, float(weight))
    return eisner(V)


def tree_score(S, heads) -> float:
    S, n = _check(S)
    return float(dk.tree_score(S, n, np.asarray(heads, dtype=np.int32), 0))
