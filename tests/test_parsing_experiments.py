"""The parsing reproductions run end to end in quick mode (skipped without the shared Spanish data)."""
import json

import pytest

from loglin.data.paths import shared_data_dir
from loglin.experiments import REPRODUCE


def _need_data():
    root = shared_data_dir()
    if root is None or not (root / "conll2007-esp" / "esp.train").is_file():
        pytest.skip("shared CoNLL 2007 Spanish data not available")


@pytest.mark.slow
def test_quick_parsing_experiments(tmp_path, serial_numba):
    _need_data()
    for name in ("collins2008-parse-ll", "collins2008-parse-mm", "collins2008-parse-path"):
        out = tmp_path / name
        REPRODUCE[name](out, quick=True)
        assert (out / "summary.md").is_file() and list(out.glob("*.png")) or name.endswith("path")
    summary = json.loads((tmp_path / "collins2008-parse-ll" / "summary.json").read_text())
    assert set(summary) == {"EG", "L-BFGS", "SGD"}
    assert all(0 < s["uas"] <= 100 for s in summary.values())
    path = json.loads((tmp_path / "collins2008-parse-path" / "path.json").read_text())
    totals = [r["total_iterations"] for r in path]
    assert totals == sorted(totals) and len(path) >= 2
