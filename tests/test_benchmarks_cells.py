"""The benchmark tables' auto cells (time and peak memory against the fastest competitor) and the
--threads checks of benchmarks/run, on made-up results: no data, no competitors installed."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import maxent  # noqa: E402
from benchmarks.main import parse_args  # noqa: E402

KEYS = ["1e-02", "1e-04"]


def tool(cpu, wall, mb):
    return {"kind": "trace", "peak_mb": mb,
            "time_to": {"cpu": {k: {"median": v} for k, v in zip(KEYS, cpu)},
                        "wall": {k: {"median": v} for k, v in zip(KEYS, wall)}}}


def test_auto_cells_pick_the_fastest_competitor_per_cell():
    tools = {"loglin auto": tool([2.0, 5.0], [3.0, 6.0], 40.0),
             "loglin lbfgs": tool([1.0, 1.0], [1.0, 1.0], 10.0),          # ours: never the competitor
             "sklearn lbfgs": tool([40.0, 70.0], [50.0, 80.0], 400.0),
             "sklearn saga": tool([30.0, None], [60.0, None], 80.0)}
    times, memory = maxent.auto_cells(tools, KEYS)
    # brute force over the competitors, cell by cell
    for clock in ("cpu", "wall"):
        for k in KEYS:
            theirs = [t["time_to"][clock][k]["median"] for n, t in tools.items() if not n.startswith("loglin")]
            best = min(x for x in theirs if x is not None)
            assert times[clock][k] == pytest.approx(tools["loglin auto"]["time_to"][clock][k]["median"] / best)
    assert memory["1e-02"]["competitor"] == "sklearn saga"
    assert memory["1e-02"]["ratio"] == pytest.approx(40.0 / 80.0)
    assert memory["1e-04"]["competitor"] == "sklearn lbfgs"
    assert memory["1e-04"]["ratio"] == pytest.approx(40.0 / 400.0)


def test_auto_cells_without_an_auto_row_are_empty():
    assert maxent.auto_cells({"sklearn lbfgs": tool([1.0, 2.0], [1.0, 2.0], 1.0)}, KEYS) == ({}, {})


def test_threads_only_for_the_comparisons_that_take_them():
    assert parse_args(["--only", "conll-pos", "--threads", "2"]).threads == 2
    assert parse_args(["--only", "a9a"]).threads == 1
    with pytest.raises(SystemExit):
        parse_args(["--only", "a9a", "--threads", "2"])
    with pytest.raises(SystemExit):
        parse_args(["--threads", "0"])
