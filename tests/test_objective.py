"""Objectives: gradients and Hessian-vector products against finite differences, stability."""
import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.problem import problem_from_matrix
from conftest import random_sparse


def _objectives(small_multiclass, small_binary):
    Xm, ym = small_multiclass
    Xb, yb = small_binary
    return [
        problem_from_matrix(Xm, ym, all_pairs=True).objective(0.7),
        problem_from_matrix(Xm, ym, all_pairs=False, bias=1.0, regularize_bias=False).objective(2.0),
        problem_from_matrix(Xm.sign(), ym, all_pairs=False).objective(1.0),      # 0/1 data path
        binary_problem(Xb, yb, C=0.5).objective(),
        binary_problem(Xb, yb, C=3.0, bias=1.0, regularize_bias=False).objective(),
    ]


def test_gradient_matches_finite_differences(small_multiclass, small_binary):
    rng = np.random.default_rng(0)
    for obj in _objectives(small_multiclass, small_binary):
        w = rng.normal(scale=0.5, size=obj.n)
        f, g = obj.fun_grad(w)
        h = 1e-6
        for t in rng.choice(obj.n, size=8, replace=False):
            e = np.zeros(obj.n)
            e[t] = h
            fd = (obj.fun(w + e) - obj.fun(w - e)) / (2 * h)
            assert fd == pytest.approx(g[t], rel=1e-5, abs=1e-6)
        assert obj.fun(w) == pytest.approx(f, rel=1e-12)


def test_hessian_vector_matches_gradient_differences(small_multiclass, small_binary):
    rng = np.random.default_rng(1)
    for obj in _objectives(small_multiclass, small_binary):
        w = rng.normal(scale=0.5, size=obj.n)
        obj.fun_grad(w)
        obj.accept()
        v = rng.normal(size=obj.n)
        h = 1e-6
        fd = (obj.fun_grad(w + h * v, keep_cache=False)[1] - obj.fun_grad(w - h * v, keep_cache=False)[1]) / (2 * h)
        np.testing.assert_allclose(obj.hess_vec(v), fd, rtol=1e-5, atol=1e-6)


def test_rejected_trial_point_keeps_hessian_cache(small_multiclass):
    obj = problem_from_matrix(*small_multiclass).objective(1.0)
    w = np.full(obj.n, 0.1)
    obj.fun_grad(w)
    obj.accept()
    v = np.ones(obj.n)
    before = obj.hess_vec(v)
    obj.fun_grad(w + 3.0)          # a trial point that is not accepted
    np.testing.assert_array_equal(obj.hess_vec(v), before)


def test_no_overflow_for_huge_weights(small_multiclass, small_binary):
    for obj in _objectives(small_multiclass, small_binary):
        w = np.full(obj.n, 1e4)
        w[::2] = -1e4
        f, g = obj.fun_grad(w)
        assert np.isfinite(f) and np.all(np.isfinite(g))


def test_maxent_objective_equals_direct_formula(small_multiclass):
    """Huang et al. eq. (3) written out densely, times C*N, is our objective."""
    X, y = small_multiclass
    prob = problem_from_matrix(X, y, all_pairs=True)
    C = 0.9
    obj = prob.objective(C)
    rng = np.random.default_rng(2)
    w = rng.normal(size=obj.n)
    K, d = len(prob.labels), X.shape[1]
    W = w.reshape(d, K)                    # all pairs: feature id = p * K + y
    S = X @ W
    codes = np.searchsorted(prob.labels, y)
    logT = np.log(np.exp(S).sum(axis=1))
    N = len(y)
    L = np.mean(logT - S[np.arange(N), codes]) + w @ w / (2 * C * N)
    assert obj.fun(w) == pytest.approx(C * N * L, rel=1e-12)
    assert obj.normalized(obj.fun(w)) == pytest.approx(L, rel=1e-12)


def test_merged_contexts_equal_unmerged_sum():
    """Duplicate rows are merged into counts; the objective is unchanged."""
    X = random_sparse(40, 8, 0.4, seed=9, binary=True)
    X = sp.vstack([X, X[:15], X[:5]]).tocsr()
    y = np.random.default_rng(1).integers(0, 3, X.shape[0])
    prob = problem_from_matrix(X, y, all_pairs=True)
    assert prob.n_contexts < X.shape[0]
    assert prob.total_count == X.shape[0]
    w = np.random.default_rng(2).normal(size=prob.n_features)
    K = 3
    S = X @ w.reshape(8, K)
    direct = np.sum(np.log(np.exp(S).sum(axis=1)) - S[np.arange(len(y)), y]) + 0.5 * w @ w
    assert prob.objective(1.0).fun(w) == pytest.approx(direct, rel=1e-12)


# ------------------------------------------------ dense all-pairs fast path vs the generic map path

def _permuted_numbering(problem, seed):
    """The same model with features renumbered at random: not the dense layout, so the generic kernels run."""
    from loglin.problem import MaxentProblem
    perm = np.random.default_rng(seed).permutation(problem.n_features)
    reg = np.empty_like(problem.reg)
    reg[perm] = problem.reg
    return MaxentProblem(ctx_ptr=problem.ctx_ptr, ctx_pred=problem.ctx_pred, ctx_val=problem.ctx_val,
                         map_ptr=problem.map_ptr, map_label=problem.map_label, map_feat=perm[problem.map_feat],
                         ctx_count=problem.ctx_count, obs_ptr=problem.obs_ptr, obs_label=problem.obs_label,
                         obs_count=problem.obs_count, n_features=problem.n_features, labels=problem.labels,
                         reg=reg), perm


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def _assert_paths_agree(problem, C, seed, permuted=True):
    from loglin.objective import MaxentObjective
    dense = MaxentObjective(problem, C)
    generic = MaxentObjective(problem, C, dense_path=False)
    assert problem.dense_pairs and dense.dense_path and not generic.dense_path
    rng = np.random.default_rng(seed)
    w = 0.3 * rng.standard_normal(problem.n_features)
    v = rng.standard_normal(problem.n_features)
    others = [(generic, np.arange(problem.n_features))]
    if permuted:
        other, perm = _permuted_numbering(problem, seed)
        assert not other.dense_pairs
        assert problem.map_feat_or_empty().size == 0                   # generic: the identity-map fast path
        assert other.map_feat_or_empty() is other.map_feat             # permuted: through the map
        others.append((other.objective(C), perm))
    fd, gd = dense.fun_grad(w)
    dense.accept()
    hd = dense.hess_vec(v)
    for obj, perm in others:
        wp, vp = np.empty_like(w), np.empty_like(v)
        wp[perm], vp[perm] = w, v                     # feature t of the dense problem is perm[t] there
        f, g = obj.fun_grad(wp)
        obj.accept()
        h = obj.hess_vec(vp)
        assert abs(fd - f) <= 1e-12 * abs(f)
        assert abs(dense.fun(w) - obj.fun(wp)) <= 1e-12 * abs(f)
        assert _rel(gd, g[perm]) <= 1e-12
        assert _rel(hd, h[perm]) <= 1e-12


@pytest.mark.parametrize("kind", ["binary", "real", "signed"])
def test_dense_path_matches_generic_path(kind):
    rng = np.random.default_rng(3)
    X = random_sparse(200, 30, 0.15, seed=4, binary=kind == "binary", nonneg=kind != "signed")
    y = rng.integers(0, 5, 200)
    weights = rng.uniform(0.2, 3.0, 200)
    problem = problem_from_matrix(X, y, sample_weight=weights, all_pairs=True, bias=1.0, regularize_bias=False)
    assert problem.binary == (kind == "binary")
    _assert_paths_agree(problem, 2.5, seed=5)


def test_dense_path_matches_generic_path_on_conll_slice():
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    problem = build_dataset("conll2000-chunk", data_dir=bundled_conll2000_small()[0].parent,
                            all_pairs=True).problem
    _assert_paths_agree(problem, 10.0, seed=6, permuted=False)


def test_dense_path_refused_for_other_layouts():
    from loglin.objective import MaxentObjective
    X = random_sparse(60, 12, 0.3, seed=7, binary=True)
    problem = problem_from_matrix(X, np.arange(60) % 3, all_pairs=True, label_subset=[1, 2])
    assert not problem.dense_pairs
    with pytest.raises(ValueError):
        MaxentObjective(problem, 1.0, dense_path=True)
    assert not MaxentObjective(problem, 1.0).dense_path


def test_identity_map_path_matches_map_path_on_seen_pairs():
    """The papers' seen pairs number features in map order: the passes skip map_feat; a renumbered copy reads it."""
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    problem = build_dataset("conll2000-pos", data_dir=bundled_conll2000_small()[0].parent).problem
    assert not problem.dense_pairs and problem.map_feat_or_empty().size == 0
    other, perm = _permuted_numbering(problem, 8)
    assert other.map_feat_or_empty() is other.map_feat
    a, b = problem.objective(10.0), other.objective(10.0)
    rng = np.random.default_rng(9)
    w, v = 0.1 * rng.standard_normal(problem.n_features), rng.standard_normal(problem.n_features)
    wp, vp = np.empty_like(w), np.empty_like(v)
    wp[perm], vp[perm] = w, v
    fa, ga = a.fun_grad(w)
    fb, gb = b.fun_grad(wp)
    a.accept(), b.accept()
    assert abs(fa - fb) <= 1e-12 * abs(fb) and _rel(ga, gb[perm]) <= 1e-12
    assert _rel(a.hess_vec(v), b.hess_vec(vp)[perm]) <= 1e-12


# ------------------------------------- label rows (dense rows for predicates seen with many labels)

def _shared_feature_problem(seed):
    """Seen pairs where each feature also appears under a second (predicate, label) pair: f_t(x, y)
    sums two predicates' values, so the rows' gradient must add repeated features (np.add.at)."""
    from loglin.problem import MaxentProblem
    rng = np.random.default_rng(seed)
    X = random_sparse(150, 20, 0.3, seed=seed, binary=False, nonneg=True)
    base = problem_from_matrix(X, rng.integers(0, 6, 150), all_pairs=True)
    n_feat = base.n_features // 2
    return MaxentProblem(ctx_ptr=base.ctx_ptr, ctx_pred=base.ctx_pred, ctx_val=base.ctx_val,
                         map_ptr=base.map_ptr, map_label=base.map_label,
                         map_feat=(base.map_feat % n_feat).astype(base.map_feat.dtype), ctx_count=base.ctx_count,
                         obs_ptr=base.obs_ptr, obs_label=base.obs_label, obs_count=base.obs_count,
                         n_features=n_feat, labels=base.labels)


def _assert_same_passes(a, b, seed):
    """fun, fun_grad and hess_vec of two layouts of one problem agree to 1e-12; returns the w used."""
    rng = np.random.default_rng(seed)
    w, v = 0.3 * rng.standard_normal(a.n), rng.standard_normal(a.n)
    (fa, ga), (fb, gb) = a.fun_grad(w), b.fun_grad(w)
    a.accept(), b.accept()
    assert abs(fa - fb) <= 1e-12 * abs(fb) and abs(a.fun(w) - fb) <= 1e-12 * abs(fb)
    assert _rel(ga, gb) <= 1e-12 and _rel(a.hess_vec(v), b.hess_vec(v)) <= 1e-12
    return w


def _rows_cases():
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    conll = build_dataset("conll2000-pos", data_dir=bundled_conll2000_small()[0].parent).problem
    X = random_sparse(300, 60, 0.04, seed=11, binary=False, nonneg=True)     # some pairs unseen: not all-pairs
    y = np.random.default_rng(12).integers(0, 12, 300)
    real = problem_from_matrix(X, y, all_pairs=False, bias=1.0, regularize_bias=False)
    return {"conll slice, seen pairs": conll, "conll slice, renumbered": _permuted_numbering(conll, 13)[0],
            "real values, seen pairs, bias": real, "shared features": _shared_feature_problem(14)}


@pytest.mark.parametrize("case", ["conll slice, seen pairs", "conll slice, renumbered",
                                  "real values, seen pairs, bias", "shared features"])
def test_label_rows_path_matches_map_path(case):
    """f, gradient, Hv and the GIS/IIS expectation pass agree (1e-12) with the plain map path."""
    from loglin.objective import MaxentObjective
    problem = _rows_cases()[case]
    rows, plain = MaxentObjective(problem, 3.0), MaxentObjective(problem, 3.0, label_rows=False)
    assert 0 < rows.rows.n_rows <= problem.n_predicates and plain.rows.n_rows == 0
    assert rows.rows.unique_feat == (case != "shared features")
    w = _assert_same_passes(rows, plain, seed=15)
    pa, pb = np.empty((problem.n_contexts, problem.n_labels)), np.empty((problem.n_contexts, problem.n_labels))
    (la, ea), (lb, eb) = rows.loss_and_expectation(w, pa, True), plain.loss_and_expectation(w, pb, True)
    assert abs(la - lb) <= 1e-12 * abs(lb) and _rel(ea, eb) <= 1e-12 and _rel(pa, pb) <= 1e-12


def test_label_rows_gradient_matches_finite_differences():
    problem = _shared_feature_problem(16)
    obj = problem.objective(2.0)
    assert obj.rows.n_rows > 0
    rng = np.random.default_rng(17)
    w = 0.5 * rng.standard_normal(obj.n)
    _, g = obj.fun_grad(w)
    for t in rng.choice(obj.n, size=6, replace=False):
        e = np.zeros(obj.n)
        e[t] = 1e-6
        assert (obj.fun(w + e) - obj.fun(w - e)) / 2e-6 == pytest.approx(g[t], rel=1e-5, abs=1e-6)


def test_label_rows_choice_of_predicates():
    """Rows only for predicates seen with >= min_fraction * K distinct labels; none qualifying -> no rows."""
    from loglin.label_rows import LabelRows
    from loglin.objective import MaxentObjective
    problem = _rows_cases()["conll slice, seen pairs"]
    K, lengths = problem.n_labels, np.diff(problem.map_ptr)
    layout = LabelRows.build(problem, min_fraction=0.5)
    assert layout.n_rows == int(np.sum(lengths >= np.ceil(0.5 * K)))
    assert len(layout.feat) == int(lengths[lengths >= np.ceil(0.5 * K)].sum())
    assert np.all(layout.gather(np.arange(problem.n_features, dtype=float))[layout.pos] == layout.feat)
    assert LabelRows.build(problem, min_fraction=1.01).n_rows == 0
    X = random_sparse(40, 50, 0.05, seed=18, binary=True)
    sparse_labels = problem_from_matrix(X, np.arange(40) % 40, all_pairs=False)   # 40 labels, ~2 per predicate
    if LabelRows.build(sparse_labels).n_rows == 0:
        with pytest.raises(ValueError):
            MaxentObjective(sparse_labels, 1.0, label_rows=True)


@pytest.mark.parametrize("kind", ["conll slice", "real values"])
def test_hot_first_rows_match_the_plain_dense_path(kind):
    """All-pairs passes with W's rows ordered by predicate frequency agree with the plain dense path (1e-12)."""
    from loglin.objective import MaxentObjective
    if kind == "conll slice":
        from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
        problem = build_dataset("conll2000-chunk", data_dir=bundled_conll2000_small()[0].parent,
                                all_pairs=True).problem
    else:
        X = random_sparse(200, 30, 0.2, seed=19, binary=False, nonneg=False)
        problem = problem_from_matrix(X, np.random.default_rng(20).integers(0, 5, 200), all_pairs=True, bias=1.0)
    hot, plain = MaxentObjective(problem, 2.0, hot_first=True), MaxentObjective(problem, 2.0, hot_first=False)
    assert hot.hot is not None and plain.hot is None and hot.dense_path
    counts = np.bincount(problem.ctx_pred, minlength=problem.n_predicates)
    assert np.all(np.diff(counts[hot.hot.order]) <= 0)                       # most frequent rows first
    _assert_same_passes(hot, plain, seed=21)
    auto = MaxentObjective(problem, 2.0).hot                      # auto rule: only W past a few MB
    assert (auto is not None) == (8 * problem.n_features > 4 << 20) == (kind == "conll slice")


def _explicit_diagonal(obj, coords):
    """e_t' H e_t from Hessian-vector products (H at the accepted point)."""
    out = []
    for t in coords:
        e = np.zeros(obj.n)
        e[t] = 1.0
        out.append(obj.hess_vec(e)[t])
    return np.array(out)


def test_hessian_diagonal_matches_hessian_vector_products(small_multiclass, small_binary):
    """hess_diag (TRON's preconditioner) is the exact diagonal on every layout where each feature fires
    for one label of a context: all pairs (own and hot-first order), seen pairs (map and label rows), LR."""
    from loglin.objective import MaxentObjective
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    chunk = build_dataset("conll2000-chunk", data_dir=bundled_conll2000_small()[0].parent, all_pairs=True).problem
    cases = _objectives(small_multiclass, small_binary) + [
        MaxentObjective(chunk, 2.0, hot_first=True), MaxentObjective(chunk, 2.0, hot_first=False),
        *(MaxentObjective(_rows_cases()[c], 3.0, label_rows=lr)
          for c in ("conll slice, renumbered", "real values, seen pairs, bias") for lr in (None, False))]
    rng = np.random.default_rng(22)
    for obj in cases:
        obj.fun_grad(0.3 * rng.standard_normal(obj.n))
        obj.accept()
        coords = np.arange(obj.n) if obj.n <= 200 else rng.choice(obj.n, size=40, replace=False)
        d = obj.hess_diag()
        assert d.shape == (obj.n,) and np.all(d > 0)
        np.testing.assert_allclose(d[coords], _explicit_diagonal(obj, coords), rtol=1e-10, atol=1e-12)
