"""Primal objectives of arc-factored parsers in LIBLINEAR's scale (Collins et al. 2008, section 8).

    CRF (P-LL):  f(w) = 1/2 ||w||^2 + C sum_i c_i [log Z_w(x_i) - w . f(x_i, y_i)]
    M3N (P-MM):  f(w) = 1/2 ||w||^2 + C sum_i c_i max_y [e(y_i, y) - w . (f(x_i, y_i) - f(x_i, y))]

Z sums over projective trees (inside algorithm), e is the number of words with
a wrong head (per-arc Hamming loss, maximized by loss-augmented Eisner).
Collins et al.'s C' is 1/C; their objective is f / C. Same interface as
loglin.structured.objective.ChainObjective, with kind "tree".
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import dependency as dk
from ..kernels.maxent import _blocks

LOSSES = ("ll", "mm")


class TreeObjective:
    """Regularized primal of a :class:`TreeProblem` at regularization C."""

    kind = "tree"

    def __init__(self, problem, C: float, loss: str = "ll"):
        if not np.isfinite(C) or C <= 0:
            raise InvalidInputError(f"C must be positive and finite, got {C}")
        if loss not in LOSSES:
            raise InvalidInputError(f"loss must be one of {LOSSES}, got {loss!r}")
        self.problem = problem
        self.C = float(C)
        self.loss = loss
        self.n = problem.n_features
        self.reg = problem.reg
        self.n_fun = 0
        self.n_grad = 0
        self._bounds = _blocks(problem.n_sentences)

    def _pass(self, w, want_grad):
        p = self.problem
        return dk.loss_and_expectation(np.ascontiguousarray(w, dtype=np.float64), self._bounds, p.max_len,
                                       *p.kernel_args(), p.heads, p.weight, want_grad, self.loss == "mm")

    def data_loss(self, w) -> float:
        return self._pass(w, False)[0]

    def fun(self, w):
        self.n_fun += 1
        return 0.5 * float(w @ w) + self.C * self.data_loss(w)

    def fun_grad(self, w, keep_cache=True):
        self.n_fun += 1
        self.n_grad += 1
        loss, expect = self._pass(w, True)
        return 0.5 * float(w @ w) + self.C * loss, w + self.C * (expect - self.problem.emp)

    def accept(self):
        pass

    def hess_vec(self, v):
        raise NotImplementedError("parser objectives offer no Hessian-vector product; use lbfgs, sgd or EG")

    def grad_norm(self, w) -> float:
        return float(np.linalg.norm(self.fun_grad(w, keep_cache=False)[1]))

    def collins(self, f):
        return f / self.C
