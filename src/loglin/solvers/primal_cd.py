"""Primal coordinate descent, Algorithm 3 of Huang, Hsieh, Chang & Lin (2010).

A sequential-update method (Algorithm 1) whose surrogate is the exact
difference A_t^CD(z) = f(w + z e_t) - f(w) (eq. 8), minimized only roughly:
one Newton direction d = -A_t'(0)/A_t''(0) (eq. 34) and backtracking
lambda = 1, beta, beta^2, ... until the sufficient decrease (35)

    A_t^CD(lambda d) <= gamma lambda d A_t^CD'(0).

Before each O(|Omega_t|) evaluation of A_t^CD the O(1) test (38) on the upper
bound (39) is tried ("cd"); "cdd" leaves it out (the paper's CDD, Figure 4).
The evaluation itself shares its column pass with the update (18)-(19), and
for 0/1 features and small steps (|e^z - 1| <= 1/4) it is an O(1) power
series in sums gathered with A_t'(0) (:mod:`loglin.kernels.primal_cd`), in both
cd and cdd; so on 0/1 data (38) saves less than in the paper.
beta = 0.5; gamma = 0.001 for 0/1 data (section 5.1) and 0.01 for real
values (section 5.2) unless given. Near the optimum lambda = 1 is accepted
(Theorem 6): the trace counts ``unit_steps`` out of ``newton_steps``.

Binary logistic regression is the same algorithm on the same state: LR is
Maxent with one feature per column of X on label +1 (section 5.2, eq. 43),
S_w(x_i, +1) = exp(w^T x_i), S_w(x_i, -1) = 1, and instance costs C_i in
place of C c(x) - the primal CD for LR of Chang, Hsieh & Lin (2008) style
with the logistic loss (Yu et al. 2011 call it CDprimal). The CSC of X is
built once.
"""
from __future__ import annotations

import numpy as np

from ..kernels import scaling as ks
from .base import objective_kind
from .iterative_scaling import SequentialData, sequential_update

BETA = 0.5
GAMMA_BINARY = 0.001      # 0/1 features, section 5.1
GAMMA_REAL = 0.01         # real-valued features, section 5.2


def logistic_as_sequential_data(problem) -> SequentialData:
    """Binary LR (y = +-1, costs C_i) as Maxent data for Algorithm 1.

    Contexts are instances, labels are (-1, +1), predicate t = column t of X
    carries feature t on label +1 only; emp_t = sum_{i: y_i = +1} C_i x_it.
    """
    X = problem.X
    n = X.shape[1]
    csc = X.tocsc()
    csc.sort_indices()
    binary = X.nnz == 0 or bool(np.all(X.data == 1.0))
    val = np.empty(0) if binary else X.data
    rows = (X.indptr.astype(np.int64), X.indices, val,
            np.arange(n + 1, dtype=np.int64), np.ones(n, dtype=np.int32), np.arange(n, dtype=np.int64))
    cols = (csc.indptr.astype(np.int64), csc.indices, np.empty(0) if binary else csc.data)
    emp = np.asarray(X.T @ (problem.cost * (problem.y > 0))).ravel()
    negative = (not binary) and X.nnz > 0 and X.data.min() < 0
    return SequentialData(rows, cols, np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64),
                          problem.cost, emp, problem.reg, 1.0, 2, negative)


def _data(objective):
    if objective_kind(objective) == "binary":
        return logistic_as_sequential_data(objective.problem)
    return SequentialData.from_maxent(objective.problem, objective.C, "cd")


def _is_binary(data) -> bool:
    return len(data.cols[2]) == 0


def coordinate_descent(objective, w, rng, *, use_bound, gamma=None, beta=BETA, shuffle=False):
    data = _data(objective)
    if gamma is None:
        gamma = GAMMA_BINARY if _is_binary(data) else GAMMA_REAL
    if not (0.0 < gamma < 0.5 and 0.0 < beta < 1.0):
        raise ValueError(f"need 0 < gamma < 1/2 and 0 < beta < 1, got gamma={gamma}, beta={beta}")
    yield from sequential_update(data, w, rng, ks.CD, shuffle=shuffle, gamma=gamma, beta=beta,
                                 use_bound=use_bound)


def cd(objective, w, rng, gamma: float | None = None, beta: float = BETA, shuffle: bool = False):
    yield from coordinate_descent(objective, w, rng, use_bound=True, gamma=gamma, beta=beta, shuffle=shuffle)


def cdd(objective, w, rng, gamma: float | None = None, beta: float = BETA, shuffle: bool = False):
    yield from coordinate_descent(objective, w, rng, use_bound=False, gamma=gamma, beta=beta, shuffle=shuffle)
