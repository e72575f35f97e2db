"""Maxent on CoNLL2000-P / -C, sigma^2 = 10 (C = 10): loglin vs scikit-learn multinomial lbfgs and saga.

    benchmarks/run --only conll-pos conll-chunk [--quick]

Same features, same objective: the problem is loglin.tagging.datasets.build_dataset(name,
all_pairs=True) (a weight for every (predicate, label) pair, because scikit-learn's
multinomial model has one; the papers use the pairs seen in training). scikit-learn gets
the equivalent matrix: one row per (merged context x, observed label y) with the
context's 0/1 predicate row, label y and sample_weight c(x, y); LogisticRegression(C=10,
fit_intercept=False) then minimizes 1/2||W||^2 + C sum c(x,y)(-log p(y|x)) up to a constant
factor, which is loglin's f. The equality is checked at a random common w (``check``:
loglin's kernel vs a NumPy computation on the expanded matrix) before timing.

Timing: loglin's solvers are traces (generator driven directly, clocks around each outer
iteration only, f evaluated outside, 1 thread, a CPU-time limit). scikit-learn's lbfgs is
traced too, inside one fit (``sklearn_lbfgs_trace``: a callback on its scipy L-BFGS-B call,
its own time taken off the clocks, as many threads as ours). saga is a black box: since it iterates the
same path whatever the stopping rule, it is run with a doubling ladder of max_iter (tol =
1e-12, so max_iter binds) and time to eps is the fastest call that reached eps (an upper
bound within a factor 2 of iterations).
The full data sets are large: one run per tool (each run takes minutes) unless --repeats.

P* comes from a certified reference solve made before the races (``reference``: eg-acc until
||grad f||^2 / 2 <= 1e-9 |f|; f is 1-strongly convex, so that bounds f - P*), lowered to the best f of
any run if one goes below it. Taking the best f of the first run instead once read P* 1.5e-4 too
high on CoNLL2000-C (the run was EG, whose tail is slow), which made every "time to 1e-4" a time to
~2.5e-4.
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from loglin.cli_options import option_value

from . import common

C = 10.0
DATA = {"conll-pos": "conll2000-pos", "conll-chunk": "conll2000-chunk"}
OUR_SOLVERS = ("auto", "eg-acc", "eg:order=blocks", "eg-lbfgs", "lbfgs", "cddual", "tron")
SLICE_SOLVERS = ("auto", "eg-acc", "eg-lbfgs", "lbfgs")
CERTIFY = 1e-9                  # the reference's certified relative bound on f - P*
DUAL = ("eg", "cddual")          # run without computing the dual each pass (not part of the solve)


def solver_spec(spec, problem=None):
    """'eg:order=blocks' -> ('eg', {'order': 'blocks', + the dual solvers' no-dual options}); 'auto' is the
    solver loglin.training.default_solver picks for ``problem`` (what train() and `loglin train` use)."""
    name, *pairs = spec.split(":")
    if name == "auto":
        from loglin.training import default_solver
        name = default_solver("maxent", problem=problem)
    opts = {"eps": 0.0, "report_dual": False} if name in DUAL else {}
    for pair in pairs:
        key, value = pair.split("=", 1)
        opts[key] = option_value(value)
    return name, opts
OUR_LIMIT = 400.0               # CPU seconds per loglin run
SK_BUDGET = 300.0               # CPU seconds of scikit-learn calls per ladder
MAX_ITER_LADDER = (5, 10, 20, 40, 80, 160, 320, 640, 1280)


def load(name, slice_only):
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    data_dir = bundled_conll2000_small()[0].parent if slice_only else None
    return build_dataset(DATA[name], data_dir=data_dir, all_pairs=True).problem


def expanded(problem):
    """(X, y, sample_weight) for scikit-learn, and the map w <-> W[label, predicate]."""
    n_ctx, n_pred = problem.n_contexts, problem.n_predicates
    data = np.ones(len(problem.ctx_pred)) if problem.ctx_val is None else problem.ctx_val
    Xc = sp.csr_matrix((data, problem.ctx_pred, problem.ctx_ptr), shape=(n_ctx, n_pred))
    rows = np.repeat(np.arange(n_ctx), np.diff(problem.obs_ptr))
    X = Xc[rows]
    y = np.asarray(problem.obs_label)
    sw = np.asarray(problem.obs_count, dtype=np.float64)
    # feature t <-> (label, predicate); all_pairs gives every pair exactly once
    pred_of_entry = np.repeat(np.arange(n_pred), np.diff(problem.map_ptr))
    index = np.full((problem.n_labels, n_pred), -1, dtype=np.int64)
    index[problem.map_label, pred_of_entry] = problem.map_feat
    return X, y, sw, index


def w_from_coef(coef, classes, index, n):
    """loglin weights from scikit-learn's coef_ (rows = classes_)."""
    w = np.zeros(n)
    for row, label in enumerate(classes):
        ok = index[label] >= 0
        w[index[label][ok]] = coef[row][ok]
    return w


def check(obj, X, y, sw, index, seed=0):
    """|loglin f - NumPy f on the expanded matrix| / |f| at a random w (must be ~1e-12)."""
    rng = np.random.default_rng(seed)
    w = 0.1 * rng.standard_normal(obj.n)
    W = np.where(index >= 0, w[np.maximum(index, 0)], 0.0)            # labels x predicates
    S = np.asarray(X @ W.T)
    m = S.max(axis=1, keepdims=True)
    lse = (m[:, 0] + np.log(np.exp(S - m).sum(axis=1)))
    theirs = 0.5 * float(w @ w) + C * float(sw @ (lse - S[np.arange(len(y)), y]))
    ours = obj.fun(w)
    return abs(ours - theirs) / abs(theirs), ours, theirs


def reference(obj, limit):
    """A certified P*: eg-acc until ||grad f||^2 / 2 <= CERTIFY |f| or ``limit`` CPU s. f is 1-strongly
    convex (its 1/2 ||w||^2), so f(w) - P* <= ||grad f(w)||^2 / 2 at any w: returns (f, that bound)."""
    from loglin.solvers.base import minimize
    res = minimize(obj, "eg-acc", tol=0.0, max_iter=100000, time_limit=limit, clock="cpu", random_state=1,
                   callback=lambda r: r["grad_norm"] ** 2 / 2 <= CERTIFY * abs(r["objective"]))
    return res.f, res.grad_norm ** 2 / 2


def run_ours(obj, solver, limit, stop_at):
    from loglin.solvers import resolve
    w = np.zeros(obj.n)
    name, opts = solver_spec(solver, obj.problem)
    gen = resolve(name, obj)(obj, w, np.random.default_rng(0), **opts)
    wall = cpu = 0.0
    points = [(0.0, 0.0, obj.fun(w))]
    with common.PeakMemory() as mem:
        while cpu < limit:
            w0, c0 = common.now()
            try:
                step = next(gen)
            except StopIteration:
                break
            w1, c1 = common.now()
            wall += w1 - w0
            cpu += c1 - c0
            points.append((wall, cpu, obj.fun(step.w)))      # outside the clocks
            if step.done or (stop_at is not None and common.rel_diff(points[-1][2], stop_at[0]) <= stop_at[1]):
                break
        gen.close()
    return points, mem.mb


def sklearn_fit(X, y, sw, index, n, solver):
    from sklearn.linear_model import LogisticRegression

    def fit(max_iter):
        model = LogisticRegression(solver=solver, C=C, fit_intercept=False, tol=1e-12, max_iter=int(max_iter))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = common.now()
            model.fit(X, y, sample_weight=sw)
            t1 = common.now()
        return (t1[0] - t0[0], t1[1] - t0[1]), w_from_coef(model.coef_, model.classes_, index, n), None
    return fit


class _Stop(Exception):
    pass


def sklearn_lbfgs_trace(X, y, sw, index, obj, limit, stop_at, max_iter=20000, threads=1):
    """scikit-learn's lbfgs followed iterate by iterate, in one fit.

    LogisticRegression(solver="lbfgs") hands its objective to scipy.optimize.minimize
    (L-BFGS-B). For the duration of the fit, the ``optimize`` module sklearn calls is
    replaced by a shim that adds a callback: each iterate is mapped to loglin's w and f
    is evaluated there; the callback's own time is taken off both clocks. So this is
    the time sklearn itself spent, with its own iterates, stopping rule disabled (tol
    = 0, max_iter large) and the run cut at ``limit`` CPU s or once within ``stop_at``.
    scikit-learn runs with ``threads`` BLAS / OpenMP threads (threadpoolctl), as our solvers do.
    """
    import sklearn.linear_model._logistic as skl
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits
    real = skl.optimize
    classes = np.unique(y)
    points = [(0.0, 0.0, obj.fun(np.zeros(obj.n)))]
    clock = {"start": None, "off_wall": 0.0, "off_cpu": 0.0}

    def callback(xk, *unused):
        t0 = common.now()
        coef = np.reshape(xk, (len(classes), -1), order="F")
        f = obj.fun(w_from_coef(coef, classes, index, obj.n))
        wall = t0[0] - clock["start"][0] - clock["off_wall"]
        cpu = t0[1] - clock["start"][1] - clock["off_cpu"]
        points.append((wall, cpu, f))
        t1 = common.now()
        clock["off_wall"] += t1[0] - t0[0]
        clock["off_cpu"] += t1[1] - t0[1]
        if cpu > limit or (stop_at is not None and common.rel_diff(f, stop_at[0]) <= stop_at[1]):
            raise StopIteration          # scipy ends minimize cleanly on StopIteration from a callback

    class Shim:
        def __getattr__(self, attr):
            return getattr(real, attr)

        @staticmethod
        def minimize(*a, **k):
            k["callback"] = callback
            return real.minimize(*a, **k)

    model = LogisticRegression(solver="lbfgs", C=C, fit_intercept=False, tol=0.0, max_iter=max_iter)
    skl.optimize = Shim()
    try:
        with warnings.catch_warnings(), threadpool_limits(threads), common.PeakMemory() as mem:
            warnings.simplefilter("ignore")
            clock["start"] = common.now()
            model.fit(X, y, sample_weight=sw)
    finally:
        skl.optimize = real
    return points, mem.mb


def main(args, name):
    import numba
    from loglin.solvers.base import minimize
    threads = getattr(args, "threads", 1)
    numba.set_num_threads(threads)               # before the objective: its passes split into one block per thread
    load0 = common.loadavg()
    started = time.time()
    small = args.quick or getattr(args, "maxent_slice", False)
    problem = load(name, small)
    obj = problem.objective(C)
    X, y, sw, index = expanded(problem)
    agree, f_ours, f_np = check(obj, X, y, sw, index)
    levels = (1e-2, 1e-4) if small else (1e-2, 1e-4, 1e-6)
    if getattr(args, "maxent_levels", None):
        levels = tuple(float(e) for e in args.maxent_levels.split(","))
    target = min(levels) / 10
    chosen = getattr(args, "maxent_solvers", None)
    solvers = tuple(chosen.split(",")) if chosen else (SLICE_SOLVERS if small else OUR_SOLVERS)
    for s in solvers:                                   # warm-up (compile / load kernels)
        minimize(obj, solver_spec(s, problem)[0], max_iter=1, **solver_spec(s, problem)[1])
    limit = 20.0 if args.quick else (90.0 if small else OUR_LIMIT)
    if getattr(args, "maxent_limit", None):
        limit = float(args.maxent_limit)
    budget = 20.0 if args.quick else (150.0 if small else SK_BUDGET)
    # P* from a certified reference solve (an uncertified one, the best f of a run to its limit, once
    # read 1.5e-4 too high on CoNLL2000-C); every run stops once within target of it
    p_ref, p_bound = reference(obj, 2 * limit)
    ladder = MAX_ITER_LADDER[:5] if args.quick else MAX_ITER_LADDER
    fit = sklearn_fit(X, y, sw, index, obj.n, "saga")
    jobs = [(f"loglin {s}", "trace", lambda s=s: run_ours(obj, s, limit, None if p_ref is None else (p_ref, target)))
            for s in solvers]
    jobs.append(("sklearn lbfgs", "trace",
                 lambda: sklearn_lbfgs_trace(X, y, sw, index, obj, budget, None if p_ref is None else (p_ref, target),
                                             threads=threads)))
    if not getattr(args, "no_saga", False):
        # saga is no scipy call: a max_iter ladder, half the budget (the target is vs lbfgs)
        jobs.append(("sklearn saga", "sweep", lambda: _ladder(fit, obj.fun, ladder, budget / 2, p_ref, target)))
    runs = {t: [] for t, _, _ in jobs}
    memory = {t: [] for t, _, _ in jobs}
    load_last = load0
    merged = merge_earlier(getattr(args, "maxent_merge", None), runs, memory, name, levels)
    if merged:
        load0 = merged[0]["loadavg_before"]
    rotate = getattr(args, "maxent_rotate", 0)
    for rep in range(rotate, rotate + args.repeats):
        order = jobs[rep % len(jobs):] + jobs[:rep % len(jobs)]
        for tool, kind, job in order:
            points, mb = job()
            runs[tool].append(points)
            memory[tool].append(mb)
            best = min(p[2] for p in points)
            p_ref = best if p_ref is None else min(p_ref, best)
            print(f"  {name}: repeat {rep + 1}: {tool} done (best f {best:.6f})", flush=True)
    p_star = min([p_ref] + [p[2] for rs in runs.values() for pts in rs for p in pts])
    tools = {}
    for tool, kind, _ in jobs:
        tools[tool] = {"kind": kind, "time_to": common.summarize_tool(runs[tool], p_star, levels, kind),
                       "final_rel_diff": common.rel_diff(min(p[2] for p in runs[tool][0]), p_star),
                       "peak_mb": common.median_or_none(memory[tool]), "peak_mb_runs": memory[tool],
                       "calls_or_iterations": [len(r) - (1 if kind == "trace" else 0) for r in runs[tool]]}
    best_ours = {}
    for clock in ("wall", "cpu"):
        best_ours[clock] = {}
        for eps in levels:
            k = common.level_key(eps)
            cands = [(t["time_to"][clock][k]["median"], n) for n, t in tools.items()
                     if n.startswith("loglin") and t["time_to"][clock][k]["median"] is not None]
            best_ours[clock][k] = min(cands) if cands else (None, None)
    speedup = {}
    for theirs in [t for t in ("sklearn lbfgs", "sklearn saga") if t in tools]:
        speedup[theirs] = {}
        for clock in ("wall", "cpu"):
            speedup[theirs][clock] = {}
            for eps in levels:
                k = common.level_key(eps)
                a, b = best_ours[clock][k][0], tools[theirs]["time_to"][clock][k]["median"]
                speedup[theirs][clock][k] = b / a if (a and b is not None) else None
    auto_vs_best, auto_memory = auto_cells(tools, [common.level_key(e) for e in levels])
    result = {"benchmark": name, "C": C, "auto_vs_best": auto_vs_best, "auto_memory": auto_memory,
              "threads": threads, "quick": args.quick, "repeats": len(next(iter(runs.values()))), "slice": small,
              "merged_from": [{"file": str(m["file"]), "loadavg_before": m["loadavg_before"],
                               "loadavg_after": m["loadavg_after"], "wall_seconds": m["wall_seconds"]} for m in merged],
              "auto_solver": solver_spec("auto", problem)[0],
              "limits": {"loglin_cpu_s": limit, "sklearn_cpu_s": budget},
              "data": {"contexts": problem.n_contexts, "labels": problem.n_labels, "predicates": problem.n_predicates,
                       "features": problem.n_features, "nnz": int(problem.nnz()), "sklearn_rows": X.shape[0],
                       "sklearn_nnz": int(X.nnz)},
              "objective_check": {"rel_diff": agree, "loglin": f_ours, "numpy_on_sklearn_matrix": f_np},
              "p_star": p_star, "p_star_bound": p_bound, "levels": [common.level_key(e) for e in levels], "tools": tools,
              "best_ours": best_ours, "speedup_vs": speedup,
              "runs": {t: [[list(p) for p in pts] for pts in rs] for t, rs in runs.items()},
              "machine": common.machine(), "loadavg_before": load0, "loadavg_after": common.loadavg(),
              "loadavg_before_last": load_last,
              "wall_seconds": time.time() - started + sum(m["wall_seconds"] for m in merged)}
    common.write(name if threads == 1 else f"{name}-{threads}cores", render(result), result, args.out)
    return result


def merge_earlier(paths, runs, memory, name, levels):
    """Add the runs of earlier JSON files of this comparison (``--maxent-merge``) to ``runs`` / ``memory``, as
    the first repeats; every file must hold the same tools and levels. Returns what each file said of its run."""
    import json

    from .report import full_path
    merged = []
    for path in paths or ():
        res = json.loads(Path(path).read_text())
        if "runs" not in res:         # a short report (docs/decisions/0054): its runs are in the full result
            full = full_path(path)
            if not full.is_file():
                raise SystemExit(f"{path}: a report without its runs and no {full.name} next to it; "
                                 "pass the full result benchmarks/run wrote")
            path, res = full, json.loads(full.read_text())
        if res["benchmark"] != name or set(res["runs"]) != set(runs) or res["levels"] != [common.level_key(e) for e in levels]:
            raise SystemExit(f"{path}: not a {name} run with the tools {sorted(runs)} and these levels")
        for tool, rs in res["runs"].items():
            runs[tool].extend([tuple(p) for p in pts] for pts in rs)
            mb = res["tools"][tool].get("peak_mb_runs") or [res["tools"][tool]["peak_mb"]] * len(rs)
            memory[tool].extend(mb)
        merged.append({"file": path, "loadavg_before": res["loadavg_before"], "loadavg_after": res["loadavg_after"],
                       "wall_seconds": res["wall_seconds"]})
    return merged


def auto_cells(tools, keys):
    """Per clock and level: loglin auto's time / the fastest competitor's; and per level the peak-memory
    cell {auto MB, fastest competitor (by CPU) and its MB, ratio}. A trace's peak covers its whole run
    (to below the smallest level), so it bounds each of its cells; the solvers here allocate up front."""
    from .binary import best_competitor
    times, memory = {}, {}
    if "loglin auto" not in tools:
        return times, memory
    auto = tools["loglin auto"]
    for clock in ("wall", "cpu"):
        times[clock] = {}
        for k in keys:
            best, _ = best_competitor(tools, clock, k)
            a = auto["time_to"][clock][k]["median"]
            times[clock][k] = a / best if (a is not None and best) else None
    for k in keys:
        _, who = best_competitor(tools, "cpu", k)
        theirs = None if who is None else tools[who]["peak_mb"]
        ours = auto["peak_mb"]
        memory[k] = {"auto_mb": ours, "competitor": who, "competitor_mb": theirs,
                     "ratio": ours / theirs if (ours is not None and theirs) else None}
    return times, memory


def rerender(path):
    """Recompute the auto cells of a written conll-* JSON and write its .md/.json again (no run)."""
    import json
    from pathlib import Path
    path = Path(path)
    res = json.loads(path.read_text())
    res["auto_vs_best"], res["auto_memory"] = auto_cells(res["tools"], res["levels"])
    common.write(path.stem, render(res), res, path.parent)


def _ladder(fit, fun, ladder, budget, p_ref, target):
    stop = None if p_ref is None else (p_ref, target)
    points, _ = common.run_sweep(fit, fun, ladder, stop_below=stop, time_budget=budget)
    peaks = [p[4] for p in points if p[4] is not None]
    return [p[:4] for p in points], (max(peaks) if peaks else None)


def _certified(res):
    bound = res.get("p_star_bound")
    if bound is None:
        return " (best f of the runs, not certified)"
    return (f", certified to {bound / abs(res['p_star']):.1e} relative (a reference eg-acc run: f - P* <= "
            f"||grad f||^2 / 2, f being 1-strongly convex)")


def _mb(x):
    return "—" if x is None else f"{x:.0f}"


def _threads_note(threads):
    if threads == 1:
        return "Every tool on one thread (Numba, BLAS)."
    return (f"Every tool given {threads} threads: loglin's Numba passes, scikit-learn's BLAS / OpenMP "
            "(its sparse products and saga are single-threaded whatever the limit).")


def render(res):
    d, keys = res["data"], res["levels"]
    where = " — bundled CoNLL-2000 slice (src/loglin/datasets/conll2000-small), not the full corpus" if res["slice"] else ""
    lines = [f"# {res['benchmark']}: Maxent, σ² = 10 (C = {res['C']:g}){' (QUICK)' if res['quick'] else ''}{where}", "",
             f"{d['contexts']} merged contexts, {d['labels']} labels, {d['predicates']} predicates, {d['features']} "
             f"features (all pairs), {d['nnz']} non-zeros (context × label); scikit-learn matrix {d['sklearn_rows']} rows, "
             f"{d['sklearn_nnz']} non-zeros with sample weights. Objective check at a random w: relative difference "
             f"{res['objective_check']['rel_diff']:.1e} between loglin's kernel and NumPy on scikit-learn's matrix. "
             f"{_threads_note(res.get('threads', 1))} "
             f"P* = {res['p_star']:.6f}{_certified(res)}. {res['repeats']} run(s) per tool (see note). "
             f"Load average before {res['loadavg_before']}, after {res['loadavg_after']} (2 CPUs). "
             f"loglin auto = {res.get('auto_solver', '?')} (loglin.training.default_solver for this problem)."
             + (f" Split into {len(res['merged_from']) + 1} locked runs of the same command (--maxent-merge), "
                f"load averages before/after each: "
                + "; ".join(f"{m['loadavg_before']} / {m['loadavg_after']}" for m in res["merged_from"])
                + f"; {res['loadavg_before_last']} / {res['loadavg_after']}." if res.get("merged_from") else "")
             + (f" **{res['note']}**" if res.get("note") else ""), "",
             "| tool | measured by | " + " | ".join(f"CPU s to {k}" for k in keys) + " | " +
             " | ".join(f"wall s to {k}" for k in keys) + " | final rel. diff | peak RSS Δ MB | calls / iterations |",
             "|---|---|" + "---|" * (2 * len(keys) + 3)]
    for tool, t in res["tools"].items():
        cells = [common.fmt_s(t["time_to"][c][k]["median"]) for c in ("cpu", "wall") for k in keys]
        mb = "—" if t["peak_mb"] is None else f"{t['peak_mb']:.0f}"
        lines.append(f"| {tool} | {'trace' if t['kind'] == 'trace' else 'max_iter ladder'} | " + " | ".join(cells) +
                     f" | {t['final_rel_diff']:.1e} | {mb} | {t['calls_or_iterations']} |")
    lines += ["", "scikit-learn lbfgs is traced iterate by iterate inside one fit (a callback added to its scipy "
              "L-BFGS-B call; the callback's time is not counted), with as many threads as ours."]
    lines += ["", "## Our best solver vs scikit-learn (their time / our best time; target ≥ 5× vs lbfgs at 1e-4)", "",
              "| vs | " + " | ".join(f"CPU {k}" for k in keys) + " | " + " | ".join(f"wall {k}" for k in keys) + " |",
              "|---|" + "---|" * (2 * len(keys))]
    for theirs, r in res["speedup_vs"].items():
        lines.append(f"| {theirs} | " + " | ".join(
            ("—" if r[c][k] is None else f"{r[c][k]:.2f}× ({res['best_ours'][c][k][1]})") for c in ("cpu", "wall")
            for k in keys) + " |")
    if res.get("auto_vs_best"):
        r = res["auto_vs_best"]
        lines += ["", "## loglin's default (auto) / the fastest competitor in each cell (target ≤ 0.8×)", "",
                  "| comparison | " + " | ".join(f"CPU {k}" for k in keys) + " | " + " | ".join(f"wall {k}" for k in keys) + " |",
                  "|---|" + "---|" * (2 * len(keys)),
                  f"| loglin auto ({res.get('auto_solver')}) / best competitor | " +
                  " | ".join(common.fmt_ratio(r[c][k]) for c in ("cpu", "wall") for k in keys) + " |"]
    if res.get("auto_memory"):
        m = res["auto_memory"]
        lines += ["", "Peak RSS Δ per cell, loglin auto vs the fastest competitor of the cell (by CPU; target ≤ 1×):", "",
                  "| level | loglin auto MB | fastest competitor | its MB | auto / competitor |", "|---|---|---|---|---|"]
        for k in keys:
            c = m.get(k, {})
            lines.append(f"| {k} | {_mb(c.get('auto_mb'))} | {c.get('competitor') or '—'} | {_mb(c.get('competitor_mb'))} | "
                         f"{common.fmt_ratio(c.get('ratio'))} |")
    lim = res["limits"]
    lines += ["", "How measured: benchmarks/maxent.py docstring. 'not reached' = not within the limits (loglin: "
              f"{lim['loglin_cpu_s']:.0f} CPU s per solver; scikit-learn: {lim['sklearn_cpu_s']:.0f} CPU s of calls per ladder for lbfgs, half that for saga). "
              "Peak memory: RSS high-water delta (benchmarks/common.py).", ""]
    return "\n".join(lines)
