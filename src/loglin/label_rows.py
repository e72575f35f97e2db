"""How the Maxent passes lay out W: dense label rows, and all-pairs rows ordered by frequency.

One kernel pair (kernels.maxent.loss_and_expectation / hessian_vector) serves every Maxent problem:
each context's predicates are split into dense K-wide rows of a block W_D, added with contiguous
loops that LLVM vectorizes, and the rest, added through the predicate map. A layout says how w
becomes (W_D, w for the map) before a pass and how the pass's results go back:

* :class:`LabelRows` (problems that are not all-pairs, e.g. the papers' seen pairs): through the
  map a predicate's weights are a scatter into the K scores, which does not vectorize. Frequent
  predicates are seen with most labels (CoNLL2000-P: those seen with >= K/4 labels are 12% of the
  predicates and carry 89% of a pass's non-zeros), so they get dense rows of W_D, zero where a pair
  was not seen (those zeros are not features: their results are dropped); W_D is gathered from w
  before a pass and scattered back after, O(|D| K), small next to the pass.
* :class:`AllPairsRows` (feature p*K + y for every pair): w is W itself; past a few MB its rows are
  ordered by predicate frequency, so the frequent ones share cache lines and pages.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from .csr import offsets

MIN_FRACTION = 0.25     # a predicate gets a dense row when seen with >= K/4 labels: a row then costs
                        # <= 4x its entries, which the vectorized loop more than pays for
                        # (docs/decisions/0003-dense-label-rows-for-frequent-predicates.md)


@dataclass(frozen=True)
class LabelRows:
    """The contexts' predicates split into dense rows (of W_D, |D| x K) and the rest (through the map).

    dense_ptr / dense_row / dense_val: CSR over contexts of their dense predicates' rows in W_D;
    sparse_ptr / sparse_pred / sparse_val: CSR of the other predicates (``*_val`` empty for 0/1 data);
    feat, pos: the map entries kept in W_D, as feature index and position row * K + label.
    """

    n_rows: int
    n_labels: int
    dense_ptr: np.ndarray
    dense_row: np.ndarray
    dense_val: np.ndarray
    sparse_ptr: np.ndarray
    sparse_pred: np.ndarray
    sparse_val: np.ndarray
    feat: np.ndarray
    pos: np.ndarray
    unique_feat: bool

    @classmethod
    def build(cls, problem, min_fraction: float = MIN_FRACTION) -> "LabelRows":
        """The layout of ``problem``: a row for each predicate seen with >= min_fraction K distinct labels
        (a predicate listing a label twice keeps the map). With none (min_fraction > 1: the plain map
        path) the contexts' own arrays are used, not copied."""
        K, P = problem.n_labels, problem.n_predicates
        lengths = np.diff(problem.map_ptr)
        need = max(1, math.ceil(min_fraction * K)) if np.isfinite(min_fraction) else lengths.max(initial=0) + 1
        dense = (lengths >= need) & _distinct_labels(problem.map_ptr, problem.map_label, K)
        n_rows = int(dense.sum())
        if n_rows == 0:
            none = np.zeros(0, dtype=np.int64)
            return cls(n_rows=0, n_labels=K, dense_ptr=np.zeros(problem.n_contexts + 1, dtype=np.int64),
                       dense_row=none.astype(np.int32), dense_val=np.zeros(0), sparse_ptr=problem.ctx_ptr,
                       sparse_pred=problem.ctx_pred, sparse_val=problem._val_or_empty(), feat=none, pos=none,
                       unique_feat=True)
        row_of = np.full(P, -1, dtype=np.int64)
        row_of[dense] = np.arange(n_rows)
        in_dense = dense[problem.ctx_pred]
        dense_before = offsets(in_dense)      # dense entries before each position
        dense_ptr = dense_before[problem.ctx_ptr]
        sparse_ptr = problem.ctx_ptr - dense_ptr
        val = problem._val_or_empty()
        entry_pred = problem.map_pred
        entries = np.flatnonzero(dense[entry_pred])
        feat = entries if problem._map_identity else problem.map_feat[entries]
        return cls(n_rows=n_rows, n_labels=K, dense_ptr=dense_ptr,
                   dense_row=row_of[problem.ctx_pred[in_dense]].astype(np.int32 if n_rows < 2 ** 31 else np.int64),
                   dense_val=val[in_dense] if len(val) else val,
                   sparse_ptr=sparse_ptr, sparse_pred=problem.ctx_pred[~in_dense],
                   sparse_val=val[~in_dense] if len(val) else val,
                   feat=feat.astype(np.int64), pos=row_of[entry_pred[entries]] * K + problem.map_label[entries],
                   unique_feat=bool(problem._map_identity or len(np.unique(feat)) == len(feat)))

    def gather(self, w) -> np.ndarray:
        """W_D (flattened) from w: w_t at the (row, label) of feature t, 0 for unseen pairs."""
        wd = np.zeros(self.n_rows * self.n_labels)
        wd[self.pos] = w[self.feat]
        return wd

    def to_pass(self, w):
        """(W_D, w for the map) of a pass."""
        return self.gather(w), w

    def from_pass(self, on_map, on_rows) -> np.ndarray:
        """A pass's result over the features (gradient, Hv) from its map and W_D parts."""
        self.scatter_add(on_rows, on_map)
        return on_map

    def scatter_add(self, acc_dense, g) -> None:
        """g_t += the entry of acc_dense at feature t's (row, label)."""
        if self.unique_feat:
            g[self.feat] += acc_dense[self.pos]
        else:
            np.add.at(g, self.feat, acc_dense[self.pos])

    def context_arrays(self, squared=False):
        """The arrays the passes take, in the kernels' argument order (``squared``: the values squared, for
        the Hessian's diagonal)."""
        return (self.dense_ptr, self.dense_row, _power(self.dense_val, squared), self.sparse_ptr, self.sparse_pred,
                _power(self.sparse_val, squared))

    def pass_sizes(self, n_features):
        """Lengths of (W_D, w for the map) in a pass."""
        return self.n_rows * self.n_labels, n_features


@njit(cache=True)
def _distinct_labels(map_ptr, map_label, n_labels):
    """Per predicate: no label listed twice in its map entries."""
    P = map_ptr.shape[0] - 1
    ok = np.ones(P, dtype=np.bool_)
    seen = np.full(n_labels, -1, dtype=np.int64)
    for p in range(P):
        for j in range(map_ptr[p], map_ptr[p + 1]):
            y = map_label[j]
            if seen[y] == p:
                ok[p] = False
            seen[y] = p
    return ok


HOT_FIRST_MIN_BYTES = 4 << 20   # W (and its gradient) past a few MB no longer sit in the caches close to the core
_NO_MAP = np.zeros(0)


@dataclass(frozen=True)
class AllPairsRows:
    """The all-pairs layout: w is W (P x K), every predicate a dense row, nothing through the map.

    With ``order`` (hot first), the pass's W has its rows in decreasing order of predicate frequency
    and each context visits its rows in that order. A context reads and writes the rows of its
    predicates; on natural-language data a few thousand frequent predicates take most of those
    accesses, and in their own order each of their rows shares cache lines and pages with rare ones
    (docs/decisions/0002-dense-all-pairs-maxent-kernels.md; most of the gain needs the visiting order
    too). The pass then permutes w in and its result out: two O(n) copies.
    """

    ctx_ptr: np.ndarray
    ctx_row: np.ndarray     # the contexts' rows of W (ctx_pred, renumbered and sorted with ``order``)
    ctx_val: np.ndarray     # their values in the same order (empty for 0/1 data)
    no_map_ptr: np.ndarray  # zeros: no context has a predicate through the map
    n_labels: int
    order: np.ndarray | None = None     # row r of the pass's W is predicate order[r]; None: own order

    @classmethod
    def build(cls, problem, hot_first: bool | None = None) -> "AllPairsRows":
        """``hot_first``: order W's rows by predicate frequency (None: when W is past HOT_FIRST_MIN_BYTES)."""
        val = problem._val_or_empty()
        no_map = np.zeros(len(problem.ctx_ptr), dtype=np.int64)
        if hot_first is None:
            hot_first = 8 * problem.n_features > HOT_FIRST_MIN_BYTES
        if not hot_first:
            return cls(problem.ctx_ptr, problem.ctx_pred, val, no_map, problem.n_labels)
        P = problem.n_predicates
        order = np.argsort(-np.bincount(problem.ctx_pred, minlength=P), kind="stable")
        rank = np.empty(P, dtype=np.int64)
        rank[order] = np.arange(P)
        ctx_row = rank[problem.ctx_pred].astype(problem.ctx_pred.dtype)
        within = _segment_argsort(problem.ctx_ptr, ctx_row)
        return cls(problem.ctx_ptr, ctx_row[within], val[within] if len(val) else val, no_map, problem.n_labels, order)

    def to_pass(self, w):
        if self.order is None:
            return w, _NO_MAP
        return np.take(w.reshape(-1, self.n_labels), self.order, axis=0).reshape(-1), _NO_MAP

    def from_pass(self, on_map, on_rows) -> np.ndarray:
        if self.order is None:
            return on_rows
        out = np.empty_like(on_rows)
        out.reshape(-1, self.n_labels)[self.order] = on_rows.reshape(-1, self.n_labels)
        return out

    def context_arrays(self, squared=False):
        val = _power(self.ctx_val, squared)
        return (self.ctx_ptr, self.ctx_row, val, self.no_map_ptr, self.ctx_row[:0], val[:0])

    def pass_sizes(self, n_features):
        return n_features, 0


def _power(val, squared):
    """A value array, squared if asked (empty, for 0/1 data, stays empty: 1^2 = 1)."""
    return val * val if squared and len(val) else val


def _segment_argsort(ptr, a):
    """The permutation sorting a within each segment [ptr[x], ptr[x + 1]), ties in their order: one stable
    sort of the key (segment, a) (a >= 0), with no compiled kernel to wait for on a first run."""
    a = np.asarray(a, dtype=np.int64)
    segment = np.repeat(np.arange(len(ptr) - 1, dtype=np.int64), np.diff(ptr))
    span = int(a.max()) + 1 if len(a) else 1
    return np.argsort(segment * span + a, kind="stable")
