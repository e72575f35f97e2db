"""CoCoA+ over shards: dual coordinate descent on each shard's local subproblem, updates added (issue 19).

Ma, Smith, Jaggi, Jordan, Richtárik & Takáč 2015, "Adding vs. Averaging in Distributed Primal-Dual
Optimization" (CoCoA+), section 3; Smith et al. 2018 (JMLR), "CoCoA: A General Framework for
Communication-Efficient Distributed Optimization". The local solver is the dual CD of Yu, Huang & Lin
2011 (:mod:`loglin.solvers.dual_cd`, its compiled passes unchanged).

The local subproblem, in LIBLINEAR's scale (:mod:`loglin.duality`; the paper's lambda n = 1). The dual

    D(alpha) = -1/2 ||w(alpha)||^2 + sum_i C_i H(alpha_i / C_i),   w(alpha) = sum_k X_k^T (y_k o alpha_[k])

(Maxent: the simplex-scaled beta and w(beta) = sum_{x,y} (C c(x, y) - beta_{x,y}) f(x, y), eq. (39)) changes,
when shard k moves alpha_[k] by delta_[k] and w by u_k = X_k^T (y_k o delta_[k]) (Maxent: -sum delta f), by

    -w^T sum_k u_k - 1/2 ||sum_k u_k||^2 + entropy changes
    >= sum_k [ -w^T u_k - sigma'/2 ||u_k||^2 + entropy change of shard k ]

since ||sum_k u_k||^2 <= K sum_k ||u_k||^2 (Cauchy-Schwarz) whenever sigma' >= K: the separable lower
bound whose k-th term is the paper's data-local subproblem G_k^{sigma'}(delta_[k]; w, alpha_[k]) (section 3;
sigma' = gamma K is its "safe" choice, here gamma = 1: adding). Maximizing the sum of the G_k therefore
never lowers D, and each shard maximizes its own term alone. On shard k, G_k is Yu et al.'s dual with w
replaced by v = w + sigma' u_k and the quadratic term scaled by sigma': the one-variable sub-problem (18)
has a = sigma' Q_ii and b = y_i v^T x_i. Scaling the shard's feature values by sqrt(sigma') and running the
unchanged passes on v / sqrt(sigma') gives exactly that (a = sigma' Q_ii, b = y_i x_i^T v, and the pass's
update of v / sqrt(sigma') by sqrt(sigma') z y_i x_i is v += sigma' z y_i x_i). With one shard sigma' = 1
and a round is a plain pass of ``cddual``.

A round: the driver sends w; every shard runs ``local_passes`` dual CD passes on G_k from delta = 0 and
returns u_k (dense, computed from delta itself, so no cancellation of v - w); the driver adds the u_k in
shard order to w. The global duality gap P(w) - D(alpha) is reported every round: P from the sharded
objective, D = -1/2 ||w||^2 + the shards' entropy sums. With K > 1 the rounds needed grow with the
spectral norm of the shards' data (the paper's sigma_k): on n >> d data such as a9a far more rounds than
passes of one-shard dual CD (docs/decisions/0022).
"""
from __future__ import annotations

import math

import numpy as np

from .. import duality
from ..errors import InvalidInputError
from ..kernels import dual_cd as dk
from ..solvers import dual_cd as cd
from ..solvers.base import Step

HELPER = "cocoa"


class LocalDualCD:
    """Shard k's dual variables and the dual CD passes on its subproblem G_k^{sigma'} (module docstring)."""

    def __init__(self, part, sigma, seed, local_passes, options):
        objective = part.objective
        self.problem = p = objective.problem
        self.kind = "binary" if hasattr(p, "X") else "maxent"
        self.sigma = float(sigma)
        self.local_passes = int(local_passes)
        self.rng = np.random.default_rng(int(seed))
        self.xi, self.max_newton = options["xi"], options["max_newton"]
        floor = min(options["inner_eps_min"], options["eps"]) if options["eps"] > 0 else options["inner_eps_min"]
        self.tol = cd.InnerTolerance(options["inner_eps"], floor)
        root = math.sqrt(self.sigma)
        self.root = root
        if self.kind == "binary":
            X = p.X
            self.data = X.data if self.sigma == 1.0 else X.data * root     # sqrt(sigma') x_i (module docstring)
            self.qdiag = None
        else:
            self.C = float(objective.C)
            values = p.ctx_val if p.ctx_val is not None else np.ones(len(p.ctx_pred))
            self.values = p._val_or_empty() if self.sigma == 1.0 else values * root
            self.max_pairs = _max_pairs(options["max_pairs"], p.n_labels)
            self.general = not duality.single_entry_features(p)
            self.scratch = cd.GeneralScratch(p) if self.general else None

    def summary(self):
        return {"rows": self.problem.n_instances if self.kind == "binary" else self.problem.n_contexts}

    # ---------------------------------------------------------------- start
    def start(self, w0):
        """Dual variables from w0 (a warm start: the optimality conditions at w0) or the papers' initial
        point; returns this shard's part of w(alpha) (the driver's w is the sum of the parts)."""
        w = np.array(w0, dtype=np.float64)          # the *_state functions overwrite it with the shard's part
        if self.kind == "binary":
            self.cold = cd.lr_starts_cold(w)
            if self.cold:       # as cddual: no set-up pass; the first pass builds Q_ii (of the scaled rows) and w
                self.alpha, self.alpha_c, self.active, self.qdiag = cd.lr_cold_state(self.problem, w)
                self.log_odds = np.zeros_like(self.alpha)
                return w
            self.alpha, self.alpha_c, self.active, qdiag = cd.lr_state(self.problem, w)
            self.log_odds = cd.lr_log_odds(self.alpha, self.alpha_c, self.active)
            self.qdiag = qdiag if self.sigma == 1.0 else self.sigma * qdiag
        else:
            self.beta, self.active = cd.maxent_state(self.problem, self.C, w)
        return w

    # ---------------------------------------------------------------- one round
    def round(self, w):
        """``local_passes`` passes of dual CD on G_k^{sigma'} from delta = 0 at the driver's w; returns
        (u_k, counters)."""
        v = w / self.root if self.root != 1.0 else w.copy()
        if self.kind == "binary":
            if self.cold:       # the shard's part of w holds no alpha yet: the round adds all of it
                before, before_c = np.zeros_like(self.alpha), np.maximum(self.problem.cost, 0.0)
            else:
                before, before_c = self.alpha.copy(), self.alpha_c.copy()
            counters = self._lr_passes(v)
            # the move on the side the kernel moved (its smaller distance), as in lr_dual_pass
            delta = np.where(before <= before_c, self.alpha - before, before_c - self.alpha_c)
            X = self.problem.X
            u = np.asarray(X.T @ (self.problem.y * delta)).ravel()
        else:
            before = self.beta.copy()
            counters = self._maxent_passes(v)
            p = self.problem
            u = dk.maxent_w_of_beta(p.n_features, 0.0, p.ctx_count, p.obs_ptr, p.obs_label, p.obs_count, p.ctx_ptr,
                                    p.ctx_pred, p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat,
                                    self.beta - before, bool(getattr(p, "dense_pairs", False)))   # -sum delta f
        return u, counters

    def _lr_passes(self, v):
        p, X = self.problem, self.problem.X
        newton = changed = 0
        vmax, stalled = 0.0, True
        for _ in range(self.local_passes):
            used = self.tol.value
            kernel = dk.lr_first_pass if self.cold else dk.lr_dual_pass
            self.cold = False
            steps, violation, moved = kernel(self.rng.permutation(self.active), X.indptr, X.indices,
                                             self.data, p.y, p.cost, self.qdiag, self.alpha, self.alpha_c,
                                             self.log_odds, v, used, self.xi, self.max_newton, dk.LOG_ODDS)
            self.tol.after_pass(steps, len(self.active))
            newton, changed, vmax = newton + steps, changed + moved, max(vmax, violation)
            stalled = stalled and moved == 0 and used <= self.tol.floor
        return {"newton_steps": int(newton), "updated": int(changed), "max_violation": float(vmax),
                "inner_eps": self.tol.value, "stalled": bool(stalled or len(self.active) == 0)}

    def _maxent_passes(self, v):
        p = self.problem
        args = (p.ctx_ptr, p.ctx_pred, self.values, p.map_ptr, p.map_label, p.map_feat, self.beta, v)
        pairs = newton = moved_total = 0
        vmax, stalled = 0.0, True
        for _ in range(self.local_passes):
            order = self.rng.permutation(self.active)
            used = self.tol.value
            if self.general:
                s = self.scratch
                count, steps, violation, moved = dk.maxent_dual_pass_general(
                    order, *args, used, self.xi, self.max_newton, self.max_pairs, s.slot, s.touched, s.F)
            else:
                count, steps, violation, moved = dk.maxent_dual_pass(order, *args, used, self.xi, self.max_newton,
                                                                     self.max_pairs)
            self.tol.after_pass(moved, len(self.active))
            pairs, newton, moved_total = pairs + count, newton + steps, moved_total + moved
            vmax = max(vmax, violation)
            stalled = stalled and count == 0 and used <= self.tol.floor
        return {"pair_updates": int(pairs), "newton_steps": int(newton), "contexts_moved": int(moved_total),
                "max_violation": float(vmax), "inner_eps": self.tol.value, "stalled": bool(stalled)}

    def entropy(self):
        """This shard's term of D: sum_i C_i H(alpha_i / C_i) (Maxent: sum_x C c(x) H(beta_x / (C c(x))))."""
        if self.kind == "binary":
            return float(dk.lr_entropy(self.alpha, self.alpha_c, self.problem.cost))
        return float(dk.maxent_entropy(self.beta, self.C, self.problem.ctx_count))


def _max_pairs(max_pairs, n_labels):
    cap = cd.MAX_PAIRS_PER_LABEL * n_labels if max_pairs is None else int(max_pairs)
    if cap < 1:
        raise InvalidInputError(f"max_pairs must be at least 1, got {max_pairs}")
    return cap


def local_dual_cd(part, sigma, seed, local_passes, options):
    """The factory :meth:`loglin.scale.shards.ShardPart.attach` calls on each shard."""
    return LocalDualCD(part, sigma, seed, local_passes, options)


def cocoa(objective, w, rng, local_passes: int = 1, sigma: float | None = None, eps: float = 0.0,
          xi: float = cd.XI, max_newton: int = cd.MAX_NEWTON, inner_eps: float = cd.INNER_EPS0,
          inner_eps_min: float = cd.INNER_EPS_MIN, max_pairs=None):
    """CoCoA+ on a sharded Maxent or LR objective (:func:`loglin.scale.sharded`): one round per outer
    iteration, reporting the global dual objective. Options: local_passes (H, dual CD passes per shard per
    round), sigma (sigma'; default K, the number of shards: adding with gamma = 1; a smaller value is unsafe),
    eps (stop when the largest dual violation met in a round is at most eps; default 0: the driver's gap
    test decides), and the local dual CD's xi, max_newton, inner_eps, inner_eps_min, max_pairs
    (:func:`loglin.solvers.dual_cd.cddual`)."""
    duality.require_regularized(objective, "cocoa")
    cd._check_options(eps, xi, max_newton, inner_eps, inner_eps_min)
    if int(local_passes) < 1:
        raise InvalidInputError(f"local_passes must be at least 1, got {local_passes}")
    shards = objective.n_shards
    sigma = float(shards if sigma is None else sigma)
    if not sigma > 0:
        raise InvalidInputError(f"sigma must be positive, got {sigma}")
    options = dict(eps=eps, xi=xi, max_newton=max_newton, inner_eps=inner_eps, inner_eps_min=inner_eps_min,
                   max_pairs=max_pairs)
    seeds = rng.integers(0, 2 ** 63 - 1, size=shards)
    objective.each_shard("attach", [(HELPER, f"{__name__}:local_dual_cd", sigma, int(s), int(local_passes), options)
                                    for s in seeds])
    start = np.array(w, dtype=np.float64)
    w[:] = 0.0
    for part in objective.on_shards("helper", HELPER, "start", start):
        w += part
    while True:
        results = objective.on_shards("helper", HELPER, "round", w)
        counters = {}
        for u, c in results:            # added in shard order: the same w on every backend
            w += u
            for key, value in c.items():
                counters[key] = max(counters.get(key, 0), value) if key in ("max_violation", "inner_eps") \
                    else counters.get(key, 0) + value
        stalled = counters.pop("stalled") == len(results)
        counters["shards"] = shards

        def dual():                     # off the clock, right after the round: -1/2 ||w||^2 + the shards' entropies
            return -0.5 * float(w @ w) + math.fsum(objective.on_shards("helper", HELPER, "entropy"))

        yield Step(w=w, dual=dual, done=bool(stalled or counters["max_violation"] <= eps), counters=counters)
