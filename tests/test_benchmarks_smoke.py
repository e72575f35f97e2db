"""Smoke test of the benchmark command: `benchmarks/run --quick` on a 3,000-row slice of a9a.

Checks the structure of a9a.md / a9a.json and that loglin's TRON and LIBLINEAR -s 0 (an
independent implementation) agree on the optimum; no timing is asserted.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("liblinear.liblinearutil")
pytest.importorskip("sklearn")

from loglin.data import shared_data_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = shared_data_dir()
pytestmark = pytest.mark.skipif(DATA is None or not (DATA / "a9a" / "a9a").is_file(),
                                reason="shared a9a data not available")

TOOLS = {"tron", "lbfgs", "scipy L-BFGS-B", "LIBLINEAR -s 0", "sklearn lbfgs"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run"), "--quick", "--rows", "3000",
                           "--out", str(out), "--data", str(DATA / "a9a")],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stdout


def test_json_structure(quick_run):
    out, _ = quick_run
    result = json.loads((out / "a9a.json").read_text())
    assert result["quick"] is True and result["repeats"] == 1
    assert result["data"]["rows"] == 3000 and result["data"]["features"] == 123
    assert result["levels"] == ["1e-02", "1e-04"]
    assert set(result["tools"]) == TOOLS
    for name, tool in result["tools"].items():
        assert tool["kind"] in ("trace", "sweep")
        assert set(tool["time_to"]) == {"wall", "cpu"}
        for clock in ("wall", "cpu"):
            assert set(tool["time_to"][clock]) == set(result["levels"])
            for level in tool["time_to"][clock].values():
                assert len(level["runs"]) == 1
                # every tool reaches the loose levels on this small, well-conditioned slice
                assert level["median"] is not None and level["median"] >= 0
        assert 0.5 < tool["test_accuracy"] <= 1.0
        assert tool["final_rel_diff"] >= 0
    assert result["tools"]["LIBLINEAR -s 0"]["ratio_to_liblinear"]["wall"]["1e-02"] == pytest.approx(1.0)
    assert result["p_star"] <= min(t["final_objective"] for t in result["tools"].values())
    for curves in result["curves"].values():
        assert len(curves) == 1 and all(len(point) == 4 for point in curves[0])
    assert set(result["jit_seconds"]["first_call_in_process"]) == {"fun_grad", "hess_vec"}
    assert result["machine"]["loadavg_before"] is not None or not Path("/proc/loadavg").exists()


def test_tron_agrees_with_liblinear(quick_run):
    out, _ = quick_run
    tools = json.loads((out / "a9a.json").read_text())["tools"]
    ours, ref = tools["tron"], tools["LIBLINEAR -s 0"]
    assert abs(ours["final_objective"] - ref["final_objective"]) <= 1e-6 * ref["final_objective"]
    assert abs(ours["test_accuracy"] - ref["test_accuracy"]) <= 1e-3
    assert json.loads((out / "a9a.json").read_text())["acceptance"]["final objective equal to 1e-6 (relative)"]["pass"]


def test_markdown_table(quick_run):
    out, stdout = quick_run
    md = (out / "a9a.md").read_text()
    assert md.strip() in stdout
    tables, current = [], None
    for line in md.splitlines():
        if line.startswith("|"):
            if current is None:
                current = []
                tables.append(current)
            current.append([c.strip() for c in line.strip().strip("|").split("|")])
        else:
            current = None
    assert len(tables) == 3                      # wall clock, CPU time, final objective
    for table in tables[:2]:
        header = table[0]
        assert header[0] == "tool" and header.count("÷ LIBLINEAR") == 2
        assert "time to 1e-02 s, median (min–max)" in header
        assert {row[0] for row in table[2:]} == TOOLS
        assert all(len(row) == len(header) for row in table)
    assert {row[0] for row in tables[2][2:]} == TOOLS
    assert "tolerance sweep" in md and "fastest call" in md
