"""The experiment harness: levels, claims, the reference optimum, summaries, and missing data."""
import json
import re

import pytest

from loglin.errors import DataUnavailable, InvalidInputError
from loglin.experiments import harness
from loglin.trace import Trace


def _trace(objectives, dt=1.0):
    tr = Trace()
    for k, f in enumerate(objectives):
        tr.add(iteration=k, seconds=k * dt, objective=f)
    return tr


def test_time_to_level_and_faster_follow_the_relative_difference():
    f_star = 100.0
    a = _trace([200.0, 110.0, 100.5, 100.001])          # rel 1, 0.1, 5e-3, 1e-5
    b = _trace([200.0, 150.0, 101.0, 100.9], dt=0.5)    # rel 1, 0.5, 1e-2, 9e-3
    assert harness.time_to_level(a, f_star, 1e-1) == 1.0
    assert harness.time_to_level(a, f_star, 1e-4) == 3.0
    assert harness.time_to_level(b, f_star, 1e-2) == 1.0
    assert harness.time_to_level(b, f_star, 1e-3) is None
    assert harness.faster(b, a, f_star, 1e-2) is True             # b at 1.0 s, a at 2.0 s
    assert harness.faster(a, b, f_star, 1e-2) is False
    assert harness.faster(a, b, f_star, 1e-3) is True             # b never gets there
    assert harness.faster(a, b, f_star, 1e-9) is None
    assert harness.faster_any({"a": a, "b": b}, ("a",), ("b",), f_star, 1e-2) is False
    assert harness.faster_any({"a": a, "b": b}, ("a", "b"), ("b",), f_star, 1e-4) is True
    claims = harness.order_claims("d", {"a": a, "b": b}, f_star, ("a", "b"), levels=(1e-2,))
    assert [c.held for c in claims] == [False, False]       # b first to 1e-2; at t = 1.5 s a is at 0.1, b at 9e-3
    assert claims[0].verdict == "did not hold" and "A 2s, B 1s" in claims[0].note
    assert "0.1 vs 0.009" in claims[1].note


def test_reference_optimum_certifies_its_gap(small_binary, serial_numba):
    from loglin.binary import binary_problem
    from loglin.solvers import minimize
    X, y = small_binary
    objective = binary_problem(X, y, 2.0).objective()
    tight = minimize(objective, "lbfgs", tol=1e-12, max_iter=5000).f
    loose = harness.reference_optimum(objective, tol=1e-2, max_iter=3)
    assert loose.gap_bound is not None and loose.f >= tight - 1e-9 * abs(tight)
    assert loose.f - tight <= loose.gap_bound * (1 + 1e-9)        # f - f_opt <= ||grad f||^2 / (2 mu)
    warm = harness.reference_optimum(objective, tol=1e-10, w0=loose.w)
    assert warm.f == pytest.approx(tight, rel=1e-9)


def test_write_summary_writes_the_claims_with_verdicts(tmp_path):
    claims = [harness.Claim("d: x before y", True, "1 s vs 2 s"), ("d: y before z", None, "")]
    harness.write_summary(tmp_path, "Title", ["- setting"], ["body"], claims, extra=["extra"])
    text = (tmp_path / "summary.md").read_text()
    assert text.startswith("# Title\n") and "- d: x before y: **held** (1 s vs 2 s)" in text
    assert "- d: y before z: **undecided (level not reached)**" in text and text.rstrip().endswith("extra")
    assert json.loads((tmp_path / "claims.json").read_text()) == [
        {"claim": "d: x before y", "held": True, "note": "1 s vs 2 s"},
        {"claim": "d: y before z", "held": None, "note": ""}]


def test_race_reports_each_finished_method_in_order():
    seen = []
    traces = harness.race("objective", ("a", "b"), lambda obj, s, **kw: (s, kw),
                          options={"b": {"k": 1}}, on_finish=lambda s, done: seen.append((s, sorted(done))))
    assert traces == {"a": ("a", {}), "b": ("b", {"k": 1})}
    assert seen == [("a", ["a"]), ("b", ["a", "b"])]


def test_require_shared_names_the_missing_path(tmp_path, monkeypatch):
    from loglin.data import require_shared
    (tmp_path / "a9a").mkdir()
    (tmp_path / "a9a" / "a9a").write_text("")
    monkeypatch.setenv("LOGLIN_DATA", str(tmp_path))
    assert require_shared("a9a", "a9a") == tmp_path / "a9a" / "a9a"
    with pytest.raises(DataUnavailable, match="news20") as err:
        require_shared("news20", "news20.bz2")
    assert isinstance(err.value, InvalidInputError) and err.value.path == str(tmp_path / "news20" / "news20.bz2")
    assert "LOGLIN_DATA" in str(err.value)
    monkeypatch.setenv("LOGLIN_DATA", str(tmp_path / "missing"))
    with pytest.raises(DataUnavailable, match="missing"):
        require_shared("a9a")
    assert require_shared("a9a", "a9a", data_dir=tmp_path) == tmp_path / "a9a" / "a9a"


def test_experiment_data_loaders_raise_data_unavailable(tmp_path, monkeypatch):
    from loglin.experiments import datasets
    monkeypatch.setenv("LOGLIN_DATA", str(tmp_path))
    for load in (lambda: datasets.document_data("a9a"), lambda: datasets.lr_data("news20"),
                 lambda: datasets.lr_data("20newsgroups"), datasets.mnist_dir, datasets.conll2000_files,
                 datasets.conll2007_spanish_files, lambda: datasets.nlp_dataset("conll2000-pos")):
        with pytest.raises(DataUnavailable, match=re.escape(str(tmp_path))):
            load()


def test_warm_up_compiles_without_the_convergence_warning_of_its_one_iteration(small_binary, serial_numba):
    """A warm-up runs each solver for one iteration: the "did not converge" warning that always earns is not
    a result, and printed before every experiment it read as one."""
    import warnings

    from loglin.binary import binary_problem
    from loglin.errors import ConvergenceWarning
    X, y = small_binary
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        harness.warm_up(binary_problem(X, y, 1.0).objective(), ("lbfgs", "tron", "cddual"))
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    with pytest.warns(ConvergenceWarning):      # the same one iteration outside the warm-up still warns
        harness.minimize(binary_problem(X, y, 1.0).objective(), "lbfgs", tol=0.0, max_iter=1)


def test_reference_stopped_at_its_gradient_target_does_not_warn_but_one_cut_short_does(small_binary, serial_numba):
    import warnings

    from loglin.binary import binary_problem
    from loglin.errors import ConvergenceWarning
    objective = binary_problem(*small_binary, 2.0).objective()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ref = harness.reference_optimum(objective, tol=0.0, grad_stop=1e-3)
    assert ref.stop_reason == "callback" and ref.grad_norm <= 1e-3
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    with pytest.warns(ConvergenceWarning):
        harness.reference_optimum(objective, tol=0.0, max_iter=1)


def test_a_timed_run_stopped_at_its_gradient_target_does_not_warn_and_other_warnings_pass(small_binary, serial_numba):
    import warnings

    from loglin.binary import binary_problem
    from loglin.errors import ConvergenceWarning
    objective = binary_problem(*small_binary, 2.0).objective()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace = harness.run_timed(objective, "lbfgs", time_limit=60, max_iter=10_000, grad_stop=1e-3)
    assert trace.meta["stop_reason"] == "callback"
    assert not [w for w in caught if issubclass(w.category, ConvergenceWarning)]

    class Result:
        stop_reason = "callback"

    def noisy():
        warnings.warn("kept", RuntimeWarning)
        return Result()
    with pytest.warns(RuntimeWarning, match="kept"):
        harness.quiet_at_target(noisy)
