"""The objective of a Maxent, LR, chain CRF or parser problem as the sum of its shards' loss parts (issue 19).

    f(w) = 1/2 sum_t r_t w_t^2 + sum_s L_s(w)

Every protocol member (:mod:`loglin.solvers.protocol`) is one round on the backend: each shard
returns its part, the driver adds the parts in shard order and the regularizer once, so TRON and
L-BFGS run unchanged, and the same shards give bitwise the same iterates on every backend.

    with sharded(problem, C, shards=2, backend="dask") as objective:
        result = minimize(objective, "lbfgs")
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import vector as vk
from ..training import problem_kind
from .backends import make_backend
from .shards import STRUCTURED, check_bounds, row_pointer, shard_arrays, shard_bounds

# Maxent shards whose loss reads at most this share of w exchange only those coordinates (docs/decisions/0030)
SPARSE_SHARE = 0.5
# "gather": the driver adds the shards' parts in shard order; "tree": pairwise in shard order, on the workers
REDUCTIONS = ("gather", "tree")

# the solvers that use nothing but the objective protocol (the others read objective.problem)
SHARDABLE_SOLVERS = ("tron", "lbfgs", "owlqn",     # owlqn: through loglin.penalty, f and its gradient only
                     "cocoa", "ipm-sgd")           # shard-side solvers (loglin.scale.cocoa, loglin.scale.mixing)


class ShardedObjective:
    """The objective protocol (n, kind, reg, fun, fun_grad, accept, hess_vec, hess_diag) over shards."""

    l1_certificate = None    # Maxent / LR: the driver holds no matrix for the L1 dual (loglin.solvers.protocol)

    def __init__(self, problem, C, backend, bounds, owns_backend=False, threads=1, sparse_share=0.0,
                 reduction="gather"):
        self.kind = problem_kind(problem)
        if reduction not in REDUCTIONS:
            raise InvalidInputError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
        self.reduction = reduction
        from_files = hasattr(problem, "recipes")        # ShardedData: the rows are on the workers
        glob = problem.glob if from_files else problem
        self.n = glob.n_features
        self.reg = np.asarray(glob.reg, dtype=np.float64)
        self.bounds = problem.row_bounds() if from_files else check_bounds(problem, bounds)
        if self.kind != "binary":
            if C is None or not np.isfinite(C) or C <= 0:
                raise InvalidInputError(f"C must be positive and finite, got {C}")
            self.C = float(C)
        if self.kind == "maxent":
            self._total_count = problem.total_count
        self.backend, self._owns_backend = backend, owns_backend
        self.n_fun = self.n_grad = self.n_hess_vec = 0
        self.touched = None
        parts = problem.recipes() if from_files else \
            [shard_arrays(problem, lo, hi)[1] for lo, hi in zip(self.bounds[:-1], self.bounds[1:])]
        try:
            backend.load(self.kind, parts, C, threads)
            self.touched = None if reduction == "tree" else self._sparse_shards(sparse_share)
        except BaseException:
            self.close()
            raise

    def _sparse_shards(self, share):
        """Per shard, the coordinates exchanged in place of whole vectors, when every shard's loss reads at most
        ``share`` of w (the driver knows them from the start: only values travel); else None (dense)."""
        if share <= 0 or self.kind != "maxent":
            return None
        touched = self.backend.map("touched_coordinates")
        if any(idx is None or len(idx) > share * self.n for idx in touched):
            return None
        return touched

    def _round(self, method, vector=None, *rest):
        """``method`` on every shard (with ``vector`` whole, or its touched part) -> [(shard's coordinates, result)]."""
        if self.touched is None:
            args = [] if vector is None else [vector, *rest]
            if self.reduction == "tree":
                return [(None, self.backend.reduce(method, *args))]
            return [(None, part) for part in self.backend.map(method, *args)]
        args = [() if vector is None else (vector[idx], *rest) for idx in self.touched]
        return list(zip(self.touched, self.backend.map_each(method + "_touched", args)))

    @property
    def n_shards(self) -> int:
        return len(self.bounds) - 1

    def regularizer(self, w):
        return vk.half_weighted_sq_norm(self.reg, w)

    def fun(self, w):
        self.n_fun += 1
        f = self.regularizer(w)
        for _, part in self._round("fun", w):
            f += part
        return f

    def fun_grad(self, w, keep_cache=True):
        self.n_fun += 1
        self.n_grad += 1
        f, g = self.regularizer(w), self.reg * w
        for idx, (f_s, g_s) in self._round("fun_grad", w, keep_cache):
            f += f_s
            _add(g, idx, g_s)
        return f, g

    def accept(self):
        self.backend.map("accept")

    def hess_vec(self, v):
        self.n_hess_vec += 1
        hv = self.reg * v
        for idx, part in self._round("hess_vec", v):
            _add(hv, idx, part)
        return hv

    def hess_diag(self):
        d = self.reg.copy()
        for idx, part in self._round("hess_diag"):
            _add(d, idx, part)
        return d

    def on_shards(self, method, *args):
        """``method(*args)`` of every shard's :class:`~loglin.scale.shards.ShardPart`, results in shard order
        (the shard-side solvers of :mod:`loglin.scale.cocoa` and :mod:`loglin.scale.mixing`)."""
        return self.backend.map(method, *args)

    def each_shard(self, method, args_per_shard):
        """As :meth:`on_shards`, shard i called with ``args_per_shard[i]``."""
        return self.backend.map_each(method, args_per_shard)

    def grad_norm(self, w) -> float:
        return float(np.linalg.norm(self.fun_grad(w, keep_cache=False)[1]))

    def total_count(self):
        return self._total_count

    def normalized(self, f):
        """The papers' L(w) of eq. (3) from f (Maxent)."""
        return f / (self.C * self._total_count)

    def close(self):
        if self._owns_backend and self.backend is not None:
            self.backend.close()
            self.backend = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _add(total, idx, part):
    """total += a shard's part, given whole (idx None) or on its coordinates idx (0 elsewhere: the same sum)."""
    if idx is None:
        total += part
    else:
        total[idx] += part


class StructuredShardedObjective(ShardedObjective):
    """Sentence shards of a chain CRF or parser (loss "ll"): f and its gradient only, as
    :class:`~loglin.structured.objective.StructuredObjective` (L-BFGS, OWL-QN)."""

    loss = "ll"
    hess_vec = None          # not offered (loglin.solvers.protocol.offers): no Hessian products
    hess_diag = None
    l1_certificate = "crf-fused"    # fun_grad_with_entropy below: the pure-L1 dual from fun_grad's own round

    def __init__(self, problem, C, backend, bounds, owns_backend=False, threads=1, sparse_share=0.0,
                 reduction="gather"):
        super().__init__(problem, C, backend, bounds, owns_backend, threads, sparse_share, reduction)
        # weights held at 0 (loglin.crfsuite's unseen transitions): their gradient is zeroed after the sum
        self.pinned = getattr(problem, "pinned", None)

    def fun_grad(self, w, keep_cache=True):
        f, g = super().fun_grad(w, keep_cache)
        if self.pinned is not None:
            g[self.pinned] = 0.0
        return f, g

    # the pure-L1 duality gap (loglin.structured.l1_dual): the shards' terms, joined in shard order, give the
    # certificate of one process (docs/decisions/0051)
    def fun_grad_with_entropy(self, w):
        """(f, grad, terms) with the same f and grad as :meth:`fun_grad` (the same sums in the same order) and
        ``terms`` for :meth:`dual_from_terms`, from the same pass on every shard."""
        if self.reduction == "tree":          # the tree adds parts of equal shape: the terms need their own round
            f, g = self.fun_grad(w)
            return f, g, self.entropy_terms(w)
        self.n_fun += 1
        self.n_grad += 1
        f, g = self.regularizer(w), self.reg * w
        parts = []
        for f_s, g_s, terms in self.backend.map("fun_grad_entropy", w):
            f += f_s
            g += g_s
            parts.append(terms)
        if self.pinned is not None:
            g[self.pinned] = 0.0
        return f, g, _joined(parts)

    def entropy_terms(self, w):
        return _joined(self.backend.map("entropy_terms", w))

    def dual_from_terms(self, l1, terms, dual_scale):
        from ..structured.l1_dual import dual_from_parts
        return dual_from_parts(self.C, *terms, l1, dual_scale)

    def collins(self, f):
        """Collins et al.'s objective sum loss + C'/2 ||w||^2 (C' = 1/C) from f."""
        return f / self.C


def _joined(parts):
    """The shards' dual terms [(loss gradient part, H(p_i), log p_i(y_i), c_i), ...] as one: the gradient parts added
    and the per-sentence arrays joined, both in shard order."""
    loss_grad = parts[0][0].copy()
    for part in parts[1:]:
        loss_grad += part[0]
    return (loss_grad, *(np.concatenate([part[k] for part in parts]) for k in (1, 2, 3)))


def sharded(problem, C=None, shards: int | None = None, backend="inprocess", *, bounds=None, threads_per_shard: int = 1,
            sparse_share: float | None = None, reduction: str = "gather", **backend_options) -> ShardedObjective:
    """The objective of ``problem`` (a MaxentProblem, or a ChainProblem / TreeProblem with the CRF loss, at
    ``C``; or a BinaryProblem, whose costs hold C) over ``shards`` contiguous row ranges (contexts,
    instances, sentences) of about equal cost (:func:`~loglin.scale.shards.row_pointer`; default: one per Dask worker,
    else 2) or over the row ``bounds`` given, evaluated by ``backend``: "inprocess", "threads",
    "dask" (``backend_options``: those of :class:`~loglin.scale.dask_backend.DaskBackend`), a
    Backend or a ``distributed.Client``. A backend made here is closed with the objective
    (``close()`` or ``with``); one passed in is left open. ``threads_per_shard``: Numba threads
    per shard pass (the pass's blocks, hence its sums, follow it). ``sparse_share`` (default
    :data:`SPARSE_SHARE`): when every Maxent shard's loss reads at most this share of w, only those
    coordinates travel each round (the same sums, bitwise); 0 sends whole vectors. ``reduction="tree"``: the
    parts are added pairwise in shard order (on a Dask cluster by the workers, the driver receiving one
    vector; every backend gives the same sums), whole vectors only."""
    if reduction not in REDUCTIONS:
        raise InvalidInputError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    made, owned = make_backend(backend, **backend_options)
    try:
        if hasattr(problem, "recipes"):       # ShardedData: its shards are the file's parts of the counting pass
            if bounds is not None or shards not in (None, problem.n):
                raise InvalidInputError(f"data sharded from its file has {problem.n} shards, fixed by its scan")
        elif bounds is None:
            rows = len(row_pointer(problem)) - 1
            bounds = shard_bounds(problem, min(made.default_shards(), rows) if shards is None else shards)
    except BaseException:
        if owned:
            made.close()
        raise
    cls = StructuredShardedObjective if problem_kind(problem) in STRUCTURED else ShardedObjective
    share = SPARSE_SHARE if sparse_share is None else float(sparse_share)
    return cls(problem, C, made, bounds, owns_backend=owned, threads=threads_per_shard, sparse_share=share,
               reduction=reduction)
