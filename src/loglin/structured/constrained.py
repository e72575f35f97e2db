"""Constrained decoding of chain models: some tokens' labels are given, the rest decoded consistently.

Viterbi with a label fixed at a token is Viterbi with every other label's node score at that token
set to -inf; the best labelling then passes through the fixed labels and is optimal among those
that do (what python-crfsuite users ask for when part of a sentence is already annotated).
``allowed`` generalizes it: a token may be limited to a set of labels (e.g. a gazetteer's types).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..errors import InvalidInputError
from .chain import unary_scores, viterbi_into


@njit(cache=True)
def forbid_disallowed(U, lo, hi, allowed):
    """U[t - lo, y] = -inf where label y is not allowed at token t: no labelling through it can win."""
    for t in range(lo, hi):
        for y in range(U.shape[1]):
            if not allowed[t, y]:
                U[t - lo, y] = -np.inf


@njit(cache=True)
def constrained_viterbi(seq_ptr, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, w, n_state, K,
                        allowed, out):
    """The best labelling of every sentence with label y at token t only where allowed[t, y]."""
    Tr = w[n_state:].reshape(K, K)
    for i in range(seq_ptr.shape[0] - 1):
        lo, hi = seq_ptr[i], seq_ptr[i + 1]
        n = hi - lo
        if n == 0:
            continue
        U = np.empty((n, K))
        unary_scores(lo, hi, w, 1.0, tok_ptr, tok_attr, tok_val, map_ptr, map_label, map_feat, U)
        forbid_disallowed(U, lo, hi, allowed)
        viterbi_into(U, n, Tr, np.empty((n, K), dtype=np.int64), np.empty((n, K)), out, lo)


def allowed_labels(constraints, lengths, labels) -> np.ndarray:
    """The (tokens x K) mask of ``constraints``: per sentence a list with, per token, None (free), a label
    or a collection of labels. One error names the sentence, token and label that is unknown."""
    index = {str(c): k for k, c in enumerate(labels)}
    total = int(sum(lengths))
    mask = np.ones((total, len(labels)), dtype=np.bool_)
    if constraints is None:
        return mask
    if len(constraints) != len(lengths):
        raise InvalidInputError(f"constraints has {len(constraints)} sentences, the input {len(lengths)}")
    start = 0
    for s, (fixed, n) in enumerate(zip(constraints, lengths)):
        if fixed is None:
            start += n
            continue
        if len(fixed) != n:
            raise InvalidInputError(f"constraints of sentence {s} has {len(fixed)} tokens, the sentence {n}")
        for t, want in enumerate(fixed):
            if want is None:
                continue
            names = [want] if isinstance(want, str) or not hasattr(want, "__iter__") else list(want)
            unknown = [str(x) for x in names if str(x) not in index]
            if unknown or not names:
                raise InvalidInputError(f"constraint on sentence {s}, token {t}: unknown label "
                                        f"{unknown[0] if unknown else '(none given)'!r}; the model's labels are "
                                        f"{', '.join(index)}")
            mask[start + t] = False
            for x in names:
                mask[start + t, index[str(x)]] = True
        start += n
    return mask
