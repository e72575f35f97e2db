"""The solver table: every entry resolves, every kind is served, aliases resolve, errors name the choices."""
import json
import warnings

import numpy as np
import pytest

from loglin import solvers
from loglin.cli import main
from loglin.errors import InvalidInputError
from loglin.solvers.protocol import OPTIONAL, REQUIRED, Objective, SecondOrderObjective, missing


@pytest.mark.parametrize("name", list(solvers.TABLE))
def test_every_entry_names_an_importable_generator_per_kind(name):
    e = solvers.TABLE[name]
    assert e.kinds and set(e.kinds) <= set(solvers.KINDS) and e.summary and e.paper
    assert all(e.losses_for(k) and set(e.losses_for(k)) <= {"ll", "mm"} for k in e.kinds)
    for kind in e.kinds:
        f = e.function(kind)
        assert callable(f) and list(f.__code__.co_varnames[:3]) == ["objective", "w", "rng"]
    assert set(e.needs) <= set(REQUIRED + OPTIONAL)


@pytest.mark.parametrize("kind", solvers.KINDS)
def test_every_kind_has_solvers_for_each_loss_it_trains(kind):
    assert solvers.serving(kind, "ll")
    if kind in ("chain", "tree", "maxent"):
        assert solvers.serving(kind, "mm")


@pytest.mark.parametrize("old, new", sorted(solvers.ALIASES.items()))
def test_old_names_resolve_to_the_new_entry(old, new):
    assert solvers.canonical(old) == new and solvers.entry(old) is solvers.TABLE[new]
    assert old in solvers.SOLVERS and solvers.SOLVERS[old].name == new
    kind = old.split("-")[0]
    assert kind in solvers.TABLE[new].kinds
    assert old not in dict(solvers.listed())


class _Fake:
    def __init__(self, kind, loss="ll"):
        self.kind, self.loss, self.n = kind, loss, 3

    def fun(self, w):
        return 0.0

    def fun_grad(self, w, keep_cache=True):
        return 0.0, np.zeros(3)

    def accept(self):
        pass


def test_resolve_picks_the_implementation_of_the_objective_kind():
    assert solvers.resolve("eg", _Fake("chain")).__name__ == "structured_eg"
    assert solvers.resolve("tree-eg", _Fake("tree")).__name__ == "structured_eg"      # one EG for every structure
    assert solvers.resolve("eg", _Fake("binary")).__name__ == "eg"
    assert solvers.resolve("eg-batch", _Fake("tree", "mm")).__name__ == "structured_eg_batch"


def test_unknown_solver_lists_the_choices():
    with pytest.raises(InvalidInputError, match="unknown solver 'nope'; choose from tron, lbfgs") as err:
        solvers.resolve("nope", _Fake("maxent"))
    assert all(name in str(err.value) for name in solvers.TABLE)
    assert not any(alias in str(err.value) for alias in solvers.ALIASES)


def test_wrong_kind_names_the_kinds_served_and_the_solvers_of_this_kind():
    with pytest.raises(InvalidInputError) as err:
        solvers.resolve("gis", _Fake("tree"))
    msg = str(err.value)
    assert "does not serve tree models (it serves maxent)" in msg
    assert "solvers for tree models: " + ", ".join(solvers.serving("tree")) in msg


def test_wrong_loss_and_missing_needs_are_one_error_each():
    with pytest.raises(InvalidInputError, match="needs a differentiable objective"):
        solvers.resolve("lbfgs", _Fake("chain", "mm"))
    with pytest.raises(InvalidInputError, match="max-margin"):
        solvers.resolve("cutting-plane", _Fake("chain", "ll"))
    with pytest.raises(InvalidInputError, match="needs hess_vec of the objective, which _Fake does not offer"):
        solvers.resolve("tron", _Fake("maxent"))
    assert missing(_Fake("maxent"), solvers.TABLE["tron"].needs) == ["hess_vec"]


def test_real_objectives_follow_the_protocol(small_multiclass):
    from loglin.problem import problem_from_matrix
    from loglin.structured.multiclass import MaxMarginObjective
    problem = problem_from_matrix(*small_multiclass)
    assert isinstance(problem.objective(1.0), SecondOrderObjective)
    mm = MaxMarginObjective(problem, 1.0)
    assert isinstance(mm, Objective) and not isinstance(mm, SecondOrderObjective)
    with pytest.raises(InvalidInputError, match="needs a differentiable objective: .* use eg-mm, eg-mm-batch$"):
        solvers.resolve("tron", mm)
    assert solvers.resolve("eg-mm", mm).__name__ == "eg_mm"


def test_loglin_solvers_lists_every_solver_with_kinds_and_paper(capsys):
    assert main(["solvers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == list(solvers.TABLE)
    for r in rows:
        assert r["kinds"] == list(solvers.TABLE[r["name"]].kinds) and r["paper"]
    assert {"chain", "tree"} <= {k for r in rows for k in r["kinds"]}
    assert main(["solvers"]) == 0
    text = capsys.readouterr().out
    for name, e in solvers.listed():
        assert f"{name} " in text and f"[{', '.join(e.kinds)}]" in text and e.paper in text
    assert "tree-eg" not in text and "chain-" not in text


def test_minimize_runs_a_solver_by_an_old_name(small_multiclass):
    from loglin.problem import problem_from_matrix
    from loglin.solvers.base import minimize
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = minimize(obj, "tron", tol=1e-8)
    b = minimize(obj, solvers.entry("lbfgs").function("maxent"), tol=1e-8)
    assert a.converged and b.converged
    np.testing.assert_allclose(a.f, b.f, rtol=1e-9)
