"""Beam search over label sequences (Ratnaparkhi 1996, section 4; Ratnaparkhi 1998).

At each word, every hypothesis of the beam is extended by every label, its
score being the sum of log P(y_i | x_i) along the sequence, where the
context x_i includes predicates built from the hypothesis' own previous
labels; the ``beam`` best extensions survive (OpenNLP's default beam is 3).
``beam=1`` is greedy left-to-right decoding with predicted history.

The predicates that do not depend on the history are looked up once per
token (:class:`DecodeInput`); the history predicates are looked up per
hypothesis by binary search in the extractor's sorted keys, inside the
compiled kernel. An optional tag dictionary restricts a known word to the
labels it had in training (unknown words may take any label); for chunking,
an optional IOB constraint allows ``I-X`` only inside an X chunk, as
OpenNLP's chunker does.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from ..errors import InvalidInputError
from ..limits import MAX_BEAM
from ..features.extract import FeatureExtractor, Tokens
from ..kernels.maxent import context_scores, log_softmax_inplace

@dataclass
class DecodeInput:
    """The weight-independent part of decoding a corpus (reused across evaluations)."""

    sent_ptr: np.ndarray
    stat_ptr: np.ndarray
    stat_pred: np.ndarray
    hist_static: np.ndarray
    dict_rows: np.ndarray
    tokens: Tokens

    @classmethod
    def build(cls, extractor: FeatureExtractor, tokens: Tokens) -> "DecodeInput":
        stat_ptr, stat_pred = extractor.static_predicates(tokens)
        return cls(tokens.sent_ptr, stat_ptr, stat_pred, extractor.history_static_codes(tokens),
                   extractor.token_dictionary_rows(tokens), tokens)

    @property
    def n_tokens(self) -> int:
        return int(self.sent_ptr[-1])


@njit(cache=True)
def _history_predicate(h, rel, hyp, K, offsets, n_atoms, pad, radix, lo, hi, keys, static_code):
    """Predicate id of history template h at sentence position rel under hypothesis hyp (-1: none)."""
    code = 0
    for a in range(n_atoms[h]):
        r = rel + offsets[h, a]
        if r >= 0:
            v = hyp[r]
        elif -r <= pad[h]:
            v = K                       # start-of-sentence symbol
        else:
            return -1
        code = code * (K + 1) + v
    key = code * radix[h] + static_code
    left, right = lo[h], hi[h]
    while left < right:
        mid = (left + right) // 2
        if keys[mid] < key:
            left = mid + 1
        else:
            right = mid
    if left < hi[h] and keys[left] == key:
        return left
    return -1


@njit(cache=True)
def _top(values, n, k, order):
    """Indices of the k largest finite values[:n], best first, into order; returns how many."""
    m = 0
    for c in range(n):
        v = values[c]
        if v == -np.inf or (m == k and v <= values[order[m - 1]]):
            continue
        r = m if m < k else k - 1          # insertion sort into the kept list
        while r > 0 and values[order[r - 1]] < v:
            order[r] = order[r - 1]
            r -= 1
        order[r] = c
        if m < k:
            m += 1
    return m


@njit(cache=True)
def _decode_sentence(a, b, beam, K, w, map_ptr, map_label, map_feat, stat_ptr, stat_pred, hist_static,
                     offsets, n_atoms, pad, radix, lo, hi, keys, dict_rows, dict_ptr, dict_label, allowed_after,
                     out, sent, nbest_labels, nbest_scores):
    n = b - a
    H = hist_static.shape[1]
    hyps = np.zeros((beam, n), dtype=np.int32)
    new_hyps = np.zeros((beam, n), dtype=np.int32)
    score = np.zeros(beam)
    new_score = np.zeros(beam)
    base = np.empty(K)
    s = np.empty(K)
    cand = np.empty(beam * K)
    logp = np.empty(beam * K)
    order = np.empty(beam, dtype=np.int64)
    allowed = np.ones(K, dtype=np.bool_)
    no_values = np.empty(0)               # 0/1 predicates
    n_hyp = 1
    for i in range(n):
        tok = a + i
        context_scores(tok, w, stat_ptr, stat_pred, no_values, map_ptr, map_label, map_feat, base)
        restrict = dict_rows.shape[0] > 0 and dict_rows[tok] >= 0
        if restrict:
            allowed[:] = False
            row = dict_rows[tok]
            for j in range(dict_ptr[row], dict_ptr[row + 1]):
                allowed[dict_label[j]] = True
        for h in range(n_hyp):
            s[:] = base
            for t in range(H):
                code = hist_static[tok, t]
                if code < 0:
                    continue
                p = _history_predicate(t, i, hyps[h], K, offsets, n_atoms, pad, radix, lo, hi, keys, code)
                if p >= 0:
                    for j in range(map_ptr[p], map_ptr[p + 1]):
                        s[map_label[j]] += w[map_feat[j]]
            log_softmax_inplace(s)
            for y in range(K):
                logp[h * K + y] = score[h] + s[y]
        # restrictions (tag dictionary, IOB); if they leave nothing, this token is unrestricted
        constrained = allowed_after.shape[0] > 0
        any_ok = False
        for h in range(n_hyp):
            prev = hyps[h, i - 1] if i > 0 else K
            for y in range(K):
                ok = (not restrict or allowed[y]) and (not constrained or allowed_after[prev, y])
                cand[h * K + y] = logp[h * K + y] if ok else -np.inf
                any_ok = any_ok or ok
        if not any_ok:
            cand[:n_hyp * K] = logp[:n_hyp * K]
        if beam == 1:
            best = np.argmax(cand[:K])
            hyps[0, i] = best
            score[0] = cand[best]
            continue
        kept = _top(cand, n_hyp * K, beam, order)
        for r in range(kept):
            c = order[r]
            h, y = c // K, c % K
            new_hyps[r, :i] = hyps[h, :i]
            new_hyps[r, i] = y
            new_score[r] = cand[c]
        hyps, new_hyps = new_hyps, hyps
        score, new_score = new_score, score
        n_hyp = kept
    out[a:b] = hyps[0]
    for r in range(min(n_hyp, nbest_scores.shape[1])):     # the beam's final hypotheses, best first
        nbest_labels[a:b, r] = hyps[r]
        nbest_scores[sent, r] = score[r]


@njit(cache=True, parallel=True)
def beam_decode_kernel(sent_ptr, beam, K, w, map_ptr, map_label, map_feat, stat_ptr, stat_pred, hist_static,
                       offsets, n_atoms, pad, radix, lo, hi, keys, dict_rows, dict_ptr, dict_label, allowed_after,
                       out, nbest_labels, nbest_scores):
    for sent in prange(sent_ptr.shape[0] - 1):
        # int64: the parfor's index is unsigned, and a second signature would compile the decoder twice
        _decode_sentence(sent_ptr[sent], sent_ptr[sent + 1], beam, K, w, map_ptr, map_label, map_feat,
                         stat_ptr, stat_pred, hist_static, offsets, n_atoms, pad, radix, lo, hi, keys,
                         dict_rows, dict_ptr, dict_label, allowed_after, out, np.int64(sent), nbest_labels,
                         nbest_scores)


def iob_transitions(labels) -> np.ndarray:
    """allowed[prev, y] for IOB chunk tags: ``I-X`` only after ``B-X`` or ``I-X`` (OpenNLP's chunker).

    Row K is the sentence start, where ``I-X`` is not allowed either.
    """
    K = len(labels)
    allowed = np.ones((K + 1, K), dtype=np.bool_)
    for y, tag in enumerate(labels):
        if tag.startswith("I-"):
            allowed[:, y] = False
            for prev, before in enumerate(labels):
                if before[:2] in ("B-", "I-") and before[2:] == tag[2:]:
                    allowed[prev, y] = True
    return allowed


def beam_decode(extractor: FeatureExtractor, w, map_ptr, map_label, map_feat, data: DecodeInput, *,
                beam: int = 3, tag_dictionary: bool = False, iob_constraint: bool = False, n_best: int = 0):
    """Best label id of every token of ``data`` (flat, sentence after sentence).

    ``iob_constraint`` forbids ``I-X`` except after ``B-X``/``I-X`` (chunking). ``n_best`` > 0 (at most the
    beam) also returns the beam's final hypotheses: (best, labels (tokens x n_best, -1 where a sentence
    kept fewer), log-probabilities (sentences x n_best, -inf there)).
    """
    beam = int(beam)
    if not 1 <= beam <= MAX_BEAM:
        raise InvalidInputError(f"beam size must be from 1 to {MAX_BEAM}, got {beam}")
    tables = extractor.history_tables()
    out = np.empty(data.n_tokens, dtype=np.int32)
    if not 0 <= int(n_best) <= beam:
        raise InvalidInputError(f"n_best must be from 0 to the beam size ({beam}), got {n_best}")
    nbest_labels = np.full((data.n_tokens if n_best else 0, int(n_best)), -1, dtype=np.int32)
    nbest_scores = np.full((len(data.sent_ptr) - 1 if n_best else 0, int(n_best)), -np.inf)
    dict_rows = data.dict_rows if tag_dictionary else np.empty(0, dtype=np.int64)
    allowed_after = iob_transitions(extractor.labels) if iob_constraint else np.ones((0, 0), dtype=np.bool_)
    beam_decode_kernel(data.sent_ptr, beam, extractor.n_labels, np.asarray(w, dtype=np.float64),
                       map_ptr, map_label, map_feat, data.stat_ptr, data.stat_pred, data.hist_static,
                       tables["offsets"], tables["n_atoms"], tables["pad"], tables["radix"], tables["lo"],
                       tables["hi"], extractor.keys, dict_rows, extractor.dict_ptr, extractor.dict_label,
                       allowed_after, out, nbest_labels, nbest_scores)
    return (out, nbest_labels, nbest_scores) if n_best else out
