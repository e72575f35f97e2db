"""The committed report of a comparison: its full result without the per-iteration traces.

House rule (docs/decisions/0054): generated outputs are not source, so `benchmarks/results/<name>.json`
is a short report and the full result (every run's raw curve, for plots and debugging) goes to
`<name>.full.json` next to it, which git ignores. ``compact`` is a pure function of the full result, so
a committed report can be rebuilt from a full one without running anything again.

What a trace was used for after the run is kept as one small record per run (``run_summary``):
its number of points, its largest wall and CPU clock readings, its best objective and the index of the
first point within each level of P*. SUMMARY.md needs those (seconds per L-BFGS iteration, iterations
to 1e-4, the longest scikit-learn call when it fell short of a level); every time-to-level, median,
ratio and check the tables show was computed from the traces before the report is written and stays.
"""
from __future__ import annotations

import numbers
import os
import shlex
import sys
from pathlib import Path

from . import common

FULL_SUFFIX = ".full.json"
DROPPED = "per-iteration traces: in <name>.full.json next to this file when benchmarks/run wrote it (not committed)"


def is_points(value):
    """A trace: a list of points, each a list of numbers (wall, cpu, f, ...) — None allowed after f."""
    return (isinstance(value, list) and all(isinstance(p, (list, tuple)) and len(p) >= 3 for p in value)
            and all(isinstance(x, numbers.Real) for p in value for x in p[:3]))


def _is_runs_of_traces(runs):
    """``result["runs"]`` of binary.py / maxent.py: tool -> one trace per repeat."""
    return (isinstance(runs, dict) and bool(runs)
            and all(isinstance(rs, list) and all(is_points(pts) for pts in rs) for rs in runs.values()))


def run_summary(points, p_star=None, levels=()):
    """What a trace or a sweep leaves in the report. A trace's clocks are cumulative, so its largest reading is
    its total and its point i is iteration i; a sweep's points are separate calls, so it is its longest call."""
    summary = {"points": len(points),
               "wall_s": max((p[0] for p in points), default=None),
               "cpu_s": max((p[1] for p in points), default=None),
               "best_f": min((p[2] for p in points), default=None)}
    if p_star is not None:
        summary["reached_at"] = {k: next((i for i, p in enumerate(points)
                                          if common.rel_diff(p[2], p_star) <= float(k)), None) for k in levels}
    return summary


def compact(result):
    """The committed report of ``result`` (a new dict; ``result`` is not changed). Idempotent: a report
    passes through unchanged, so readers may call it on whatever they load."""
    report = dict(result)
    dropped = False
    levels = result.get("levels") or [common.level_key(e) for e in common.LEVELS]
    p_star = result.get("p_star")
    if _is_runs_of_traces(result.get("runs")):           # binary.py, maxent.py
        report["run_summaries"] = {tool: [run_summary(pts, p_star, levels) for pts in rs]
                                   for tool, rs in result["runs"].items()}
        del report["runs"]
        dropped = True
    tools = result.get("tools")
    if isinstance(tools, dict) and any(isinstance(t, dict) and is_points(t.get("points")) for t in tools.values()):
        report["tools"] = {}                              # crf.py: one trace per tool
        for name, tool in tools.items():
            if isinstance(tool, dict) and is_points(tool.get("points")):
                tool = {k: v for k, v in tool.items() if k != "points"}
                tool["trace"] = run_summary(result["tools"][name]["points"], p_star, levels)
            report["tools"][name] = tool
        dropped = True
    if dropped:
        report["dropped"] = DROPPED
    return report


def has_traces(result):
    """True if ``result`` still carries a per-iteration trace where the comparisons put one."""
    tools = result.get("tools")
    return _is_runs_of_traces(result.get("runs")) or (
        isinstance(tools, dict) and any(isinstance(t, dict) and "points" in t for t in tools.values()))


def full_path(path):
    """``DIR/name.json`` -> ``DIR/name.full.json`` (where benchmarks/run writes the full result)."""
    path = Path(path)
    return path.with_name(path.name[:-len(".json")] + FULL_SUFFIX) if path.name.endswith(".json") else path


def command_line(argv=None, environ=None):
    """The command that is running, as someone would type it again from the repository root: benchmarks/run
    or `python -m benchmarks.<module>`, after NUMBA_NUM_THREADS when it is set (it decides the threads)."""
    argv = list(sys.argv if argv is None else argv)
    environ = os.environ if environ is None else environ
    prog = Path(argv[0]).resolve() if argv and argv[0] else None
    try:
        rel = prog.relative_to(common.ROOT) if prog else None
    except ValueError:
        rel = None
    if rel is not None and rel.suffix == ".py":
        head = ["python", "-m", ".".join(rel.with_suffix("").parts)]
    elif rel is not None:
        head = [rel.as_posix()]
    else:
        head = argv[:1]
    env = [f"NUMBA_NUM_THREADS={environ['NUMBA_NUM_THREADS']}"] if "NUMBA_NUM_THREADS" in environ else []
    return shlex.join(env + head + argv[1:])


def main(argv=None):
    """``python -m benchmarks.report FILE.json ...``: turn full results written before the reports existed into
    reports in place; each full result is kept as FILE.full.json (ignored by git) when it had traces."""
    import argparse
    import json
    ap = argparse.ArgumentParser(prog="python -m benchmarks.report", description=main.__doc__.split(":")[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--reproduce", default=None,
                    help="the command that wrote the file(s), recorded when the file has none")
    args = ap.parse_args(argv)
    for path in args.files:
        try:
            result = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise SystemExit(f"{path}: not a readable JSON result ({exc})")
        if not isinstance(result, dict):
            raise SystemExit(f"{path}: not a benchmark result (a JSON object)")
        if args.reproduce and not result.get("reproduce"):
            result["reproduce"] = args.reproduce
        if has_traces(result):
            full_path(path).write_text(json.dumps(result, indent=1))
        path.write_text(json.dumps(compact(result), indent=1))
        print(f"{path}: {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
