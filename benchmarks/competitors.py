"""The tools we race, each measured the way that is fair to it.

Two kinds of measurement (see benchmarks/README.md):

* ``trace`` tools (our solvers, SciPy's L-BFGS-B on our objective) give us
  every iterate: we record (training seconds, objective) per iteration and
  read off the first time the objective is within epsilon of P*. Evaluation
  happens outside the timed region, as in the papers.
* ``sweep`` tools (LIBLINEAR, scikit-learn) are black boxes: we run them with
  a ladder of stopping tolerances, time each call, recompute the objective of
  the weights they return with *our* kernel, and for each epsilon take the
  fastest call that reached it.

Every runner returns a :class:`Run`: a curve of (seconds, objective) points
plus the weights of its tightest point (for test accuracy).
"""
from __future__ import annotations

import gc
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from loglin.binary import binary_problem
from loglin.solvers.base import minimize

# Stopping tolerances tried for the black boxes: half decades from 1e-1 to 1e-9.
FULL_SWEEP = tuple(10.0 ** (-k / 2) for k in range(2, 19))
QUICK_SWEEP = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-9)
TIGHT_TOL = 1e-10          # our solvers and SciPy: stop only when stalled or ||g|| <= 1e-10 ||g0||


@dataclass
class Run:
    """One measurement of one tool: objective as a function of time."""

    tool: str
    kind: str                                   # "trace" or "sweep"
    points: list = field(default_factory=list)  # (seconds, objective[, tolerance])
    w: np.ndarray | None = None                 # weights of the tightest point
    f: float = float("nan")                     # objective of w (our kernel)
    info: dict = field(default_factory=dict)

    def time_to(self, p_star: float, eps: float):
        """First (trace) or fastest (sweep) time whose relative difference is <= eps."""
        times = [p[0] for p in self.points if (p[1] - p_star) / abs(p_star) <= eps]
        if not times:
            return None
        return times[0] if self.kind == "trace" else min(times)


class Bench:
    """The data and objective shared by all runners (one per thread setting)."""

    def __init__(self, X, y, C):
        self.X, self.y, self.C = X, y, float(C)
        self.problem = binary_problem(X, y, C=C)
        self.objective = self.problem.objective()   # f(w) in LIBLINEAR's scale

    def fun(self, w):
        return float(self.objective.fun(np.asarray(w, dtype=np.float64)))


def _quiet_collect():
    gc.collect()


# --- our solvers ------------------------------------------------------------------------------

def run_ours(bench: Bench, solver: str, label: str, max_iter: int = 100000) -> Run:
    """minimize(..., tol=1e-10): the trace holds training seconds and f per iteration."""
    _quiet_collect()
    res = minimize(bench.objective, solver, tol=TIGHT_TOL, max_iter=max_iter)
    recs = res.trace.records
    points = [(r["seconds"], r["objective"]) for r in recs]
    info = {"iterations": res.iterations, "train_seconds": res.train_seconds, "stop_reason": res.stop_reason}
    if solver == "tron":
        info["cg_iterations"] = int(sum(r.get("cg_iterations") or 0 for r in recs))
    if solver == "lbfgs":
        info["fun_grad_evaluations"] = int(sum(r.get("line_search_evals") or 0 for r in recs)) + 1
    return Run(label, "trace", points, res.w.copy(), bench.fun(res.w), info)


def run_scipy(bench: Bench, label: str = "scipy L-BFGS-B") -> Run:
    """SciPy's L-BFGS-B on our fused fun_grad (memory 10, like ours).

    The callback stores (elapsed seconds, f) and its own cost is subtracted.
    """
    from scipy.optimize import minimize as sp_minimize

    obj = bench.objective
    evals = [0]

    def fun_grad(w):
        evals[0] += 1
        return obj.fun_grad(w, keep_cache=False)

    points = []
    excluded = [0.0]
    start = [0.0]

    def callback(intermediate_result):
        t0 = time.perf_counter()
        points.append((t0 - start[0] - excluded[0], float(intermediate_result.fun)))
        excluded[0] += time.perf_counter() - t0

    w0 = np.zeros(obj.n)
    f0 = bench.fun(w0)
    _quiet_collect()
    start[0] = time.perf_counter()
    res = sp_minimize(fun_grad, w0, jac=True, method="L-BFGS-B", callback=callback,
                      options={"maxcor": 10, "maxiter": 100000, "ftol": 0.0, "gtol": 0.0})
    points.insert(0, (0.0, f0))
    info = {"iterations": int(res.nit), "fun_grad_evaluations": evals[0], "stop_reason": str(res.message)}
    return Run(label, "trace", points, res.x.copy(), bench.fun(res.x), info)


# --- black boxes ------------------------------------------------------------------------------

class Liblinear:
    """LIBLINEAR -s 0 (primal LR; line-search Newton-CG since 2.40), no bias."""

    name = "LIBLINEAR -s 0"

    def __init__(self, bench: Bench):
        from liblinear.liblinearutil import problem
        self.bench = bench
        self.prob = problem(np.asarray(bench.y, dtype=np.float64), bench.X)   # converted once, untimed

    def fit(self, eps):
        from liblinear.liblinearutil import parameter, train
        param = parameter(f"-s 0 -c {self.bench.C!r} -e {eps!r} -q")
        _quiet_collect()
        t0 = time.perf_counter()
        model = train(self.prob, param)
        seconds = time.perf_counter() - t0
        coef = model.get_decfun()[0][: self.bench.X.shape[1]]
        w = np.zeros(self.bench.X.shape[1])
        w[: len(coef)] = coef
        positive = self.bench.problem.classes[1]
        if model.get_labels()[0] != positive:     # LIBLINEAR's first label is its +1 side
            w = -w
        return seconds, w


class Sklearn:
    """scikit-learn LogisticRegression(solver="lbfgs", C, fit_intercept=False)."""

    name = "sklearn lbfgs"

    def __init__(self, bench: Bench):
        from sklearn.linear_model import LogisticRegression
        self.bench = bench
        self.cls = LogisticRegression

    def fit(self, tol):
        model = self.cls(solver="lbfgs", C=self.bench.C, fit_intercept=False, tol=tol, max_iter=100000)
        _quiet_collect()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            model.fit(self.bench.X, self.bench.y)
            seconds = time.perf_counter() - t0
        w = np.asarray(model.coef_[0], dtype=np.float64)
        if model.classes_[1] != self.bench.problem.classes[1]:
            w = -w
        return seconds, w


def run_sweep(tool, tolerances) -> Run:
    """Run a black box at every tolerance; objectives are recomputed by our kernel (untimed)."""
    points, best = [], None
    for tol in tolerances:
        seconds, w = tool.fit(tol)
        f = tool.bench.fun(w)
        points.append((seconds, f, tol))
        if tol == min(tolerances):
            best = (w, f)
    w, f = best
    info = {"calls": len(points), "tightest_tolerance": min(tolerances),
            "seconds_at_tightest": points[-1][0] if tolerances[-1] == min(tolerances) else None,
            "tolerances": list(tolerances)}
    return Run(tool.name, "sweep", points, w, f, info)


def test_accuracy(w, X_test, y_test, classes) -> float:
    """Fraction of test rows whose sign(w'x) names the right class (classes[1] is +1)."""
    pred = np.where(X_test @ w > 0, classes[1], classes[0])
    return float(np.mean(pred == y_test))
