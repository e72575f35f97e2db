"""The Yu et al. (2011) Figure 3 experiment keeps what it has: each method's trace, the summary and
the plot are written when the method finishes, so a run cut off later still leaves evidence."""
import json
import math

import pytest

from loglin.experiments import yu2011, yu2011_fig3
from loglin.experiments.datasets import nlp_dataset


@pytest.mark.slow
def test_fig3_writes_each_method_before_a_later_one_fails(tmp_path, monkeypatch):
    real_run = yu2011.run

    def run_or_fail(objective, solver, **kw):
        if solver == "lbfgs":
            raise RuntimeError("cut off")           # stands in for a run killed during the second method
        return real_run(objective, solver, **kw)
    monkeypatch.setattr(yu2011_fig3, "run", run_or_fail)
    with pytest.raises(RuntimeError, match="cut off"):
        yu2011_fig3.fig3(tmp_path, quick=True, solvers=("cd", "lbfgs"), time_limit=0.5, max_iter=2,
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
    assert yu2011_fig3._limit(5.0, "brown", "eg") == 5.0
    assert yu2011_fig3._limit({"eg": 3, "cd": 4}, "brown", "cd") == 4
    assert yu2011_fig3._limit({"brown": {"eg": 7}}, "brown", "eg") == 7


# ---------------------------------------------------------------- Figure 3 with an external reference (P*)
import shutil                                                        # noqa: E402

from loglin.errors import InvalidInputError                          # noqa: E402
from loglin.experiments import huang2010_fig2                        # noqa: E402
from loglin.solvers import minimize                                  # noqa: E402
from loglin.trace import Trace                                       # noqa: E402

QUICK = dict(quick=True, solvers=("cd", "eg"), time_limit=0.5, max_iter=2, evaluate_every=0)


@pytest.fixture(scope="module")
def slice_optimum():
    """The slice's problem and a reference point computed outside fig3: 40 L-BFGS iterations (f about
    1.2x the optimum, far below two passes of CD or EG, which is all the tests need)."""
    p = nlp_dataset("conll2000-pos", quick=True).problem
    res = minimize(p.objective(10.0), "lbfgs", tol=0.0, max_iter=40)
    return p, res.f, res.grad_norm


def reference_file(path, p, f, grad_norm, C=10.0, **change):
    """A reference json in the format the Huang et al. Figure 2 run writes (its own settings key)."""
    settings = huang2010_fig2._fig2_key("conll2000-pos", p, C, "tron", 1.0, 10, False)
    settings.update(solver="tron-reference", seconds=1.0, raced={}, **change)
    path.write_text(json.dumps({"f": f, "grad_norm": grad_norm, "iterations": 9, "cpu_seconds": 0.1,
                                "stop_reason": "callback", "warm_start": "cd", "gap_bound": grad_norm ** 2 / 2,
                                "settings": settings}))
    return path


@pytest.fixture(scope="module")
def unreferenced_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig3-noref")
    yu2011_fig3.fig3(out, reference_iters=0, **QUICK)
    return out


def relative_rows(summary):
    """{method label: final relative difference} from the summary's time-to-level table."""
    rows = [r.split("|") for r in summary.splitlines() if r.startswith("| conll2000-pos |")]
    return {r[2].strip(): float(r[-2]) for r in rows if len(r) == 11}


def check_p_star(out, f_ref, ref_text):
    summary = (out / "summary.md").read_text()
    traces = {s: Trace.from_json(out / f"conll2000-pos-{s}.json") for s in ("cd", "eg")}
    expected = min([f_ref] + [min(t.column("objective")) for t in traces.values()])
    assert all(t.meta["f_star"] == pytest.approx(expected, rel=1e-15) for t in traces.values())
    assert ref_text in summary and "certified error of P*" in summary
    finals = relative_rows(summary)
    for s, label in (("cd", "CDprimal"), ("eg", "EG")):
        assert finals[label] == pytest.approx((traces[s].records[-1]["objective"] - expected) / expected, rel=1e-2)
    return summary


def test_fig3_takes_p_star_from_a_reference_file(tmp_path, slice_optimum, monkeypatch):
    p, f_opt, g = slice_optimum
    ref = reference_file(tmp_path / "conll2000-pos-reference.json", p, f_opt, g)
    monkeypatch.setattr(yu2011_fig3, "own_reference", lambda *a: pytest.fail("ran its own reference"))
    out = tmp_path / "run"
    yu2011_fig3.fig3(out, reference={"conll2000-pos": str(ref)}, **QUICK)
    summary = check_p_star(out, f_opt, str(ref))
    assert "here the reference's f" in summary          # two passes of CD/EG do not get below the optimum
    assert "lowest objective of the runs" not in summary


def test_fig3_refuses_a_reference_for_another_problem(tmp_path, slice_optimum, monkeypatch):
    p, f_opt, g = slice_optimum
    wrong = reference_file(tmp_path / "wrong.json", p, f_opt, g, contexts=p.n_contexts + 1)
    monkeypatch.setattr(yu2011_fig3, "run", lambda *a, **k: pytest.fail("solved before checking the reference"))
    with pytest.raises(InvalidInputError, match="contexts"):
        yu2011_fig3.fig3(tmp_path / "run", reference=str(wrong), **QUICK)
    key = yu2011_fig3.problem_key("conll2000-pos", p, 10.0)
    other_C = reference_file(tmp_path / "c4.json", p, f_opt, g, C=4.0)
    with pytest.raises(InvalidInputError, match="C = 4.0 there"):
        yu2011_fig3.load_reference(other_C, "conll2000-pos", key)
    (tmp_path / "junk.json").write_text('{"f": 1.0}')
    with pytest.raises(InvalidInputError, match="not a reference file"):
        yu2011_fig3.load_reference(tmp_path / "junk.json", "conll2000-pos", key)
    with pytest.raises(InvalidInputError, match="cannot read"):
        yu2011_fig3.load_reference(tmp_path / "missing.json", "conll2000-pos", key)
    assert yu2011_fig3.load_reference({"brown": 1.0}, "conll2000-pos", key) is None
    assert yu2011_fig3.load_reference(123.5, "conll2000-pos", key)["f"] == 123.5


@pytest.mark.parametrize("legacy", [False, True])
def test_fig3_resummarize_from_saved_traces(tmp_path, unreferenced_run, slice_optimum, monkeypatch, legacy):
    p, f_opt, g = slice_optimum
    out = tmp_path / "run"
    shutil.copytree(unreferenced_run, out)
    assert "lowest objective of the runs" in (out / "summary.md").read_text()
    if legacy:                      # a run made before the traces recorded their problem: read summary.md
        for f in out.glob("conll2000-pos-*.json"):
            data = json.loads(f.read_text())
            for k in ("problem", "note", "header", "metric_name"):
                data["meta"].pop(k)
            f.write_text(json.dumps(data))
    monkeypatch.setattr(yu2011_fig3, "run", lambda *a, **k: pytest.fail("solved again"))
    monkeypatch.setattr(yu2011_fig3, "reference_optimum", lambda *a, **k: pytest.fail("solved again"))
    wrong = reference_file(tmp_path / "wrong.json", p, f_opt, g, nnz=p.nnz() - 1)
    with pytest.raises(InvalidInputError, match="nnz"):
        yu2011_fig3.fig3_resummarize(out, reference=wrong)
    ref = reference_file(tmp_path / "ref.json", p, f_opt, g)
    yu2011_fig3.fig3_resummarize(out, reference=str(ref))
    summary = check_p_star(out, f_opt, str(ref))
    assert "no method was run again" in summary and "sigma^2 = 10 l" in summary
    assert "merged contexts" in summary and "lowest objective of the runs" not in summary
    assert Trace.from_json(out / "conll2000-pos-cd.json").meta["problem"]["nnz"] == p.nnz()


def test_times_to_levels_against_the_driver():
    """The pass at which times_to_levels says a level was first reached: the driver's run of as many
    passes (same seed) is within the level there, and one pass fewer is not."""
    import numpy as np
    from loglin.binary import binary_problem
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 8))
    y = np.where(X @ rng.normal(size=8) + 0.5 * rng.normal(size=300) > 0, 1.0, -1.0)
    obj = binary_problem(X, y, 2.0).objective()
    f_star = minimize(obj, "tron", tol=1e-12, max_iter=100).f
    levels = (1e-1, 1e-3, 1e-6)
    got = yu2011.times_to_levels(obj, "bn", f_star, levels, seed=1, max_passes=200)
    passes = [g[2] for g in got]
    assert passes == sorted(passes) and all(g[0] >= 0 for g in got)
    for lv, k in zip(levels, passes):
        def rel(n):
            return (minimize(obj, "bn", tol=0.0, max_iter=n, random_state=1, eps=0.0, report_dual=False).f
                    - f_star) / f_star
        assert rel(k) <= lv and (k == 1 or rel(k - 1) > lv)


def test_equal_time_comparison():
    a, b = Trace("a"), Trace("b")
    for t, f in ((0, 100.0), (2, 50.0), (5, 20.0), (9, 10.0)):
        a.records.append({"seconds": t, "objective": f})
    for t, f in ((0, 100.0), (3, 40.0), (6, 15.0)):
        b.records.append({"seconds": t, "objective": f})
    assert yu2011_fig3.equal_time(a, b) == (6, 20.0, 15.0)            # a's last value within b's 6 s
    assert yu2011_fig3.equal_time(a, b, "start") == (3, 50.0, 40.0)   # both have made one pass by 3 s
