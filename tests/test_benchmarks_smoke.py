"""Smoke test of the benchmark command: `benchmarks/run --quick` (a9a slices: binary LR race and cost model).

Checks the structure of a9a.md / a9a.json (the short report) / a9a.full.json / costmodel.json /
SUMMARY.md, and that loglin's solvers and LIBLINEAR / scikit-learn (independent implementations)
agree on the optimum; no timing is asserted.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("liblinear.liblinearutil")
pytest.importorskip("sklearn")
pytest.importorskip("pycrfsuite")

from loglin.data import shared_data_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = shared_data_dir()
pytestmark = pytest.mark.skipif(DATA is None or not (DATA / "a9a" / "a9a").is_file(),
                                reason="shared a9a data not available")

TOOLS = {"loglin auto", "loglin cddual", "loglin tron", "loglin eg-acc", "loglin newton", "LIBLINEAR -s 7", "LIBLINEAR -s 0", "sklearn lbfgs", "sklearn liblinear",
         "sklearn saga"}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run"), "--quick", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc.stdout


def test_binary_json(quick_run):
    out, _ = quick_run
    res = json.loads((out / "a9a.json").read_text())
    assert res["quick"] is True and res["repeats"] == 1
    assert res["data"]["rows"] == 3000 and res["data"]["features"] == 123
    assert res["levels"] == ["1e-02", "1e-04"]
    assert set(res["tools"]) == TOOLS
    for tool in res["tools"].values():
        assert set(tool["time_to"]) == {"wall", "cpu"}
        for clock in ("wall", "cpu"):
            assert set(tool["time_to"][clock]) == set(res["levels"])
            # every tool reaches the loose level on this small, well-conditioned slice
            assert tool["time_to"][clock]["1e-02"]["median"] is not None
    assert "loglin cddual / LIBLINEAR -s 7" in res["ratios"] and "loglin tron / LIBLINEAR -s 0" in res["ratios"]
    assert set(res["auto_by_level"]) == set(res["levels"])
    assert set(res["auto_by_level"].values()) <= {"newton", "tron", "cddual", "eg-acc"} and "loglin auto / best competitor" in res["ratios"]
    # the report leaves the traces to the full result next to it and says how it was made (decision 0054)
    assert "runs" not in res and res["reproduce"].startswith("NUMBA_NUM_THREADS=1 benchmarks/run --quick")
    full = json.loads((out / "a9a.full.json").read_text())
    assert set(full["runs"]) == TOOLS - {"loglin auto"} and set(res["run_summaries"]) == set(full["runs"])


def test_solvers_agree_with_liblinear(quick_run):
    """Our runs and LIBLINEAR's tightest calls end within 1e-5 of the same P* (independent codes)."""
    out, _ = quick_run
    res = json.loads((out / "a9a.json").read_text())
    for tool in ("loglin auto", "loglin cddual", "loglin tron", "loglin eg-acc", "loglin newton", "LIBLINEAR -s 7",
                 "LIBLINEAR -s 0"):
        assert res["tools"][tool]["final_rel_diff"] <= 1e-5, tool


def test_costmodel_and_summary(quick_run):
    out, stdout = quick_run
    cm = json.loads((out / "costmodel.json").read_text())
    case = cm["cases"][0]
    assert case["nnz"] > 0 and set(case["kernels"]) == {"fun", "fun_grad", "hess_vec"}
    assert all(v > 0 for v in case["bounds"].values())
    md = (out / "SUMMARY.md").read_text()
    assert "| target | measured | required | verdict |" in md
    assert "a9a: cddual / LIBLINEAR -s 7 to 1e-4 (cpu)" in md
    assert "a9a: auto (" in md
    assert (out / "a9a.md").read_text().strip() in stdout
