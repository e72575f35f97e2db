"""MaxentProblem construction: merging, predicate x label features, both storage forms, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.errors import InvalidInputError
from loglin.problem import problem_from_events, problem_from_matrix
from conftest import random_sparse


def _dense_features(prob):
    """f_t(x, y) as a dense X x K x n array, from the row form."""
    F = np.zeros((prob.n_contexts, prob.n_labels, prob.n_features))
    phi = prob.context_matrix().toarray()
    for p in range(prob.n_predicates):
        for j in range(prob.map_ptr[p], prob.map_ptr[p + 1]):
            F[:, prob.map_label[j], prob.map_feat[j]] += phi[:, p]
    return F


def test_row_and_column_forms_agree():
    X = random_sparse(30, 7, 0.4, seed=1)
    prob = problem_from_matrix(X, np.arange(30) % 3, all_pairs=False)
    F = _dense_features(prob)
    G = np.zeros_like(F)
    for t in range(prob.n_features):
        for j in prob.occ_entry[prob.occ_ptr[t]:prob.occ_ptr[t + 1]]:
            p, y = prob.map_pred[j], prob.map_label[j]
            for k in range(prob.col_ptr[p], prob.col_ptr[p + 1]):
                G[prob.col_ctx[k], y, t] += prob.col_val[k]
    np.testing.assert_allclose(F, G)
    assert prob.nnz() == np.count_nonzero(F)


def test_empirical_counts_and_merging():
    X = sp.csr_matrix(np.array([[1, 0, 1], [1, 0, 1], [0, 1, 0], [1, 0, 1]], dtype=float))
    y = np.array(["a", "b", "a", "a"])
    prob = problem_from_matrix(X, y, all_pairs=True)
    assert prob.n_contexts == 2                      # rows 0, 1, 3 are one context seen with labels a, b
    merged = np.flatnonzero(prob.ctx_count == 3)[0]
    obs = dict(zip(prob.obs_label[prob.obs_ptr[merged]:prob.obs_ptr[merged + 1]].tolist(),
                   prob.obs_count[prob.obs_ptr[merged]:prob.obs_ptr[merged + 1]].tolist()))
    assert obs == {0: 2.0, 1: 1.0}
    F = _dense_features(prob)
    expected = np.zeros(prob.n_features)
    for x in range(prob.n_contexts):
        for o in range(prob.obs_ptr[x], prob.obs_ptr[x + 1]):
            expected += prob.obs_count[o] * F[x, prob.obs_label[o]]
    np.testing.assert_allclose(prob.emp, expected)
    assert prob.binary


def test_seen_pairs_only_versus_all_pairs():
    X = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1]], dtype=float))
    y = np.array([0, 1, 1])
    seen = problem_from_matrix(X, y, all_pairs=False)
    full = problem_from_matrix(X, y, all_pairs=True)
    assert full.n_features == 4
    assert seen.n_features == 3                     # predicate 1 never occurs with label 0
    assert seen.objective(1.0).fun(np.zeros(3)) == pytest.approx(full.objective(1.0).fun(np.zeros(4)))


def test_general_real_valued_features_through_a_shared_feature_id():
    """A feature shared by two labels (not predicate x label) expresses any f_t(x, y)."""
    from loglin.problem import MaxentProblem
    # f_0(x, y) = phi_0(x) for y in {0, 1}; f_1(x, 2) = phi_1(x)
    prob = MaxentProblem(ctx_ptr=np.array([0, 2, 3]), ctx_pred=np.array([0, 1, 0]), ctx_val=np.array([0.5, 2.0, 1.5]),
                         map_ptr=np.array([0, 2, 3]), map_label=np.array([0, 1, 2], dtype=np.int32),
                         map_feat=np.array([0, 0, 1]), ctx_count=np.array([1.0, 1.0]),
                         obs_ptr=np.array([0, 1, 2]), obs_label=np.array([2, 0], dtype=np.int32),
                         obs_count=np.array([1.0, 1.0]), n_features=2, labels=np.array(["a", "b", "c"]))
    w = np.array([0.3, -0.7])
    s0 = np.array([0.5 * 0.3, 0.5 * 0.3, 2.0 * -0.7])
    s1 = np.array([1.5 * 0.3, 1.5 * 0.3, 0.0])
    direct = (np.log(np.exp(s0).sum()) - s0[2]) + (np.log(np.exp(s1).sum()) - s1[0]) + 0.5 * w @ w
    assert prob.objective(1.0).fun(w) == pytest.approx(direct, rel=1e-12)
    np.testing.assert_allclose(prob.emp, [1.5, 2.0])
    assert list(np.diff(prob.occ_ptr)) == [2, 1]


def test_events_with_cutoff_and_values():
    labels = ["NN", "VB", "NN", "DT"]
    contexts = [["w=dog", "rare"], ["w=run", "x"], ["w=dog", "x"], ["w=the", "x"]]
    values = [[1.0, 1.0], [1.0, 0.5], [1.0, 0.5], [1.0, 0.5]]
    prob = problem_from_events(labels, contexts, values, cutoff=2)
    assert set(prob.predicates) == {"w=dog", "x"}
    assert not prob.binary
    assert list(prob.labels) == ["DT", "NN", "VB"]


@pytest.mark.parametrize("X, y, message", [
    (np.zeros((0, 3)), np.array([]), "empty"),
    (np.array([[1.0, np.nan]]), np.array([0]), "NaN"),
    (np.array([[1.0, np.inf], [0, 1]]), np.array([0, 1]), "NaN or infinity"),
    (np.ones((3, 2)), np.array([1, 1, 1]), "two labels"),
    (np.ones((3, 2)), np.array([1, 2]), "labels"),
    (np.ones(3), np.array([1, 2, 1]), "two-dimensional"),
])
def test_bad_matrices_are_rejected(X, y, message):
    with pytest.raises(InvalidInputError, match=message):
        problem_from_matrix(X, y)


def test_bad_weights_and_classes_are_rejected():
    X, y = np.eye(3), np.array([0, 1, 0])
    with pytest.raises(InvalidInputError, match="sample_weight"):
        problem_from_matrix(X, y, sample_weight=[1, -1, 1])
    with pytest.raises(InvalidInputError, match="all instance weights are zero"):
        problem_from_matrix(X, y, sample_weight=[0, 0, 0])
    with pytest.raises(InvalidInputError, match="not one of the known classes"):
        problem_from_matrix(X, np.array([0, 1, 7]), classes=[0, 1])
    with pytest.raises(InvalidInputError, match="unknown class"):
        problem_from_matrix(X, y, class_weight={5: 2.0})
    with pytest.raises(InvalidInputError, match="exactly two classes"):
        binary_problem(X, np.array([0, 1, 2]))
    with pytest.raises(InvalidInputError, match="C must be positive"):
        binary_problem(X, y, C=0.0)


def test_negative_feature_check_on_request():
    X = np.array([[1.0, -2.0], [0.5, 1.0]])
    with pytest.raises(InvalidInputError, match="non-negative"):
        problem_from_matrix(X, [0, 1], check_nonnegative=True)
    assert problem_from_matrix(X, [0, 1]).has_negative_features()


def test_dense_pairs_layout_detected():
    """All-pairs builders number feature (p, y) as p*K + y; other layouts are not flagged."""
    from loglin.problem import MaxentProblem
    X = random_sparse(40, 9, 0.3, seed=11, binary=True)
    y = np.arange(40) % 4
    full = problem_from_matrix(X, y, all_pairs=True, bias=1.0)
    assert full.dense_pairs
    K = full.n_labels
    pred_of_entry = np.repeat(np.arange(full.n_predicates), np.diff(full.map_ptr))
    assert np.array_equal(full.map_feat, pred_of_entry * K + full.map_label)
    assert not problem_from_matrix(X, y, all_pairs=True, label_subset=[1]).dense_pairs
    X = X.tolil()
    X[:, 0] = 0.0                                   # predicate 0 only seen with one label
    X[0, 0] = 1.0
    X = X.tocsr()
    assert not problem_from_matrix(X, y, all_pairs=False).dense_pairs
    swapped = full.map_feat.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    other = MaxentProblem(ctx_ptr=full.ctx_ptr, ctx_pred=full.ctx_pred, ctx_val=full.ctx_val,
                          map_ptr=full.map_ptr, map_label=full.map_label, map_feat=swapped,
                          ctx_count=full.ctx_count, obs_ptr=full.obs_ptr, obs_label=full.obs_label,
                          obs_count=full.obs_count, n_features=full.n_features, labels=full.labels)
    assert not other.dense_pairs
    events = problem_from_events(["a", "b", "c", "a"], [["x", "y"], ["y"], ["x", "z"], ["z"]], all_pairs=True)
    assert events.dense_pairs
