"""Training data of a linear-chain model, as flat arrays (Collins et al. 2008, section 4).

A ``ChainProblem`` is n sentences x_i with gold labellings y_i. Its feature
vector decomposes over parts (node (t, y_t) and edge (t, y_{t-1}, y_t)):

    f(x, y) = sum_t f_state(x, t, y_t) + sum_{t>0} f_trans(y_{t-1}, y_t)

* state features: token t carries *attributes* (``tok_attr``, e.g.
  ``w[-1]=the``); an attribute map sends each attribute to (label, feature)
  pairs - predicate x label features, the CRFsuite/OpenNLP way, with only
  the pairs seen in training by default;
* transition features: one weight per label pair, stored after the
  ``n_state`` state features: w[n_state + y' K + y].

Sentences carry weights c_i (1 by default), the multiplier of their loss.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..csr import gather_rows, offsets
from ..errors import DataContentError, InvalidInputError
from ..signals import check_command_time


class SentenceProblem:
    """The set-up every structured problem shares (chain, second-order chain, tree, node): one loss weight per
    sentence (1 by default), then ``_validate()``, the compiled ``data`` of ``_structure_data()``
    (loglin.structured.contract), the empirical counts ``emp`` and ``reg``."""

    def __post_init__(self):
        self.weight = np.ones(self.n_sentences) if self.weight is None else np.asarray(self.weight, dtype=np.float64)
        check_command_time("building the training problem")
        self._validate()
        from .passes import empirical_counts
        self.data = self._structure_data()
        check_command_time("building the training problem")
        self.emp = empirical_counts(self.data, self.weight, self.n_features)
        self.reg = np.ones(self.n_features)

    def _check_weight(self):
        w = self.weight
        if w.shape != (self.n_sentences,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InvalidInputError("sentence weights must be finite, non-negative, one per sentence")


@dataclass
class ChainProblem(SentenceProblem):
    seq_ptr: np.ndarray          # (n + 1,) token offsets of the sentences
    tok_ptr: np.ndarray          # (N + 1,) attribute offsets of the tokens
    tok_attr: np.ndarray         # attribute ids
    tok_val: np.ndarray | None   # attribute values (None: all 1)
    map_ptr: np.ndarray          # (A + 1,) attribute -> map entries
    map_label: np.ndarray
    map_feat: np.ndarray
    n_state: int
    labels: np.ndarray           # label names (K,)
    gold: np.ndarray             # (N,) gold label ids (int32)
    weight: np.ndarray | None = None
    attributes: list | None = None
    emp: np.ndarray = field(init=False, repr=False)
    reg: np.ndarray = field(init=False, repr=False)

    def _structure_data(self):
        """The arrays as one ChainData value for the compiled passes (loglin.structured.contract)."""
        from .chain import chain_data
        return chain_data(self.seq_ptr, self.tok_ptr, self.tok_attr, self.map_ptr, self.map_label, self.map_feat,
                          self.n_state, self.n_labels, self.tok_val, self.gold)

    @property
    def part_ptr(self) -> np.ndarray:
        """Offsets of the sentences' part blocks: n_i K node parts, then K x K edge parts."""
        K = self.n_labels
        return offsets(np.diff(self.seq_ptr) * K + K * K)

    def gold_part_scores(self, eps):
        """Part variables whose distribution puts token marginals 1 - eps on the gold labels (w(u) ~ 0)."""
        K = self.n_labels
        s = np.zeros(int(self.part_ptr[-1]))
        sent_of = np.repeat(np.arange(self.n_sentences), np.diff(self.seq_ptr))
        pos = np.arange(self.n_tokens) - self.seq_ptr[sent_of]
        s[self.part_ptr[sent_of] + pos * K + self.gold] = np.log((1.0 - eps) * (K - 1) / eps)
        return s

    # ------------------------------------------------------------------ sizes
    @property
    def n_sentences(self) -> int:
        return len(self.seq_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.tok_ptr) - 1

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_attributes(self) -> int:
        return len(self.map_ptr) - 1

    @property
    def n_features(self) -> int:
        return self.n_state + self.n_labels ** 2

    @property
    def max_len(self) -> int:
        return int(np.diff(self.seq_ptr).max(initial=1)) or 1

    def _val_or_empty(self):
        return np.empty(0) if self.tok_val is None else self.tok_val

    def subset(self, sentences) -> "ChainProblem":
        """The same feature space restricted to some sentences (e.g. a 10% sample)."""
        seq_ptr, tok = gather_rows(self.seq_ptr, sentences)         # the chosen sentences' tokens
        tok_ptr, take = gather_rows(self.tok_ptr, tok)
        idx = np.asarray(sentences, dtype=np.int64)
        return type(self)(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=self.tok_attr[take],
                            tok_val=None if self.tok_val is None else self.tok_val[take],
                            map_ptr=self.map_ptr, map_label=self.map_label, map_feat=self.map_feat,
                            n_state=self.n_state, labels=self.labels, gold=self.gold[tok],
                            weight=self.weight[idx], attributes=self.attributes)

    def _validate(self):
        n, N = self.n_sentences, self.n_tokens
        if n < 1:
            raise DataContentError("the training data has no sentences")
        if self.n_labels < 2:
            raise DataContentError(f"need at least two labels, got {self.n_labels}")
        if self.seq_ptr[0] != 0 or self.seq_ptr[-1] != N or np.any(np.diff(self.seq_ptr) < 0):
            raise InvalidInputError("sentence offsets are inconsistent with the number of tokens")
        if len(self.gold) != N:
            raise InvalidInputError(f"{N} tokens but {len(self.gold)} gold labels")
        if N and (self.gold.min() < 0 or self.gold.max() >= self.n_labels):
            raise InvalidInputError("gold label id out of range")
        if len(self.tok_attr) and (self.tok_attr.min() < 0 or self.tok_attr.max() >= self.n_attributes):
            raise InvalidInputError("attribute id out of range")
        if len(self.map_feat) and (self.map_feat.min() < 0 or self.map_feat.max() >= self.n_state):
            raise InvalidInputError("state feature id out of range")
        if len(self.map_label) and (self.map_label.min() < 0 or self.map_label.max() >= self.n_labels):
            raise InvalidInputError("label id out of range in the attribute map")
        self._check_weight()
        if self.tok_val is not None and not np.all(np.isfinite(self.tok_val)):
            raise InvalidInputError("attribute values contain NaN or infinity")

    def objective(self, C: float, loss: str = "ll"):
        """The regularized primal in LIBLINEAR scale (see loglin.structured.objective)."""
        from .objective import ChainObjective
        return ChainObjective(self, C, loss=loss)


def attribute_label_map(tok_attr_rows, labels_of_tokens, n_attributes, n_labels, all_pairs=False):
    """Attribute map (CSR) with one state feature per (attribute, label) pair.

    ``all_pairs=False`` keeps the pairs seen in training (CRFsuite's default),
    True gives every attribute every label.
    """
    check_command_time("building the feature map")
    if all_pairs:
        a = np.repeat(np.arange(n_attributes), n_labels)
        y = np.tile(np.arange(n_labels), n_attributes)
    else:
        attr, tok_ptr = tok_attr_rows
        tok_of = np.repeat(np.arange(len(tok_ptr) - 1), np.diff(tok_ptr))
        key = np.unique(attr.astype(np.int64) * n_labels + labels_of_tokens[tok_of])
        a, y = key // n_labels, key % n_labels
    map_ptr = offsets(np.bincount(a, minlength=n_attributes))
    n_state = len(a)
    return map_ptr, y.astype(np.int32), np.arange(n_state, dtype=np.int64), n_state
