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
from .dual import INIT_EPS, PartDualState
from .node import NodeProblem
from .objective import StructuredObjective


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


class MaxMarginObjective(StructuredObjective):
    """f_MM above: the node structure's M3N objective over the problem's events, in the problem's weights and
    regularizer. ``fun_grad`` gives a subgradient (for traces and subgradient methods); no ``hess_vec``."""

    kind = "maxent"
    structure = "multi-class max-margin"

    def __init__(self, problem, C: float):
        super().__init__(node_view(problem), C, "mm")
        self.problem = problem
        self.reg = problem.reg


def multiclass_state(problem, loss="ll", *, logu=None, init="gold", eps=INIT_EPS):
    """The dual state of D-LL / D-MM on a MaxentProblem: a part dual state with one block of K label
    variables per observed event. ``logu`` (events x K, log u_j) starts it at u (s = log u); ``init="gold"``
    puts 1 - eps of each u_j on its observed label (w(u) ~ 0, the primal solvers' start), ``"uniform"``
    is the point minimizing D[u* || u^1] in the bounds of section 5.1."""
    s = None if logu is None else np.asarray(logu, dtype=np.float64).ravel()
    return PartDualState(node_view(problem), loss, s=s, init=init, eps=eps)
