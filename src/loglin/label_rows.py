"""Dense label rows for the predicates seen with many labels: a layout of the Maxent passes.

On the papers' seen-pairs features a predicate's weights form a sparse row over the K labels, and a
pass adds them into a context's K scores through ``map_label``: a scatter that does not vectorize.
Frequent predicates are seen with most labels (CoNLL2000-P: the predicates seen with >= K/4 labels
are 12% of them and carry 89% of a pass's non-zeros), so the passes keep those predicates as dense
K-wide rows of a small block W_D, zero where a pair was not seen, and add them with contiguous loops
that LLVM vectorizes; the other predicates still go through the map. W_D is gathered from w before
a pass and its gradient scattered back after, O(|D| K): small next to the pass. The objective is
unchanged (the zeros of W_D are not features; their gradient entries are dropped).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

MIN_FRACTION = 0.25     # a predicate gets a dense row when seen with >= K/4 labels: a row then costs
                        # <= 4x its entries, and the vectorized loop more than pays for that (measured
                        # 1.5-1.9x per fun_grad pass on CoNLL2000-P and -C against the map path)


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
    def build(cls, problem, min_fraction: float = MIN_FRACTION) -> "LabelRows | None":
        """The layout of ``problem``, or None when no predicate qualifies (seen with >= min_fraction K
        distinct labels; a predicate listing a label twice keeps the map)."""
        K, P = problem.n_labels, problem.n_predicates
        lengths = np.diff(problem.map_ptr)
        need = max(1, math.ceil(min_fraction * K))
        dense = (lengths >= need) & _distinct_labels(problem.map_ptr, problem.map_label, K)
        n_rows = int(dense.sum())
        if n_rows == 0:
            return None
        row_of = np.full(P, -1, dtype=np.int64)
        row_of[dense] = np.arange(n_rows)
        in_dense = dense[problem.ctx_pred]
        per_ctx = _count_per_row(problem.ctx_ptr, in_dense)
        dense_ptr = np.zeros(problem.n_contexts + 1, dtype=np.int64)
        np.cumsum(per_ctx, out=dense_ptr[1:])
        sparse_ptr = np.zeros(problem.n_contexts + 1, dtype=np.int64)
        np.cumsum(np.diff(problem.ctx_ptr) - per_ctx, out=sparse_ptr[1:])
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

    def scatter_add(self, acc_dense, g) -> None:
        """g_t += the entry of acc_dense at feature t's (row, label)."""
        if self.unique_feat:
            g[self.feat] += acc_dense[self.pos]
        else:
            np.add.at(g, self.feat, acc_dense[self.pos])

    def context_arrays(self):
        """The arrays the passes take, in the kernels' argument order."""
        return (self.dense_ptr, self.dense_row, self.dense_val, self.sparse_ptr, self.sparse_pred, self.sparse_val)


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


@njit(cache=True)
def _count_per_row(ptr, flag):
    out = np.zeros(ptr.shape[0] - 1, dtype=np.int64)
    for x in range(ptr.shape[0] - 1):
        for k in range(ptr[x], ptr[x + 1]):
            if flag[k]:
                out[x] += 1
    return out


HOT_FIRST_MIN_BYTES = 4 << 20   # W (and its gradient) past a few MB no longer sit in the caches close to the core


@dataclass(frozen=True)
class HotFirstRows:
    """The all-pairs layout's W (P x K) with its rows in decreasing order of predicate frequency.

    A context reads and writes the K-wide rows of its predicates; on natural-language data a few
    thousand frequent predicates take most of those accesses, and with the rows in their original
    order each of them shares its cache lines and pages with rare ones. Numbering the rows by
    frequency packs the frequent ones together, so they stay cached (CoNLL2000-C, all pairs: 107,838
    x 22 = 19 MB; fun_grad 0.75x). The pass permutes w in and its result out: two O(n) copies.
    """

    order: np.ndarray       # row r of the pass's W is predicate order[r]
    ctx_row: np.ndarray     # ctx_pred, renumbered, and sorted within each context
    ctx_val: np.ndarray     # ctx_val in the same order (empty for 0/1 data)
    n_labels: int

    @classmethod
    def build(cls, problem) -> "HotFirstRows":
        P = problem.n_predicates
        order = np.argsort(-np.bincount(problem.ctx_pred, minlength=P), kind="stable")
        rank = np.empty(P, dtype=np.int64)
        rank[order] = np.arange(P)
        ctx_row = rank[problem.ctx_pred].astype(problem.ctx_pred.dtype)
        # and each context visits its rows frequent-first (measured: most of the gain comes with this)
        within = _segment_argsort(problem.ctx_ptr, ctx_row)
        val = problem._val_or_empty()
        return cls(order=order, ctx_row=ctx_row[within], ctx_val=val[within] if len(val) else val,
                   n_labels=problem.n_labels)

    def to_pass(self, w) -> np.ndarray:
        """w in the pass's row order."""
        return np.take(w.reshape(-1, self.n_labels), self.order, axis=0).reshape(-1)

    def from_pass(self, v) -> np.ndarray:
        """A vector over the pass's rows (gradient, Hv) back in the features' order."""
        out = np.empty_like(v)
        out.reshape(-1, self.n_labels)[self.order] = v.reshape(-1, self.n_labels)
        return out


@njit(cache=True)
def _segment_argsort(ptr, a):
    """The permutation sorting a within each segment [ptr[x], ptr[x + 1])."""
    out = np.empty(a.shape[0], dtype=np.int64)
    for x in range(ptr.shape[0] - 1):
        lo = ptr[x]
        out[lo:ptr[x + 1]] = lo + np.argsort(a[lo:ptr[x + 1]], kind="mergesort")
    return out
