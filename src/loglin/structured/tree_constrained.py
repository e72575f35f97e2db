"""Constrained first-order parsing: the best projective tree in which some words keep a given head.

A fixed head h* of word m is the arc-factored score with every other arc into m at -inf, so Eisner's
algorithm (``tree.eisner_into``) on the masked scores returns the best tree that contains every fixed
arc, or -inf when no projective tree does (the fixed arcs cross, or form a cycle). The chain taggers'
counterpart is ``structured.constrained``.
"""
import numpy as np
from numba import njit, prange

from ..errors import InvalidInputError
from .tree import NEG_INF, _charts, _check, arc_scores, eisner_into, longest_sentence


@njit(cache=True)
def fix_heads(S, n, fixed, lo):
    """S[h, m] = -inf for every h other than fixed[lo + m - 1] where that is >= 0 (a given head)."""
    for m in range(1, n + 1):
        h_star = fixed[lo + m - 1]
        if h_star >= 0:
            for h in range(n + 1):
                if h != h_star:
                    S[h, m] = NEG_INF


@njit(cache=True, parallel=True)
def constrained_parse_kernel(sent_ptr, arc_off, feat_ptr, feat_idx, w, fixed, bounds, out, scores):
    """The best tree of every sentence with its fixed heads kept (fixed[word] = head, -1 free) into
    out[sent_ptr[i]:sent_ptr[i + 1]]; scores[i] = its score, -inf when no projective tree keeps them."""
    L = longest_sentence(sent_ptr)
    for b in prange(bounds.shape[0] - 1):
        S = np.empty((L, L))
        IL, IR, CL, CR = np.empty((L, L)), np.empty((L, L)), np.empty((L, L)), np.empty((L, L))
        back = np.empty((3, L, L), dtype=np.int64)
        for i in range(bounds[b], bounds[b + 1]):
            n = sent_ptr[i + 1] - sent_ptr[i]
            if n == 0:
                continue
            Si = S[:n + 1, :n + 1]
            arc_scores(w, 1.0, i, arc_off, sent_ptr, feat_ptr, feat_idx, Si)
            fix_heads(Si, n, fixed, sent_ptr[i])
            scores[i] = eisner_into(Si, n, IL[:n + 1, :n + 1], IR[:n + 1, :n + 1], CL[:n + 1, :n + 1],
                                    CR[:n + 1, :n + 1], back[:, :n + 1, :n + 1], out[sent_ptr[i]:sent_ptr[i + 1]])


def fixed_heads(constraints, lengths) -> np.ndarray:
    """One int32 array over all words: the given head of each word, -1 where free. ``constraints``: per
    sentence None or a sequence with, per word, None / -1 (free) or a head id in [0, n] other than the word's."""
    if len(constraints) != len(lengths):
        raise InvalidInputError(f"constraints: expected one entry per sentence ({len(lengths)}), "
                                f"got {len(constraints)}")
    out = np.full(int(sum(lengths)), -1, dtype=np.int32)
    at = 0
    for i, (given, n) in enumerate(zip(constraints, lengths)):
        if given is not None:
            given = list(given)
            if len(given) != n:
                raise InvalidInputError(f"constraints of sentence {i + 1}: expected {n} entries (one per word), "
                                        f"got {len(given)}")
            for m, h in enumerate(given, start=1):
                if h is None or (_is_int(h) and int(h) == -1):
                    continue
                if not _is_int(h) or not 0 <= int(h) <= n or int(h) == m:
                    raise InvalidInputError(f"constraints of sentence {i + 1}, word {m}: expected a head id in "
                                            f"[0, {n}] other than {m}, or None, got {h!r}")
                out[at + m - 1] = int(h)
        at += n
    return out


def _is_int(h) -> bool:
    return isinstance(h, (int, np.integer)) and not isinstance(h, (bool, np.bool_))


def constrained_eisner(S, fixed):
    """(heads, score) of the best projective tree of one score matrix S (:func:`tree.eisner`'s layout) that
    keeps ``fixed`` (one entry per word: head or -1); score -inf when none does."""
    S, n = _check(S)
    fixed = fixed_heads([list(fixed)], [n])
    S = S.copy()
    fix_heads(S, n, fixed, 0)
    heads = np.empty(n, dtype=np.int32)
    score = eisner_into(S, n, *_charts(n)[:4], np.empty((3, n + 1, n + 1), dtype=np.int64), heads)
    return heads, float(score)
