"""L1-regularized logistic regression, no bias: loglin newglmnet / owlqn vs LIBLINEAR -s 6 and
scikit-learn's liblinear (L1), on a9a and the binary news20 split of loglin.experiments.yu2011.

    python -m benchmarks.l1 [--repeats 3] [--quick] [--C 1]

F(w) = ||w||_1 + C sum log(1 + exp(-y w.x)) (LIBLINEAR -s 6's scale, loglin --penalty l1).
Measured as benchmarks/binary.py measures: loglin's solver generator driven directly with the
clocks around each outer iteration (time to eps = first iterate within eps of P*); the black
boxes as a sweep over their stopping tolerance (time to eps = the fastest call that reached
it); tools alternate, order rotated each repeat, one thread. P* = a tight newglmnet run,
lowered to any smaller objective seen.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from . import common
from .binary import HALF_DECADES, liblinear_fit, run_ours

STOP_BELOW = 1e-7
MAX_ITER = {"newglmnet": 200, "owlqn": 5000}
SWEEP_BUDGET = 30.0


def sklearn_l1_fit(X, y, C):
    from sklearn.linear_model import LogisticRegression

    def fit(tol):
        model = LogisticRegression(penalty="l1", solver="liblinear", C=C, fit_intercept=False, tol=tol,
                                   max_iter=100000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = common.now()
            model.fit(X, y)
            t1 = common.now()
        w = np.asarray(model.coef_[0], dtype=np.float64) * (1 if model.classes_[1] == 1 else -1)
        return (t1[0] - t0[0], t1[1] - t0[1]), w, None
    return fit


def bench(name, C, repeats, quick):
    import numba
    from loglin.binary import binary_problem
    from loglin.experiments.datasets import lr_data
    from loglin.penalty import penalized
    from loglin.solvers.base import minimize
    numba.set_num_threads(1)
    Xtr, ytr, _, _ = lr_data(name, quick=quick)
    X, y = Xtr.tocsr(), np.asarray(ytr, dtype=np.float64)
    obj = penalized(binary_problem(X, y, C=C).objective(), "l1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_ref = minimize(obj, "newglmnet", tol=1e-10, max_iter=500).f
        minimize(obj, "owlqn", max_iter=2)
    sweeps = {"LIBLINEAR -s 6": liblinear_fit(X, y, C, 6), "sklearn liblinear (l1)": sklearn_l1_fit(X, y, C)}
    for fit in sweeps.values():
        fit(HALF_DECADES[0])
    stop = 1e-5 if quick else STOP_BELOW
    jobs = [(f"loglin {s}", "trace", lambda rep, s=s: run_ours(obj, s, p_ref, rep, stop, MAX_ITER[s]))
            for s in MAX_ITER]
    for tool, fit in sweeps.items():
        jobs.append((tool, "sweep", lambda rep, f=fit: common.run_sweep(
            f, obj.fun, HALF_DECADES, stop_below=(p_ref, stop), time_budget=SWEEP_BUDGET)[0]))
    runs = {tool: [] for tool, _, _ in jobs}
    for rep in range(repeats):
        for tool, kind, job in jobs[rep % len(jobs):] + jobs[:rep % len(jobs)]:
            out = job(rep)
            runs[tool].append(out[0] if kind == "trace" else out)
    p_star = min([p_ref] + [p[2] for r in runs.values() for points in r for p in points])
    kinds = {tool: kind for tool, kind, _ in jobs}
    summary = {tool: common.summarize_tool(r, p_star, common.LEVELS, kinds[tool]) for tool, r in runs.items()}
    return {"data": name, "C": C, "n": X.shape, "p_star": p_star, "summary": summary}


def markdown(results, load0):
    lines = ["# L1 logistic regression: loglin vs LIBLINEAR -s 6", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by `python -m benchmarks.l1`; "
             f"load average at start {load0}. CPU seconds to a relative distance eps from P* "
             f"(median of the repeats), and the ratio to LIBLINEAR -s 6.", ""]
    for res in results:
        s = res["summary"]
        lines += [f"## {res['data']} (C = {res['C']:g}, {res['n'][0]:,} x {res['n'][1]:,}, P* = {res['p_star']:.10g})",
                  "", "| tool | " + " | ".join(f"cpu to {e:.0e}" for e in common.LEVELS) + " | wall to 1e-04 |",
                  "|---|" + "---|" * (len(common.LEVELS) + 1)]
        ref = s["LIBLINEAR -s 6"]["cpu"]
        for tool, by_clock in s.items():
            cells = []
            for e in common.LEVELS:
                mine = by_clock["cpu"][common.level_key(e)]["median"]
                theirs = ref[common.level_key(e)]["median"]
                ratio = f" ({common.fmt_ratio(mine / theirs)})" if mine and theirs else ""
                cells.append(common.fmt_s(mine) + ratio)
            cells.append(common.fmt_s(by_clock["wall"][common.level_key(1e-4)]["median"]))
            lines.append(f"| {tool} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="small slices (smoke test)")
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--data", nargs="+", default=["a9a", "news20"])
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    load0 = common.loadavg()
    import scipy.optimize  # noqa: F401  (loads SciPy's OpenBLAS before we limit it)
    import sklearn.linear_model  # noqa: F401
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1, user_api="blas"):       # one thread for every tool, as benchmarks/run
        results = [bench(name, args.C, args.repeats, args.quick) for name in args.data]
    common.write("l1", markdown(results, load0), {"results": results, "machine": common.machine()}, args.out)


if __name__ == "__main__":
    main()
