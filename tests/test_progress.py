"""Progress in logs (a line every few seconds) with a remaining-time estimate from the stopping test."""
import io
import math

import pytest

from loglin.solvers import progress as P


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_log_lines_estimate_the_time_to_the_tolerance_from_the_recent_rate(monkeypatch):
    monkeypatch.setattr(P, "LOG_SECONDS", 1.0)
    clock, out = Clock(), io.StringIO()
    bar = P.Progress("lbfgs", 1e-4, None, stream=out, terminal=False, clock=clock)
    for it in range(1, 7):
        clock.t = float(it)
        bar.update({"iteration": it, "objective": 1.0 / it, "rel_grad": math.exp(-it)})
    bar.close()                               # the last state was already written: not twice
    lines = out.getvalue().strip().splitlines()
    assert len(lines) == 6 and lines[-1].startswith("loglin lbfgs: iteration 6")
    expected = math.log(math.exp(-6) / 1e-4)          # rate 1 per second on log(rel_grad)
    assert bar.remaining() == pytest.approx(expected, rel=1e-9)
    assert f"about {expected:.0f} s to go" in lines[-1]


def test_no_estimate_while_the_measure_does_not_fall_and_the_gap_for_dual_solvers(monkeypatch):
    monkeypatch.setattr(P, "LOG_SECONDS", 0.0)
    clock, out = Clock(), io.StringIO()
    bar = P.Progress("eg", 0.0, 1e-3, stream=out, terminal=False, clock=clock)
    for it in range(1, 5):
        clock.t = float(it)
        bar.update({"iteration": it, "objective": 10.0, "duality_gap": 1.0})   # flat gap
    assert bar.remaining() is None and "to go" not in out.getvalue() and "gap 1.00e-01" in out.getvalue()
    monkeypatch.setattr(P, "LOG_SECONDS", 5.0)
    early = P.Progress("lbfgs", 1e-4, None, stream=io.StringIO(), terminal=False, clock=clock)
    clock.t += 4.0
    early.update({"iteration": 1, "objective": 1.0, "rel_grad": 0.5})
    assert early.stream.getvalue() == ""      # no line before LOG_SECONDS ...
    early.close()
    assert early.stream.getvalue().startswith("loglin lbfgs: iteration 1")     # ... and the last state at the end


def test_no_estimate_while_the_relative_gap_is_at_least_one(monkeypatch):
    """A dual bound still <= 0 (relative gap >= 1) drifting down slowly gave "about 32047 s to go"."""
    monkeypatch.setattr(P, "LOG_SECONDS", 0.0)
    clock, out = Clock(), io.StringIO()
    bar = P.Progress("eg", 0.0, 1e-4, stream=out, terminal=False, clock=clock)
    for it, rel in enumerate([1.09, 1.08, 1.06, 1.05, 1.03, 1.01], start=1):
        clock.t = float(it)
        bar.update({"iteration": it, "objective": 100.0, "duality_gap": 100.0 * rel})
    assert bar.remaining() is None and "to go" not in out.getvalue()
    for it, rel in enumerate([0.5, 0.25, 0.125], start=7):     # once below 1, the estimate comes back
        clock.t = float(it)
        bar.update({"iteration": it, "objective": 100.0, "duality_gap": 100.0 * rel})
    assert bar.remaining() is not None and "to go" in out.getvalue().splitlines()[-1]
