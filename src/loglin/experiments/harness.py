"""The one harness every experiment module is configuration over.

What a reproduction does, in the order it does it:

1. :func:`warm_up` compiles (or loads from Numba's cache) the solvers' kernels outside the clocks;
2. :func:`race` runs each solver from w = 0 with :func:`run_timed` / :func:`timed_minimize`: process
   CPU time with one Numba thread (the papers compare single-threaded codes; on a shared machine
   wall-clock time is mostly waiting for a core), evaluation off the clock;
3. :func:`reference_optimum` gives f* (TRON run tight, optionally warm-started at the best raced
   point, with the certified bound f - f_opt <= ||grad f||^2 / (2 mu));
4. :func:`time_to_level` / :func:`faster` / :func:`order_claims` turn traces into :class:`Claim`
   rows with a verdict;
5. :func:`save_traces`, :func:`write_summary`, :func:`plot_convergence` / :func:`plot_series`
   write the evidence into the output directory (``runs/NAME`` from the CLI, git-ignored).

Relative differences are the papers' (f - f*) / |f*| (Huang et al. 2010 eq. 42, Yu et al. 2011 eq. 55).
"""
from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import ConvergenceWarning
from ..plotting import plot_convergence  # noqa: F401  (re-exported: experiments plot through the harness)
from ..solvers import minimize

__all__ = ["Claim", "verdict", "relative_difference", "time_to_level", "faster", "faster_any", "best_within",
           "order_claims", "metric_agreement", "reference_note", "warm_up", "sparse_evaluator", "every_kth",
           "timed_minimize", "run_timed", "race", "Reference", "reference_optimum", "best_final_point",
           "save_trace", "save_traces", "timing_table", "write_summary", "plot_convergence", "plot_series",
           "peak_rss_gb", "output_dir"]


# ====================================================================== claims


class Claim(NamedTuple):
    """One of the paper's statements checked on our runs: ``held`` is True, False or None (undecided)."""
    text: str
    held: bool | None
    note: str = ""

    @property
    def verdict(self) -> str:
        return verdict(self.held)


def verdict(flag) -> str:
    return {True: "held", False: "did not hold", None: "undecided (level not reached)"}[flag]


def relative_difference(f, f_star) -> float:
    return (f - f_star) / abs(f_star)


def time_to_level(trace, f_star, level):
    """First training time at which (f - f*) / |f*| <= level, or None."""
    for rec in trace.records:
        if relative_difference(rec["objective"], f_star) <= level:
            return rec["seconds"]
    return None


def faster(trace_a, trace_b, f_star, level):
    """True if a reaches ``level`` first (a reaching it and b not counts), False if b does; None if neither."""
    ta, tb = time_to_level(trace_a, f_star, level), time_to_level(trace_b, f_star, level)
    if ta is None and tb is None:
        return None
    return tb is None or (ta is not None and ta <= tb)


def faster_any(traces, group_a, group_b, f_star, level):
    """Does the fastest of ``group_a`` reach ``level`` no later than the fastest of ``group_b``?"""
    ta = [time_to_level(traces[s], f_star, level) for s in group_a if s in traces]
    tb = [time_to_level(traces[s], f_star, level) for s in group_b if s in traces]
    ta, tb = [t for t in ta if t is not None], [t for t in tb if t is not None]
    if not ta and not tb:
        return None
    return bool(ta) and (not tb or min(ta) <= min(tb))


def best_within(trace, seconds):
    """The lowest objective recorded within ``seconds`` of training (inf if none)."""
    vals = [r["objective"] for r in trace.records if r["seconds"] <= seconds]
    return min(vals) if vals else math.inf


def order_claims(data, traces, f_star, order, levels=(1e-2, 1e-4)):
    """Per consecutive pair (a, b) of ``order``: a reaches each level first, and a is lower at equal time."""
    out = []
    pairs = [(a, b) for a, b in zip(order, order[1:]) if a in traces and b in traces]

    def when(s, lv):
        t = time_to_level(traces[s], f_star, lv)
        return (f"{s.upper()} {t:.3g}s" if t is not None else
                f"{s.upper()} not within its {traces[s].records[-1]['seconds']:.3g}s")
    for lv in levels:
        for a, b in pairs:
            out.append(Claim(f"{data}: {a.upper()} reaches {lv:g} before {b.upper()}",
                             faster(traces[a], traces[b], f_star, lv), f"{when(a, lv)}, {when(b, lv)}"))
    present = [traces[s] for s in order if s in traces]
    if present:
        t = min(tr.records[-1]["seconds"] for tr in present)        # all methods ran at least this long
        rel = {s: relative_difference(best_within(traces[s], t), f_star) for s in order if s in traces}
        for a, b in pairs:
            out.append(Claim(f"{data}: {a.upper()} is lower than {b.upper()} at equal training time t = {t:.3g}s",
                             rel[a] < rel[b], f"(f-f*)/f* = {rel[a]:.3g} vs {rel[b]:.3g}"))
    return out


def metric_agreement(data, traces, metric_name, tolerance):
    """Claim: every method ends at the same held-out metric (spread of ``meta['final_metric']`` <= tolerance)."""
    final = {s: tr.meta.get("final_metric") for s, tr in traces.items()}
    final = {s: v for s, v in final.items() if v is not None}
    spread = max(final.values()) - min(final.values()) if final else math.nan
    note = ", ".join(f"{s} {v:.2f}" for s, v in final.items())
    return Claim(f"{data}: all methods end at the same test {metric_name} (spread <= {tolerance:g})",
                 bool(spread <= tolerance) if final else None, f"final {metric_name}: {note}; spread {spread:.3f}")


def reference_note(name, f_ref, traces, gap_bound=None):
    """A warning line when some method ended below the reference run: then f* is that method's last
    value, and relative differences near 0 (and 'reaches 1e-4 first' verdicts) say nothing - unless the
    reference is certified (f_ref - f_opt <= gap_bound) and the method is within that bound."""
    best = min(traces, key=lambda s: min(traces[s].column("objective")))
    f_best = min(traces[best].column("objective"))
    if f_best >= f_ref:
        return []
    if gap_bound is not None and f_ref - f_best <= gap_bound:
        return [f"- {name}: {best.upper()} ended {f_ref - f_best:.2g} below the reference, within its certified "
                f"bound, so f* is {best.upper()}'s {f_best:.10g} and stays certified to {gap_bound / abs(f_best):.1e}."]
    return [f"- **{name}: f* is not from the reference run**: {best.upper()} ended at {f_best:.8g}, below "
            f"TRON's {f_ref:.8g}; small relative differences and the level verdicts are not meaningful "
            f"(give the reference more time)."]


# ====================================================================== running


def warm_up(objective, solvers, options=None):
    """One untimed iteration of each solver on ``objective``: Numba compiles (or loads) its kernels for
    these array types now, not inside the first timed iteration. ``options``: {solver: keyword arguments}.
    A warm-up never stops an experiment: a solver that fails here fails again, visibly, when timed. Its
    one iteration is not a result, so the "did not converge" warning it always earns is not shown."""
    for name in solvers:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                minimize(objective, name, tol=0.0, max_iter=1, **(options or {}).get(name, {}))
        except Exception:           # noqa: BLE001
            pass


def sparse_evaluator(evaluate, every=1.35):
    """Call ``evaluate`` only at geometrically spaced calls (1, 2, 3, 4, 5, 7, 9, ...), NaN otherwise."""
    state = {"n": 0, "next": 1.0}

    def wrapped(w):
        state["n"] += 1
        if state["n"] >= state["next"]:
            state["next"] = max(state["next"] * every, state["n"] + 1)
            return evaluate(w)
        return math.nan
    return wrapped


def every_kth(evaluate, k):
    """Call ``evaluate`` at every k-th call only (NaN otherwise): for costly test metrics (beam decoding)."""
    if k <= 1:
        return evaluate
    calls = {"n": 0}

    def wrapped(w):
        calls["n"] += 1
        return evaluate(w) if (calls["n"] - 1) % k == 0 else math.nan
    return wrapped


def timed_minimize(objective, solver, *, threads=1, **kwargs):
    """``minimize`` on ``threads`` Numba threads with ``seconds`` (and the time limit) in process CPU time.

    On the shared machine these figures are made on, wall-clock time is mostly waiting for a core; with one
    thread for every method CPU time is what an idle machine would show (``wall_seconds`` is kept too).
    """
    import numba
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, before))
    try:
        return minimize(objective, solver, clock="cpu", **kwargs)
    finally:
        numba.set_num_threads(before)


def quiet_at_target(call):
    """``call()`` (a solver run whose callback stops it at the experiment's gradient target), without the
    solver's "stopped (callback) without a verified optimum" warning when that stop is what ended it: the
    experiment reached its target (and certifies or reports it). Any other stop, and other warnings, show."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        result = call()
    for w in caught:
        if not (issubclass(w.category, ConvergenceWarning) and result.stop_reason == "callback"):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result


def run_timed(objective, solver, *, time_limit, max_iter, evaluate=None, final_evaluate=None, seed=0, threads=1,
              grad_stop=None, record_spacing=None, **options):
    """Run one solver from w = 0 to its limits (no tolerance stop); its trace, CPU-timed on ``threads`` threads.

    ``grad_stop``: also stop once ||grad f|| <= it. ``record_spacing``: record only at geometrically spaced
    times (see ``minimize``). ``final_evaluate`` scores the last w into ``meta['final_metric']`` (the trace
    samples the metric sparsely). The final w is kept as ``trace.final_w`` (not saved) for a warm-started
    reference run.
    """
    stop = None if grad_stop is None else (lambda rec: rec["grad_norm"] <= grad_stop)
    result = quiet_at_target(lambda: timed_minimize(
        objective, solver, threads=threads, tol=0.0, max_iter=max_iter, time_limit=time_limit, evaluate=evaluate,
        random_state=seed, callback=stop, record_spacing=record_spacing, **options))
    trace = result.trace
    trace.final_w = result.w
    last = trace.records[-1]
    trace.meta.update(iterations=result.iterations, cpu_seconds=last["seconds"], wall_seconds=last["wall_seconds"],
                      threads=threads, stop_reason=result.stop_reason)
    if final_evaluate is not None:
        trace.meta["final_metric"] = float(final_evaluate(result.w))
    return trace


def race(objective, solvers, run, *, options=None, on_finish=None):
    """{solver: trace}: ``run(objective, solver, **options[solver])`` for each solver in turn;
    ``on_finish(solver, traces)`` after each, so a run cut off later leaves the finished ones on disk."""
    traces = {}
    for name in solvers:
        traces[name] = run(objective, name, **(options or {}).get(name, {}))
        if on_finish is not None:
            on_finish(name, traces)
    return traces


class Reference(NamedTuple):
    """A tight TRON run: f, ||grad f||, and the bound f - f_opt <= ||grad f||^2 / (2 mu) (mu = min reg)."""
    f: float
    grad_norm: float
    iterations: int
    cpu_seconds: float
    stop_reason: str
    gap_bound: float | None
    w: np.ndarray


def reference_optimum(objective, *, tol=1e-9, max_iter=10_000, time_limit=None, grad_stop=None, w0=None):
    """f* for the relative differences: TRON from ``w0`` (default 0), stopped by ``tol``, ``max_iter``,
    ``time_limit`` CPU seconds or ||grad f|| <= ``grad_stop``. The objective is mu-strongly convex
    (mu = its smallest regularization weight), so f - f_opt <= ||grad f||^2 / (2 mu) certifies it."""
    timing = {} if time_limit is None else {"time_limit": time_limit, "clock": "cpu"}
    stop = None if grad_stop is None else (lambda rec: rec["grad_norm"] <= grad_stop)
    r = quiet_at_target(lambda: minimize(objective, "tron", w0=w0, tol=tol, max_iter=max_iter, callback=stop,
                                         **timing))
    reg = getattr(objective, "reg", None)
    mu = float(np.min(reg)) if reg is not None and np.size(reg) else 0.0
    return Reference(f=float(r.f), grad_norm=float(r.grad_norm), iterations=r.iterations,
                     cpu_seconds=float(r.train_seconds), stop_reason=r.stop_reason,
                     gap_bound=float(r.grad_norm) ** 2 / (2 * mu) if mu > 0 else None, w=r.w)


def best_final_point(traces):
    """(solver, w) of the raced trace that ended lowest among those that kept their final w, or (None, None)."""
    have_w = {s: tr for s, tr in (traces or {}).items() if getattr(tr, "final_w", None) is not None}
    if not have_w:
        return None, None
    best = min(have_w, key=lambda s: have_w[s].records[-1]["objective"])
    return best, have_w[best].final_w


def peak_rss_gb():
    """Peak resident set size of this process so far (GB; ru_maxrss is in kB on Linux)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20


# ====================================================================== writing


def output_dir(path) -> Path:
    """The experiment's output directory, created if missing."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def save_trace(out_dir, stem, trace):
    """``stem.csv`` and ``stem.json`` in ``out_dir``."""
    trace.to_csv(Path(out_dir) / f"{stem}.csv")
    trace.to_json(Path(out_dir) / f"{stem}.json")


def save_traces(out_dir, tag, traces, **meta):
    """Each trace as ``TAG-SOLVER.csv/.json``, with ``meta`` (f_star, data, ...) added to its metadata."""
    for name, tr in traces.items():
        tr.meta.update(meta)
        save_trace(out_dir, f"{tag}-{name}", tr)


def timing_table(panels, levels, label=lambda name: name) -> list[str]:
    """Markdown rows: per data set and method, the training time to each relative difference."""
    rows = ["| data | method | " + " | ".join(f"t({lv:g})" for lv in levels) + " | iterations | final (f-f*)/f* |",
            "|---|---|" + "---|" * (len(levels) + 2)]
    for data, (traces, f_star) in panels.items():
        for name, tr in traces.items():
            ts = [time_to_level(tr, f_star, lv) for lv in levels]
            final = relative_difference(tr.records[-1]["objective"], f_star)
            rows.append(f"| {data} | {label(name)} | " + " | ".join("-" if t is None else f"{t:.3g}" for t in ts)
                        + f" | {tr.records[-1]['iteration']} | {final:.2e} |")
    return rows


def write_summary(out_dir, title, settings=(), body=(), claims=None, extra=()):
    """``summary.md`` (title, settings, body, the paper's claims with verdicts, extra) and, when ``claims``
    is given, ``claims.json`` ([{claim, held, note}]) beside it."""
    lines = [f"# {title}", "", *settings, "", *body]
    if claims is not None:
        claims = [Claim(*c) for c in claims]
        lines += ["", "## The paper's claims", ""]
        lines += [f"- {c.text}: **{c.verdict}**" + (f" ({c.note})" if c.note else "") for c in claims]
        (Path(out_dir) / "claims.json").write_text(json.dumps(
            [{"claim": c.text, "held": c.held, "note": c.note} for c in claims], indent=1))
    if extra:
        lines += ["", *extra]
    (Path(out_dir) / "summary.md").write_text("\n".join(lines) + "\n")


def plot_series(path, series, *, y="objective", ylabel="objective", logy=False, title=None, x="effective_iterations",
                ref=None, clip=True, xmax=None):
    """One axes of curves: ``series`` is [(label, trace, column or None for ``y``)]; ``ref`` is subtracted
    (log scale then shows the distance to it); ``clip`` zooms on where the curves end, as the papers do."""
    import textwrap

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    finals = []
    for label, trace, column in series:
        pts = [(r.get(x), r.get(column or y)) for r in trace.records]
        pts = [(a, (b - ref) if ref is not None else b) for a, b in pts if a is not None and b is not None
               and math.isfinite(b) and (xmax is None or a <= xmax)]
        if logy:
            pts = [(a, b) for a, b in pts if b > 0]
        if pts:
            ax.plot(*zip(*pts), marker=".", markersize=3, linewidth=1.2, label=label)
            finals.append(pts[-1][1])
    if clip and finals and not logy:
        lo, hi = min(finals), max(finals)
        span = max(hi - lo, 0.02 * max(abs(hi), abs(lo)), 1e-12)
        ax.set_ylim(lo - span, hi + 2 * span)
    ax.set_xlabel("effective iterations" if x == "effective_iterations" else x)
    ax.set_ylabel(ylabel)
    if logy:
        ax.set_yscale("log")
    if title:
        ax.set_title("\n".join(textwrap.wrap(title, 80)), fontsize=7)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
