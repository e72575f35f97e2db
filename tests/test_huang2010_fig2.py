"""`loglin reproduce huang2010-fig2 --quick` end to end on the bundled CoNLL-2000 slice."""
import json
import time

import numpy as np
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


class _CutOff(Exception):
    """Stands for the process being killed while a method runs."""


@pytest.mark.slow
def test_huang2010_fig2_cut_off_run_keeps_finished_methods_and_resumes(tmp_path, serial_numba, monkeypatch):
    from loglin.experiments import huang2010_fig2 as huang2010
    real_run, real_ref = huang2010.run_timed, huang2010._reference_run
    ran, refs = [], []

    def cut_at_scgis(objective, solver, **kw):
        ran.append(solver)
        if solver == "scgis":
            raise _CutOff
        return real_run(objective, solver, **kw)

    def counted_ref(*a, **kw):
        refs.append(1)
        return real_ref(*a, **kw)
    monkeypatch.setattr(huang2010, "_reference_run", counted_ref)
    monkeypatch.setattr(huang2010, "run_timed", cut_at_scgis)
    run = dict(quick=True, solvers=("cd", "scgis"), time_limit=0.3)
    with pytest.raises(_CutOff):
        huang2010.fig2(tmp_path, **run)
    # CD's trace and a partial summary are on disk although the run died
    cd_json = (tmp_path / "conll2000-pos-cd.json").read_text()
    assert (tmp_path / "conll2000-pos-cd.w.npy").exists() and (tmp_path / "fig2.png").exists()
    summary = (tmp_path / "summary.md").read_text()
    assert "PARTIAL" in summary and "scgis" in summary.split("PARTIAL")[1].split("\n")[0]
    assert json.loads((tmp_path / "claims.json").read_text()) == []      # no f*, so no claims yet

    # the same command again runs only what is missing, then the reference
    ran.clear()
    monkeypatch.setattr(huang2010, "run_timed", lambda o, s, **kw: ran.append(s) or real_run(o, s, **kw))
    huang2010.fig2(tmp_path, **run)
    assert ran == ["scgis"] and len(refs) == 1
    summary = (tmp_path / "summary.md").read_text()
    assert "PARTIAL" not in summary and "conll2000-pos/cd" in summary          # reuse is stated
    from loglin.trace import Trace
    cd = Trace.from_json(tmp_path / "conll2000-pos-cd.json")
    assert cd.records == json.loads(cd_json)["records"]
    assert any("CD reaches" in c["claim"] for c in json.loads((tmp_path / "claims.json").read_text()))

    # identical settings: nothing reruns, the reference is reused; other settings: everything reruns
    ran.clear()
    huang2010.fig2(tmp_path, **run)
    assert ran == [] and len(refs) == 1
    huang2010.fig2(tmp_path, **dict(run, time_limit=0.2))
    assert ran == ["cd", "scgis"] and len(refs) == 2

    # a budget of its own for one method reruns only that method; the others' traces are reused
    ran.clear()
    huang2010.fig2(tmp_path, **dict(run, time_limit=0.2, time_limits={"scgis": 0.4}))
    assert ran == ["scgis"] and len(refs) == 3
    summary = (tmp_path / "summary.md").read_text()
    assert "SCGIS 0.4s" in summary and "rate at the end of each IS/CD run" in summary
    with pytest.raises(ValueError, match="not among the solvers"):
        huang2010.fig2(tmp_path, **dict(run, time_limits={"gis": 1.0}))


def test_convergence_order_recovers_the_power_law():
    from loglin.experiments.huang2010_fig2 import convergence_order
    from loglin.trace import Trace
    f_star = 100.0
    for b in (1.0, 2.0):
        tr = Trace()
        for k in range(0, 60):
            rel = 5.0 if k == 0 else 3.0 * k ** -b
            tr.records.append({"iteration": k, "objective": f_star * (1 + rel), "seconds": 0.5 * k})
        fit = convergence_order(tr, f_star)
        assert fit is not None and fit[0] == pytest.approx(b, rel=1e-9) and fit[1] == pytest.approx(3.0, rel=1e-9)
    thinned = Trace()              # log-spaced records (record_spacing): the fit still covers the last half of
    for k in sorted({0, *np.unique(np.geomspace(1, 1000, 80).astype(int))}):       # the iterations, k >= 500
        rel = 5.0 if k == 0 else (3.0 / k if k < 500 else 1500.0 / k ** 2)
        thinned.records.append({"iteration": int(k), "objective": f_star * (1 + rel), "seconds": 0.5 * k})
    assert convergence_order(thinned, f_star)[0] == pytest.approx(2.0, rel=1e-9)
    short = Trace()
    short.records = [{"iteration": 0, "objective": 200.0, "seconds": 0.0}]
    assert convergence_order(short, f_star) is None


def test_reference_note_accepts_a_method_within_the_certified_bound():
    from loglin.experiments.harness import reference_note as _reference_note
    from loglin.trace import Trace

    def trace(final):
        tr = Trace()
        tr.records = [{"iteration": 0, "objective": 200.0}, {"iteration": 9, "objective": final}]
        return tr
    assert _reference_note("d", 100.0, {"cd": trace(100.5)}, gap_bound=1e-3) == []
    within = _reference_note("d", 100.0, {"cd": trace(100.5), "tron": trace(99.9995)}, gap_bound=1e-3)
    assert len(within) == 1 and "within its certified bound" in within[0] and "TRON" in within[0]
    beyond = _reference_note("d", 100.0, {"tron": trace(99.99)}, gap_bound=1e-3)
    assert "not from the reference run" in beyond[0]
    assert "not from the reference run" in _reference_note("d", 100.0, {"tron": trace(99.9995)})[0]
