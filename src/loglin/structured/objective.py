"""Primal objectives of structured models in LIBLINEAR's scale, for the batch solvers and for traces.

    CRF (P-LL):  f(w) = 1/2 ||w||^2 + C sum_i c_i [log Z_w(x_i) - w . f(x_i, y_i)]
    M3N (P-MM):  f(w) = 1/2 ||w||^2 + C sum_i c_i max_y [e(y_i, y) - w . (f(x_i, y_i) - f(x_i, y))]

with e the per-part Hamming loss of the structure (per token for chains, per word
for trees). Collins et al. write sum_i loss + C'/2 ||w||^2; the optimum is the
same for C' = 1/C and their objective is f / C.
CRFsuite's  -loglik + c2 ||w||^2  is f / C with C = 1 / (2 c2).

The object offers what the core driver and L-BFGS use (``n, reg, fun,
fun_grad, accept``). For M3N, ``fun_grad`` returns a subgradient (for
traces and subgradient baselines, not for L-BFGS). One objective serves every
structure: the problem's ``data`` (loglin.structured.contract) selects the
compiled inference of loglin.structured.passes.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from . import l1_dual, passes
from ..kernels import vector as vk
from ..kernels.maxent import _blocks

LOSSES = ("ll", "mm")


class StructuredObjective:
    """Regularized primal of a structured problem (sentences of parts) at regularization C.

    Subclasses give ``kind`` (the model kind of the solver table: "chain", "chain2", "node" or "tree") and
    ``structure`` (its name in messages); the problem gives
    ``data, part_ptr, weight, n_features, reg, n_sentences, emp`` and ``gold_part_scores(eps)``.
    """

    kind = None
    structure = "structured"

    def __init__(self, problem, C: float, loss: str = "ll"):
        if not np.isfinite(C) or C <= 0:
            raise InvalidInputError(f"C must be positive and finite, got {C}")
        if loss not in LOSSES:
            raise InvalidInputError(f"loss must be one of {LOSSES}, got {loss!r}")
        self.problem = problem
        self.parts = problem            # the structured problem the passes read
        self.C = float(C)
        self.loss = loss
        self.n = problem.n_features
        self.reg = problem.reg
        self.n_fun = 0
        self.n_grad = 0
        self.n_hess_vec = 0
        self._bounds = _blocks(problem.n_sentences)

    def _pass(self, w, want_grad):
        """(sum_i c_i loss_i(w), sum_i c_i E f (CRF) or sum_i c_i f(x_i, yhat_i) (M3N))."""
        p = self.parts
        kernel = passes.loss_and_expectation if self.loss == "ll" else passes.hinge_and_subgradient
        return kernel(p.data, np.ascontiguousarray(w, dtype=np.float64), self._bounds, p.weight, want_grad)

    def data_loss(self, w) -> float:
        """sum_i c_i loss_i(w) (Collins' loss term)."""
        return self._pass(w, False)[0]

    def fun(self, w):
        self.n_fun += 1
        return self.regularizer(w) + self.C * self.data_loss(w)

    def fun_grad(self, w, keep_cache=True):
        self.n_fun += 1
        self.n_grad += 1
        loss, expect = self._pass(w, True)
        return self.regularizer(w) + self.C * loss, self.reg * w + self.C * (expect - self.problem.emp)

    def accept(self):
        pass

    @property
    def l1_certificate(self):
        """loglin.solvers.protocol's declaration: the CRF loss has the L1 dual of loglin.structured.l1_dual, whose
        fused pass gives this class's f and gradient unless a subclass changed how they are computed."""
        if self.loss != "ll":
            return None
        own_pass = type(self).fun_grad is StructuredObjective.fun_grad and type(self)._pass is StructuredObjective._pass
        return "crf-fused" if own_pass else "crf"

    # the pure-L1 duality gap (loglin.structured.l1_dual, docs/decisions/0046): loglin.penalty asks the objective,
    # and the sharded objective answers the same three from its shards (0051)
    def fun_grad_with_entropy(self, w):
        return l1_dual.fun_grad_with_entropy(self, w)

    def entropy_terms(self, w):
        return l1_dual.entropy_terms(self, w)

    def dual_from_terms(self, l1, terms, dual_scale):
        return l1_dual.dual_from_terms(self, l1, terms, dual_scale)

    def hess_vec(self, v):
        raise NotImplementedError(f"{self.structure} objectives offer no Hessian-vector product; "
                                  "use lbfgs, sgd or EG")

    def regularizer(self, w):
        return vk.half_weighted_sq_norm(self.reg, w)           # Numba's: np.dot would wake BLAS threads

    def grad_norm(self, w) -> float:
        return float(np.linalg.norm(self.fun_grad(w, keep_cache=False)[1]))

    def collins(self, f):
        """Collins et al.'s objective sum loss + C'/2 ||w||^2 (C' = 1/C) from f."""
        return f / self.C


class ChainObjective(StructuredObjective):
    """Regularized primal of a :class:`ChainProblem` at regularization C."""

    kind = "chain"
    structure = "chain"
