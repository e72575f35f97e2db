"""Dual problems of LR and Maxent, w(alpha), and the duality gap (Yu, Huang & Lin 2011).

Everything is in LIBLINEAR's scale (regularizer 1/2 ||w||^2), so the papers'
sigma^2 is 1 and the dual variables are the papers' ones times C*N.

Logistic regression, per-instance costs C_i (instance and class weights),
dual (3) written as a maximization in the primal's scale:

    D(alpha) = -1/2 ||w(alpha)||^2 + sum_i C_i H(alpha_i / C_i),   0 <= alpha_i <= C_i,
    w(alpha) = sum_i y_i alpha_i x_i                                 (22)

with H(p) = -p log p - (1-p) log(1-p). Weak duality gives P(w) >= D(alpha)
for every feasible alpha and any w, with equality only at the optimum, where
alpha_i = C_i sigma(-y_i w*^T x_i). Minimizing the paper's D^LR is the same as
maximizing this D: D = sum_i C_i log C_i - D^LR.

Maxent with merged contexts. A context x carries weighted counts c(x, y)
over possibly several labels, c(x) = sum_y c(x, y). The primal

    f(w) = 1/2 ||w||^2 + C [ sum_x c(x) log T_w(x) - w^T sum_{x,y} c(x,y) f(x,y) ]

has, by the derivation of the paper's Appendix A.7 with Ptilde(x) -> C c(x)
and Ptilde(x, y) -> C c(x, y) (their (38) divided by sigma^2 = C N), the dual

    D(beta) = -1/2 ||w(beta)||^2 + sum_x C c(x) H(beta_x / (C c(x))),
    beta_x >= 0,  sum_y beta_{x,y} = C c(x)            (a simplex scaled by C c(x))
    w(beta) = sum_{x,y} (C c(x, y) - beta_{x,y}) f(x, y)                  (39)

with H the entropy of a distribution over labels. The observed labels enter
only through w(beta): nothing requires a unique label per context (the
reduction to (41) does). At the optimum beta_{x,y} = C c(x) P_w*(y | x).
Contexts of zero weight have beta_x = 0 and drop out.

The dual methods need every regularization weight to be 1: an unregularized
bias adds the equality constraint sum_i y_i alpha_i x_{i,bias} = 0 to the
dual, which one-variable (or one-context) coordinate descent cannot keep.
"""
from __future__ import annotations

import numpy as np

from .errors import InvalidInputError
from .kernels import dual_cd as dk
from .kernels import logistic as lk
from .kernels import maxent as mk
from .kernels import vector as vk

LR_EPS1, LR_EPS2 = 1e-3, 1e-8     # initial alpha_i = min(eps1 C_i, eps2), eq. (36)
ME_INIT_EPS = 1e-10               # eq. (51)
PRIMAL_SOLVERS = "tron, lbfgs, sgd (and the primal CD / iterative scaling solvers)"


def require_regularized(objective, method: str):
    """Raise InvalidInputError unless every weight is regularized with weight 1."""
    reg = np.asarray(objective.reg)
    if np.all(reg == 1.0):
        return
    if np.any(reg == 0.0):
        raise InvalidInputError(
            f"{method} solves the dual, and the dual of a model with an unregularized bias has an "
            f"equality constraint (for LR: sum_i y_i alpha_i = 0) that coordinate descent on one instance "
            f"(or one context) at a time cannot keep. Regularize the bias (estimators: regularize_intercept=True; "
            f"CLI: drop --no-regularize-bias), or "
            f"train this model with a primal solver: {PRIMAL_SOLVERS}.")
    raise InvalidInputError(f"{method} supports only the plain regularizer 1/2 ||w||^2 "
                            f"(all regularization weights equal to 1); use a primal solver: {PRIMAL_SOLVERS}")


# ====================================================================== LR
def lr_initial_alpha(cost, eps1=LR_EPS1, eps2=LR_EPS2):
    """(36): alpha_i = min(eps1 C_i, eps2), returned with C_i - alpha_i."""
    cost = np.asarray(cost, dtype=np.float64)
    alpha = np.minimum(eps1 * cost, eps2)
    return alpha, cost - alpha


def lr_alpha_from_w(problem, w):
    """alpha_i = C_i sigma(-y_i w^T x_i) and C_i - alpha_i = C_i sigma(y_i w^T x_i), both kept positive.

    The optimality condition of the dual; also a warm start from a primal w.
    """
    X = problem.X
    margin = problem.y * lk.decision_rows(np.asarray(w, dtype=np.float64), X.indptr, X.indices, X.data)
    cost = problem.cost
    alpha = cost * _sigmoid(-margin)
    alpha_c = cost * _sigmoid(margin)
    floor = dk.TINY * cost          # keeps log(alpha / (C - alpha)) finite
    return np.maximum(alpha, floor), np.maximum(alpha_c, floor)


def lr_w_of_alpha(problem, alpha):
    """(22): w(alpha) = sum_i y_i alpha_i x_i."""
    return np.asarray(problem.X.T @ (problem.y * alpha)).ravel()


def lr_dual_objective(problem, alpha, alpha_c=None, w=None) -> float:
    """D(alpha) in the primal's scale (P(w) >= D(alpha)); see the module docstring."""
    alpha = np.asarray(alpha, dtype=np.float64)
    alpha_c = problem.cost - alpha if alpha_c is None else np.asarray(alpha_c, dtype=np.float64)
    w = lr_w_of_alpha(problem, alpha) if w is None else w
    return -0.5 * float(vk.dot(w, w)) + float(dk.lr_entropy(alpha, alpha_c, problem.cost))


# ====================================================================== Maxent
def maxent_initial_beta(problem, C, eps=ME_INIT_EPS):
    """(51) scaled by C: beta = C c(x, y), moving eps of the mass to unseen labels."""
    beta = np.empty((problem.n_contexts, problem.n_labels))
    dk.maxent_init_beta(problem.ctx_count, problem.obs_ptr, problem.obs_label, problem.obs_count,
                        float(C), float(eps), beta)
    return beta


def maxent_beta_from_w(problem, C, w):
    """beta_{x,y} = C c(x) P_w(y|x), floored to stay in the simplex interior (warm start)."""
    logp = mk.predict_log_proba_rows(np.asarray(w, dtype=np.float64), problem.n_labels, problem.ctx_ptr,
                                     problem.ctx_pred, problem._val_or_empty(), problem.map_ptr,
                                     problem.map_label, problem.map_feat)
    total = (C * problem.ctx_count)[:, None]
    beta = total * np.exp(logp)
    beta = np.maximum(beta, dk.TINY * total)
    return beta / beta.sum(axis=1, keepdims=True).clip(min=np.finfo(float).tiny) * total


def maxent_w_of_beta(problem, C, beta):
    """(39): w(beta) = sum_{x,y} (C c(x, y) - beta_{x,y}) f(x, y)."""
    p = problem
    return dk.maxent_w_of_beta(p.n_features, float(C), p.ctx_count, p.obs_ptr, p.obs_label, p.obs_count,
                               p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat,
                               np.ascontiguousarray(beta, dtype=np.float64), bool(getattr(p, "dense_pairs", False)))


def maxent_dual_objective(problem, C, beta, w=None) -> float:
    """D(beta) in the primal's scale; see the module docstring."""
    w = maxent_w_of_beta(problem, C, beta) if w is None else w
    return -0.5 * float(vk.dot(w, w)) + float(dk.maxent_entropy(beta, float(C), problem.ctx_count))


def label_orthogonal(problem) -> bool:
    """Whether (48) holds: f(x, y)^T f(x, y') = 0 for y != y' on every context of the data.

    True at once when every feature belongs to a single label in the
    predicate map (predicate x label features); otherwise K^i is checked
    context by context.
    """
    occ_label = problem.map_label[problem.occ_entry]
    nonempty = np.diff(problem.occ_ptr) > 0
    if not nonempty.any():
        return True
    starts = problem.occ_ptr[:-1][nonempty]
    if np.array_equal(np.minimum.reduceat(occ_label, starts), np.maximum.reduceat(occ_label, starts)):
        return True
    return bool(_orthogonal_on_data(problem))


def _orthogonal_on_data(problem):
    p = problem
    width = int(dk.max_row_width(p.ctx_ptr, p.ctx_pred, p.map_ptr))
    slot = np.full(p.n_features, -1, dtype=np.int64)
    touched = np.empty(max(width, 1), dtype=np.int64)
    F = np.empty((p.n_labels, max(width, 1)))
    Kmat = np.empty((p.n_labels, p.n_labels))
    v = np.empty(p.n_labels)
    w0 = np.zeros(p.n_features)
    for x in range(p.n_contexts):
        m = dk.context_matrix(x, w0, p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label,
                              p.map_feat, slot, touched, F)
        dk.gram_and_scores(F, m, touched, w0, Kmat, v)
        off = Kmat - np.diag(np.diag(Kmat))
        if np.any(np.abs(off) > 1e-12 * max(1.0, float(np.abs(np.diag(Kmat)).max()))):
            return False
    return True


def single_entry_features(problem) -> bool:
    """Every feature appears in one map entry (so ||f(x, y)||^2 is a sum of squared predicate values)."""
    return bool(np.all(np.diff(problem.occ_ptr) <= 1))


# ====================================================================== both
def dual_objective(objective, state) -> float:
    """D for an LR state (alpha, alpha_c) or a Maxent state beta, in the primal's scale."""
    from .objective import LogisticObjective
    if isinstance(objective, LogisticObjective):
        alpha, alpha_c = state
        return lr_dual_objective(objective.problem, alpha, alpha_c)
    return maxent_dual_objective(objective.problem, objective.C, state)


def duality_gap(objective, w, dual: float):
    """(P(w) - D, (P(w) - D) / |P(w)|): the gap the driver's ``gap_tol`` tests."""
    f = float(objective.fun(w))
    gap = f - float(dual)
    return gap, gap / abs(f) if f != 0 else gap


def _sigmoid(t):
    out = np.empty_like(t, dtype=np.float64)
    pos = t >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-t[pos]))
    e = np.exp(t[~pos])
    out[~pos] = e / (1.0 + e)
    return out
