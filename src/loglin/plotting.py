"""Convergence plots from traces, in the papers' style (Huang et al. 2010, Figure 2).

One column per data set, up to three rows:
  relative function difference (f - f*) / f*  (their eq. 42), log scale;
  ||grad f||, log scale;
  held-out metric (accuracy or F1).
The x-axis is training seconds (or any other trace column, e.g. effective
iterations). Uses the non-interactive Agg backend: works without a screen.
"""
from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROWS = ("relative difference", "gradient norm", "metric")


def reference_optimum(traces) -> float:
    """The lowest objective any trace reached (use a tighter run when you have one)."""
    return min(min(t.column("objective")) for t in traces.values())


def relative_difference(trace, f_star):
    return [(f - f_star) / abs(f_star) if f_star else f - f_star for f in trace.column("objective")]


def plot_convergence(panels: dict, path, *, x: str = "seconds", metric_name: str | None = "held-out metric",
                     rows=ROWS, title: str | None = None) -> Path:
    """Write a PNG. ``panels`` maps a data set name to ``(traces, f_star)`` where
    ``traces`` maps solver name -> Trace."""
    rows = [r for r in rows if r != "metric" or _any_metric(panels)]
    fig, axes = plt.subplots(len(rows), len(panels), figsize=(4.6 * len(panels), 3.3 * len(rows)),
                             squeeze=False)
    for j, (name, (traces, f_star)) in enumerate(panels.items()):
        if f_star is None:
            f_star = reference_optimum(traces)
        for i, row in enumerate(rows):
            ax = axes[i][j]
            for solver, trace in traces.items():
                xs = trace.column(x)
                if row == "relative difference":
                    ys = relative_difference(trace, f_star)
                    pts = [(a, b) for a, b in zip(xs, ys) if b > 0 and math.isfinite(b)]
                    ax.set_yscale("log")
                elif row == "gradient norm":
                    pts = [(a, b) for a, b in zip(xs, trace.column("grad_norm")) if b > 0]
                    ax.set_yscale("log")
                else:
                    pts = [(a, b) for a, b in zip(xs, trace.column("metric")) if math.isfinite(b)]
                if pts:
                    ax.plot(*zip(*pts), marker=".", markersize=3, linewidth=1.2, label=solver)
            ax.set_xlabel("training time (s)" if x == "seconds" else x)
            ax.set_ylabel({"relative difference": "(f - f*) / f*", "gradient norm": "||grad f||"}.get(
                row, metric_name or "metric"))
            if row == "metric":
                _zoom_on_final_values(ax, traces)
            if i == 0:
                ax.set_title(name)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][j].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _any_metric(panels):
    return any(any("metric" in r for r in t.records) for traces, _ in panels.values() for t in traces.values())


def _zoom_on_final_values(ax, traces):
    """As the paper's third row: the y-range around where the metrics end, not from the 0 of w = 0."""
    finals = [v for t in traces.values() for v in [_last_finite(t.column("metric"))] if v is not None]
    if not finals:
        return
    lo, hi = min(finals), max(finals)
    margin = max(1.0, 5 * (hi - lo))
    top = max(v for t in traces.values() for v in t.column("metric") if math.isfinite(v))
    ax.set_ylim(lo - margin, max(hi, top) + 0.2 * margin)


def _last_finite(values):
    return next((v for v in reversed(values) if v is not None and math.isfinite(v)), None)
