"""Chain CRF on a CoNLL-2000 slice: our optimum equals CRFsuite's on identical features, and EG reaches it."""
import pytest

from loglin.data.paths import shared_data_dir


@pytest.mark.slow
def test_crf_optimum_matches_crfsuite_and_eg():
    base = shared_data_dir()
    if base is None or not (base / "conll2000").is_dir():
        pytest.skip("CoNLL-2000 not available")
    pycrfsuite = pytest.importorskip("pycrfsuite")
    from loglin.data import read_conll2000
    from loglin.experiments.collins2008 import _crfsuite
    from loglin.solvers.base import minimize
    from loglin.structured.crf_features import build_chain_problem
    from loglin.structured.eg import collins_annealing
    assert pycrfsuite
    train = read_conll2000(base / "conll2000" / "train.txt")[:200]
    problem, _ = build_chain_problem(train, "chunk")
    C = 1.0
    obj = problem.objective(C)
    ref = minimize(obj, "lbfgs", tol=1e-7, max_iter=1000)
    cs = _crfsuite(train, train[:20], C)
    assert cs["features"] == problem.n_features
    assert ref.f / C == pytest.approx(cs["objective_collins"], rel=2e-5)   # CRFsuite: -loglik + c2 ||w||^2
    eg = minimize(obj, "chain-eg", tol=0.0, gap_tol=1e-6, max_iter=200, random_state=0,
                  C_schedule=collins_annealing(C))
    assert eg.f == pytest.approx(ref.f, rel=1e-5)
    last = eg.trace.records[-1]
    assert 0 <= last["duality_gap"] <= 1e-6 * last["objective"]
