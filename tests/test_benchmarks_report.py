"""The committed benchmark results are short reports (docs/decisions/0054): no per-iteration traces, a size
bound; and the compaction of a full result (benchmarks/report.py) keeps what SUMMARY.md is built from.
Made-up results: no data, no competitors installed."""
import argparse
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import common, maxent, report, summary  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MAX_REPORT_BYTES = 40_000        # the largest report (cores.json) is ~29 KB; conll-pos with traces was 237 KB
LEVELS = (1e-2, 1e-4)
KEYS = [common.level_key(e) for e in LEVELS]
P_STAR = 1000.0


def committed_reports():
    return sorted(p for p in RESULTS.glob("*.json") if not p.name.endswith(report.FULL_SUFFIX))


def trace_paths(value, where="", top=True):
    """Where ``value`` holds a trace as the comparisons write them: a "points" list (crf.py) or top-level
    "runs" of tool -> repeats -> points (binary.py, maxent.py), or any long list of numeric rows."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "points" and isinstance(item, list):
                found.append(f"{where}/points")
            if top and key == "runs" and isinstance(item, dict) and any(
                    isinstance(rs, list) and any(isinstance(r, list) and r and isinstance(r[0], list) for r in rs)
                    for rs in item.values()):
                found.append(f"{where}/runs")
            found += trace_paths(item, f"{where}/{key}", top=False)
    elif isinstance(value, list):
        if len(value) > 50 and all(isinstance(r, list) and r and all(isinstance(x, (int, float)) for x in r)
                                   for r in value):
            found.append(where)
        for i, item in enumerate(value):
            found += trace_paths(item, f"{where}/{i}", top=False)
    return found


@pytest.mark.parametrize("path", committed_reports(), ids=lambda p: p.name)
def test_committed_results_are_short_reports(path):
    assert path.stat().st_size <= MAX_REPORT_BYTES, f"{path.name}: {path.stat().st_size} bytes"
    res = json.loads(path.read_text())
    assert trace_paths(res) == [], path.name
    assert not report.has_traces(res)


def test_the_trace_check_sees_the_traces_it_is_meant_to_catch():
    full = maxent_result()
    assert "/runs" in trace_paths(full) and report.has_traces(full)
    crf = {"tools": {"CRFsuite lbfgs": {"points": [[0.1, 0.1, 5.0]]}}}
    assert trace_paths(crf) == ["/tools/CRFsuite lbfgs/points"] and report.has_traces(crf)


def trace(n, rate, cpu_per_it, start=2.0):
    """A made-up solver trace: f_i = P*(1 + start * rate^i) at cumulative clocks i * cpu_per_it."""
    return [[1.5 * i * cpu_per_it, i * cpu_per_it, P_STAR * (1 + start * rate ** i)] for i in range(n + 1)]


def maxent_result():
    """A full conll-pos result as maxent.py builds it, small: scikit-learn's lbfgs never reaches 1e-4."""
    runs = {"loglin auto": [trace(12, 0.3, 0.5), trace(12, 0.3, 0.6)],
            "loglin lbfgs": [trace(30, 0.6, 0.25), trace(28, 0.6, 0.3)],
            "sklearn lbfgs": [trace(9, 0.5, 1.0), trace(11, 0.5, 0.9)],
            "sklearn saga": [[[2.0, 1.8, P_STAR * 1.05, 5], [4.0, 3.7, P_STAR * 1.002, 10]]] * 2}
    kinds = {t: ("sweep" if t == "sklearn saga" else "trace") for t in runs}
    tools = {t: {"kind": kinds[t], "time_to": common.summarize_tool(rs, P_STAR, LEVELS, kinds[t]),
                 "final_rel_diff": common.rel_diff(min(p[2] for p in rs[0]), P_STAR), "peak_mb": 1.0,
                 "calls_or_iterations": [len(r) for r in rs]} for t, rs in runs.items()}
    best_ours, speedup = {}, {"sklearn lbfgs": {}}
    for clock in ("wall", "cpu"):
        best_ours[clock], speedup["sklearn lbfgs"][clock] = {}, {}
        for k in KEYS:
            best_ours[clock][k] = min((tools[t]["time_to"][clock][k]["median"], t)
                                      for t in runs if t.startswith("loglin"))
            theirs = tools["sklearn lbfgs"]["time_to"][clock][k]["median"]
            speedup["sklearn lbfgs"][clock][k] = None if theirs is None else theirs / best_ours[clock][k][0]
    return {"benchmark": "conll-pos", "C": 10.0, "quick": False, "repeats": 2, "slice": False, "p_star": P_STAR,
            "levels": KEYS, "tools": tools, "best_ours": best_ours, "speedup_vs": speedup, "runs": runs,
            "loadavg_before": [1.0, 1.0, 1.0], "loadavg_after": [1.0, 1.0, 1.0]}


def summary_of(out):
    summary.main(argparse.Namespace(out=out))
    lines = (out / "SUMMARY.md").read_text().splitlines()
    return [line for line in lines if not line.startswith("Written ")]


def test_compaction_keeps_what_the_summary_reads(tmp_path, capsys):
    full = maxent_result()
    runs = full["runs"]
    assert tools_reach(runs["sklearn lbfgs"], 1e-4) == [None, None]        # the lower-bound row is exercised
    common.write("conll-pos", "# made up\n", full, tmp_path)
    written = json.loads((tmp_path / "conll-pos.json").read_text())
    kept = json.loads(report.full_path(tmp_path / "conll-pos.json").read_text())
    assert "runs" not in written and kept["runs"] == runs and written["reproduce"] == kept["reproduce"]
    lines = summary_of(tmp_path)
    text = "\n".join(lines)
    # the L-BFGS note, from the first trace of each tool: CPU per iteration and iterations to 1e-4
    ours, theirs = runs["loglin lbfgs"][0], runs["sklearn lbfgs"][0]
    assert (f"conll-pos: {ours[-1][1] / (len(ours) - 1):.3f} s per iteration, {tools_reach([ours], 1e-4)[0]} "
            f"iterations to 1e-4 (loglin lbfgs) vs {theirs[-1][1] / (len(theirs) - 1):.3f} s, None iterations") in text
    # scikit-learn fell short of 1e-4: its longest call over our best time bounds the speed-up from below
    for clock, c in (("cpu", 1), ("wall", 0)):
        longest = max(p[c] for run in runs["sklearn lbfgs"] for p in run)
        bound = longest / full["best_ours"][clock]["1e-04"][0]
        target = f"| conll-pos: sklearn lbfgs time / our best to 1e-4 ({clock})"
        row = next(line for line in lines if line.startswith(target))
        assert f"≥ {bound:.1f}×" in row and f"| {bound:.2f}× |" in row
    # and the full result read as is gives the same summary
    other = tmp_path / "full"
    other.mkdir()
    (other / "conll-pos.json").write_text(json.dumps(full))
    assert summary_of(other) == lines
    capsys.readouterr()


def tools_reach(traces, eps):
    return [next((i for i, p in enumerate(t) if common.rel_diff(p[2], P_STAR) <= eps), None) for t in traces]


def test_compact_is_pure_and_idempotent():
    full = maxent_result()
    before = json.dumps(full, sort_keys=True)
    short = report.compact(full)
    assert json.dumps(full, sort_keys=True) == before
    assert report.compact(short) == short
    for tool, rs in full["runs"].items():
        for run, kept in zip(rs, short["run_summaries"][tool]):
            assert kept["points"] == len(run) and kept["best_f"] == min(p[2] for p in run)
            assert kept["cpu_s"] == max(p[1] for p in run) and kept["wall_s"] == max(p[0] for p in run)
            assert [kept["reached_at"][k] for k in KEYS] == [tools_reach([run], e)[0] for e in LEVELS]
    for key in ("tools", "best_ours", "speedup_vs", "p_star", "levels"):
        assert short[key] == full[key]


def test_crf_points_become_one_summary_per_tool():
    points = trace(20, 0.4, 0.7)
    res = {"benchmark": "crf", "p_star": P_STAR, "tools": {"loglin eg": {"cpu": 14.0, "points": points}}}
    short = report.compact(res)
    tool = short["tools"]["loglin eg"]
    assert "points" not in tool and tool["cpu"] == 14.0 and tool["trace"]["points"] == len(points)
    assert tool["trace"]["reached_at"]["1e-04"] == tools_reach([points], 1e-4)[0]
    assert res["tools"]["loglin eg"]["points"] is points


def test_merge_reads_the_full_result_next_to_a_report(tmp_path, capsys):
    full = maxent_result()
    full["tools"]["loglin auto"]["peak_mb_runs"] = [3.0, 4.0]
    full.update(loadavg_after=[2.0, 2.0, 2.0], wall_seconds=5.0)
    common.write("conll-pos", "# made up\n", full, tmp_path)
    runs = {t: [] for t in full["runs"]}
    memory = {t: [] for t in full["runs"]}
    merged = maxent.merge_earlier([tmp_path / "conll-pos.json"], runs, memory, "conll-pos", LEVELS)
    assert merged[0]["file"].name == "conll-pos.full.json"
    assert runs["loglin lbfgs"] == [[tuple(p) for p in r] for r in full["runs"]["loglin lbfgs"]]
    assert memory["loglin auto"] == [3.0, 4.0]
    report.full_path(tmp_path / "conll-pos.json").unlink()
    with pytest.raises(SystemExit, match="conll-pos.json: a report without its runs"):
        maxent.merge_earlier([tmp_path / "conll-pos.json"], runs, memory, "conll-pos", LEVELS)
    capsys.readouterr()


def test_command_line_as_typed_from_the_repository_root():
    run = [str(ROOT / "benchmarks" / "run"), "--only", "a9a", "--repeats", "3"]
    assert report.command_line(run, {"NUMBA_NUM_THREADS": "1"}) == \
        "NUMBA_NUM_THREADS=1 benchmarks/run --only a9a --repeats 3"
    assert report.command_line([str(ROOT / "benchmarks" / "l1.py"), "--quick"], {}) == \
        "python -m benchmarks.l1 --quick"
