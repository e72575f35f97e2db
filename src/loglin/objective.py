"""Primal objectives in LIBLINEAR's scale, with gradients and Hessian-vector products.

    Maxent:  f(w) = 1/2 sum_t r_t w_t^2 + C [ sum_x c(x) log T_w(x) - sum_t w_t N Ptilde(f_t) ]
    LR:      f(w) = 1/2 sum_t r_t w_t^2 + sum_i C_i log(1 + exp(-y_i w^T x_i))

(r_t = 0 only for an unregularized bias). Dividing the Maxent f by C*N gives
Huang et al.'s L(w) of eq. (3) with sigma^2 = C*N.

Every objective offers the same small interface the batch solvers use:
``fun``, ``fun_grad`` (also fills a *pending* Hessian cache), ``accept``
(makes the pending cache current - TRON calls it when a step is taken),
and ``hess_vec`` (uses the current cache).
"""
from __future__ import annotations

import numpy as np

from .kernels import logistic as lk
from .kernels import maxent as mk
from .kernels import vector as vk
from .kernels.maxent import _blocks
from .label_rows import MIN_FRACTION, AllPairsRows, LabelRows


class Objective:
    """Shared bookkeeping: dimension, regularization mask, evaluation counts."""

    n: int
    reg: np.ndarray

    def __init__(self):
        self.n_fun = 0
        self.n_grad = 0
        self.n_hess_vec = 0

    def regularizer(self, w):
        return vk.half_weighted_sq_norm(self.reg, w)

    def grad_norm(self, w) -> float:
        return float(np.linalg.norm(self.fun_grad(w, keep_cache=False)[1]))


class MaxentObjective(Objective):
    """Objective of a :class:`loglin.problem.MaxentProblem` at regularization C."""

    kind = "maxent"
    l1_certificate = "maxent"       # loglin.solvers.protocol: the L1 dual from loss_and_expectation

    def __init__(self, problem, C: float, keep_hessian: bool = True, dense_path: bool | None = None,
                 label_rows: bool | None = None, hot_first: bool | None = None):
        """How the passes lay out W (:mod:`loglin.label_rows`). ``dense_path``: the all-pairs layout,
        w itself the P x K block W (None: when problem.dense_pairs); ``hot_first``: there, W's rows
        ordered by predicate frequency (None: when W is larger than a few MB). ``label_rows``:
        otherwise, dense rows for the predicates seen with many labels (None: those that qualify,
        True: the same but an error if none does, False: every predicate through the map)."""
        super().__init__()
        if not np.isfinite(C) or C <= 0:
            raise ValueError(f"C must be positive and finite, got {C}")
        self.problem = problem
        self.C = float(C)
        self.n = problem.n_features
        self.reg = problem.reg
        self._bounds = _blocks(problem.n_contexts)
        shape = (problem.n_contexts, problem.n_labels) if keep_hessian else (0, problem.n_labels)
        self._prob = np.empty(shape)
        self._pending = np.empty(shape)
        self._map = (problem.map_ptr, problem.map_label, problem.map_feat_or_empty())
        dense_ok = bool(getattr(problem, "dense_pairs", False))
        if dense_path and not dense_ok:
            raise ValueError("dense_path=True needs a problem in the dense all-pairs layout")
        self.dense_path = dense_ok if dense_path is None else bool(dense_path)
        if self.dense_path:
            self.layout = AllPairsRows.build(problem, hot_first)
        else:
            self.layout = LabelRows.build(problem, MIN_FRACTION if label_rows is not False else np.inf)
            if label_rows and self.layout.n_rows == 0:
                raise ValueError("label_rows=True, but no predicate is seen with enough labels for a dense row")

    @property
    def rows(self):
        """The label-rows layout, or None on the all-pairs path."""
        return self.layout if isinstance(self.layout, LabelRows) else None

    @property
    def hot(self):
        """The all-pairs layout when its rows are ordered by frequency, else None."""
        return self.layout if isinstance(self.layout, AllPairsRows) and self.layout.order is not None else None

    def loss_and_expectation(self, w, prob_out, want_expectation):
        """(sum_x c(x) log T_w(x), E_t = sum_x c(x) sum_y P_w(y|x) f_t(x, y) if wanted), writing
        P_w(y|x) into prob_out when it has rows: the one pass under fun, fun_grad and GIS/IIS."""
        p = self.problem
        loss, on_map, on_rows = mk.loss_and_expectation(*self.layout.to_pass(w), self._bounds, p.n_labels,
                                                        *self.layout.context_arrays(), *self._map, p.ctx_count,
                                                        prob_out, want_expectation)
        return loss, (self.layout.from_pass(on_map, on_rows) if want_expectation else None)

    def fun(self, w):
        self.n_fun += 1
        loss, _ = self.loss_and_expectation(w, np.empty((0, self.problem.n_labels)), False)
        return self.regularizer(w) + self.C * (loss - vk.dot(w, self.problem.emp))

    def fun_grad(self, w, keep_cache=True):
        self.n_fun += 1
        self.n_grad += 1
        out = self._pending if keep_cache else np.empty((0, self.problem.n_labels))
        loss, expect = self.loss_and_expectation(w, out, True)
        f = self.regularizer(w) + self.C * (loss - vk.dot(w, self.problem.emp))
        vk.regularized_gradient_inplace(expect, self.reg, w, self.C, self.problem.emp)
        return f, expect

    def accept(self):
        self._prob, self._pending = self._pending, self._prob

    def hess_vec(self, v):
        self.n_hess_vec += 1
        p = self.problem
        hv = self.layout.from_pass(*mk.hessian_vector(*self.layout.to_pass(v), self._bounds, p.n_labels,
                                                      *self.layout.context_arrays(), *self._map, p.ctx_count,
                                                      self._prob))
        vk.add_regularizer_inplace(hv, self.reg, v, self.C)
        return hv

    def hess_diag(self):
        """The Hessian's diagonal at the accepted point (the cache hess_vec uses): TRON's preconditioner."""
        p = self.problem
        d = self.layout.from_pass(*mk.hessian_diagonal(*self.layout.pass_sizes(self.n), self._bounds, p.n_labels,
                                                       *self.layout.context_arrays(squared=True), *self._map,
                                                       p.ctx_count, self._prob))
        return self.reg + self.C * d

    def total_count(self):
        return self.problem.total_count

    def normalized(self, f):
        """The papers' L(w) of eq. (3) from f (sigma^2 = C * N)."""
        return f / (self.C * self.problem.total_count)


class LogisticObjective(Objective):
    """Objective of a :class:`loglin.binary.BinaryProblem` (costs C_i already include C)."""

    kind = "binary"
    l1_certificate = "logistic"     # loglin.solvers.protocol: the L1 dual from the problem's X, y and cost

    def __init__(self, problem, keep_hessian: bool = True):
        super().__init__()
        self.problem = problem
        self.n = problem.n_features
        self.reg = problem.reg
        X = problem.X
        self._csr = (X.indptr, X.indices, X.data)
        self._bounds = _blocks(X.shape[0])
        m = X.shape[0] if keep_hessian else 0
        self._d = np.empty(m)
        self._pending = np.empty(m)

    def fun(self, w):
        self.n_fun += 1
        p = self.problem
        loss, _ = lk.loss_grad(w, self._bounds, *self._csr, p.y, p.cost, np.empty(0), False)
        return self.regularizer(w) + loss

    def fun_grad(self, w, keep_cache=True):
        self.n_fun += 1
        self.n_grad += 1
        p = self.problem
        out = self._pending if keep_cache else np.empty(0)
        loss, g = lk.loss_grad(w, self._bounds, *self._csr, p.y, p.cost, out, True)
        vk.add_regularizer_inplace(g, self.reg, w, 1.0)
        return self.regularizer(w) + loss, g

    def accept(self):
        self._d, self._pending = self._pending, self._d

    def hess_vec(self, v):
        self.n_hess_vec += 1
        hv = lk.hessian_vector(v, self._bounds, *self._csr, self._d)
        vk.add_regularizer_inplace(hv, self.reg, v, 1.0)
        return hv

    def hess_diag(self):
        """The Hessian's diagonal at the accepted point: TRON's preconditioner."""
        return self.reg + lk.hessian_diagonal(self.n, self._bounds, *self._csr, self._d)

    def hessian(self, stride: int = 1):
        """The lower triangle of the Hessian X^T D X + diag(reg) at the accepted point, dense n x n;
        ``stride`` > 1 estimates X^T D X from every stride-th row (scaled by stride): a sub-sampled
        Hessian (Byrd, Chin, Neveitt & Nocedal 2011)."""
        h = lk.hessian_matrix(self.n, self._bounds, *self._csr, self._d, int(stride))
        if stride != 1:
            h *= stride
        h[np.diag_indices(self.n)] += self.reg
        return h
