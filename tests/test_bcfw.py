"""Block-coordinate Frank-Wolfe (bcfw, eg-bcfw) on the M3N dual of every structure: the optimum of an
independent solver (1-slack cutting-plane), a certificate that bounds the true suboptimality, brute force."""
from pathlib import Path

import numpy as np
import pytest

from loglin.data.conll import read_conllx
from loglin.errors import InvalidInputError
from loglin.parsing.problem import build_tree_problem
from loglin.solvers.base import minimize
from loglin.structured.bcfw import FrankWolfeState
from loglin.structured.dual import PartDualState
from loglin.structured.node import NodeProblem
from test_chain2 import second_order
from test_structured import brute_losses, random_chain_problem

EN = Path(__file__).parent / "data" / "parse_en.conllu"


def _node_problem():
    rng = np.random.default_rng(3)
    X = rng.random((40, 6)) * (rng.random((40, 6)) < 0.6)
    return NodeProblem.from_matrix(X, rng.integers(0, 3, size=40))


PROBLEMS = {
    "chain": lambda: (random_chain_problem(n_sent=20, K=3, n_attr=10, max_len=4, seed=10), 0.5),
    "chain2": lambda: (second_order(seed=10, n_sent=20, K=3, n_attr=10, max_len=4), 0.5),
    "node": lambda: (_node_problem(), 0.8),
    "tree": lambda: (build_tree_problem(read_conllx(EN))[0], 0.1),
}


def _reference(obj):
    """The cutting-plane optimum and its own dual bound (a different algorithm on the same P-MM)."""
    cp = minimize(obj, "cutting-plane", tol=0.0, gap_tol=1e-10, max_iter=1000, warn=False, epsilon=1e-10)
    return cp.f, cp.trace.records[-1]["dual_objective"]


@pytest.mark.parametrize("structure", list(PROBLEMS))
@pytest.mark.parametrize("steps", ["pairwise", "frank-wolfe"])
def test_bcfw_reaches_the_cutting_plane_optimum_and_its_gap_bounds_the_error(structure, steps, serial_numba):
    problem, C = PROBLEMS[structure]()
    obj = problem.objective(C, "mm")
    p_star, d_star = _reference(obj)
    assert p_star - d_star <= 1e-8 * p_star
    tol = 1e-7 if steps == "pairwise" else 1e-3
    res = minimize(obj, "bcfw", tol=0.0, gap_tol=tol, max_iter=5000, random_state=0, steps=steps,
                   record_spacing=None)
    assert res.stop_reason == "duality gap tolerance"
    assert p_star * (1 - 1e-9) <= res.f <= p_star * (1 + tol)
    for r in res.trace.records[1:]:
        # weak duality against the reference, and the certificate f - D covers the true error f - P*
        assert r["dual_objective"] <= p_star * (1 + 1e-9)
        assert r["duality_gap"] >= (r["objective"] - p_star) - 1e-9 * p_star
    duals = [r["dual_objective"] for r in res.trace.records[1:]]
    assert all(b >= a - 1e-10 * abs(a) for a, b in zip(duals, duals[1:]))     # exact line search: D never falls


def test_bcfw_certificate_against_brute_force():
    """On a tiny chain, the primal at bcfw's w equals enumeration, and its dual bound lies below the enumerated
    primal of the returned w and of perturbations of it."""
    p = random_chain_problem(n_sent=8, K=3, n_attr=6, max_len=4, seed=4, weights=np.linspace(0.5, 2.0, 8))
    C = 0.3
    res = minimize(p.objective(C, "mm"), "bcfw", tol=0.0, gap_tol=1e-7, max_iter=20000, random_state=1)
    last = res.trace.records[-1]
    brute_f = 0.5 * res.w @ res.w + C * brute_losses(p, res.w)[1]
    assert res.f == pytest.approx(brute_f, rel=1e-10) and last["objective"] == res.f
    assert brute_f - 1e-7 * brute_f <= last["dual_objective"] <= brute_f * (1 + 1e-12)
    rng = np.random.default_rng(5)
    for _ in range(5):
        v = res.w + 0.1 * rng.normal(size=p.n_features)
        assert 0.5 * v @ v + C * brute_losses(p, v)[1] >= last["dual_objective"] * (1 - 1e-12)


def test_the_dual_is_the_eg_dual_and_a_warm_start_keeps_its_point(serial_numba):
    """A FrankWolfeState built from an EG state's marginals has EG's dual value and w (the same D-MM); eg-bcfw
    continues from it to the cutting-plane optimum."""
    p, C = PROBLEMS["chain"]()
    obj = p.objective(C, "mm")
    eg_state = PartDualState(p, "mm")
    minimize(obj, "eg", tol=0.0, gap_tol=0.0, max_iter=5, random_state=0, state=eg_state, warn=False)
    fw = FrankWolfeState.from_state(eg_state)
    assert fw.dual(C) == pytest.approx(eg_state.dual(C), rel=1e-10)
    np.testing.assert_allclose(fw.primal_weights(C), eg_state.primal_weights(C), atol=1e-10)
    assert FrankWolfeState(p).dual(C) == 0.0          # the gold labellings: w(alpha) = 0
    p_star, _ = _reference(obj)
    res = minimize(obj, "eg-bcfw", tol=0.0, gap_tol=1e-6, max_iter=20000, random_state=0, eg_epochs=5)
    assert res.stop_reason == "duality gap tolerance"
    assert p_star * (1 - 1e-9) <= res.f <= p_star * (1 + 1e-6)


def test_bcfw_refuses_crf_objectives_and_bad_options():
    p, C = PROBLEMS["chain"]()
    with pytest.raises(InvalidInputError):
        minimize(p.objective(C, "ll"), "bcfw", max_iter=1)
    with pytest.raises(InvalidInputError):
        minimize(p.objective(C, "mm"), "bcfw", max_iter=1, steps="away")


def test_a_warm_start_from_an_eg_state_without_stored_marginals(serial_numba):
    """EG chain states keep s only by default (store_marginals=False): bcfw recomputes their marginals and
    starts from the same point as from a state that stored them."""
    p, C = PROBLEMS["chain"]()
    obj = p.objective(C, "mm")
    states = [PartDualState(p, "mm", store_marginals=keep) for keep in (True, False)]
    for state in states:
        minimize(obj, "eg", tol=0.0, gap_tol=0.0, max_iter=5, random_state=0, state=state, warn=False)
    stored, recomputed = (FrankWolfeState.from_state(s) for s in states)
    assert len(states[1].mu) == 0
    np.testing.assert_allclose(recomputed.mu, stored.mu, rtol=0, atol=1e-12)
    assert recomputed.dual(C) == pytest.approx(stored.dual(C), rel=1e-12)
