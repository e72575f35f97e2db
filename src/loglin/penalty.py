"""L1 and elastic-net regularization, written once over any objective of the protocol.

An objective of :mod:`loglin.solvers.protocol` is f(w) = 1/2 sum_t r_t w_t^2 + C L(w) (LIBLINEAR's
scale; r_t = 0 leaves an unregularized bias free). With mixing rho = ``l1_ratio`` (scikit-learn's
name and scale) it becomes

    F(w) = rho sum_t r_t |w_t| + (1 - rho)/2 sum_t r_t w_t^2 + C L(w)

``penalty="l1"`` is rho = 1, LIBLINEAR ``-s 6``'s ||w||_1 + C sum loss; CRFsuite's
-loglik + c1 ||w||_1 + c2 ||w||^2 is 1/C = c1 + 2 c2, rho = c1 / (c1 + 2 c2) (:func:`from_crfsuite`).
The smooth part s(w) = f(w) - rho/2 sum_t r_t w_t^2 is what OWL-QN differentiates
(:meth:`PenalizedObjective.smooth_fun_grad`); ``fun_grad`` returns F and its minimum-norm
subgradient (Andrew & Gao 2007's pseudo-gradient), zero exactly at the optimum, so the driver's
relative test and, for rho < 1, its strong-convexity certificate (mu = (1 - rho) min r) apply as
they are.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .errors import InvalidInputError

PENALTIES = ("l2", "l1", "elasticnet")


def l1_mixing(penalty: str = "l2", l1_ratio: float | None = None) -> float:
    """rho, the weight of the L1 term, for scikit-learn's ``penalty`` / ``l1_ratio``; one error if invalid."""
    if penalty not in PENALTIES:
        raise InvalidInputError(f"penalty must be one of {', '.join(PENALTIES)}, got {penalty!r}")
    if penalty == "elasticnet":
        if l1_ratio is None:
            raise InvalidInputError("penalty 'elasticnet' needs l1_ratio (--l1-ratio), a number in [0, 1]")
        try:
            rho = float(l1_ratio)
        except (TypeError, ValueError):
            raise InvalidInputError(f"l1_ratio must be a number in [0, 1], got {l1_ratio!r}") from None
        if not 0.0 <= rho <= 1.0:
            raise InvalidInputError(f"l1_ratio must be a number in [0, 1], got {l1_ratio!r}")
        return rho
    if l1_ratio is not None:
        raise InvalidInputError(f"l1_ratio is used only with penalty 'elasticnet', not {penalty!r}")
    return 1.0 if penalty == "l1" else 0.0


def check_penalty(penalty: str, l1_ratio: float | None, loss: str = "ll") -> float:
    """rho of :func:`l1_mixing`, after checking that the loss can take an L1 term."""
    rho = l1_mixing(penalty, l1_ratio)
    if rho > 0 and loss == "mm":
        raise InvalidInputError(f"penalty {penalty!r} needs a differentiable loss; the max-margin (mm) models "
                                f"train with the L2 penalty only")
    return rho


def from_crfsuite(c1: float, c2: float) -> tuple[float, str, float | None]:
    """(C, penalty, l1_ratio) minimizing CRFsuite's -loglik + c1 ||w||_1 + c2 ||w||^2 (same minimizer)."""
    c1, c2 = float(c1), float(c2)
    if not (c1 >= 0 and c2 >= 0 and c1 + c2 > 0) or not np.isfinite(c1 + c2):
        raise InvalidInputError(f"c1 and c2 must be non-negative and finite, not both 0 (loglin's objectives are "
                                f"regularized: use a small c2 such as 1e-6); got c1={c1}, c2={c2}")
    scale = c1 + 2.0 * c2
    if c1 == 0:
        return 1.0 / scale, "l2", None
    if c2 == 0:
        return 1.0 / scale, "l1", None
    return 1.0 / scale, "elasticnet", c1 / scale


class PenalizedObjective:
    """F of the module docstring over ``inner``; what the solver table reads: ``penalty``, ``l1``, ``reg``."""

    # second-order and dual methods do not apply to F, nor the inner objective's L1 certificate (F is penalized)
    HIDDEN = ("hess_vec", "hess_diag", "hessian", "dual_state", "l1_certificate")

    def __init__(self, inner, rho: float):
        if not 0.0 < rho <= 1.0:
            raise InvalidInputError(f"the L1 weight must be in (0, 1], got {rho}")
        base = np.asarray(inner.reg, dtype=np.float64)
        self.inner = inner
        self.rho = float(rho)
        self.penalty = "l1" if rho == 1.0 else "elasticnet"
        self.n = inner.n
        self.kind = getattr(inner, "kind", "maxent")
        self.l1 = rho * base                 # per-weight L1 coefficients rho r_t
        self.reg = (1.0 - rho) * base        # the L2 part: mu of the stopping certificate
        from .solvers.protocol import l1_certificate     # here: loglin.solvers imports this module
        # the pure-L1 duality gap: the dual the inner objective declares (protocol.L1_CERTIFICATES), None: none
        self._certificate = l1_certificate(inner) if rho == 1.0 else None
        self._crf = self._certificate in ("crf", "crf-fused")
        self._fused = self._certificate == "crf-fused"
        self._entropy_at = None              # (w, terms) of the last evaluation: its dual bound without a pass

    def __getattr__(self, name):
        # problem, C, loss, normalized(), ... of the inner objective; never its Hessian or dual
        if name in PenalizedObjective.HIDDEN or name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def smooth_fun_grad(self, w, keep_cache=False):
        """(s(w), grad s(w)): the inner f and gradient without rho/2 sum r_t w_t^2."""
        if self._fused:
            f, g, terms = self.inner.fun_grad_with_entropy(w)
            self._entropy_at = (np.array(w, dtype=np.float64), terms)
        else:
            f, g = self.inner.fun_grad(w, keep_cache)
        return smooth_part(f, g, w, self.l1)

    def smooth_fun(self, w):
        return self.inner.fun(w) - half_weighted_square(w, self.l1)

    def fun(self, w):
        return self.smooth_fun(w) + l1_norm(w, self.l1)

    def fun_grad(self, w, keep_cache=True):
        f, g = self.smooth_fun_grad(w, keep_cache)
        pg = np.empty_like(g)
        pseudo_gradient(g, w, self.l1, pg)
        return f + l1_norm(w, self.l1), pg

    def accept(self):
        self.inner.accept()

    def dual_bound(self, w) -> float | None:
        """A lower bound on min F at ``w`` (the Fenchel dual at a feasible point), for the stopping test's
        duality gap: pure L1 on binary LR, Maxent and the CRFs of every structure (chains, trees, sharded or not:
        loglin.structured.l1_dual); None where none is known (a free bias, a sharded Maxent or LR: then the
        relative pseudo-gradient test decides alone, docs/decisions/0017, 0035, 0046 and 0051)."""
        if self._certificate is None or not np.all(self.l1 > 0):
            return None
        if self._certificate == "logistic":
            p = self.inner.problem
            return l1_logistic_dual(p.X, p.y, p.cost, self.l1, w)
        if self._certificate == "maxent":
            p = self.inner.problem
            prob = np.empty((p.n_contexts, p.n_labels))
            _, expect = self.inner.loss_and_expectation(w, prob, True)
            grad = self.inner.C * (expect - p.emp)          # of C L(w): the whole smooth part when rho = 1
            return float(self.inner.C * maxent_dual_entropy(prob, dual_scale(grad, self.l1), p.ctx_count,
                                                            p.obs_ptr, p.obs_label, p.obs_count))
        if self._crf:
            cached = self._entropy_at
            terms = cached[1] if cached is not None and np.array_equal(cached[0], w) else self.inner.entropy_terms(w)
            return self.inner.dual_from_terms(self.l1, terms, dual_scale)
        return None


def penalized(objective, penalty: str = "l2", l1_ratio: float | None = None):
    """``objective`` itself for an L2 penalty, else its :class:`PenalizedObjective`."""
    rho = check_penalty(penalty, l1_ratio, getattr(objective, "loss", "ll"))
    if rho == 0.0:
        return objective
    if getattr(objective, "reg", None) is None:
        raise InvalidInputError(f"{type(objective).__name__} does not expose its regularization weights (reg)")
    return PenalizedObjective(objective, rho)


def dual_scale(grad, l1) -> float:
    """The largest s <= 1 with s |grad_t| <= l1_t for all t: the loss gradient's dual point scaled into the
    L1 dual's constraints."""
    u = np.abs(grad)
    over = u > l1
    return float(np.min(l1[over] / u[over])) if np.any(over) else 1.0


@njit(cache=True)
def maxent_dual_entropy(prob, s, ctx_count, obs_ptr, obs_label, obs_count):
    """sum_x c(x) H(q_x), q_x = s P_w(.|x) + (1 - s) (the observed label distribution of x): the dual of L1
    Maxent, min_w sum_t l1_t |w_t| + C sum_x [c(x) log Z_x(w) - sum_y c(x, y) w.f(x, y)], is C times it at
    the feasible point q (the conjugate of log-sum-exp is the negative entropy on the simplex)."""
    total = 0.0
    K = prob.shape[1]
    q = np.empty(K)
    for x in range(prob.shape[0]):
        c = ctx_count[x]
        if c <= 0.0:
            continue
        for k in range(K):
            q[k] = s * prob[x, k]
        for j in range(obs_ptr[x], obs_ptr[x + 1]):
            q[obs_label[j]] += (1.0 - s) * obs_count[j] / c
        h = 0.0
        for k in range(K):
            if q[k] > 0.0:
                h -= q[k] * np.log(q[k])
        total += c * h
    return total


def l1_logistic_dual(X, y, cost, l1, w) -> float:
    """The dual of min_w sum_t l1_t |w_t| + sum_i cost_i log(1 + exp(-y_i x_i w)) at a feasible point built
    from ``w``: D(a) = sum_i cost_i H(a_i / cost_i) (H the binary entropy) subject to
    |sum_i y_i a_i x_it| <= l1_t, a_i in [0, cost_i] (Fenchel; Yuan, Ho & Lin 2012, eq. 2's dual). The
    point: a = cost * sigma(-y X w), which is optimal at the optimum, scaled down into the constraints.
    D(a) <= min F always, so F(w) - D(a) bounds F(w) - min F on any scale of data."""
    margin = y * (X @ w)
    a = cost * np.exp(-np.logaddexp(0.0, margin))                 # cost_i sigma(-margin_i), no overflow
    scale = dual_scale(X.T @ (y * a), l1)
    q = np.clip(scale * a / np.where(cost > 0, cost, 1.0), 0.0, 1.0)
    return float(np.sum(cost * binary_entropy(q)))


@njit(cache=True)
def binary_entropy(q):
    """-q log q - (1 - q) log(1 - q), 0 at q = 0 and 1."""
    out = np.empty_like(q)
    for i in range(q.shape[0]):
        p = q[i]
        h = 0.0
        if p > 0.0:
            h -= p * np.log(p)
        if p < 1.0:
            h -= (1.0 - p) * np.log1p(-p)
        out[i] = h
    return out


def nonzeros(w) -> int:
    """The number of non-zero weights (what an L1 model is chosen for)."""
    return int(np.count_nonzero(w))


@njit(cache=True)
def smooth_part(f, g, w, l1):
    """(f - 1/2 sum l1_t w_t^2, g - l1 * w): removes the L2 share that became L1."""
    out = np.empty_like(g)
    half = 0.0
    for t in range(g.shape[0]):
        half += l1[t] * w[t] * w[t]
        out[t] = g[t] - l1[t] * w[t]
    return f - 0.5 * half, out


@njit(cache=True)
def half_weighted_square(w, r):
    """1/2 sum_t r_t w_t^2 (a loop, not numpy's dot: no BLAS threads woken for an n-vector)."""
    total = 0.0
    for t in range(w.shape[0]):
        total += r[t] * w[t] * w[t]
    return 0.5 * total


@njit(cache=True)
def l1_norm(w, l1):
    total = 0.0
    for t in range(w.shape[0]):
        total += l1[t] * abs(w[t])
    return total


@njit(cache=True)
def pseudo_gradient(g, w, l1, out):
    """The minimum-norm subgradient of s + sum_t l1_t |w_t| (Andrew & Gao 2007, section 3.2)."""
    for t in range(g.shape[0]):
        if w[t] > 0.0:
            out[t] = g[t] + l1[t]
        elif w[t] < 0.0:
            out[t] = g[t] - l1[t]
        elif g[t] + l1[t] < 0.0:
            out[t] = g[t] + l1[t]
        elif g[t] - l1[t] > 0.0:
            out[t] = g[t] - l1[t]
        else:
            out[t] = 0.0
