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
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import eg_multiclass as ek
from ..kernels.maxent import _blocks, predict_log_proba_rows


def event_arrays(problem):
    """(context, label, count) of every observed event of a MaxentProblem."""
    obs_ctx = np.repeat(np.arange(problem.n_contexts, dtype=np.int64), np.diff(problem.obs_ptr))
    return obs_ctx, problem.obs_label.astype(np.int32), problem.obs_count.astype(np.float64)


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
        self._events = event_arrays(problem)
        self._bounds = _blocks(len(self._events[0]))

    def _pass(self, w, want_grad):
        p = self.problem
        return ek.hinge_and_subgradient(np.ascontiguousarray(w, dtype=np.float64), self._bounds, p.n_labels,
                                        *self._events, p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr,
                                        p.map_label, p.map_feat, want_grad)

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


INIT_EPS = 0.01


class MulticlassDualState:
    """log u for every observed event, the per-event terms and w(u).

    Initial point (any interior point is allowed, Figure 2): ``init="gold"``
    puts 1 - eps of each u_j on its observed label, so w(u) is close to 0 and
    the primal starts where L-BFGS and SGD start; ``"uniform"`` is the point
    that minimizes D[u* || u^1] in the bounds of section 5.1. "gold" converges
    much faster in practice for small C' (measured on MNIST slices).
    """

    def __init__(self, problem, loss="ll", logu=None, init="gold", eps=INIT_EPS):
        self.problem = problem
        self.loss = loss
        self.mm = loss == "mm"
        self.events = event_arrays(problem)
        n, K = len(self.events[0]), problem.n_labels
        if logu is not None:
            self.logu = np.array(logu, dtype=np.float64)
        elif init == "uniform":
            self.logu = np.full((n, K), -np.log(K))
        elif init == "gold":       # mass 1 - eps on the observed label: w(u) ~ 0, the primal solvers' start
            self.logu = np.full((n, K), np.log(eps / (K - 1)))
            self.logu[np.arange(n), self.events[1]] = np.log1p(-eps)
        else:
            raise InvalidInputError(f"init must be 'gold' or 'uniform', got {init!r}")
        self.term = np.empty(n)
        self.bounds = _blocks(n)
        self.wu = np.zeros(problem.n_features)
        self.refresh()

    @classmethod
    def from_primal(cls, problem, w, loss="ll"):
        """u_j = P_w(. | x_j) (a warm start from a primal point)."""
        p = problem
        logp = predict_log_proba_rows(np.asarray(w, dtype=np.float64), p.n_labels, p.ctx_ptr, p.ctx_pred,
                                      p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat)
        obs_ctx = np.repeat(np.arange(p.n_contexts), np.diff(p.obs_ptr))
        return cls(problem, loss, logu=np.maximum(logp[obs_ctx], -700.0))

    @property
    def n_blocks(self):
        return len(self.events[0])

    def propose(self, eta, C, out_logu, out_term):
        p = self.problem
        return ek.batch_proposal(float(eta), float(C), self.mm, self.wu, self.bounds, *self.events, p.ctx_ptr,
                                 p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat, self.logu,
                                 out_logu, out_term)

    def refresh(self):
        """Exact w(u) and terms from log u."""
        self.wu = self.problem.emp - self.propose(0.0, 1.0, self.logu, self.term)

    def terms_total(self):
        total = float(self.events[2] @ self.term)
        return -total if self.mm else total

    def Q(self, C):
        return self.terms_total() + 0.5 * C * float(self.wu @ self.wu)

    def dual(self, C):
        return -C * self.Q(C)

    def primal_weights(self, C):
        return C * self.wu

    # ------------------------------------------------------------ EG steps (used by loglin.structured.eg)
    def online(self, C, picks, rates, adapt=True, max_trial=30):
        """EG updates of the events ``picks`` in that order; (accepted, trials, dual change)."""
        p = self.problem
        if getattr(self, "_width", None) is None:
            self._width = int(ek.max_row_width(p.ctx_ptr, p.ctx_pred, p.map_ptr))
        return ek.online_pass(np.asarray(picks, dtype=np.int64), rates, adapt, max_trial, float(C), self.mm,
                              self.wu, *self.events, p.ctx_ptr, p.ctx_pred, p._val_or_empty(), p.map_ptr,
                              p.map_label, p.map_feat, self.logu, self.term, self._width)

    def batch_try(self, eta, C):
        if getattr(self, "_buf", None) is None:
            self._buf = [np.empty_like(self.logu), np.empty_like(self.term)]
        self._wu_new = self.problem.emp - self.propose(eta, C, *self._buf)
        terms = float(self.events[2] @ self._buf[1])
        return (-terms if self.mm else terms) + 0.5 * C * float(self._wu_new @ self._wu_new)

    def batch_commit(self):
        b = self._buf
        self.logu, b[0] = b[0], self.logu
        self.term, b[1] = b[1], self.term
        self.wu = self._wu_new

    def copy(self):
        other = object.__new__(MulticlassDualState)
        other.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()
                               if k != "_buf"})
        return other
