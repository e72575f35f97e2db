"""Turn raw runs into the summary: P*, time-to-epsilon medians, ratios, tables."""
from __future__ import annotations

import statistics

from .competitors import CLOCKS

REFERENCE = "LIBLINEAR -s 0"


def level_key(eps: float) -> str:
    return f"{eps:.0e}"


def p_star(runs_by_tool) -> tuple[float, str]:
    """Lowest objective seen by any tool (their tightest runs included) and who found it."""
    best, who = float("inf"), ""
    for tool, runs in runs_by_tool.items():
        for run in runs:
            for point in run.points:
                if point[2] < best:
                    best, who = point[2], tool
    return best, who


def _level_stats(runs, p_opt, eps, clock):
    times = [run.time_to(p_opt, eps, clock) for run in runs]
    reached = [t for t in times if t is not None]
    complete = bool(times) and len(reached) == len(times)
    return {"median": statistics.median(reached) if complete else None, "runs": times,
            "min": min(reached) if complete else None, "max": max(reached) if complete else None}


def summarize(runs_by_tool, levels, p_opt, accuracy):
    """Per tool and clock: per-repeat and median time to each level; final objective, accuracy."""
    summary = {}
    for tool, runs in runs_by_tool.items():
        final = runs[0].f
        summary[tool] = {
            "kind": runs[0].kind,
            "time_to": {clock: {level_key(eps): _level_stats(runs, p_opt, eps, clock) for eps in levels}
                        for clock in CLOCKS},
            "final_objective": final,
            "final_rel_diff": (final - p_opt) / abs(p_opt),
            "test_accuracy": accuracy[tool],
            "info": [run.info for run in runs],
        }
    ref = summary.get(REFERENCE)
    for entry in summary.values():
        entry["ratio_to_liblinear"] = {}
        for clock, per_level in entry["time_to"].items():
            ratios = entry["ratio_to_liblinear"][clock] = {}
            for key, lvl in per_level.items():
                base = ref["time_to"][clock][key]["median"] if ref else None
                ratios[key] = lvl["median"] / base if (lvl["median"] is not None and base) else None
    return summary


def acceptance(summary, levels, tron_label):
    """The Foundation issue's bar for our TRON against LIBLINEAR -s 0."""
    tron, ref = summary.get(tron_label), summary.get(REFERENCE)
    if tron is None or ref is None:
        return {}
    out = {}
    rel = abs(tron["final_objective"] - ref["final_objective"]) / abs(ref["final_objective"])
    out["final objective equal to 1e-6 (relative)"] = {"value": rel, "pass": rel <= 1e-6}
    acc = abs(tron["test_accuracy"] - ref["test_accuracy"])
    out["test accuracy equal to 0.1%"] = {"value": acc, "pass": acc <= 1e-3}
    if 1e-6 in levels:
        for clock in CLOCKS:
            ratio = tron["ratio_to_liblinear"][clock].get(level_key(1e-6))
            out[f"time to 1e-6 <= 1.5x LIBLINEAR ({clock} clock)"] = {
                "value": ratio, "pass": ratio is not None and ratio <= 1.5}
    return out


def _seconds(lvl):
    if lvl["median"] is None:
        return "—" if all(t is None for t in lvl["runs"]) and lvl["runs"] else "not reached"
    text = f"{lvl['median']:.4f}"
    if lvl["max"] > lvl["min"]:
        text += f" ({lvl['min']:.4f}–{lvl['max']:.4f})"
    return text


def _ratio(r):
    return "—" if r is None else f"{r:.2f}×"


def time_table(summary, levels, clock) -> str:
    """Markdown: seconds to each level (median and range) and ratio to LIBLINEAR."""
    keys = [level_key(e) for e in levels]
    head = ["tool", "measured by"]
    for k in keys:
        head += [f"time to {k} s, median (min–max)", "÷ LIBLINEAR"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for tool, entry in summary.items():
        row = [tool, "trace" if entry["kind"] == "trace" else "tolerance sweep"]
        for k in keys:
            row += [_seconds(entry["time_to"][clock][k]), _ratio(entry["ratio_to_liblinear"][clock][k])]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def final_table(summary) -> str:
    """Markdown: final objective of each tool's tightest run, distance to P*, test accuracy."""
    lines = ["| tool | final objective | (f − P*)/P* | test accuracy (a9a.t) |", "|---|---|---|---|"]
    for tool, entry in summary.items():
        lines.append(f"| {tool} | {entry['final_objective']:.10f} | {entry['final_rel_diff']:.1e} | "
                     f"{100 * entry['test_accuracy']:.3f}% |")
    return "\n".join(lines)
