"""Binary logistic regression, no bias: loglin's default (``auto``), cddual / tron (eg-acc, and newton where the
features are few enough) vs LIBLINEAR -s 7 / -s 0 and
scikit-learn's lbfgs, liblinear and saga, on a9a (C = 4), news20 (C = 8) and 20 Newsgroups
tf-idf (C = 128).

    benchmarks/run --only a9a news20 20newsgroups [--repeats 3] [--quick]

news20 is the binary split of loglin.experiments.yu2011 (LIBSVM multi-class news20,
classes 1-10 vs 11-20, unit-length rows, a random 4/5 for training, C = 8). 20newsgroups
is the split of the same module (bydate training part, loglin's own tf-idf, comp.* + sci.*
vs the rest); its C = 128 is the five-fold cross-validated choice of yu2011-fig2
(results/yu2011/fig2/summary.md).

``loglin auto`` is what a user gets without --solver: the solver loglin.training.default_solver picks for
this problem and a requested tolerance equal to the level (the path of train() and `loglin train` with
--tol eps); its times at each level are those of that solver's own row (the same trace).

Measurement (one process, tools alternating, order rotated every repeat, 1 thread each):
* loglin (trace): the solver generator is driven directly; the clocks run only around
  each ``next()`` (one outer iteration: a pass of dual CD, a Newton step of TRON), and the
  objective of each iterate is computed outside them. Time to eps = first iterate within eps.
* black boxes (sweep): one call per stopping tolerance, loosest first, each timed around
  ``train()`` / ``fit()``; the objective of the returned weights is recomputed by loglin's
  kernel; time to eps = the fastest call that reached eps. The ladder stops once a call is
  within 1e-7 of the reference optimum (or after a time budget: then "not reached").
P* = a tight TRON run (||g|| <= 1e-12||g0||), lowered to any smaller objective seen.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from . import common

C_OF = {"a9a": 4.0, "news20": 8.0, "20newsgroups": 128.0}
HALF_DECADES = tuple(10.0 ** (-k / 2) for k in range(2, 19))            # 1e-1 ... 1e-9
LIBLINEAR_S7_E = (100, 30, 10, 3, 1, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4)
STOP_BELOW = 1e-7
MAX_PASSES = {"cddual": 400, "tron": 100, "eg-acc": 200, "newton": 100}
SWEEP_BUDGET = 30.0                   # CPU seconds of calls per sweep before giving up
PAIRS = (("loglin cddual", "LIBLINEAR -s 7"), ("loglin tron", "LIBLINEAR -s 0"), ("loglin eg-acc", "LIBLINEAR -s 7"),
         ("loglin newton", "LIBLINEAR -s 0"))
NEWTON_MAX_FEATURES = 2000      # loglin.solvers.newton.MAX_FEATURES: the newton row only where it runs


def load(name, quick):
    from loglin.experiments.datasets import lr_data
    Xtr, ytr, _, _ = lr_data(name, quick=quick)
    return Xtr.tocsr(), np.asarray(ytr, dtype=np.float64)


# ----------------------------------------------------------------------------- loglin
def auto_solver(problem, tol=None):
    """The solver train() / `loglin train` use when none is named, for the requested ``tol``."""
    from loglin.training import default_solver
    return default_solver("binary", problem=problem, tol=tol)


def auto_solvers(problem, levels):
    """{level key: the auto solver at that tolerance} and one line naming them."""
    picks = {common.level_key(e): auto_solver(problem, e) for e in levels}
    names = list(dict.fromkeys(picks.values()))
    if len(names) == 1:
        return picks, names[0]
    return picks, ", ".join(f"{n} at {' / '.join(k for k, v in picks.items() if v == n)}" for n in names)


def run_ours(obj, solver, p_ref, seed, stop=STOP_BELOW, max_passes=None):
    """Drive loglin's solver generator with the clocks around each outer iteration (at most ``max_passes``,
    default MAX_PASSES[solver]); returns the trace points (wall, cpu, f) and the peak memory."""
    from loglin.solvers import resolve
    w = np.zeros(obj.n)
    opts = {"eps": 0.0, "report_dual": False} if solver == "cddual" else {}
    gen = resolve(solver, obj)(obj, w, np.random.default_rng(seed), **opts)
    wall = cpu = 0.0
    points = [(0.0, 0.0, obj.fun(w))]
    with common.PeakMemory() as mem:
        for _ in range(max_passes or MAX_PASSES[solver]):
            w0, c0 = common.now()
            try:
                step = next(gen)
            except StopIteration:
                break
            w1, c1 = common.now()
            wall += w1 - w0
            cpu += c1 - c0
            f = obj.fun(step.w)                       # outside the clocks
            points.append((wall, cpu, f))
            if step.done or common.rel_diff(f, p_ref) <= stop:
                break
        gen.close()
    return points, mem.mb


# ----------------------------------------------------------------------------- black boxes
def liblinear_fit(X, y, C, s):
    from liblinear.liblinearutil import parameter, problem, train
    prob = problem(y, X)                             # converted once, untimed

    def fit(tol):
        param = parameter(f"-s {s} -c {C!r} -e {tol!r} -q")
        t0 = common.now()
        model = train(prob, param)
        t1 = common.now()
        w = np.array([model.w[i] for i in range(X.shape[1])])
        if model.get_labels()[0] != 1:               # LIBLINEAR's first label is its +1 side
            w = -w
        return (t1[0] - t0[0], t1[1] - t0[1]), w, None
    return fit


def sklearn_fit(X, y, C, solver):
    from sklearn.linear_model import LogisticRegression

    def fit(tol):
        model = LogisticRegression(solver=solver, C=C, fit_intercept=False, tol=tol, max_iter=100000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = common.now()
            model.fit(X, y)
            t1 = common.now()
        w = np.asarray(model.coef_[0], dtype=np.float64)
        if model.classes_[1] != 1:
            w = -w
        return (t1[0] - t0[0], t1[1] - t0[1]), w, None
    return fit


# ----------------------------------------------------------------------------- main
def main(args, name):
    import numba
    from loglin.binary import binary_problem
    from loglin.solvers.base import minimize
    numba.set_num_threads(1)
    load0 = common.loadavg()
    started = time.time()
    C = C_OF[name]
    X, y = load(name, args.quick)
    problem = binary_problem(X, y, C=C)
    obj = problem.objective()
    levels = common.LEVELS if not args.quick else (1e-2, 1e-4)
    auto_by_level, auto = auto_solvers(problem, levels)
    ours = ["cddual", "tron", "eg-acc"] + (["newton"] if obj.n <= NEWTON_MAX_FEATURES else [])
    missing = set(auto_by_level.values()) - set(ours)
    if missing:
        raise RuntimeError(f"auto picks {missing}, which this benchmark does not trace")
    p_ref = minimize(obj, "tron", tol=1e-12, max_iter=200).f          # also warms up TRON's kernels
    minimize(obj, "cddual", max_iter=2, eps=0.0, report_dual=False)  # warm up dual CD
    minimize(obj, "eg-acc", max_iter=1)                              # and EG
    if "newton" in ours:
        minimize(obj, "newton", max_iter=1)                          # and Newton
    fun = obj.fun
    sweeps = {"LIBLINEAR -s 7": (liblinear_fit(X, y, C, 7), LIBLINEAR_S7_E),
              "LIBLINEAR -s 0": (liblinear_fit(X, y, C, 0), HALF_DECADES),
              "sklearn lbfgs": (sklearn_fit(X, y, C, "lbfgs"), HALF_DECADES),
              "sklearn liblinear": (sklearn_fit(X, y, C, "liblinear"), HALF_DECADES),
              "sklearn saga": (sklearn_fit(X, y, C, "saga"), HALF_DECADES[:13] if not args.quick else HALF_DECADES[:5])}
    for fit, ladder in sweeps.values():
        fit(ladder[0])                                                 # warm-up call
    stop = 1e-5 if args.quick else STOP_BELOW
    jobs = [(f"loglin {s}", "trace", lambda rep, s=s: run_ours(obj, s, p_ref, rep, stop)) for s in ours]
    for tool, (fit, ladder) in sweeps.items():
        budget = 3.0 if args.quick else SWEEP_BUDGET
        jobs.append((tool, "sweep", lambda rep, f=fit, l=ladder, b=budget:
                     _sweep(f, fun, l, p_ref, b, stop)))
    runs = {tool: [] for tool, _, _ in jobs}
    memory = {tool: [] for tool, _, _ in jobs}
    for rep in range(args.repeats):
        order = jobs[rep % len(jobs):] + jobs[:rep % len(jobs)]
        for tool, kind, job in order:
            points, mb = job(rep)
            runs[tool].append(points)
            memory[tool].append(mb)
            print(f"  {name}: repeat {rep + 1}: {tool} done", flush=True)
    p_star = min(p_ref, min(p[2] for rs in runs.values() for pts in rs for p in pts))
    tools = {}
    for tool, kind, _ in jobs:
        tools[tool] = {"kind": kind, "time_to": common.summarize_tool(runs[tool], p_star, levels, kind),
                       "final_rel_diff": common.rel_diff(min(p[2] for p in runs[tool][0]), p_star),
                       "peak_mb": common.median_or_none(memory[tool]),
                       "calls_or_iterations": [len(r) for r in runs[tool]]}
    tools = {"loglin auto": _auto_tool(tools, auto_by_level), **tools}
    ratios = _ratios(tools, levels)
    result = {"benchmark": name, "C": C, "quick": args.quick, "repeats": args.repeats, "auto_solver": auto,
              "auto_by_level": auto_by_level,
              "data": {"rows": X.shape[0], "features": X.shape[1], "nnz": int(X.nnz)},
              "p_star": p_star, "levels": [common.level_key(e) for e in levels], "tools": tools, "ratios": ratios,
              "runs": {t: [[list(p) for p in pts] for pts in rs] for t, rs in runs.items()},
              "machine": common.machine(), "loadavg_before": load0, "loadavg_after": common.loadavg(),
              "wall_seconds": time.time() - started}
    common.write(name, render(result), result, args.out)
    return result


def _auto_tool(tools, auto_by_level):
    """The auto row: at each level, the times of the solver auto picks for that tolerance (its own trace)."""
    time_to = {clock: {k: tools[f"loglin {s}"]["time_to"][clock][k] for k, s in auto_by_level.items()}
               for clock in ("wall", "cpu")}
    picked = [tools[f"loglin {s}"] for s in dict.fromkeys(auto_by_level.values())]
    return {"kind": "trace", "time_to": time_to, "final_rel_diff": min(t["final_rel_diff"] for t in picked),
            "peak_mb": max((t["peak_mb"] for t in picked if t["peak_mb"] is not None), default=None),
            "calls_or_iterations": picked[0]["calls_or_iterations"] if len(picked) == 1 else "per level"}


def _sweep(fit, fun, ladder, p_ref, budget, stop):
    points, _ = common.run_sweep(fit, fun, ladder, stop_below=(p_ref, stop), time_budget=budget)
    peaks = [p[4] for p in points if p[4] is not None]
    return [p[:4] for p in points], (max(peaks) if peaks else None)


def _ratios(tools, levels):
    """ours / theirs, per clock and level: each pair, and our best vs each scikit-learn solver."""
    out = {}
    pairs = [p for p in PAIRS if p[0] in tools] + [(o, t) for t in tools if t.startswith("sklearn")
                                                  for o in ("loglin cddual", "loglin tron")]
    for ours, theirs in [("loglin auto", BEST)] + pairs:
        key = f"{ours} / {theirs}"
        out[key] = {}
        for clock in ("wall", "cpu"):
            out[key][clock] = {}
            for eps in levels:
                k = common.level_key(eps)
                a = tools[ours]["time_to"][clock][k]["median"]
                b = best_competitor(tools, clock, k)[0] if theirs == BEST else tools[theirs]["time_to"][clock][k]["median"]
                out[key][clock][k] = a / b if (a is not None and b) else None
    return out


BEST = "best competitor"


def best_competitor(tools, clock, k):
    """(time, tool) of the fastest tool that is not loglin's at level k, or (None, None)."""
    cands = [(t["time_to"][clock][k]["median"], n) for n, t in tools.items()
             if not n.startswith("loglin") and t["time_to"][clock][k]["median"] is not None]
    return min(cands) if cands else (None, None)


def render(res):
    d = res["data"]
    keys = res["levels"]
    lines = [f"# {res['benchmark']}: binary LR, C = {res['C']:g}, no bias{' (QUICK)' if res['quick'] else ''}", "",
             f"{d['rows']} rows, {d['features']} features, {d['nnz']} non-zeros. P* = {res['p_star']:.10f}. "
             f"Median of {res['repeats']} repeat(s), tools alternating, 1 thread each. "
             f"Load average before {res['loadavg_before']}, after {res['loadavg_after']} (2 CPUs). "
             f"loglin auto = {res.get('auto_solver', '?')} (loglin.training.default_solver for this problem and "
             f"tol = the level; its times are that solver's row).", "",
             "## Seconds to (f − P*)/P* ≤ ε (median; CPU = process time, wall = perf_counter)", "",
             "| tool | measured by | " + " | ".join(f"CPU s to {k}" for k in keys) + " | " +
             " | ".join(f"wall s to {k}" for k in keys) + " | peak RSS Δ MB | calls / iterations |",
             "|---|---|" + "---|" * (2 * len(keys) + 2)]
    for tool, t in res["tools"].items():
        cells = [common.fmt_s(t["time_to"][c][k]["median"]) for c in ("cpu", "wall") for k in keys]
        mb = "—" if t["peak_mb"] is None else f"{t['peak_mb']:.1f}"
        lines.append(f"| {tool} | {'trace' if t['kind'] == 'trace' else 'tolerance sweep'} | " + " | ".join(cells) +
                     f" | {mb} | {t['calls_or_iterations']} |")
    lines += ["", "## Ours / theirs (ratio of medians; < 1 means loglin is faster)", "",
              "| comparison | " + " | ".join(f"CPU {k}" for k in keys) + " | " + " | ".join(f"wall {k}" for k in keys) + " |",
              "|---|" + "---|" * (2 * len(keys))]
    for key, r in res["ratios"].items():
        lines.append(f"| {key} | " + " | ".join(common.fmt_ratio(r[c][k]) for c in ("cpu", "wall") for k in keys) + " |")
    lines += ["", "Best competitor per cell: " + "; ".join(
        f"{c.upper()} {k}: {best_competitor(res['tools'], c, k)[1]}" for c in ("cpu", "wall") for k in keys) + "."]
    lines += ["", "How measured: see the docstring of benchmarks/binary.py. Sweep tools: the time is the fastest call "
              "(one stopping tolerance) whose returned weights reach ε, an upper bound at the ladder's resolution. "
              "Peak memory: RSS high-water delta (benchmarks/common.py); for sweeps the largest over calls. "
              "calls / iterations: per repeat, number of sweep calls or of outer iterations (passes / Newton steps).", ""]
    return "\n".join(lines)
