"""Reproduce Yu, Huang & Lin (2011), "Dual coordinate descent methods for logistic
regression and maximum entropy models" (Machine Learning 85): Figures 2-4 and Table 3.

* ``yu2011-fig2``   - LR on document data (section 6.1): CDdual, CDdual-ls, CDprimal,
  EG, L-BFGS, TRON; time vs the relative primal difference (55), ||grad P||, test
  accuracy. The paper's real-sim / yahoo-japan / rcv1 are not in our shared data:
  we use a9a (C = 4, as LIBSVM ships it, with its test file), news20 (LIBSVM
  multi-class file, classes 1-10 -> +1, 11-20 -> -1, rows of unit length like
  real-sim and rcv1, a random 4/5 for training) and 20 Newsgroups tf-idf built
  by loglin.data.newsgroups.load_20newsgroups_tfidf (bydate train / test split,
  comp.* + sci.* -> +1 vs the other 11 groups). For the two text sets C is
  chosen by five-fold cross-validation on the training part as in the paper
  (grid 2^-1 .. 2^6, accuracy of LR trained by cddual to LIBLINEAR's
  default stopping eps = 0.1; quick mode: C = 8 without CV).
* ``yu2011-table3`` - CDdual with xi in {0.1, 0.5, 0.9}: time to relative difference
  1e-2 (median of repeats) on the same data.
* ``yu2011-fig3``   - Maxent on the 0/1 NLP data (section 6.2): CDdual, CDprimal,
  L-BFGS, TRON, EG; sigma^2 = 10 l with l the number of training events, i.e.
  C = 10 (``--sigma2 10``) in LIBLINEAR's scale, as in loglin.experiments.huang2010; the data
  sets come from loglin.tagging.datasets.build_dataset (conll2000-pos,
  conll2000-chunk, brown); test accuracy / chunk F1 by greedy decoding.
* ``yu2011-fig4``   - BN (Algorithm 9) vs CDdual (Algorithm 4) on the LR data.

Every function is ``(out_dir, quick=False, **kw)`` and writes PNGs, CSV + JSON
traces and ``summary.md`` (settings, times to each level, the paper's claims and
whether they held here). Times are training CPU seconds with one Numba thread
for every method (see :func:`run`: on a shared machine wall-clock time is mostly
waiting for a core); evaluation (primal objective, gradient, gap, test metric)
is outside the clocks. The dual solvers report the primal objective of
w(alpha), as the paper does. ``quick=True`` uses slices and short runs (a smoke
test, not a reproduction).
"""
from __future__ import annotations

import json
import math
import statistics
import time

import numpy as np

from ..binary import binary_problem
from ..solvers import minimize
from .datasets import lr_data
from .harness import (faster, output_dir, peak_rss_gb, plot_convergence, race, reference_optimum, save_traces,
                      time_to_level, timed_minimize, timing_table, warm_up, write_summary)

LEVELS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-6)
LR_C = {"a9a": 4.0}                         # the paper's C for a9a (its Table 2, by CV)
TEXT_C_DEFAULT = 8.0                         # the paper's CV value for its text sets (quick mode)
CV_GRID = tuple(2.0 ** k for k in range(-1, 7))
CV_FOLDS = 5
CV_MAX_C = 2.0 ** 10                         # the grid is extended upwards while its largest C is best
_CV_CACHE = {}
LR_SOLVERS = ("cddual", "cddual-ls", "cd", "eg", "lbfgs", "tron")
ME_SOLVERS = ("cddual", "cddual-capped", "cd", "lbfgs", "tron", "eg")
LABELS = {"cddual": "CDdual", "cddual-ls": "CDdual-ls", "cd": "CDprimal", "eg": "EG", "lbfgs": "LBFGS",
          "tron": "TRON", "bn": "BN", "cddual-capped": "CDdual (<= |Y| pairs)"}
# Variants run under another name: name -> (solver, options given the problem). "cddual-capped" is
# Algorithm 7 with Algorithm 6 stopped after |Y| pair updates per context visit (not in the paper).
VARIANTS = {"cddual-capped": ("cddual", lambda problem: {"max_pairs": problem.n_labels})}
DUAL = ("cddual", "cddual-ls", "bn", "eg", "eg-ll")


# ====================================================================== data
def cross_validated_C(X, y, grid=CV_GRID, folds=CV_FOLDS, seed=0):
    """(best C, {C: mean CV accuracy %}): k-fold CV of L2-regularized LR trained by cddual
    (stopping at LIBLINEAR's default max dual violation 0.1); ties go to the smaller C; while the
    largest C of the grid is the best one, the grid is extended by doubling (up to CV_MAX_C)."""
    import scipy.sparse as sp
    X = sp.csr_matrix(X)
    y = np.asarray(y)
    fold = np.random.default_rng(seed).permutation(X.shape[0]) % folds

    def accuracy_at(C):
        correct = 0
        for k in range(folds):
            train, held = fold != k, fold == k
            res = minimize(binary_problem(X[train], y[train], C).objective(), "cddual", tol=0.0, max_iter=1000,
                           random_state=seed, report_dual=False)
            correct += int(np.sum(((X[held] @ res.w[:X.shape[1]]) > 0) == (y[held] > 0)))
        return 100.0 * correct / X.shape[0]
    scores = {C: accuracy_at(C) for C in grid}
    while max(scores, key=lambda c: (scores[c], -c)) == max(scores) and max(scores) < CV_MAX_C:
        scores[2.0 * max(scores)] = accuracy_at(2.0 * max(scores))     # best at the edge: extend the grid
    best = max(scores.values())
    return min(C for C, acc in scores.items() if acc == best), scores


def lr_C(name, Xtr, ytr, quick=False):
    """a9a: 4 (paper); text sets: 5-fold CV (cached per process), TEXT_C_DEFAULT in quick mode."""
    if name in LR_C:
        return LR_C[name], None
    if quick:
        return TEXT_C_DEFAULT, None
    if name not in _CV_CACHE:
        _CV_CACHE[name] = cross_validated_C(Xtr, ytr)
    return _CV_CACHE[name]


def accuracy(X_test, y_test):
    import scipy.sparse as sp
    X = sp.csr_matrix(X_test)
    truth = np.asarray(y_test) > 0

    def evaluate(w):
        n = min(X.shape[1], len(w))
        return float(100.0 * np.mean(((X[:, :n] @ w[:n]) > 0) == truth))
    return evaluate


# ====================================================================== runs
def reference(objective, max_iter=300, tol=1e-12):
    """P* of (55): a tight TRON run (the paper uses ||grad|| <= 0.01)."""
    return reference_optimum(objective, tol=tol, max_iter=max_iter).f


def warm_up_solvers(objective, solvers):
    """One untimed iteration of each solver (dual ones without their dual objective)."""
    warm_up(objective, solvers, {s: {"report_dual": False} for s in DUAL})


def run(objective, solver, *, time_limit, max_iter, evaluate=None, final_evaluate=None, seed=0, threads=1,
        **options):
    """One solver's trace, timed in process CPU seconds on ``threads`` Numba threads
    (:func:`~loglin.experiments.harness.timed_minimize`); dual solvers run to the limits (eps = 0).
    ``final_evaluate`` (instead of ``evaluate``, for data where decoding the test set is costly) scores
    only the returned point, into the last record. Evaluation is outside both clocks.
    """
    if solver in DUAL:
        options.setdefault("eps", 0.0)          # no own stop: run to the limits, as the figures do
    res = timed_minimize(objective, solver, threads=threads, tol=0.0, max_iter=max_iter, time_limit=time_limit,
                         evaluate=evaluate, random_state=seed, **options)
    if final_evaluate is not None:
        res.trace.records[-1]["metric"] = float(final_evaluate(res.w))
    res.trace.meta.update(stop_reason=res.stop_reason, peak_rss_gb=round(peak_rss_gb(), 3))
    return res.trace


def labelled(traces, f_star=None, floor=1e-12, horizon_factor=3.0):
    """Plot copies named as in the paper, cut where nothing more can be seen.

    Each trace stops after its first record within ``floor`` of P* (the rest is
    rounding noise), and all stop at ``horizon_factor`` times the latest time
    any method needed to reach 1e-6 (so a slow method does not squeeze the
    others into the left edge). The saved CSV/JSON traces are complete.
    """
    from ..trace import Trace
    if f_star is None:
        return {LABELS.get(k, k): v for k, v in traces.items()}
    reach = [time_to_level(t, f_star, 1e-6) for t in traces.values()]
    reach = [r for r in reach if r is not None]
    horizon = horizon_factor * max(reach) if reach else math.inf
    out = {}
    for name, tr in traces.items():
        cut = Trace(tr.solver, tr.meta)
        for rec in tr.records:
            if rec["seconds"] > horizon:
                break
            cut.records.append(rec)
            if (rec["objective"] - f_star) / abs(f_star) <= floor:
                break
        out[LABELS.get(name, name)] = cut
    return out


def _lr_panels(out_dir, quick, data_dir, datasets, solvers, time_limit, max_iter, C=None, objectives=None,
               **options):
    """{data: (traces, P*)}; ``objectives`` (a dict), if given, receives each data set's objective."""
    panels = {}
    for name in datasets:
        Xtr, ytr, Xte, yte = lr_data(name, quick, data_dir)
        cost = C if C is not None else lr_C(name, Xtr, ytr, quick)[0]
        objective = binary_problem(Xtr, ytr, cost).objective()
        if objectives is not None:
            objectives[name] = objective
        best = {"f": reference(objective)}
        evaluate = accuracy(Xte, yte)
        warm_up_solvers(objective, solvers)

        def one(obj, solver, **opts):
            return run(obj, solver, time_limit=time_limit, max_iter=max_iter, evaluate=evaluate, **opts)

        def finished(solver, traces):                       # written now: survives a cut-off
            traces[solver].meta["C"] = cost
            best["f"] = min(best["f"], min(traces[solver].column("objective")))
            save_traces(out_dir, name, {solver: traces[solver]}, f_star=best["f"], data=name)
        traces = race(objective, solvers, one, options=options, on_finish=finished)
        save_traces(out_dir, name, traces, f_star=best["f"], data=name)
        panels[name] = (traces, best["f"])
    return panels


def timing_rows(panels, levels=LEVELS):
    return timing_table(panels, levels, label=lambda name: LABELS.get(name, name))


# ====================================================================== Figure 2
def fig2(out_dir, quick=False, datasets=None, time_limit=None, max_iter=None, data_dir=None,
         solvers=LR_SOLVERS, **kw):
    """LR on document data: the six methods of section 6.1."""
    out_dir = output_dir(out_dir)
    datasets = datasets or (("a9a",) if quick else ("a9a", "news20", "20newsgroups"))
    time_limit = time_limit or (3.0 if quick else 60.0)
    max_iter = max_iter or (40 if quick else 2000)
    panels = _lr_panels(out_dir, quick, data_dir, datasets, solvers, time_limit, max_iter)
    cv = {d: {"C": _CV_CACHE[d][0], "cv_accuracy": {f"{c:g}": a for c, a in _CV_CACHE[d][1].items()}}
          for d in datasets if d in _CV_CACHE}
    (out_dir / "cross_validation.json").write_text(json.dumps(cv, indent=1))
    plot_convergence({d: (labelled(t, f), f) for d, (t, f) in panels.items()}, out_dir / "fig2.png",
                     metric_name="test accuracy (%)", title="Yu et al. 2011, Figure 2 (LR)")
    claims = []
    for data, (traces, f_star) in panels.items():
        have = set(traces)

        def claim(text, a, b, lv, note=""):
            if {a, b} <= have:
                claims.append((f"{data}: {text}", faster(traces[a], traces[b], f_star, lv), note))
        for lv in (1e-2, 1e-4):
            claim(f"CDdual reaches {lv:g} before CDdual-ls", "cddual", "cddual-ls", lv, "'CDdual is always faster'")
            claim(f"CDdual reaches {lv:g} before CDprimal", "cddual", "cd", lv)
            claim(f"CDdual reaches {lv:g} before EG", "cddual", "eg", lv, "'CDdual is generally faster'")
        if data == "a9a":      # l >> n: the paper's exception, where primal methods may suit better
            claim("a primal Newton method (TRON) reaches 1e-4 before CDdual", "tron", "cddual", 1e-4,
                  "paper: a9a is the exception, 'solving the primal problem may be more suitable'")
        else:
            for other in ("tron", "lbfgs", "cd"):
                claim(f"CDdual reaches 1e-2 before {LABELS[other]}", "cddual", other, 1e-2,
                      "paper: CDdual is the most efficient on all problems except a9a")
            for other in ("tron", "lbfgs"):
                claim(f"CDdual reaches 1e-1 (a reasonable model) before {LABELS[other]}", "cddual", other, 1e-1,
                      "paper: TRON/LBFGS 'fail to generate a reasonable model quickly'")
    settings = [f"- data: {', '.join(datasets)}; C = " + ", ".join(
                    f"{d} {LR_C.get(d, cv[d]['C'] if d in cv else TEXT_C_DEFAULT):g}"
                    + (f" (5-fold CV over {min(CV_GRID):g}..{max(float(c) for c in cv[d]['cv_accuracy']):g}, accuracy {max(cv[d]['cv_accuracy'].values()):.2f}%)"
                       if d in cv else "") for d in datasets)
                + "; w0 = 0 for primal methods, alpha by (36) for dual ones",
                "- 20newsgroups: bydate train/test, our tf-idf (loglin.data.newsgroups), comp.* + sci.* = +1 "
                "vs the other 11 groups; news20: LIBSVM file, classes 1-10 = +1, random 4/5 train",
                f"- limits per method: {time_limit:g} s training CPU time (one thread) or {max_iter} iterations; "
                "times below are CPU seconds; P* = lowest "
                "objective of a TRON run to ||g|| <= 1e-12 ||g0|| and of all runs",
                "- an outer iteration is one pass over the data for CDdual/CDdual-ls/CDprimal/EG, one "
                "Newton/quasi-Newton step for TRON/LBFGS",
                "- quick mode: a9a slice, short runs - not a reproduction" if quick else ""]
    body = ["## Time (s) to reach a relative difference (P - P*)/P* (55)", "", *timing_rows(panels), "",
            "![fig2](fig2.png)"]
    write_summary(out_dir, "Yu et al. (2011), Figure 2: logistic regression", settings, body, claims)
    return panels


# ====================================================================== Table 3
def cpu_time_to_level(objective, solver, f_star, level, seed=0, max_passes=500, **options):
    """(CPU s, wall s, passes) for ``solver`` to reach (P - P*)/P* <= level, or None."""
    return times_to_levels(objective, solver, f_star, (level,), seed, max_passes, **options)[0]


def times_to_levels(objective, solver, f_star, levels, seed=0, max_passes=500, **options):
    """[(CPU s, wall s, passes) or None for each level]: when ``solver`` first reached (P - P*)/P* <= level.

    Runs the solver's generator directly so that process CPU time (immune to
    other jobs on a shared machine) can be read around each pass; the primal
    objective is evaluated outside both clocks.
    """
    from ..solvers import resolve
    w = np.zeros(objective.n)
    gen = resolve(solver, objective)(objective, w, np.random.default_rng(seed), eps=0.0, report_dual=False, **options)
    cpu = wall = 0.0
    reached = [None] * len(levels)
    try:
        for k in range(1, max_passes + 1):
            w0, c0 = time.perf_counter(), time.process_time()
            step = next(gen)
            wall += time.perf_counter() - w0
            cpu += time.process_time() - c0
            rel = (objective.fun(step.w) - f_star) / abs(f_star)
            reached = [r if r is not None or rel > lv else (cpu, wall, k) for r, lv in zip(reached, levels)]
            if all(r is not None for r in reached) or step.done:
                break
    finally:
        gen.close()
    return reached


def table3(out_dir, quick=False, datasets=None, xis=(0.1, 0.5, 0.9), repeats=None, data_dir=None,
           level=1e-2, **kw):
    """CDdual with xi in {0.1, 0.5, 0.9}: time to relative difference 1e-2."""
    out_dir = output_dir(out_dir)
    datasets = datasets or (("a9a",) if quick else ("a9a", "news20"))
    repeats = repeats or (1 if quick else 5)
    table, raw, Cs = {}, {}, {}
    for name in datasets:
        Xtr, ytr, _, _ = lr_data(name, quick, data_dir)
        Cs[name] = lr_C(name, Xtr, ytr, quick)[0]
        objective = binary_problem(Xtr, ytr, Cs[name]).objective()
        f_star = reference(objective)
        warm_up_solvers(objective, ("cddual",))
        runs = {xi: [] for xi in xis}
        for r in range(repeats):                 # xi values alternate within a repeat
            for xi in xis:
                runs[xi].append(cpu_time_to_level(objective, "cddual", f_star, level, seed=r, xi=xi))
        for xi in xis:
            ok = [t for t in runs[xi] if t is not None]
            table[(name, xi)] = tuple(statistics.median(t[j] for t in ok) for j in range(3)) if ok else None
            raw[f"{name} xi={xi:g}"] = runs[xi]
    rows = ["| data | " + " | ".join(f"xi = {x:g}" for x in xis) + " |", "|---|" + "---|" * len(xis)]
    claims = []
    for name in datasets:
        vals = [table[(name, x)] for x in xis]
        cpu = [None if v is None else v[0] for v in vals]
        best = min((v for v in cpu if v is not None), default=None)
        rows.append(f"| {name} | " + " | ".join(
            "-" if v is None else (f"**{v[0]:.3g}**" if v[0] == best else f"{v[0]:.3g}")
            + f" ({v[1]:.3g} wall, {v[2]:g} passes)" if v is not None else "-" for v in vals) + " |")
        if all(v is not None for v in cpu):
            spread = max(cpu) / min(cpu)
            claims.append((f"{name}: running time is not sensitive to xi (max/min CPU time within 1.25)",
                           spread <= 1.25, f"max/min = {spread:.2f}"))
    (out_dir / "table3.json").write_text(json.dumps(raw, indent=1))
    settings = [f"- CPU seconds (process time; wall clock and passes in brackets) for CDdual to reach "
                f"(P - P*)/P* <= {level:g}; median of {repeats} runs, each with its own permutation seed, the "
                "xi values alternating; the primal objective is evaluated outside the clocks",
                "- " + ", ".join(f"{d} C = {c:g}" for d, c in Cs.items()) + " (as in Figure 2: a9a the paper's, text "
                "sets by 5-fold CV)",
                "- paper (Table 3): a9a 0.30 / 0.29 / 0.31 s for xi = 0.1 / 0.5 / 0.9"]
    write_summary(out_dir, "Yu et al. (2011), Table 3: CDdual with different xi", settings, rows, claims)
    return table


# ====================================================================== Figure 4
def fig4(out_dir, quick=False, datasets=None, time_limit=None, max_iter=None, data_dir=None, repeats=None,
         levels=(1e-4, 1e-6), **kw):
    """BN (bisection then Newton, Algorithm 9) vs CDdual (Algorithm 4): one traced run each for the plot,
    and the claims on the median CPU time to ``levels`` over ``repeats`` runs (permutation seeds 0..R-1,
    the two methods alternating), since single sub-second timings on a shared machine are noisy."""
    out_dir = output_dir(out_dir)
    datasets = datasets or (("a9a",) if quick else ("a9a", "news20"))
    time_limit = time_limit or (3.0 if quick else 30.0)
    max_iter = max_iter or (40 if quick else 1000)
    repeats = repeats or (1 if quick else 5)
    objectives = {}
    panels = _lr_panels(out_dir, quick, data_dir, datasets, ("cddual", "bn"), time_limit, max_iter,
                        objectives=objectives)
    plot_convergence({d: (labelled(t, f), f) for d, (t, f) in panels.items()}, out_dir / "fig4.png",
                     rows=("relative difference",), title="Yu et al. 2011, Figure 4 (BN vs CDdual)")
    claims, raw = [], {}
    rows = ["| data | method | " + " | ".join(f"{lv:g}: median (min-max) CPU s" for lv in levels) + " |",
            "|---|---|" + "---|" * len(levels)]
    for data, (traces, f_star) in panels.items():
        runs = {s: [] for s in ("cddual", "bn")}
        for r in range(repeats):
            for s in runs:
                runs[s].append(times_to_levels(objectives[data], s, f_star, levels, seed=r, max_passes=max_iter))
        raw[data] = {s: [[None if t is None else t[0] for t in run_] for run_ in v] for s, v in runs.items()}
        medians = {}
        for s, v in runs.items():
            cells = []
            for j, lv in enumerate(levels):
                cpu = [run_[j][0] for run_ in v if run_[j] is not None]
                medians[s, lv] = statistics.median(cpu) if len(cpu) == repeats else None
                cells.append("-" if medians[s, lv] is None else f"{medians[s, lv]:.3g} ({min(cpu):.3g}-{max(cpu):.3g})")
            rows.append(f"| {data} | {LABELS[s]} | " + " | ".join(cells) + " |")
        for lv in levels:
            a, b = medians["cddual", lv], medians["bn", lv]
            flag = None if a is None or b is None else a <= b
            claims.append((f"{data}: CDdual reaches {lv:g} no later than BN (median of {repeats} runs; better final "
                           "convergence)", flag, "" if flag is None else f"CDdual {a:.3g} s, BN {b:.3g} s, "
                           f"BN / CDdual = {b / a:.2f}"))
        newton = {k: sum(r.get("newton_steps", 0) for r in tr.records) for k, tr in traces.items()}
        claims.append((f"{data}: BN takes at least as many sub-problem steps as CDdual (traced run)",
                       newton["bn"] >= newton["cddual"], f"Newton steps: {newton}"))
    (out_dir / "fig4-repeats.json").write_text(json.dumps(raw, indent=1))
    Cs = ", ".join(f"{d} C = {next(iter(t.values())).meta['C']:g}" for d, (t, _) in panels.items())
    settings = [f"- data: {', '.join(datasets)}; {Cs} (as in Figure 2); traced runs: limits {time_limit:g} CPU s "
                f"or {max_iter} passes; repeats: {repeats} untraced runs per method (CPU time, objective outside "
                "the clock)", "- BN counts only its Newton steps (bisection halvings are not counted)"]
    body = ["## Time (s) to reach a relative difference, one traced run", "", *timing_rows(panels), "",
            f"## CPU s to reach a relative difference over {repeats} runs", "", *rows, "", "![fig4](fig4.png)"]
    write_summary(out_dir, "Yu et al. (2011), Figure 4: BN vs CDdual", settings, body, claims)
    return panels


REPRODUCE = {"yu2011-fig2": fig2, "yu2011-table3": table3, "yu2011-fig4": fig4}     # Figure 3: yu2011_fig3
