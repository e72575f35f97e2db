"""Yu, Huang & Lin (2011), Figure 3: Maxent on 0/1-featured NLP data (CoNLL2000-P, CoNLL2000-C, BROWN) with
sigma^2 = 10 l - CDdual, CDprimal, L-BFGS, TRON and EG; see :mod:`loglin.experiments.yu2011`.

P* comes from a reference run (this module's own TRON run, or a Huang et al. 2010 Figure 2 reference of the
same problem, checked to be one), and each method's trace, the summary and the plot are written as soon as
the method finishes; :func:`fig3_resummarize` rebuilds them from saved traces with a new P*.
"""
from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

from ..errors import InvalidInputError
from ..trace import Trace
from .datasets import NLP_NAMES, nlp_dataset
from .harness import every_kth, faster, output_dir, plot_convergence, reference_optimum, save_traces, write_summary
from .yu2011 import LABELS, ME_SOLVERS, VARIANTS, labelled, run, timing_rows, warm_up_solvers

NO_REFERENCE_NOTE = ("- no reference run: P* is the lowest primal objective of these runs, so the best run reaches "
                     "every level at its last point by construction and levels below the dual bracket mean little; "
                     "the table of objectives within t CPU s is the comparison that does not depend on P*")
BIG_NNZ = 50_000_000        # above this (BROWN), warm the kernels up on the bundled slice, not on the data


def fig3(out_dir, quick=False, datasets=None, time_limit=None, max_iter=None, data_dir=None,
         sigma2_factor=10.0, solvers=ME_SOLVERS, evaluate_every=1, reference_iters=None, reference=None, **kw):
    """Maxent on 0/1-featured NLP data: CDdual, CDprimal, LBFGS, TRON, EG; sigma^2 = 10 l.

    ``time_limit`` is CPU seconds per method, or a dict method -> seconds (per data set:
    {data: {method: seconds}} also works). P* of (55) is min(reference f, best primal objective
    of the runs); the reference is ``reference`` (see :func:`load_reference`: a number, the path of
    a huang2010-fig2 ``NAME-reference.json`` for the same problem, or a dict {data: either}), else
    a TRON run of ``reference_iters`` iterations here; ``reference_iters`` = 0 runs none (P* is then
    the lowest objective of the runs). The summary states where P* came from and its certified
    error. ``evaluate_every`` = 0 scores the test set only at each method's final point (BROWN:
    decoding is costly).

    Each method's trace, the summary and the plot are written as soon as the method finishes,
    so a run cut off later still leaves the finished methods' results; :func:`fig3_resummarize`
    rebuilds them from the saved traces with another reference."""
    out_dir = output_dir(out_dir)
    names = datasets or (("conll2000-pos",) if quick else NLP_NAMES)
    time_limit = time_limit or (3.0 if quick else 600.0)
    max_iter = max_iter or (10 if quick else 1000)
    panels, notes, refs, metric_names = {}, {}, {}, set()
    header = [f"- sigma^2 = {sigma2_factor:g} l, l = training events (--sigma2 {sigma2_factor:g}); limits "
              f"{time_limit} CPU s or {max_iter} iterations per method; alpha by (51), eps = 1e-10"]
    if quick:
        header.append("- quick mode: the bundled CoNLL-2000 slice - not a reproduction")
    for name in names:
        t0 = time.process_time()
        data = nlp_dataset(name, quick, data_dir)
        p = data.problem
        build_cpu = time.process_time() - t0
        C = sigma2_factor       # --sigma2 factor: sigma^2 = C N = factor * l, l = N training events
        objective = p.objective(C)
        key = problem_key(name, p, C, quick)
        refs[name] = load_reference(reference, name, key)       # refuses a reference for another problem now
        iters = reference_iters if reference_iters is not None else (15 if quick else 150)
        if refs[name] is None and iters > 0:
            refs[name] = own_reference(objective, iters)
        f_star = refs[name]["f"] if refs[name] else math.inf
        evaluate = every_kth(data.evaluate, evaluate_every) if evaluate_every > 0 else None
        final_evaluate = data.evaluate if evaluate_every <= 0 else None
        kernels = {VARIANTS.get(s, (s,))[0] for s in solvers}
        if p.nnz() > BIG_NNZ:     # same builder, same array types: compiles the same kernels for little CPU
            warm_up_solvers(nlp_dataset(name if name != "brown" else "conll2000-pos", True).problem.objective(C),
                            kernels)
        else:
            warm_up_solvers(objective, kernels)
        traces = {}
        panels[name] = (traces, f_star)
        metric_names.add(data.metric_name)
        notes[name] = (f"- {name}: {p.n_contexts:,} merged contexts, |Y| = {p.n_labels}, n = {p.n_features:,}, "
                       f"#nz = {p.nnz():,}; C = {sigma2_factor:g} l / N = {C:.4g}; building the data "
                       f"{build_cpu:.0f} CPU s")
        for s in solvers:
            solver, options = VARIANTS.get(s, (s, lambda problem: {}))
            traces[s] = run(objective, solver, time_limit=_limit(time_limit, name, s), max_iter=max_iter,
                            evaluate=evaluate, final_evaluate=final_evaluate, **options(p))
            traces[s].solver = s
            traces[s].meta.update(problem=key, header=header, note=notes[name], metric_name=data.metric_name)
            f_star = min(f_star, min(traces[s].column("objective")))
            panels[name] = (traces, f_star)
            save_traces(out_dir, name, traces, f_star=f_star, data=name)   # every trace again: f_star may have moved
            _fig3_report(out_dir, panels, header, notes, metric_names, refs)
    return panels


def problem_key(name, p, C, quick=False):
    """What identifies the Maxent problem of a run: compared with a reference's recorded settings."""
    return {"dataset": name, "quick": bool(quick), "C": float(C), "contexts": int(p.n_contexts),
            "features": int(p.n_features), "nnz": int(p.nnz())}


REFERENCE_KEYS = ("dataset", "C", "contexts", "features", "nnz")     # what a reference file must agree on


def load_reference(spec, name, key):
    """The reference for data set ``name`` (dict with f, source and, from a file, grad_norm, gap_bound =
    ||grad f||^2 / 2, ...) or None. ``spec``: None, a number (P* given), the path of a reference json
    written by the Huang et al. 2010 Figure 2 run (huang2010_fig2: TRON warm-started at the best raced
    point, same builder, seen pairs) or a dict {data: number | path}. A file whose recorded settings do
    not name the same problem as ``key`` (data set, C, contexts, features, non-zeros) is refused."""
    if isinstance(spec, dict):
        spec = spec.get(name)
    if spec is None:
        return None
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        if not math.isfinite(spec):
            raise InvalidInputError(f"reference for {name}: {spec!r} is not a finite objective value")
        return {"f": float(spec), "source": "a value given by the caller", "grad_norm": None, "gap_bound": None}
    path = Path(spec)
    try:
        ref = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise InvalidInputError(f"reference for {name}: cannot read {path}: {err}") from None
    settings = ref.get("settings") if isinstance(ref, dict) else None
    if not isinstance(settings, dict) or not isinstance(ref.get("f"), (int, float)) or not math.isfinite(ref["f"]):
        raise InvalidInputError(f"reference {path}: not a reference file (needs a finite 'f' and its 'settings')")
    bad = [f"{k} = {settings.get(k)!r} there, {key[k]!r} here" for k in REFERENCE_KEYS if not _same(settings.get(k), key[k])]
    if bad:
        raise InvalidInputError(f"reference {path} is for another problem than Figure 3's {name}: " + "; ".join(bad))
    return dict(ref, f=float(ref["f"]), source=str(path))


def _same(recorded, ours):
    if isinstance(ours, float):
        return isinstance(recorded, (int, float)) and math.isclose(recorded, ours, rel_tol=1e-9)
    return recorded == ours


def own_reference(objective, iters):
    """A TRON reference run here (from w = 0, ``iters`` iterations or ||grad f|| <= 1e-9 relative)."""
    r = reference_optimum(objective, tol=1e-9, max_iter=iters)
    return {"f": r.f, "grad_norm": r.grad_norm, "iterations": r.iterations, "stop_reason": r.stop_reason,
            "source": "a TRON run from w = 0 in this experiment", "gap_bound": r.gap_bound}


def p_star_lines(name, traces, f_star, ref):
    """Where P* = min(reference f, best run) came from, and its certified error: f is 1-strongly convex,
    so f_ref - f_opt <= ||grad f(w_ref)||^2 / 2, and any dual objective is a lower bound on f_opt."""
    best = min(traces, key=lambda s: min(traces[s].column("objective")))
    f_best = min(traces[best].column("objective"))
    duals = [d for tr in traces.values() for d in tr.column("dual_objective") if d is not None and math.isfinite(d)]
    bounds = [(f_star - max(duals), f"the best dual objective {max(duals):.10g} (weak duality)")] if duals else []
    if ref is None:
        lines = [f"- {name}: P* = {f_star:.10g}, the lowest objective of the runs ({LABELS.get(best, best)}); "
                 f"{NO_REFERENCE_NOTE[2:]}"]
    else:
        if ref.get("gap_bound") is not None:
            bounds.append((ref["gap_bound"], "the reference's ||grad f||^2 / 2 (f is 1-strongly convex, P* <= its f)"))
        origin = "the reference's f" if ref["f"] <= f_best else f"{LABELS.get(best, best)}'s objective, below the reference's f"
        how = "".join(f", {label} {ref[k]}" for k, label in (("warm_start", "warm-started at"), ("iterations", "iterations"),
                                                           ("stop_reason", "stopped by")) if ref.get(k) is not None)
        grad = "" if ref.get("grad_norm") is None else f", ||grad f|| = {ref['grad_norm']:.3g}"
        lines = [f"- {name}: P* = {f_star:.10g} = min(reference f, best objective of the runs), here {origin}; "
                 f"reference from {ref['source']}: f = {ref['f']:.10g}{grad}{how}"]
        if duals and max(duals) > ref["f"] + 1e-9 * abs(ref["f"]):
            lines.append(f"- **{name}: the reference's f is below a dual objective of these runs ({max(duals):.10g}): "
                         "it cannot be this problem's optimum value**")
        if ref.get("gap_bound") is not None and f_best < ref["f"] - ref["gap_bound"] - 1e-9 * abs(ref["f"]):
            lines.append(f"- **{name}: a run ended below the reference's certified lower bound: the reference is "
                         "inconsistent with these runs**")
    if bounds:
        err, why = min(bounds)
        rel = err / abs(f_star)
        lines.append(f"- {name}: certified error of P*: 0 <= P* - f_opt <= {err:.3g} ({rel:.1e} relative), by {why}"
                     + (f"; relative differences near or below {rel:.1e} do not mean much" if rel > 1e-6 else ""))
    else:
        lines.append(f"- {name}: the error of P* is not certified (no gradient norm, no dual objective)")
    return lines


def fig3_resummarize(out_dir, reference=None):
    """Rebuild summary.md, claims.json, fig3.png and the traces' f_star of an earlier :func:`fig3` run in
    ``out_dir`` from its saved traces with P* = min(``reference``, best run) - nothing is solved again.
    ``reference`` as in :func:`load_reference`, checked against the problem the traces record (runs made
    before the traces recorded it: the problem line of that run's summary.md)."""
    out_dir = Path(out_dir)
    loaded = [Trace.from_json(f) for f in sorted(out_dir.glob("*.json")) if f.name != "claims.json"]
    loaded = [t for t in loaded if t.records and "data" in t.meta]
    if not loaded:
        raise InvalidInputError(f"{out_dir}: no Figure 3 traces to summarize")
    order = {s: i for i, s in enumerate(ME_SOLVERS)}
    by_data = {}
    for tr in sorted(loaded, key=lambda t: order.get(t.solver, len(order))):
        by_data.setdefault(tr.meta["data"], {})[tr.solver] = tr
    panels, notes, refs, metric_names, header = {}, {}, {}, set(), None
    for name, traces in by_data.items():
        meta = next(iter(traces.values())).meta
        if "problem" in meta:
            key, note, lines = meta["problem"], meta["note"], meta["header"]
        else:
            key, note, lines = _legacy_settings(out_dir, name)
        header = header or [h for h in lines if h != NO_REFERENCE_NOTE]
        metric = meta.get("metric_name", "F1" if "chunk" in name else "accuracy")
        metric_names.add(metric)
        notes[name] = note
        refs[name] = load_reference(reference, name, key)
        runs_best = min(min(t.column("objective")) for t in traces.values())
        f_star = min(runs_best, refs[name]["f"]) if refs[name] else runs_best
        for tr in traces.values():
            tr.meta.update(problem=key, note=note, header=lines, metric_name=metric,
                           p_star_source=None if refs[name] is None else refs[name]["source"])
        save_traces(out_dir, name, traces, f_star=f_star, data=name)
        panels[name] = (traces, f_star)
    header = header + [f"- summary rebuilt from the saved traces with a new P* by yu2011_fig3.fig3_resummarize "
                       f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}); no method was run again"]
    _fig3_report(out_dir, panels, header, notes, metric_names, refs)
    return panels


def _legacy_settings(out_dir, name):
    """(problem key, problem line, header lines) from the summary.md of a fig3 run made before the
    traces recorded them."""
    path = out_dir / "summary.md"
    settings = [s for s in (path.read_text().split("\n## ")[0].splitlines() if path.exists() else [])
                if s.startswith("- ")]
    pattern = re.compile(rf"- {re.escape(name)}: ([\d,]+) merged contexts, \|Y\| = \d+, n = ([\d,]+), "
                         r"#nz = ([\d,]+); C = [^=]+= ([^;]+);")
    note = next((s for s in settings if pattern.match(s)), None)
    if note is None:
        raise InvalidInputError(f"{path}: no problem line for {name}; cannot check a reference against it")
    m = pattern.match(note)
    key = {"dataset": name, "quick": False, "C": float(m[4]), "contexts": int(m[1].replace(",", "")),
           "features": int(m[2].replace(",", "")), "nnz": int(m[3].replace(",", ""))}
    return key, note, [s for s in settings if not re.match(r"- [\w-]+: ", s)]


def _fig3_report(out_dir, panels, header, notes, metric_names, refs):
    """summary.md, claims.json and fig3.png from the methods finished so far."""
    settings = list(header)
    for name, (traces, f_star) in panels.items():
        if traces:
            settings += p_star_lines(name, traces, f_star, refs.get(name))
        settings.append(notes[name])
        rss = max((tr.meta.get("peak_rss_gb", 0.0) for tr in traces.values()), default=0.0)
        settings.append(f"- {name}: peak RSS of the process so far {rss:.2f} GB; per method (CPU s used, "
                        "iterations, stop, final test metric): " + "; ".join(
                            f"{LABELS.get(k, k)} {tr.records[-1]['seconds']:.0f} s, {len(tr) - 1} it, "
                            f"{tr.meta.get('stop_reason')}, {_final_metric(tr)}" for k, tr in traces.items()))
    done = {d: (t, f) for d, (t, f) in panels.items() if t}
    plot_convergence({d: (labelled(t, f), f) for d, (t, f) in done.items()}, out_dir / "fig3.png",
                     metric_name=" / ".join(sorted(metric_names)), title="Yu et al. 2011, Figure 3 (Maxent)")
    claims = []
    for data, (traces, f_star) in done.items():
        for lv in (1e-2, 1e-4):
            for cd in ("cddual", "cddual-capped"):
                if {cd, "eg"} <= set(traces):
                    claims.append((f"{data}: {LABELS[cd]} reaches {lv:g} before EG",
                                   faster(traces[cd], traces["eg"], f_star, lv), "paper: 'CDdual is generally faster'"))
        if {"cddual", "cd"} <= set(traces):
            claims.append((f"{data}: CDdual has better final convergence than CDprimal (reaches 1e-4 first)",
                           faster(traces["cddual"], traces["cd"], f_star, 1e-4), ""))
            claims.append((f"{data}: CDprimal is the fastest in the beginning (reaches 1e-1 before CDdual)",
                           faster(traces["cd"], traces["cddual"], f_star, 1e-1), ""))
        for other in ("lbfgs", "tron"):
            if {"cddual", other} <= set(traces):
                claims.append((f"{data}: CDdual reaches 1e-2 before {LABELS[other]}",
                               faster(traces["cddual"], traces[other], f_star, 1e-2), "paper: CDdual beats the primal "
                               "quasi-Newton/Newton methods"))
        for a, b, when, what in (("cddual", "eg", "end", "'CDdual is generally faster' than EG"),
                                 ("cddual-capped", "eg", "end", "'CDdual is generally faster' than EG"),
                                 ("cd", "cddual", "start", "'CDprimal is the fastest in the beginning'"),
                                 ("cddual", "lbfgs", "end", "CDdual competitive with the primal methods"),
                                 ("cddual", "tron", "end", "CDdual competitive with the primal methods")):
            if {a, b} <= set(traces):
                t, fa, fb = equal_time(traces[a], traces[b], when)
                claims.append((f"{data}: {LABELS[a]} has a lower objective than {LABELS[b]} at equal time "
                               f"(t = {t:.3g} s, {'when both have made one pass' if when == 'start' else 'the end of the shorter run'})",
                               fa < fb, f"{fa:.7g} vs {fb:.7g}; independent of P*; paper: {what}"))
        if {"cddual", "cddual-capped"} <= set(traces):
            claims.append((f"{data}: (ours) Algorithm 6 to eps' reaches 1e-4 before Algorithm 6 capped at |Y| pairs",
                           faster(traces["cddual"], traces["cddual-capped"], f_star, 1e-4), "not a claim of the paper"))
    body = ["## Time (s) to reach a relative difference", "", *timing_rows(done), "",
            "## Primal objective reached within t CPU seconds (independent of P*)", "", *objective_rows(done), "",
            "![fig3](fig3.png)"]
    write_summary(out_dir, "Yu et al. (2011), Figure 3: maximum entropy on NLP data", settings, body, claims)


def equal_time(a, b, when="end"):
    """(t, f_a(t), f_b(t)): each trace's objective at its last record within t CPU s, t = the end of the
    shorter run (``when="end"``) or the time by which both have finished their first pass ("start")."""
    if when == "start":
        t = max(a.records[min(1, len(a) - 1)]["seconds"], b.records[min(1, len(b) - 1)]["seconds"])
    else:
        t = min(a.records[-1]["seconds"], b.records[-1]["seconds"])
    return (t, *([r["objective"] for r in tr.records if r["seconds"] <= t][-1] for tr in (a, b)))


CHECKPOINTS = (10, 30, 60, 100, 150, 200, 300, 600, 1200)


def objective_rows(panels, checkpoints=CHECKPOINTS):
    """Markdown rows: each method's primal objective at its last record within t CPU s (P* not needed,
    which matters where no run got close to the optimum)."""
    horizon = max((tr.records[-1]["seconds"] for traces, _ in panels.values() for tr in traces.values()), default=0)
    ts = [t for t in checkpoints if t <= horizon] or [checkpoints[0]]
    rows = ["| data | method | " + " | ".join(f"{t:g} s" for t in ts) + " |", "|---|---|" + "---|" * len(ts)]
    for data, (traces, _) in panels.items():
        for name, tr in traces.items():
            cells = []
            for t in ts:
                within = [r["objective"] for r in tr.records if r["seconds"] <= t]
                cells.append(f"{within[-1]:.6g}" + ("" if tr.records[-1]["seconds"] >= t else " (stopped)"))
            rows.append(f"| {data} | {LABELS.get(name, name)} | " + " | ".join(cells) + " |")
    return rows


def _final_metric(trace):
    m = trace.records[-1].get("metric")
    return "-" if m is None or not math.isfinite(m) else f"{m:.2f}"


def _limit(time_limit, data, method):
    """A number, {method: s} or {data: {method: s}}."""
    if isinstance(time_limit, dict):
        inner = time_limit.get(data, time_limit)
        return inner[method] if isinstance(inner, dict) else inner
    return time_limit


REPRODUCE = {"yu2011-fig3": fig3}
