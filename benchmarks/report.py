"""Turn raw runs into the summary: P*, time-to-epsilon medians, ratios, tables."""
from __future__ import annotations

import statistics

REFERENCE = "LIBLINEAR -s 0"


def level_key(eps: float) -> str:
    return f"{eps:.0e}"


def p_star(runs_by_tool) -> tuple[float, str]:
    """Lowest objective seen by any tool (their tightest runs included) and who found it."""
    best, who = float("inf"), ""
    for tool, runs in runs_by_tool.items():
        for run in runs:
            for point in run.points:
                if point[1] < best:
                    best, who = point[1], tool
    return best, who


def summarize(runs_by_tool, levels, p_opt, accuracy):
    """Per tool: per-repeat and median time to each level, final objective, test accuracy."""
    summary = {}
    for tool, runs in runs_by_tool.items():
        per_level = {}
        for eps in levels:
            times = [run.time_to(p_opt, eps) for run in runs]
            reached = [t for t in times if t is not None]
            median = statistics.median(reached) if len(reached) == len(times) else None
            per_level[level_key(eps)] = {"median": median, "runs": times,
                                         "min": min(reached) if reached else None,
                                         "max": max(reached) if reached else None}
        final = runs[0].f
        summary[tool] = {
            "kind": runs[0].kind,
            "time_to": per_level,
            "final_objective": final,
            "final_rel_diff": (final - p_opt) / abs(p_opt),
            "test_accuracy": accuracy[tool],
            "info": [run.info for run in runs],
        }
    ref = summary.get(REFERENCE)
    for tool, entry in summary.items():
        entry["ratio_to_liblinear"] = {}
        for key, lvl in entry["time_to"].items():
            base = ref["time_to"][key]["median"] if ref else None
            entry["ratio_to_liblinear"][key] = (lvl["median"] / base) if (lvl["median"] is not None and base) else None
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
    key = level_key(1e-6)
    if 1e-6 in levels:
        ratio = tron["ratio_to_liblinear"].get(key)
        out["time to 1e-6 <= 1.5x LIBLINEAR"] = {"value": ratio, "pass": ratio is not None and ratio <= 1.5}
    return out


def _seconds(lvl):
    if lvl["median"] is None:
        return "not reached"
    text = f"{lvl['median']:.4f}"
    if lvl["min"] is not None and lvl["max"] is not None and lvl["max"] > lvl["min"]:
        text += f" ({lvl['min']:.4f}–{lvl['max']:.4f})"
    return text


def _ratio(r):
    return "—" if r is None else f"{r:.2f}×"


def markdown_table(summary, levels) -> str:
    keys = [level_key(e) for e in levels]
    head = ["tool", "measured by"]
    for k in keys:
        head += [f"time to {k} s, median (min–max)", f"÷ LIBLINEAR"]
    head += ["final objective", "(f − P*)/P*", "test acc."]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for tool, entry in summary.items():
        row = [tool, "trace" if entry["kind"] == "trace" else "tolerance sweep"]
        for k in keys:
            row += [_seconds(entry["time_to"][k]), _ratio(entry["ratio_to_liblinear"][k])]
        row += [f"{entry['final_objective']:.10f}", f"{entry['final_rel_diff']:.1e}",
                f"{100 * entry['test_accuracy']:.3f}%"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)
