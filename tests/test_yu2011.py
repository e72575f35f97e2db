"""The Yu et al. (2011) Figure 3 experiment keeps what it has: each method's trace, the summary and
the plot are written when the method finishes, so a run cut off later still leaves evidence."""
import json
import math

import pytest

from loglin.experiments import yu2011


@pytest.mark.slow
def test_fig3_writes_each_method_before_a_later_one_fails(tmp_path, monkeypatch):
    real_run = yu2011.run

    def run_or_fail(objective, solver, **kw):
        if solver == "lbfgs":
            raise RuntimeError("cut off")           # stands in for a run killed during the second method
        return real_run(objective, solver, **kw)
    monkeypatch.setattr(yu2011, "run", run_or_fail)
    with pytest.raises(RuntimeError, match="cut off"):
        yu2011.fig3(tmp_path, quick=True, solvers=("cd", "lbfgs"), time_limit=0.5, max_iter=2,
                    reference_iters=0, evaluate_every=0)
    records = json.loads((tmp_path / "conll2000-pos-cd.json").read_text())["records"]
    assert 1 <= len(records) - 1 <= 2
    # evaluate_every=0: only the final point is decoded, and its accuracy is a percentage
    metrics = [r.get("metric") for r in records]
    assert all(m is None or (isinstance(m, float) and math.isnan(m)) for m in metrics[:-1])
    assert 0.0 < metrics[-1] <= 100.0
    summary = (tmp_path / "summary.md").read_text()
    assert "CDprimal" in summary and "peak RSS" in summary
    assert (tmp_path / "fig3.png").stat().st_size > 0
    assert not (tmp_path / "conll2000-pos-lbfgs.json").exists()


def test_time_limit_forms():
    assert yu2011._limit(5.0, "brown", "eg") == 5.0
    assert yu2011._limit({"eg": 3, "cd": 4}, "brown", "cd") == 4
    assert yu2011._limit({"brown": {"eg": 7}}, "brown", "eg") == 7
