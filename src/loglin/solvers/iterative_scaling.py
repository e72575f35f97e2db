"""Iterative scaling (GIS, IIS, SCGIS) in the framework of Huang, Hsieh, Chang & Lin (2010).

"Iterative scaling and coordinate descent methods for maximum entropy
models", JMLR 11 (ACL 2009 short version). Every method solves one-variable
sub-problems min_z A_t(z) with a surrogate A_t(z) >= f(w + z e_t) - f(w),
A_t(0) = 0 (eqs. 6-7), and differs only in

* the surrogate (Table 1; :func:`surrogate_gis`, :func:`surrogate_iis`,
  :func:`surrogate_scgis`, :func:`surrogate_cd` below), and
* how sub-problems are scheduled: Algorithm 1 (:func:`sequential_update`,
  w_t changes right after its sub-problem: SCGIS, CD) or Algorithm 2
  (:func:`parallel_update`, all n sub-problems from one w: GIS, IIS).

Scale: loglin's objective is f = C * N * L with sigma^2 = C * N, so all
surrogates here are the papers' times C * N (Q_t(z) = r_t (w_t z + z^2/2)
- C z N Ptilde(f_t)). The Newton stopping rule |A_t'(z)| <= 1e-5 of section
5.1 is applied in the papers' scale, i.e. |A_t'| <= 1e-5 * C * N here; at
least one Newton step is always taken, so a sub-problem whose gradient is
already below the tolerance still moves w (no stalling near the optimum).

The CD method (Algorithm 3) lives in :mod:`loglin.solvers.primal_cd`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import InvalidInputError
from ..kernels import scaled_scores as ss
from ..kernels import scaling as ks
from ..kernels.maxent import decision_rows
from .base import Step

NEWTON_TOL = 1e-5          # |A_t'(z_t)| <= 1e-5, section 5.1 (papers' scale)


# ====================================================================== Table 1
# Plain, vectorized reference forms of the four surrogates (f scale). They
# recompute P_w from scratch and exist for reading and testing; the solvers
# use the compiled kernels in loglin.kernels.scaling.


def _posteriors(problem, w):
    """P_w(y|x) for every context (X x K)."""
    s = decision_rows(w, problem.n_labels, problem.ctx_ptr, problem.ctx_pred, problem._val_or_empty(),
                      problem.map_ptr, problem.map_label, problem.map_feat)
    s -= s.max(axis=1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=1, keepdims=True)
    return s


def feature_matrix(problem, t) -> sp.csr_matrix:
    """f_t(x, y) as a sparse X x K matrix (sums over every map entry of t)."""
    ent = problem.occ_entry[problem.occ_ptr[t]:problem.occ_ptr[t + 1]]
    xs, ys, vs = [], [], []
    for j in ent:
        p, y = problem.map_pred[j], problem.map_label[j]
        a, b = problem.col_ptr[p], problem.col_ptr[p + 1]
        xs.append(problem.col_ctx[a:b])
        ys.append(np.full(b - a, y))
        vs.append(np.ones(b - a) if problem.col_val is None else problem.col_val[a:b])
    shape = (problem.n_contexts, problem.n_labels)
    if not xs:
        return sp.csr_matrix(shape)
    m = sp.coo_matrix((np.concatenate(vs), (np.concatenate(xs), np.concatenate(ys))), shape=shape).tocsr()
    m.sum_duplicates()
    return m


def feature_totals(problem) -> np.ndarray:
    """f^#(x, y) = sum_t f_t(x, y) for every (x, y) (X x K)."""
    out = np.empty((problem.n_contexts, problem.n_labels))
    ks.feature_sums(problem.n_labels, _rows(problem), out)
    return out


def _q(problem, C, w, t, z):
    """Q_t(z) of eq. (11) in f scale."""
    z = np.asarray(z, dtype=np.float64)
    return problem.reg[t] * (w[t] * z + 0.5 * z * z) - C * z * problem.emp[t]


def _expected(problem, w, t):
    """sum_{x,y} c(x) P_w(y|x) f_t(x,y) (eq. 32), with the pieces it comes from."""
    P = _posteriors(problem, w)
    F = feature_matrix(problem, t).tocoo()
    weight = problem.ctx_count[F.row] * P[F.row, F.col]      # c(x) P_w(y|x)
    return F, P, weight


def _sum_exp_surrogate(problem, C, w, t, z, fs):
    F, _, weight = _expected(problem, w, t)
    E = float(np.dot(weight, F.data))
    z = np.asarray(z, dtype=np.float64)
    return _q(problem, C, w, t, z) + C * E * np.expm1(z * fs) / fs


def surrogate_gis(problem, C, w, t, z):
    """A_t^GIS(z) = Q_t(z) + (e^{z f#} - 1)/f# sum c(x) P_w(y|x) f_t(x,y)   (Table 1)."""
    return _sum_exp_surrogate(problem, C, w, t, z, float(feature_totals(problem).max()))


def surrogate_scgis(problem, C, w, t, z):
    """A_t^SCGIS(z): GIS with f_t^# = max_{x,y} f_t(x,y) in place of f^#   (Table 1, eq. 14)."""
    F = feature_matrix(problem, t)
    return _sum_exp_surrogate(problem, C, w, t, z, float(F.data.max()) if F.nnz else 1.0)


def _per_z(fn, z):
    """Apply a scalar function of z elementwise (scalar in, scalar out)."""
    z = np.asarray(z, dtype=np.float64)
    return np.vectorize(fn, otypes=[np.float64])(z) if z.ndim else fn(float(z))


def surrogate_iis(problem, C, w, t, z):
    """A_t^IIS(z) = Q_t(z) + sum c P f_t (e^{z f#(x,y)} - 1)/f#(x,y)   (Table 1)."""
    F, _, weight = _expected(problem, w, t)
    fs = feature_totals(problem)[F.row, F.col]
    data_part = lambda zz: float(np.sum(np.expm1(zz * fs) / fs * weight * F.data))
    return _q(problem, C, w, t, z) + C * _per_z(data_part, z)


def surrogate_cd(problem, C, w, t, z):
    """A_t^CD(z) = Q_t(z) + sum_x c(x) log(1 + sum_y P_w(y|x)(e^{z f_t(x,y)} - 1))   (Table 1, eq. 17).

    This is exactly f(w + z e_t) - f(w).
    """
    F = feature_matrix(problem, t).tocoo()
    P = _posteriors(problem, w)

    def data_part(zz):
        change = np.bincount(F.row, weights=np.expm1(zz * F.data) * P[F.row, F.col],
                             minlength=problem.n_contexts)                  # T_{w+z e_t}/T_w - 1
        return float(np.log1p(change) @ problem.ctx_count)
    return _q(problem, C, w, t, z) + C * _per_z(data_part, z)


def cd_upper_bound(problem, C, w, t, z):
    """Abar_t^CD(z) of eq. (39), the O(1) upper bound of A_t^CD used by test (38)."""
    F, _, weight = _expected(problem, w, t)
    E = float(np.dot(weight, F.data))
    f_t = float(F.data.max())
    omega = float(problem.ctx_count[np.unique(F.row)].sum())         # N Ptilde_t, eq. (40)
    z = np.asarray(z, dtype=np.float64)
    return _q(problem, C, w, t, z) + C * omega * np.log1p(np.expm1(z * f_t) * E / (f_t * omega))


# ============================================================ shared set-up


def _rows(problem):
    return (problem.ctx_ptr, problem.ctx_pred, problem._val_or_empty(),
            problem.map_ptr, problem.map_label, problem.map_feat)


def _cols(problem):
    return (problem.col_ptr, problem.col_ctx, np.empty(0) if problem.col_val is None else problem.col_val)


def check_nonnegative(problem, method):
    """Assumption (5): every IS surrogate needs f_t(x, y) >= 0."""
    if problem.has_negative_features():
        bad = float(problem.ctx_val.min())
        raise InvalidInputError(
            f"{method} needs non-negative feature values f_t(x,y) >= 0 (Huang et al. 2010, assumption (5)), "
            f"but the data has the value {bad:g}; shift or rescale the features, or use a solver without "
            f"this assumption (cd, tron, lbfgs)")


class SequentialData:
    """What Algorithm 1 reads: column access t -> (x, y) (section 4.1) and the f-scale constants.

    feat_pred[t], feat_label[t]: the one (predicate, label) pair of feature t
    (-1 if t never occurs); pred_max[p] = f_t^# (eq. 14) and
    pred_count[p] = N Ptilde_t (eq. 40) of the features on predicate p.
    Binary LR fits the same mould (label +1 only, Huang et al. section 5.2);
    see :func:`loglin.solvers.primal_cd.logistic_as_sequential_data`.
    """

    def __init__(self, rows, cols, feat_pred, feat_label, ctx_count, emp, reg, C, n_labels, negative):
        self.rows, self.cols = rows, cols
        self.feat_pred, self.feat_label = feat_pred, feat_label
        self.ctx_count, self.emp, self.reg, self.C = ctx_count, emp, reg, float(C)
        self.n_contexts, self.n_labels = len(rows[0]) - 1, n_labels
        self.negative = negative
        col_ptr, col_ctx, col_val = cols
        P = len(col_ptr) - 1
        pred_of = np.repeat(np.arange(P), np.diff(col_ptr))
        self.pred_count = np.bincount(pred_of, weights=ctx_count[col_ctx], minlength=P)
        self.pred_max = np.ones(P)
        if len(col_val):
            self.pred_max = np.zeros(P)
            np.maximum.at(self.pred_max, pred_of, col_val)
        empty = np.diff(col_ptr)[np.maximum(feat_pred, 0)] == 0
        self.feat_pred[empty] = -1

    @property
    def total_count(self):
        return float(self.ctx_count.sum())

    @classmethod
    def from_maxent(cls, problem, C, method):
        n_occ = np.diff(problem.occ_ptr)
        if np.any(n_occ > 1):
            t = int(np.argmax(n_occ > 1))
            raise InvalidInputError(
                f"{method} updates S_w(x,y) by columns and needs predicate x label features, but feature {t} "
                f"appears under {int(n_occ[t])} (predicate, label) pairs; use gis, iis, tron or lbfgs")
        feat_pred = np.full(problem.n_features, -1, dtype=np.int64)
        feat_label = np.zeros(problem.n_features, dtype=np.int64)
        has = n_occ == 1
        entry = problem.occ_entry[problem.occ_ptr[:-1][has]]
        feat_pred[has] = problem.map_pred[entry]
        feat_label[has] = problem.map_label[entry]
        return cls(_rows(problem), _cols(problem), feat_pred, feat_label, problem.ctx_count, problem.emp,
                   problem.reg, C, problem.n_labels, problem.has_negative_features())


def counters_dict(counters) -> dict:
    return {name: int(v) for name, v in zip(ss.COUNTER_NAMES, counters)}


# ================================================================ Algorithm 1


def sequential_update(data, w, rng, method, *, shuffle=False, newton_tol=NEWTON_TOL, gamma=0.001,
                      beta=0.5, use_bound=True):
    """Algorithm 1: for t = 1..n solve A_t(z_t) at the current w, w_t += z_t, update S_w, T_w.

    ``data`` is a :class:`SequentialData`; ``method`` is ``ks.SCGIS`` or
    ``ks.CD``. With ``shuffle`` the order of the n sub-problems is a fresh
    random permutation each outer iteration (section 4.4). S_w and T_w are
    built once (X*K exps) and then kept by eqs. (18)-(19); T_w is re-summed
    from S_w at the start of each outer iteration (O(XK), no exp) to stop
    drift. The upper-bound test (38) needs assumption (5) and is switched off
    for data with negative values.
    """
    use_bound = bool(use_bound) and not data.negative
    S = np.empty((data.n_contexts, data.n_labels))          # context-major, see kernels.scaled_scores
    R = ss.context_records(data.ctx_count)                   # T_w(x), its guard, c(x)
    ss.init_scores(w, data.rows, S, R)
    first = True
    tol = newton_tol * data.C * data.total_count
    n = len(w)
    while True:
        counters = np.zeros(len(ss.COUNTER_NAMES), dtype=np.int64)
        if first:
            counters[ss.N_EXP] += S.size
            first = False
        ss.resum_totals(S, R)
        order = rng.permutation(n) if shuffle else np.arange(n)
        ks.sequential_pass(method, order, w, data.reg, data.C, data.emp, tol, gamma, beta, use_bound,
                           data.rows, data.cols, data.feat_pred, data.feat_label, data.pred_max,
                           data.pred_count, S, R, counters)
        yield Step(w=w, counters=counters_dict(counters))


# ================================================================ Algorithm 2


def parallel_update(objective, w, rng, surrogate, *, newton_tol=NEWTON_TOL):
    """Algorithm 2: from one P_w solve all n sub-problems A_t(z_t), then w += z.

    ``surrogate`` is "gis" (needs only sum c P f_t, eq. 41: O(1) per Newton
    step) or "iis" (O(l-bar) exps per Newton step, eq. 28).
    """
    problem, C = objective.problem, objective.C
    check_nonnegative(problem, surrogate)
    rows = _rows(problem)
    X, K = problem.n_contexts, problem.n_labels
    fsharp_xy = np.empty((X, K) if surrogate == "iis" else (0, K))
    f_sharp = ks.feature_sums(K, rows, fsharp_xy)           # f^# = max f^#(x, y)
    prob = np.empty((X, K) if surrogate == "iis" else (0, K))
    tol = newton_tol * C * problem.total_count
    z = np.empty(problem.n_features)
    while True:
        counters = np.zeros(len(ss.COUNTER_NAMES), dtype=np.int64)
        _, expect = objective.loss_and_expectation(w, prob, surrogate == "gis")     # eq. (41): the objective's pass
        counters[ss.N_EXP] += 2 * X * K                     # softmax, then P itself
        counters[ss.N_LOG] += X
        if surrogate == "gis":
            ks.gis_pass(w, problem.reg, C, problem.emp, expect, f_sharp, tol, z, counters)
        else:
            ks.iis_pass(w, problem.reg, C, problem.emp, problem.occ_ptr, problem.occ_entry, problem.map_pred,
                        problem.map_label, _cols(problem), problem.ctx_count, prob, fsharp_xy, f_sharp, tol,
                        z, counters)
        w += z
        yield Step(w=w, counters=counters_dict(counters))


# ================================================================== solvers


def gis(objective, w, rng, newton_tol: float = NEWTON_TOL):
    yield from parallel_update(objective, w, rng, "gis", newton_tol=newton_tol)


def iis(objective, w, rng, newton_tol: float = NEWTON_TOL):
    yield from parallel_update(objective, w, rng, "iis", newton_tol=newton_tol)


def scgis(objective, w, rng, newton_tol: float = NEWTON_TOL, shuffle: bool = False):
    check_nonnegative(objective.problem, "scgis")
    data = SequentialData.from_maxent(objective.problem, objective.C, "scgis")
    yield from sequential_update(data, w, rng, ks.SCGIS, shuffle=shuffle, newton_tol=newton_tol)
