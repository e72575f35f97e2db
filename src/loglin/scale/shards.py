"""Shards of a Maxent, LR, chain CRF or parser problem, and the loss part a shard contributes.

A shard is a contiguous range of rows: contexts of a :class:`~loglin.problem.MaxentProblem`
(each keeping the *global* predicate map, so every shard reads the same weight vector),
instances of a :class:`~loglin.binary.BinaryProblem`, or sentences of a
:class:`~loglin.structured.problem.ChainProblem` (keeping the global attribute map) or of a
:class:`~loglin.parsing.problem.TreeProblem` (global feature ids). Every objective is
1/2 sum_t r_t w_t^2 plus a sum over rows, so the full objective is the regularizer plus the
shards' loss parts.

A shard's loss part is its own objective with every regularization weight r_t set to 0: the
objective classes then return exactly C (loss - w.emp) (Maxent, chain, tree: ``reg`` is read once
when the objective is built) or sum_i C_i log(1 + e^{-y_i w.x_i}) (LR), with the gradient (and for
Maxent / LR the Hessian-vector product and Hessian diagonal) of that sum alone.
"""
from __future__ import annotations

from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from ..errors import InvalidInputError
from ..training import problem_kind


STRUCTURED = ("chain", "tree")     # sharded by sentence; no Hessian products


def row_pointer(problem) -> np.ndarray:
    """The cumulative cost of the rows that are cut into shards: non-zeros of contexts or instances, tokens
    of chain sentences (a forward-backward pass is linear in them), n_i^3 of parser sentences (inside)."""
    kind = problem_kind(problem)
    if kind == "binary":
        return problem.X.indptr
    if kind == "chain":
        return problem.seq_ptr
    if kind == "tree":
        out = np.zeros(problem.n_sentences + 1, dtype=np.int64)
        np.cumsum(np.diff(problem.sent_ptr).astype(np.int64) ** 3, out=out[1:])
        return out
    return problem.ctx_ptr


def shard_bounds(problem, shards: int) -> np.ndarray:
    """Row boundaries b_0 = 0 < b_1 < ... < b_k = rows of ``shards`` contiguous shards with about equal
    cost each (:func:`row_pointer`: a flat pass costs one visit per non-zero), every shard holding at least one row."""
    ptr = np.asarray(row_pointer(problem), dtype=np.int64)
    rows = len(ptr) - 1
    if not (isinstance(shards, (int, np.integer)) and 1 <= shards <= rows):
        raise InvalidInputError(f"shards must be an integer between 1 and the number of rows ({rows}), got {shards!r}")
    targets = ptr[-1] * np.arange(1, shards) / shards
    cuts = np.searchsorted(ptr, targets, side="left").astype(np.int64)
    bounds = np.concatenate([[0], cuts, [rows]])
    for j in range(1, shards):            # at least one row per shard, from the left ...
        bounds[j] = max(bounds[j], bounds[j - 1] + 1)
    for j in range(shards - 1, 0, -1):    # ... and from the right
        bounds[j] = min(bounds[j], bounds[j + 1] - 1)
    return bounds


def check_bounds(problem, bounds) -> np.ndarray:
    bounds = np.asarray(bounds, dtype=np.int64)
    rows = len(row_pointer(problem)) - 1
    if bounds.ndim != 1 or len(bounds) < 2 or bounds[0] != 0 or bounds[-1] != rows or np.any(np.diff(bounds) < 1):
        raise InvalidInputError(f"shard bounds must rise strictly from 0 to the number of rows ({rows})")
    return bounds


def shard_arrays(problem, lo: int, hi: int) -> tuple[str, dict]:
    """(kind, the arrays of rows lo..hi-1 with a zero regularizer): what a shard is built from
    (:func:`build_shard`), small to send to a worker; derived arrays are rebuilt there."""
    kind = problem_kind(problem)
    return kind, _slice(kind, problem, lo, hi)


def _slice(kind, problem, lo, hi) -> dict:
    """The arrays of rows lo..hi-1 of ``problem`` (a problem, or a namespace of a shard's arrays)."""
    if kind == "chain":
        return _chain_slice(problem, lo, hi)
    if kind == "tree":
        return _tree_slice(problem, lo, hi)
    if kind == "binary":
        X = problem.X
        a, b = X.indptr[lo], X.indptr[hi]
        return dict(data=X.data[a:b], indices=X.indices[a:b], indptr=X.indptr[lo:hi + 1] - a,
                          n_features=X.shape[1], y=problem.y[lo:hi], cost=problem.cost[lo:hi],
                          classes=problem.classes, bias=problem.bias, C=problem.C)
    a, b = problem.ctx_ptr[lo], problem.ctx_ptr[hi]
    o, p = problem.obs_ptr[lo], problem.obs_ptr[hi]
    return dict(ctx_ptr=problem.ctx_ptr[lo:hi + 1] - a, ctx_pred=problem.ctx_pred[a:b],
                      ctx_val=None if problem.ctx_val is None else problem.ctx_val[a:b],
                      map_ptr=problem.map_ptr, map_label=problem.map_label, map_feat=problem.map_feat,
                      ctx_count=problem.ctx_count[lo:hi], obs_ptr=problem.obs_ptr[lo:hi + 1] - o,
                      obs_label=problem.obs_label[o:p], obs_count=problem.obs_count[o:p],
                      n_features=problem.n_features, labels=problem.labels, bias=problem.bias)


def _chain_slice(p, lo, hi) -> dict:
    s, t = p.seq_ptr[lo], p.seq_ptr[hi]             # tokens
    a, b = p.tok_ptr[s], p.tok_ptr[t]               # attribute occurrences
    return dict(seq_ptr=p.seq_ptr[lo:hi + 1] - s, tok_ptr=p.tok_ptr[s:t + 1] - a, tok_attr=p.tok_attr[a:b],
                tok_val=None if p.tok_val is None else p.tok_val[a:b], map_ptr=p.map_ptr, map_label=p.map_label,
                map_feat=p.map_feat, n_state=p.n_state, labels=p.labels, gold=p.gold[s:t], weight=p.weight[lo:hi])


def _tree_slice(p, lo, hi) -> dict:
    s, t = p.sent_ptr[lo], p.sent_ptr[hi]           # words
    a, b = p.arc_off[lo], p.arc_off[hi]             # arc slots
    f, g = p.feat_ptr[a], p.feat_ptr[b]             # feature ids
    return dict(sent_ptr=p.sent_ptr[lo:hi + 1] - s, arc_off=p.arc_off[lo:hi + 1] - a,
                feat_ptr=p.feat_ptr[a:b + 1] - f, feat_idx=p.feat_idx[f:g], heads=p.heads[s:t],
                n_features=p.n_features, weight=p.weight[lo:hi])


def build_shard(kind: str, arrays: dict):
    """The shard problem from :func:`shard_arrays`' output, with r_t = 0 (its objective is a loss part)."""
    arrays = dict(arrays)
    if kind in STRUCTURED:
        if kind == "chain":
            from ..structured.problem import ChainProblem as Problem
        else:
            from ..parsing.problem import TreeProblem as Problem
        problem = Problem(**arrays)
        problem.reg = np.zeros(problem.n_features)      # read by the objective when it is built
        return problem
    if kind == "binary":
        from ..binary import BinaryProblem
        n = arrays.pop("n_features")
        indptr = arrays.pop("indptr")
        X = sp.csr_matrix((arrays.pop("data"), arrays.pop("indices"), indptr), shape=(len(indptr) - 1, n))
        X = sp.csr_matrix((X.data, X.indices, X.indptr.astype(np.int64)), shape=X.shape)
        return BinaryProblem(X=X, reg=np.zeros(n), **arrays)
    from ..problem import MaxentProblem
    return MaxentProblem(reg=np.zeros(arrays["n_features"]), **arrays)


@contextmanager
def numba_threads(count: int):
    """Numba's thread count set to ``count`` within the block: the objectives cut their passes into
    per-thread blocks when built, and the same blocks give the same sums wherever a shard is evaluated."""
    import numba
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(count), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(old)


class ShardPart:
    """One shard's loss part: ``fun``, ``fun_grad``, ``accept``, ``hess_vec``, ``hess_diag`` of the
    shard's unregularized objective; built from :func:`shard_arrays` output where it will be evaluated."""

    def __init__(self, kind: str, arrays, C: float, threads: int = 1):
        if callable(arrays):                # a recipe (loglin.scale.sources): the shard reads its own file part
            arrays = arrays()
        problem = build_shard(kind, arrays)
        with numba_threads(threads):
            if kind in STRUCTURED:
                self.objective = problem.objective(C, loss="ll")
            else:
                self.objective = problem.objective(C) if kind == "maxent" else problem.objective()
        self.rows = problem.n_contexts if kind == "maxent" else \
            problem.n_instances if kind == "binary" else problem.n_sentences
        self.touched = touched_coordinates(kind, problem)

    def fun(self, w):
        return self.objective.fun(w)

    def fun_grad(self, w, keep_cache=True):
        return self.objective.fun_grad(w, keep_cache)

    def accept(self):
        self.objective.accept()

    def hess_vec(self, v):
        return self.objective.hess_vec(v)

    def hess_diag(self):
        return self.objective.hess_diag()

    def ping(self):
        return self.rows

    # the pure-L1 certificate of a CRF chain or parser (loglin.structured.l1_dual, docs/decisions/0051)
    def fun_grad_entropy(self, w):
        """(f, grad, this shard's dual terms) in one inference pass: :func:`~loglin.structured.l1_dual.shard_terms`."""
        from ..structured.l1_dual import shard_terms
        return shard_terms(self.objective, w, True)

    def entropy_terms(self, w):
        """This shard's dual terms alone."""
        from ..structured.l1_dual import shard_terms
        return shard_terms(self.objective, w, False)

    # sparse exchange: only the coordinates this shard's loss depends on travel, both ways
    def touched_coordinates(self):
        """The sorted coordinates of w that this shard's loss part reads (its gradient is 0 elsewhere), or None."""
        return self.touched

    def _at(self, w_touched):
        w = np.zeros(self.objective.n)      # a new vector per call: an objective may keep the one it was given
        w[self.touched] = w_touched
        return w

    def fun_touched(self, w_touched):
        return self.objective.fun(self._at(w_touched))

    def fun_grad_touched(self, w_touched, keep_cache=True):
        f, g = self.objective.fun_grad(self._at(w_touched), keep_cache)
        return f, g[self.touched]

    def hess_vec_touched(self, v_touched):
        return self.objective.hess_vec(self._at(v_touched))[self.touched]

    def hess_diag_touched(self):
        return self.objective.hess_diag()[self.touched]

    # hooks for stateful shard-side solvers (loglin.scale.cocoa, loglin.scale.mixing)
    def attach(self, name: str, factory: str, *args):
        """Build ``factory(self, *args)`` ("module:function") on this shard and keep it as helper ``name``;
        returns the helper's ``summary()``."""
        import importlib
        module, _, function = factory.partition(":")
        helper = getattr(importlib.import_module(module), function)(self, *args)
        self.__dict__.setdefault("helpers", {})[name] = helper
        return helper.summary()

    def helper(self, name: str, method: str, *args):
        """``method(*args)`` of the helper ``name`` attached to this shard."""
        return getattr(self.helpers[name], method)(*args)


def touched_coordinates(kind: str, problem):
    """The coordinates of w a Maxent shard's loss reads: the (predicate, label) features of the predicates
    in its contexts (the scores, eq. (1), and the empirical counts see no others); None for the other kinds."""
    if kind != "maxent":
        return None
    present = np.zeros(len(problem.map_ptr) - 1, dtype=bool)
    present[problem.ctx_pred] = True
    entry_predicate = np.repeat(present, np.diff(problem.map_ptr))
    return np.unique(problem.map_feat[entry_predicate]).astype(np.int64)


def warm_kernels(kind: str, arrays: dict, C: float, threads: int = 1) -> None:
    """Compile (or load from Numba's cache) every kernel a shard calls, on its first row alone."""
    first = _first_row(kind, arrays)
    try:
        part = ShardPart(kind, first, C, threads)
    except ValueError:
        return                  # a first row the problem classes refuse (e.g. zero weight): warm on first use
    w = np.zeros(part.objective.n)
    part.fun(w)
    part.fun_grad(w, True)
    part.accept()
    if kind not in STRUCTURED:
        part.hess_vec(w)
        part.hess_diag()


def _first_row(kind, arrays):
    if kind in STRUCTURED:
        return _slice(kind, SimpleNamespace(**arrays), 0, 1)
    a = dict(arrays)
    if kind == "binary":
        end = a["indptr"][1]
        a.update(data=a["data"][:end], indices=a["indices"][:end], indptr=a["indptr"][:2], y=a["y"][:1],
                 cost=a["cost"][:1])
        return a
    end, obs_end = a["ctx_ptr"][1], a["obs_ptr"][1]
    a.update(ctx_ptr=a["ctx_ptr"][:2], ctx_pred=a["ctx_pred"][:end],
             ctx_val=None if a["ctx_val"] is None else a["ctx_val"][:end], ctx_count=a["ctx_count"][:1],
             obs_ptr=a["obs_ptr"][:2], obs_label=a["obs_label"][:obs_end], obs_count=a["obs_count"][:obs_end])
    return a
