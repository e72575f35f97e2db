"""The optimality test itself: relative test AND certificate, overflow, solvers' own stops, messages."""
import math
import warnings

import numpy as np
import pytest

from loglin.errors import ConvergenceWarning
from loglin.problem import problem_from_matrix
from loglin.solvers.base import Result, minimize
from loglin.solvers.stopping import StoppingRule, advice


def rule(tol=1e-3, g0=1e6, mu=1.0, f_tol=None, gap_tol=None):
    return StoppingRule(tol, g0, mu, tol if f_tol is None else f_tol, gap_tol)


def test_relative_test_alone_is_not_enough():
    """||g|| = 500 passes 1e-3 * ||g0|| = 1000, but ||g||^2/2 = 125000 >> 1e-3 * f: not converged."""
    v = rule().check(f=207.0, gnorm=500.0, gap=None)
    assert not v.converged and v.scale_blocked
    assert rule().check(f=207.0, gnorm=0.1, gap=None).converged      # 0.005 <= 0.207


def test_infinite_initial_gradient_does_not_pass_everything():
    r = rule(g0=math.inf)
    assert not r.check(f=207.0, gnorm=1e300, gap=None).converged
    assert not r.check(f=math.inf, gnorm=0.0, gap=None).converged
    assert r.check(f=207.0, gnorm=1e-3, gap=None).converged           # certified on its own


def test_a_solvers_own_stop_needs_a_certificate():
    assert not rule().check(f=100.0, gnorm=50.0, gap=None, finished=True).converged
    # rounding keeps the relative test out of reach, the certificate holds: converged
    assert rule(tol=1e-12, f_tol=1e-9).check(f=100.0, gnorm=1e-4, gap=None, finished=True).converged
    # a dual solver's own stop, with its gap (tol = 0: no gradient route)
    assert rule(tol=0.0, f_tol=1e-3).check(f=100.0, gnorm=50.0, gap=0.01, finished=True).converged
    assert not rule(tol=0.0, f_tol=1e-3).check(f=100.0, gnorm=50.0, gap=1.0, finished=True).converged


def test_messages_read_plainly_and_fit_the_solver():
    text = advice("tron", "max_iter", 1000, 102.2, 8.7, 5e5, 1e-3, scale_blocked=True)
    assert "try the tron" not in text.lower() and "precondition" in text and "scale" in text
    text = advice("gis", "interrupted", 10, 5.0, 1.0, 2.0, 1e-3, False, "SIGINT")
    assert "stopped (interrupted)" in text and "stopped by interrupted" not in text and "kept" in text
    assert "tron" in advice("lbfgs", "max_iter", 10, 5.0, 1.0, 2.0, 1e-3, False)
    assert "tron" not in advice("tree-eg", "max_iter", 10, 5.0, 1.0, 2.0, 1e-3, False, flat=False)


def test_minimize_warns_once_and_result_carries_the_advice(small_multiclass):
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = minimize(obj, "lbfgs", max_iter=2)
    assert [w.category for w in caught] == [ConvergenceWarning]
    assert isinstance(res, Result) and not res.converged and str(caught[0].message) == res.advice
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = minimize(obj, "lbfgs", max_iter=2, warn=False)
        done = minimize(obj, "tron", tol=1e-6)
    assert quiet.advice and done.converged and done.advice == ""
    f_lower = done.f - 0.5 * done.grad_norm ** 2                    # 1-strongly convex
    assert done.f - f_lower <= 1e-6 * done.f


def test_training_reexports_the_warning():
    from loglin import training
    from loglin.errors import ConvergenceWarning as Moved
    assert training.ConvergenceWarning is Moved
    with pytest.raises(ValueError, match="f_tol"):
        minimize(problem_from_matrix(np.eye(3), [0, 1, 2]).objective(1.0), "tron", f_tol=-1.0)
