"""Multi-class classification (one node, K labels) as a structure, in one file.

Instance i reads attribute row x = ``row[i]``: attributes ``ctx_attr[ctx_ptr[x]:ctx_ptr[x+1]]``
(values ``ctx_val``, empty = all 1), so instances may share a row (the observed events of
one merged Maxent context, :func:`node_view`); the attribute map (``map_ptr, map_label, map_feat``) sends an
attribute to its (label, feature) pairs, as the state features of a chain. The
part block of an instance is its K label scores; log Z is a log-sum-exp, the
marginals a softmax, the argmax the best label and the Hamming loss the 0/1
loss. The CRF objective is multinomial logistic regression, the M3N objective
the multi-class hinge of Crammer & Singer; the structured solvers (EG, SGD,
cutting plane, L-BFGS) train both through the structure contract.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba.extending import overload

from ..errors import InvalidInputError
from . import contract as sc
from ..kernels.dual_cd import max_row_width
from ..kernels.maxent import _scatter_context as scatter_context
from ..kernels.maxent import context_scores
from .chain import scatter_tracked
from .objective import StructuredObjective
from .problem import SentenceProblem, attribute_label_map


class NodeData(NamedTuple):
    row: np.ndarray              # attribute row of each instance
    ctx_ptr: np.ndarray
    ctx_attr: np.ndarray
    ctx_val: np.ndarray          # empty: all values 1
    map_ptr: np.ndarray
    map_label: np.ndarray
    map_feat: np.ndarray
    gold: np.ndarray             # int32 label per instance
    K: int


@dataclass
class NodeProblem(SentenceProblem):
    """n labelled instances of attributes; features are (attribute, label) pairs of an attribute map."""
    ctx_ptr: np.ndarray
    ctx_attr: np.ndarray
    ctx_val: np.ndarray | None
    map_ptr: np.ndarray
    map_label: np.ndarray
    map_feat: np.ndarray
    n_features: int
    labels: np.ndarray
    gold: np.ndarray
    weight: np.ndarray | None = None
    row: np.ndarray | None = None
    source: object = None        # the MaxentProblem this problem views (node_view), if any
    emp: np.ndarray = field(init=False, repr=False)
    reg: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        self.row = np.arange(len(self.gold), dtype=np.int64) if self.row is None else np.asarray(self.row, dtype=np.int64)
        super().__post_init__()

    def _validate(self):
        n, K = self.n_sentences, len(self.labels)
        if n < 1 or K < 2 or self.row.shape != (n,):
            raise InvalidInputError("need >= 1 instance, >= 2 labels, one gold label and row per instance")
        self._check_weight()
        if self.row.min() < 0 or self.row.max() >= len(self.ctx_ptr) - 1:
            raise InvalidInputError("attribute row out of range")
        if self.gold.min() < 0 or self.gold.max() >= K:
            raise InvalidInputError("gold label out of range")

    def _structure_data(self):
        val = np.empty(0) if self.ctx_val is None else np.asarray(self.ctx_val, dtype=np.float64)
        return NodeData(self.row, self.ctx_ptr, self.ctx_attr, val, self.map_ptr, self.map_label, self.map_feat,
                        np.asarray(self.gold, dtype=np.int32), len(self.labels))

    @classmethod
    def from_matrix(cls, X, y, n_labels=None, weight=None, all_pairs=True):
        """From a dense or CSR (instances x attributes) matrix and integer labels 0..K-1."""
        import scipy.sparse as sp
        X = sp.csr_matrix(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.int32)
        K = int(y.max()) + 1 if n_labels is None else int(n_labels)
        map_ptr, map_label, map_feat, n_state = attribute_label_map((X.indices, X.indptr), y, X.shape[1], K,
                                                                    all_pairs)
        return cls(X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.copy(), map_ptr, map_label,
                   map_feat, n_state, np.arange(K), y, weight)

    @property
    def n_sentences(self) -> int:
        return len(self.gold)

    @property
    def part_ptr(self) -> np.ndarray:
        return np.arange(self.n_sentences + 1, dtype=np.int64) * len(self.labels)

    def gold_part_scores(self, eps):
        """Label scores giving the gold label probability 1 - eps (w(u) ~ 0)."""
        K = len(self.labels)
        s = np.zeros(self.n_sentences * K)
        s[np.arange(self.n_sentences) * K + self.gold] = np.log((1.0 - eps) * (K - 1) / eps)
        return s

    def objective(self, C: float, loss: str = "ll"):
        return NodeObjective(self, C, loss=loss)


class NodeObjective(StructuredObjective):
    """Multinomial logistic (CRF) or multi-class hinge (M3N) primal of a NodeProblem."""

    kind = "node"
    structure = "multi-class node"


# ------------------------------------------------------------------ the structure contract for NodeData
def _is_node(data):
    return sc.is_structure(data, NodeData)


@overload(sc.n_instances)
def _n_instances(data):
    if _is_node(data):
        return lambda data: data.gold.shape[0]


@overload(sc.workspace_size)
def _workspace_size(data):
    if _is_node(data):
        return lambda data: (1, 1)


@overload(sc.max_parts)
def _max_parts(data):
    if _is_node(data):
        return lambda data: data.K


@overload(sc.part_size)
def _part_size(data, i):
    if _is_node(data):
        return lambda data, i: data.K


@overload(sc.label_count)
def _label_count(data, i):
    if _is_node(data):
        return lambda data, i: 1


@overload(sc.label_offset)
def _label_offset(data, i):
    if _is_node(data):
        return lambda data, i: i


@overload(sc.part_scores)
def _part_scores(data, i, w, scale, s):
    if _is_node(data):
        def impl(data, i, w, scale, s):
            context_scores(data.row[i], w, data.ctx_ptr, data.ctx_attr, data.ctx_val, data.map_ptr, data.map_label,
                           data.map_feat, s[:data.K])
            if scale != 1.0:
                for y in range(data.K):
                    s[y] *= scale
        return impl


@overload(sc.log_partition)
def _log_partition(data, i, s, fws, iws, mu, want_marginals, reuse):
    if _is_node(data):
        def impl(data, i, s, fws, iws, mu, want_marginals, reuse):
            m = -np.inf
            for y in range(data.K):
                m = max(m, s[y])
            z = 0.0
            for y in range(data.K):
                e = np.exp(s[y] - m)
                z += e
                if want_marginals:
                    mu[y] = e
            if want_marginals:
                inv = 1.0 / z
                for y in range(data.K):
                    mu[y] *= inv
            return m + np.log(z)
        return impl


@overload(sc.argmax)
def _argmax(data, i, s, fws, iws, labels):
    if _is_node(data):
        def impl(data, i, s, fws, iws, labels):
            best, arg = -np.inf, 0
            for y in range(data.K):
                if s[y] > best:
                    best, arg = s[y], y
            labels[0] = arg
            return best
        return impl


@overload(sc.loss_augment)
def _loss_augment(data, i, s, weight):
    if _is_node(data):
        def impl(data, i, s, weight):
            for y in range(data.K):
                if y != data.gold[i]:
                    s[y] += weight
        return impl


@overload(sc.expected_loss)
def _expected_loss(data, i, mu):
    if _is_node(data):
        return lambda data, i, mu: 1.0 - mu[data.gold[i]]


@overload(sc.gold_labels)
def _gold_labels(data, i):
    if _is_node(data):
        return lambda data, i: data.gold[i:i + 1]


@overload(sc.labelling_score)
def _labelling_score(data, i, s, labels):
    if _is_node(data):
        return lambda data, i, s, labels: s[labels[0]]


@overload(sc.add_labelling)
def _add_labelling(data, i, labels, c, coef):
    if _is_node(data):
        def impl(data, i, labels, c, coef):
            coef[labels[0]] += c
        return impl


@overload(sc.scatter)
def _scatter(data, i, coef, acc):
    if _is_node(data):
        def impl(data, i, coef, acc):
            scatter_context(data.row[i], coef, data.ctx_ptr, data.ctx_attr, data.ctx_val, data.map_ptr,
                            data.map_label, data.map_feat, acc)
        return impl


@overload(sc.scatter_tracked)
def _scatter_tracked(data, i, coef, d, mark, stamp, touched):
    if _is_node(data):
        def impl(data, i, coef, d, mark, stamp, touched):
            x = data.row[i]
            return scatter_tracked(x, x + 1, coef[:data.K].reshape((1, data.K)), data.ctx_ptr, data.ctx_attr,
                                   data.ctx_val, data.map_ptr, data.map_label, data.map_feat, d, mark, stamp,
                                   touched, 0)
        return impl


@overload(sc.touch_bound)
def _touch_bound(data):
    if _is_node(data):
        return lambda data: max_row_width(data.ctx_ptr, data.ctx_attr, data.map_ptr)
