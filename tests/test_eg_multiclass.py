"""Multi-class EG (LL and MM, online and batch) against L-BFGS, TRON and LIBLINEAR's Crammer-Singer SVM."""
import numpy as np
import pytest

from loglin.errors import InvalidInputError
from loglin.problem import problem_from_matrix
from loglin.solvers.base import minimize
from loglin.structured.multiclass import MaxMarginObjective, multiclass_state


@pytest.fixture
def data(small_multiclass):
    X, y = small_multiclass
    return problem_from_matrix(X, y)


def test_online_batch_eg_and_batch_solvers_reach_the_same_maxent_optimum(data):
    obj = data.objective(2.0)
    ref = minimize(obj, "lbfgs", tol=1e-10, max_iter=3000)
    tron = minimize(obj, "tron", tol=1e-10, max_iter=500)
    online = minimize(obj, "eg-ll", tol=0.0, gap_tol=1e-10, max_iter=2000, random_state=0)
    batch = minimize(obj, "eg-batch", tol=0.0, gap_tol=1e-6, max_iter=5000)
    assert tron.f == pytest.approx(ref.f, rel=1e-8)
    assert online.f == pytest.approx(ref.f, rel=1e-8)
    assert batch.f == pytest.approx(ref.f, rel=1e-4)
    assert online.stop_reason == "duality gap tolerance"
    np.testing.assert_allclose(online.w, ref.w, atol=1e-4)
    duals = [r["dual_objective"] for r in online.trace.records[1:]]
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:]))


def test_cyclic_order_and_annealing_also_converge(data):
    from loglin.structured.eg import collins_annealing
    obj = data.objective(5.0)
    ref = minimize(obj, "lbfgs", tol=1e-10, max_iter=3000)
    cyc = minimize(obj, "eg-ll", tol=0.0, gap_tol=1e-8, max_iter=3000, order="cyclic")
    ann = minimize(obj, "eg-ll", tol=0.0, gap_tol=1e-8, max_iter=3000, C_schedule=collins_annealing(5.0),
                   random_state=1)
    assert cyc.f == pytest.approx(ref.f, rel=1e-6)
    assert ann.f == pytest.approx(ref.f, rel=1e-6)


def test_max_margin_eg_matches_liblinear_crammer_singer(small_multiclass):
    from sklearn.svm import LinearSVC
    X, y = small_multiclass
    p = problem_from_matrix(X, y)
    C = 0.5
    obj = MaxMarginObjective(p, C)
    svc = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-8, max_iter=100000).fit(X, y)
    # our weights are predicate x label with label-major columns inside each predicate row
    K = p.n_labels
    w_svc = np.zeros(p.n_features)
    for pred in range(p.n_predicates):
        for j in range(p.map_ptr[pred], p.map_ptr[pred + 1]):
            w_svc[p.map_feat[j]] = svc.coef_[p.map_label[j], pred]
    f_svc = obj.fun(w_svc)
    online = minimize(obj, "eg-mm", tol=0.0, gap_tol=1e-5, max_iter=20000, random_state=0)
    batch = minimize(obj, "eg-mm-batch", tol=0.0, gap_tol=1e-3, max_iter=20000)
    lower = online.trace.records[-1]["dual_objective"]
    assert lower <= f_svc + 1e-9 and lower <= online.f
    assert online.f == pytest.approx(f_svc, rel=1e-4)
    assert batch.f == pytest.approx(f_svc, rel=1e-3)
    assert K == len(svc.classes_)


def test_dual_state_terms_match_direct_formula(data):
    rng = np.random.default_rng(0)
    logu = rng.normal(size=(len(data.obs_label), data.n_labels))
    logu -= np.log(np.exp(logu).sum(axis=1, keepdims=True))
    st = multiclass_state(data, "ll", logu=logu)
    F = np.zeros((data.n_contexts, data.n_labels, data.n_features))   # dense f(x, y)
    Xd = data.context_matrix().toarray()
    for pred in range(data.n_predicates):
        for j in range(data.map_ptr[pred], data.map_ptr[pred + 1]):
            F[:, data.map_label[j], data.map_feat[j]] += Xd[:, pred]
    obs_ctx = np.repeat(np.arange(data.n_contexts), np.diff(data.obs_ptr))
    wu = np.zeros(data.n_features)
    for j, (x, yj, c) in enumerate(zip(obs_ctx, data.obs_label, data.obs_count)):
        u = np.exp(logu[j])
        wu += c * (F[x, yj] - u @ F[x])
    np.testing.assert_allclose(st.wu, wu, atol=1e-10)
    C = 0.3
    expected = float(data.obs_count @ (np.exp(logu) * logu).sum(axis=1)) + 0.5 * C * wu @ wu
    assert st.Q(C) == pytest.approx(expected, rel=1e-10)


def test_wrong_objective_and_unregularized_bias_are_rejected(small_multiclass):
    X, y = small_multiclass
    p = problem_from_matrix(X, y)
    with pytest.raises(InvalidInputError):
        minimize(p.objective(1.0), "eg-mm", max_iter=1)
    with pytest.raises(InvalidInputError):
        minimize(MaxMarginObjective(p, 1.0), "eg-ll", max_iter=1)
    pb = problem_from_matrix(X, y, bias=1.0, regularize_bias=False)
    with pytest.raises(InvalidInputError):
        minimize(pb.objective(1.0), "eg-batch", max_iter=1)


def test_eg_ll_regularization_path_warm_starts(data):
    from loglin.solvers.eg import EGState
    from loglin.structured.eg import regularization_path
    rows = regularization_path(lambda C: data.objective(C), "eg-ll", [0.5, 2.0], EGState(data, init_eps=0.01),
                               gap_tol=1e-9, max_iter=3000)
    for row in rows:
        ref = minimize(data.objective(row["C"]), "tron", tol=1e-11, max_iter=500).f
        assert row["primal"] == pytest.approx(ref, rel=1e-7)
        assert 0 <= row["relative_gap"] <= 1e-9
