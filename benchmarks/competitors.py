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

Every runner returns a :class:`Run`: a curve of (wall seconds, CPU seconds,
objective, tolerance) points plus the weights of its tightest point (for test
accuracy). Wall time is what a user waits; process CPU time is reported too
because it is immune to other jobs on a shared machine.
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


CLOCKS = ("wall", "cpu")     # time.perf_counter and time.process_time


def now():
    """(wall, cpu) seconds; CPU time is immune to other processes on a shared machine."""
    return time.perf_counter(), time.process_time()


@dataclass
class Run:
    """One measurement of one tool: objective as a function of time."""

    tool: str
    kind: str                                   # "trace" or "sweep"
    points: list = field(default_factory=list)  # (wall s, cpu s or None, objective, tolerance or None)
    w: np.ndarray | None = None                 # weights of the tightest point
    f: float = float("nan")                     # objective of w (our kernel)
    info: dict = field(default_factory=dict)

    def time_to(self, p_star: float, eps: float, clock: str = "wall"):
        """First (trace) or fastest (sweep) time whose relative difference is <= eps."""
        c = CLOCKS.index(clock)
        times = [p[c] for p in self.points if (p[2] - p_star) / abs(p_star) <= eps]
        if not times or any(t is None for t in times):
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
    """Collect garbage before a timed region (kept out of the measurement)."""
    gc.collect()


# --- our solvers ------------------------------------------------------------------------------

def run_ours(bench: Bench, solver: str, label: str, threads: int = 1, max_iter: int = 100000) -> Run:
    """minimize(..., tol=1e-10): the trace holds training (wall) seconds and f per iteration.

    A callback adds the process CPU time at every record (only meaningful with 1 thread:
    with more, CPU time adds up the threads). It starts after the driver's untimed set-up
    and subtracts its own cost; it still includes the driver's per-iteration bookkeeping
    (a few microseconds: TRON and L-BFGS report f and ||g|| themselves).
    """
    cpu, state = [], {"start": 0.0, "excluded": 0.0}

    def callback(record):
        t = time.process_time()
        if record["iteration"] == 0:
            state["start"] = t
        cpu.append(t - state["start"] - state["excluded"])
        state["excluded"] += time.process_time() - t
        return False

    _quiet_collect()
    res = minimize(bench.objective, solver, tol=TIGHT_TOL, max_iter=max_iter, callback=callback)
    recs = res.trace.records
    if len(cpu) < len(recs):            # the driver does not call back on its final record
        cpu.append(time.process_time() - state["start"] - state["excluded"])
    points = [(r["seconds"], c if threads == 1 else None, r["objective"], None) for r, c in zip(recs, cpu)]
    info = {"iterations": res.iterations, "train_seconds": res.train_seconds, "stop_reason": res.stop_reason}
    if solver == "tron":
        info["cg_iterations"] = int(sum(r.get("cg_iterations") or 0 for r in recs))
    if solver == "lbfgs":
        info["fun_grad_evaluations"] = int(sum(r.get("line_search_evals") or 0 for r in recs)) + 1
    return Run(label, "trace", points, res.w.copy(), bench.fun(res.w), info)


def run_scipy(bench: Bench, label: str = "scipy L-BFGS-B") -> Run:
    """SciPy's L-BFGS-B on our fused fun_grad (memory 10, like ours).

    The callback stores (wall, cpu, f) and its own cost is subtracted.
    """
    from scipy.optimize import minimize as sp_minimize

    obj = bench.objective
    evals = [0]

    def fun_grad(w):
        evals[0] += 1
        return obj.fun_grad(w, keep_cache=False)

    points = []
    start, excluded = [0.0, 0.0], [0.0, 0.0]

    def callback(intermediate_result):
        t = now()
        points.append((t[0] - start[0] - excluded[0], t[1] - start[1] - excluded[1],
                       float(intermediate_result.fun), None))
        t2 = now()
        excluded[0] += t2[0] - t[0]
        excluded[1] += t2[1] - t[1]

    w0 = np.zeros(obj.n)
    f0 = bench.fun(w0)
    _quiet_collect()
    start[:] = now()
    res = sp_minimize(fun_grad, w0, jac=True, method="L-BFGS-B", callback=callback,
                      options={"maxcor": 10, "maxiter": 100000, "ftol": 0.0, "gtol": 0.0})
    points.insert(0, (0.0, 0.0, f0, None))
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
        t0 = now()
        model = train(self.prob, param)
        t1 = now()
        seconds = (t1[0] - t0[0], t1[1] - t0[1])
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
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = now()
            model.fit(self.bench.X, self.bench.y)
            t1 = now()
            seconds = (t1[0] - t0[0], t1[1] - t0[1])
        w = np.asarray(model.coef_[0], dtype=np.float64)
        if model.classes_[1] != self.bench.problem.classes[1]:
            w = -w
        return seconds, w


def run_sweep(tool, tolerances) -> Run:
    """Run a black box at every tolerance; objectives are recomputed by our kernel (untimed)."""
    points, best = [], None
    _quiet_collect()
    for tol in tolerances:
        seconds, w = tool.fit(tol)
        f = tool.bench.fun(w)
        points.append((seconds[0], seconds[1], f, tol))
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
