"""CoCoA+ over sentence shards of a chain CRF or parser: online EG on each shard's local subproblem (issue 19).

The frame of :mod:`loglin.scale.cocoa` (Ma, Smith, Jaggi et al. 2015, section 3: local subproblems G_k^{sigma'},
updates added, sigma' = K) with the part-based EG of Collins et al. 2008 (Figures 2-3) as the local solver, on
the structured dual of :mod:`loglin.structured.dual` (one code for every structure the shards hold: chain, tree).

Collins' dual (to be minimized), eq. (4) with C' = 1/C:  Q(u) = sum_i c_i H(u_i) + C/2 ||w(u)||^2,
w(u) = sum_k w_k(u_[k]), w_k the part of shard k's sentences. When shard k moves u_[k] and its part by Delta_k,

    Q(u + delta) - Q(u) = sum_k [H change of shard k] + C w(u).sum_k Delta_k + C/2 ||sum_k Delta_k||^2
                       <= sum_k [ H change of shard k + C w(u).Delta_k + sigma' C/2 ||Delta_k||^2 ]

for sigma' >= K (||sum_k Delta_k||^2 <= K sum_k ||Delta_k||^2): each shard lowers its own term and Q never
rises. Shard k's term is, up to a constant, Collins' Q of its own sentences at C_local = sigma' C with w(u)
read as z = w(u) / sigma' + Delta_k: sigma' C/2 ||w(u)/sigma' + Delta_k||^2 = const + C w(u).Delta_k +
sigma' C/2 ||Delta_k||^2, and its gradient in u_i is that of the paper's step with C_local z = C (w(u) +
sigma' Delta_k). So the unchanged compiled EG pass (its exact dual-change test included) runs on the local
subproblem when given C_local and z (:func:`loglin.structured.eg.passes_against`); with K = 1 a round is an
online EG epoch in a random permutation order.

A round: the driver sends w(u); every shard runs ``local_passes`` EG passes and returns its part w_k and its
entropy terms; the driver adds the parts in shard order (so w(u) is the sum of the shards' parts, not a
running sum of changes), w = C w(u) (Figure 3's primal), and the global dual D = -C Q is exact: the
duality gap f(w) - D(u) is reported and stops the run. Each shard keeps its per-sentence rates (section 7:
chosen on 10% of its sentences against the first round's context, halved on a failed step, x1.05 after a
step, floored at eta_ini / RATE_RANGE) and recomputes its part from its part variables every REFRESH_EVERY
rounds (rounding drift of the incremental updates).
"""
from __future__ import annotations

import math

import numpy as np

from .. import duality
from ..errors import InvalidInputError
from ..solvers.base import Step
from ..solvers.eg import REFRESH_EVERY
from ..structured.dual import PartDualState
from ..structured.eg import MAX_TRIAL, RATE_RANGE, choose_eta_against, passes_against

HELPER = "cocoa-eg"


class LocalEG:
    """Shard k's part variables and the EG passes on its local subproblem (module docstring)."""

    def __init__(self, part, sigma, seed, local_passes, max_trial):
        objective = part.objective
        self.problem = objective.problem
        self.C = float(objective.C)
        self.sigma = float(sigma)
        self.local_passes = int(local_passes)
        self.max_trial = int(max_trial)
        self.rng = np.random.default_rng(int(seed))
        self.state = self.rates = None
        self.floor, self.rounds = 0.0, 0

    def summary(self):
        return {"rows": int(self.problem.n_sentences)}

    def start(self, w0):
        """u_i = p(y | x_i; w0) from a non-zero w0 (a warm start), else the papers' start near the gold
        labellings; returns (this shard's part of w(u), its entropy terms)."""
        w0 = np.asarray(w0, dtype=np.float64)
        self.state = PartDualState.from_primal(self.problem, w0) if np.any(w0) else PartDualState(self.problem)
        return self.state.wu.copy(), self.state.terms_total()

    def round(self, wu, eta):
        """``local_passes`` EG passes against the driver's w(u); returns (part, entropy terms, counters)."""
        C_local = self.sigma * self.C
        context = wu / self.sigma
        visits = 0
        if self.rates is None:
            if eta == "auto":
                eta, visits = choose_eta_against(self.state, C_local, context, self.rng)
            self.rates = np.full(self.state.n_blocks, float(eta))
            self.floor = float(eta) / RATE_RANGE
        _, accepted, trials = passes_against(self.state, C_local, context, self.rates, self.rng, self.local_passes,
                                             self.max_trial, self.floor)
        self.rounds += 1
        if self.rounds % REFRESH_EVERY == 0:
            self.state.refresh()
        counters = {"visits": int(visits + trials), "accepted": int(accepted),
                    "eta_median": float(np.median(self.rates)) if len(self.rates) else 0.0}
        return self.state.wu.copy(), self.state.terms_total(), counters


def local_eg(part, sigma, seed, local_passes, max_trial):
    """The factory :meth:`loglin.scale.shards.ShardPart.attach` calls on each shard."""
    return LocalEG(part, sigma, seed, local_passes, max_trial)


def cocoa_eg(objective, w, rng, local_passes: int = 1, sigma: float | None = None, eta="auto",
             max_trial: int = MAX_TRIAL):
    """CoCoA+ on a sharded chain CRF or parser objective (:func:`loglin.scale.sharded`, loss "ll"): one round
    per outer iteration, reporting the global dual objective. Options: local_passes (H, EG passes per shard
    per round), sigma (sigma'; default K, the number of shards; a smaller value is unsafe), eta (the initial
    per-sentence rate, or "auto": Collins et al.'s choice on each shard), max_trial (halvings per visit)."""
    duality.require_regularized(objective, "cocoa")
    if getattr(objective, "pinned", None) is not None:
        raise InvalidInputError("cocoa solves the dual, which has no weights held at 0 (pinned transitions); "
                                "use lbfgs")
    if int(local_passes) < 1:
        raise InvalidInputError(f"local_passes must be at least 1, got {local_passes}")
    if int(max_trial) < 1:
        raise InvalidInputError(f"max_trial must be at least 1, got {max_trial}")
    if eta != "auto" and not float(eta) > 0:
        raise InvalidInputError(f"eta must be positive or 'auto', got {eta!r}")
    shards = objective.n_shards
    sigma = float(shards if sigma is None else sigma)
    if not sigma > 0:
        raise InvalidInputError(f"sigma must be positive, got {sigma}")
    C = float(objective.C)
    seeds = rng.integers(0, 2 ** 63 - 1, size=shards)
    summaries = objective.each_shard("attach", [(HELPER, f"{__name__}:local_eg", sigma, int(s), int(local_passes),
                                                 int(max_trial)) for s in seeds])
    sentences = sum(s["rows"] for s in summaries)
    wu, _ = _added(objective.on_shards("helper", HELPER, "start", np.array(w, dtype=np.float64)))
    visits = 0
    while True:
        results = objective.on_shards("helper", HELPER, "round", wu, eta)
        wu, terms = _added(results)
        counters = {"accepted": 0}
        for *_, c in results:
            visits += c["visits"]
            counters["accepted"] += c["accepted"]
        counters.update(effective_iterations=visits / sentences, shards=shards,
                        eta_median=float(np.median([c["eta_median"] for *_, c in results])))
        w[:] = C * wu                                             # Figure 3's primal: w = C w(u)
        dual = -C * (terms + 0.5 * C * float(wu @ wu))            # D = -C Q, eq. (4)
        yield Step(w=w, dual=lambda d=dual: d, counters=counters)


def _added(results):
    """(sum of the shards' parts of w(u) in shard order, fsum of their entropy terms)."""
    wu = None
    for part, *_ in results:
        wu = part.copy() if wu is None else wu + part
    return wu, math.fsum(r[1] for r in results)
