"""Multi-class duals D-LL (4) / D-MM (5) on a MaxentProblem, and the multi-class max-margin primal.

The Maxent problem of the core has the LIBLINEAR-scale primal
    f(w) = 1/2 ||w||^2 + C sum_x [c(x) log sum_y exp(w.f(x, y)) - sum_y c(x, y) w.f(x, y)],
which is C times Collins et al.'s  sum_i loss_i + C'/2 ||w||^2  with C' = 1/C and
each observed event (x, y) counted c(x, y) times. One dual block per observed
event j = (x_j, y_j, c_j):

    Q(u) = sum_j c_j term(u_j) + C/2 ||w(u)||^2,   w(u) = sum_j c_j sum_y u_jy (f(x_j, y_j) - f(x_j, y)),
    term = sum_y u log u  (LL)   or   -sum_y u_y [y != y_j]  (MM),

w* = C w(u*) and min f = -C min Q; D(u) = -C Q(u) is reported in the primal's
scale. The max-margin primal is the multi-class hinge of Crammer & Singer,

    f_MM(w) = 1/2 ||w||^2 + C sum_j c_j max_y ([y != y_j] + w.f(x_j, y) - w.f(x_j, y_j))   (eq. 3),

the same problem as scikit-learn's LinearSVC(multi_class="crammer_singer", fit_intercept=False).
An unregularized bias is not supported (it adds an equality constraint to the dual).

The dual blocks are the instances of the node structure (loglin.structured.node) viewed over
the problem's events (:func:`node_view`), so the part dual state, the EG driver and the
trainer passes of the structured models serve these duals as they are
(docs/decisions/0013-multiclass-eg-on-the-node-structure.md).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels.maxent import _blocks
from . import passes
from .dual import INIT_EPS, PartDualState
from .node import NodeProblem


def node_view(problem) -> NodeProblem:
    """The multi-class problem of a MaxentProblem's observed events (x_j, y_j, c_j): instance j reads
    context x_j's attribute row, has gold label y_j and weight c_j. Built once per problem."""
    view = problem.__dict__.get("_node_view")
    if view is None:
        rows = np.repeat(np.arange(problem.n_contexts, dtype=np.int64), np.diff(problem.obs_ptr))
        view = NodeProblem(problem.ctx_ptr, problem.ctx_pred, problem.ctx_val, problem.map_ptr, problem.map_label,
                           problem.map_feat, problem.n_features, problem.labels,
                           np.asarray(problem.obs_label, dtype=np.int32),
                           np.asarray(problem.obs_count, dtype=np.float64), row=rows, source=problem)
        problem.__dict__["_node_view"] = view
    return view


def require_plain_regularizer(objective, method):
    if not np.all(np.asarray(objective.reg) == 1.0):
        raise InvalidInputError(f"{method} solves the dual, which needs every weight regularized by 1/2 w^2 "
                                f"(an unregularized bias adds an equality constraint EG cannot keep); build the "
                                f"problem with regularize_bias=True or use a primal solver (tron, lbfgs, sgd)")


class MaxMarginObjective:
    """f_MM above, with a subgradient in ``fun_grad`` (for traces and subgradient methods); not twice
    differentiable, so it offers no ``hess_vec``."""

    kind = "maxent"

    def __init__(self, problem, C: float):
        if not np.isfinite(C) or C <= 0:
            raise InvalidInputError(f"C must be positive and finite, got {C}")
        self.problem = problem
        self.C = float(C)
        self.n = problem.n_features
        self.reg = problem.reg
        self.loss = "mm"
        self.n_fun = self.n_grad = self.n_hess_vec = 0
        self._view = node_view(problem)
        self._bounds = _blocks(self._view.n_sentences)

    def _pass(self, w, want_grad):
        return passes.hinge_and_subgradient(self._view.data, np.ascontiguousarray(w, dtype=np.float64),
                                            self._bounds, self._view.weight, want_grad)

    def fun(self, w):
        self.n_fun += 1
        return 0.5 * float(np.dot(self.reg * w, w)) + self.C * self._pass(w, False)[0]

    def fun_grad(self, w, keep_cache=True):
        self.n_fun += 1
        self.n_grad += 1
        loss, expect = self._pass(w, True)
        return 0.5 * float(np.dot(self.reg * w, w)) + self.C * loss, self.reg * w + self.C * (expect - self.problem.emp)

    def accept(self):
        pass


def multiclass_state(problem, loss="ll", *, logu=None, init="gold", eps=INIT_EPS):
    """The dual state of D-LL / D-MM on a MaxentProblem: a part dual state with one block of K label
    variables per observed event. ``logu`` (events x K, log u_j) starts it at u (s = log u); ``init="gold"``
    puts 1 - eps of each u_j on its observed label (w(u) ~ 0, the primal solvers' start), ``"uniform"``
    is the point minimizing D[u* || u^1] in the bounds of section 5.1."""
    s = None if logu is None else np.asarray(logu, dtype=np.float64).ravel()
    return PartDualState(node_view(problem), loss, s=s, init=init, eps=eps)
