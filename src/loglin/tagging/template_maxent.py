"""A Maxent tagger over configurable templates: Ratnaparkhi's left-to-right model and beam search, with the
observation predicates of a :class:`~loglin.tagging.templates.TemplateSet` (the attributes a CRF of the same
templates would use) in place of OpenNLP's fixed context generators.

Each token is one event: its predicates are the template attributes of the token plus two history
predicates, the previous label (``t=Y``) and the previous two (``t2=Y2,Y1``), as in Ratnaparkhi (1996,
Table 1), with a start symbol before the sentence; P(y | context) is the Maxent model of Huang et al.
(2010, eq. 1) over predicate x label features. Decoding is :func:`loglin.tagging.beam.beam_decode`, whose
kernel finds the history predicates of each hypothesis in the sorted ``keys`` of the two history groups.

Predicate ids: the A template attributes first (their ids are the compiler's), then the seen ``t`` codes,
then the seen ``t2`` codes (code of labels a, b: a * (K + 1) + b, K being the start symbol).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..csr import offsets
from ..errors import ModelFormatError
from ..features.extract import LabelledPredicates
from .beam import DecodeInput, beam_decode
from .templates import CompiledTemplates

HISTORY_OFFSETS = ((-1, 0), (-2, -1))       # t: the previous label; t2: the two before (older first)
HISTORY_ATOMS = (1, 2)


def history_codes(seq_ptr, y, K) -> np.ndarray:
    """(tokens x 2) codes of the gold history of every token: y[i-1], and y[i-2] * (K + 1) + y[i-1]."""
    n = int(seq_ptr[-1])
    position = np.arange(n) - np.repeat(seq_ptr[:-1], np.diff(seq_ptr))
    y = np.asarray(y, dtype=np.int64)
    prev1 = np.where(position >= 1, np.roll(y, 1), K)
    prev2 = np.where(position >= 2, np.roll(y, 2), K)
    return np.stack([prev1, prev2 * (K + 1) + prev1], axis=1)


class TemplateHistoryFeatures(LabelledPredicates):
    """The predicate index of a template Maxent tagger: compiled templates + seen history codes + labels.
    Has what :func:`~loglin.tagging.beam.beam_decode` reads of an extractor (labels, keys, tables, dictionary)."""

    def __init__(self, compiled: CompiledTemplates, labels, history_keys):
        self.compiled = compiled
        self.labels = [str(x) for x in labels]
        self.history_keys = [np.asarray(k, dtype=np.int64) for k in history_keys]
        A = compiled.n_attributes
        self.group_ptr = offsets([A] + [len(k) for k in self.history_keys])
        # keys[p] of a history predicate is its code; the attributes' entries are never searched
        self.keys = np.concatenate([np.zeros(A, dtype=np.int64)] + self.history_keys)
        self.dict_ptr = np.zeros(1, dtype=np.int64)           # no tag dictionary
        self.dict_label = np.zeros(0, dtype=np.int32)

    @classmethod
    def fit(cls, compiled: CompiledTemplates, X, gold, labels, token_weight=None, all_pairs=False):
        """(features, MaxentProblem) of training sentences X with gold label ids (flat, tokens in order)."""
        from ..problem import problem_from_matrix
        seq_ptr, tok_ptr, tok_attr = compiled.fit(X)
        K = len(labels)
        codes = history_codes(seq_ptr, gold, K)
        keys = [np.unique(codes[:, h]) for h in range(len(HISTORY_ATOMS))]
        features = cls(compiled, labels, keys)
        history = features._history_ids(codes)
        problem = problem_from_matrix(features._matrix(tok_ptr, tok_attr, history), gold, classes=np.arange(K),
                                      sample_weight=token_weight, all_pairs=bool(all_pairs))
        return features, problem

    def _history_ids(self, codes) -> np.ndarray:
        """Predicate ids of history codes (-1 where the code was never seen in training)."""
        out = np.full(codes.shape, -1, dtype=np.int64)
        for h, known in enumerate(self.history_keys):
            at = np.searchsorted(known, codes[:, h])
            hit = at < len(known)
            hit[hit] = known[at[hit]] == codes[hit, h]
            out[hit, h] = self.group_ptr[h + 1] + at[hit]
        return out

    def _matrix(self, tok_ptr, tok_attr, history) -> sp.csr_matrix:
        """0/1 tokens x predicates matrix: the template attributes, then the history predicates."""
        n = len(tok_ptr) - 1
        rows = [np.repeat(np.arange(n), np.diff(tok_ptr))] + [np.flatnonzero(history[:, h] >= 0)
                                                              for h in range(history.shape[1])]
        cols = [np.asarray(tok_attr, dtype=np.int64)] + [history[history[:, h] >= 0, h]
                                                         for h in range(history.shape[1])]
        r, c = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, self.n_predicates))

    def predicate_name(self, p: int) -> str:
        """``w[0]=the`` for an attribute; ``t=B-NP`` / ``t2=O,B-NP`` for a history predicate (``<s>``: start)."""
        if p < self.group_ptr[1]:
            if getattr(self, "_names", None) is None:
                self._names = self.compiled.attribute_names()
            return self._names[p]
        K = self.n_labels
        names = self.labels + ["<s>"]
        h = int(np.searchsorted(self.group_ptr, p, side="right")) - 2
        code = int(self.keys[p])
        return f"t={names[code]}" if h == 0 else f"t2={names[code // (K + 1)]},{names[code % (K + 1)]}"

    # ------------------------------------------------------------------ what beam_decode reads
    def history_tables(self) -> dict:
        H = len(HISTORY_ATOMS)
        return {"offsets": np.array(HISTORY_OFFSETS, dtype=np.int64), "n_atoms": np.array(HISTORY_ATOMS),
                "pad": np.full(H, 2, dtype=np.int64), "radix": np.ones(H, dtype=np.int64),
                "lo": self.group_ptr[1:H + 1].copy(), "hi": self.group_ptr[2:H + 2].copy()}

    def decode_input(self, X) -> DecodeInput:
        seq_ptr, tok_ptr, tok_attr = self.compiled.transform(X)
        n = int(seq_ptr[-1])
        return DecodeInput(seq_ptr.astype(np.int64), tok_ptr.astype(np.int64), tok_attr.astype(np.int64),
                           np.zeros((n, len(HISTORY_ATOMS)), dtype=np.int64), np.full(n, -1, dtype=np.int64), None)

    # ------------------------------------------------------------------ files
    def state(self):
        meta, arrays = self.compiled.state()
        arrays = {**arrays, "history_t": self.history_keys[0], "history_t2": self.history_keys[1]}
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays, labels, source="<model>"):
        compiled = CompiledTemplates.from_state(meta, arrays, source)
        keys = [np.asarray(arrays[name]).astype(np.int64) for name in ("history_t", "history_t2")]
        K = len(labels)
        bound = [K + 1, (K + 1) ** 2]
        if any(k.ndim != 1 or np.any(np.diff(k) <= 0) or (len(k) and (k[0] < 0 or k[-1] >= b))
               for k, b in zip(keys, bound)):
            raise ModelFormatError(f"{source}: inconsistent history keys")
        return cls(compiled, labels, keys)


class TemplateMaxentModel:
    """Weights of a template Maxent tagger and its predicate index; ``tag`` runs the beam search."""

    def __init__(self, features: TemplateHistoryFeatures, w, map_ptr, map_label, map_feat, *, beam=3,
                 iob_constraint=False, result=None):
        self.features, self.w = features, np.asarray(w, dtype=np.float64)
        self.map_ptr, self.map_label, self.map_feat = map_ptr, map_label, map_feat
        self.beam, self.iob_constraint, self.result = int(beam), bool(iob_constraint), result

    @property
    def labels(self) -> list:
        return self.features.labels

    def tag(self, X, beam=None, iob_constraint=None, tag_dictionary=None) -> list:
        """Best label sequence of every sentence (beam search; ``tag_dictionary`` is not kept by this model)."""
        X = list(X)
        if not X:
            return []
        data = self.features.decode_input(X)
        ids = beam_decode(self.features, self.w, self.map_ptr, self.map_label, self.map_feat, data,
                          beam=self.beam if beam is None else int(beam),
                          iob_constraint=self.iob_constraint if iob_constraint is None else bool(iob_constraint))
        names = np.asarray(self.labels, dtype=object)
        return [names[ids[data.sent_ptr[i]:data.sent_ptr[i + 1]]].tolist() for i in range(len(X))]

    def tag_n_best(self, X, n: int = 3, *, iob_constraint=None, tag_dictionary=None) -> list:
        """Per sentence the n best label sequences the beam search keeps (a beam of max(n, the model's)), as
        [(labels, log-probability), ...], best first (MaxentTaggerModel.tag_n_best's form)."""
        from ..structured.nbest import check_n, n_best_lists
        X = list(X)
        if not X:
            return []
        n = check_n(n)
        data = self.features.decode_input(X)
        _, labels, scores = beam_decode(
            self.features, self.w, self.map_ptr, self.map_label, self.map_feat, data, beam=max(n, self.beam),
            iob_constraint=self.iob_constraint if iob_constraint is None else bool(iob_constraint), n_best=n)
        return n_best_lists(labels, scores, data.sent_ptr, self.labels)
