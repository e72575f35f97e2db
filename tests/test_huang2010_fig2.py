"""`loglin reproduce huang2010-fig2 --quick` end to end on the bundled CoNLL-2000 slice."""
import json
import time

import pytest


@pytest.mark.slow
def test_huang2010_fig2_quick_writes_plots_traces_and_summary(tmp_path, serial_numba):
    from loglin.experiments import REPRODUCE
    start = time.process_time()
    REPRODUCE["huang2010-fig2"](tmp_path, quick=True)
    cpu = time.process_time() - start
    assert (tmp_path / "fig2.png").stat().st_size > 0
    summary = (tmp_path / "summary.md").read_text()
    assert "## The paper's claims" in summary and "CD reaches" in summary
    claims = json.loads((tmp_path / "claims.json").read_text())
    agreement = [c for c in claims if "same test" in c["claim"]]
    assert agreement and "final" in agreement[0]["note"]
    from loglin.trace import Trace
    for solver in ("cd", "scgis", "gis", "lbfgs", "tron"):
        tr = Trace.from_json(tmp_path / f"conll2000-pos-{solver}.json")
        assert len(tr) > 1 and "final_metric" in tr.meta
    assert cpu < 60, f"quick mode took {cpu:.0f} CPU seconds"
