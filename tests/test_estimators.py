"""loglin's scikit-learn style estimators against independent references.

References: scikit-learn's LogisticRegression (lbfgs), LIBLINEAR (liblinear-official),
objectives recomputed here with NumPy from the formulas, repeated rows for
sample weights, and the binary LR written as a one-label Maxent problem.
"""
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.errors import InvalidInputError
from loglin.estimators import LogisticRegression, MaxentClassifier, NotFittedError
from loglin.model import LinearModel
from loglin.problem import problem_from_events, problem_from_matrix
from loglin.training import ConvergenceWarning, available_solvers

sk_linear = pytest.importorskip("sklearn.linear_model")
TIGHT = 1e-10          # our relative-gradient tolerance when comparing optima


def make_data(n=240, d=8, k=2, seed=0):
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=n, n_features=d, n_informative=min(d, 5), n_redundant=0,
                               n_classes=k, n_clusters_per_class=1, class_sep=0.8, flip_y=0.05,
                               random_state=seed)
    return X, y


def sklearn_lr(C, **kw):
    """scikit-learn's LogisticRegression solved far past its default tolerance."""
    est = sk_linear.LogisticRegression(C=C, solver="lbfgs", tol=1e-12, max_iter=20000, **kw)
    return est


def fit_quiet(est, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # sklearn's lbfgs may warn at tol=1e-12
        return est.fit(*args, **kw)


# ---------------------------------------------------------------- objectives by hand


def lr_objective(w, b, X, y01, C, weight=None, reg_bias=0.0):
    """1/2 ||w||^2 (+ 1/2 b^2 if the bias is regularized) + C sum_i s_i log(1 + exp(-y_i (w.x_i + b)))."""
    s = np.ones(len(y01)) if weight is None else weight
    margin = np.where(y01 == 1, 1.0, -1.0) * (X @ w + b)
    return 0.5 * w @ w + 0.5 * reg_bias * b * b + C * np.sum(s * np.logaddexp(0, -margin))


def maxent_objective(W, b, X, codes, C, weight=None):
    """1/2 ||W||_F^2 + C sum_i s_i (-log softmax(W x_i + b)[y_i]), bias unregularized."""
    s = np.ones(len(codes)) if weight is None else weight
    Z = X @ W.T + b
    logp = Z - np.logaddexp.reduce(Z, axis=1, keepdims=True)
    return 0.5 * np.sum(W * W) - C * np.sum(s * logp[np.arange(len(codes)), codes])


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b))


# ------------------------------------------------------------ agreement with others


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_lr_without_intercept_matches_sklearn(C):
    X, y = make_data()
    ours = LogisticRegression(C=C, fit_intercept=False, tol=TIGHT).fit(X, y)
    ref = fit_quiet(sklearn_lr(C, fit_intercept=False), X, y)
    assert ours.coef_.shape == (1, X.shape[1]) and ours.intercept_.shape == (1,)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    f_ref = lr_objective(ref.coef_[0], 0.0, X, y, C)
    assert rel(ours.objective_, f_ref) < 1e-6
    # objective_ is the objective of the returned weights
    assert rel(ours.objective_, lr_objective(ours.coef_[0], 0.0, X, y, C)) < 1e-12


@pytest.mark.parametrize("C", [0.1, 2.0])
def test_lr_unregularized_intercept_matches_sklearn(C):
    X, y = make_data(seed=1)
    X = X + 1.5                                       # make the intercept matter
    ours = LogisticRegression(C=C, regularize_intercept=False, intercept_scaling=3.0, tol=TIGHT).fit(X, y)
    ref = fit_quiet(sklearn_lr(C), X, y)             # sklearn: intercept not penalized
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-4)
    f_ref = lr_objective(ref.coef_[0], ref.intercept_[0], X, y, C)
    assert rel(ours.objective_, f_ref) < 1e-6


@pytest.mark.parametrize("C", [0.5, 4.0])
def test_lr_regularized_bias_matches_liblinear(C):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    X, y = make_data(seed=2)
    X = X + 1.0
    ours = LogisticRegression(C=C, regularize_intercept=True, intercept_scaling=1.0, tol=TIGHT).fit(X, y)
    model = liblinear.train(y.astype(float).tolist(), X.tolist(), f"-s 0 -c {C} -B 1 -e 1e-8 -q")
    w, b = model.get_decfun()                         # decision = w.x + b for label get_labels()[0]
    positive = int(model.get_labels()[0])
    y_lib = (y == positive).astype(int)
    f_lib = lr_objective(np.asarray(w), b, X, y_lib, C, reg_bias=1.0)   # B = 1: bias weight = b
    assert rel(ours.objective_, f_lib) < 1e-6
    sign = 1.0 if positive == ours.classes_[1] else -1.0
    np.testing.assert_allclose(ours.coef_[0], sign * np.asarray(w), atol=1e-4)
    np.testing.assert_allclose(ours.intercept_[0], sign * b, atol=1e-4)


@pytest.mark.parametrize("k,C", [(3, 1.0), (4, 0.2)])
def test_maxent_matches_sklearn_multinomial(k, C):
    X, y = make_data(n=300, d=6, k=k, seed=3)
    ours = MaxentClassifier(C=C, tol=TIGHT).fit(X, y)
    ref = fit_quiet(sklearn_lr(C), X, y)              # multinomial for > 2 classes (sklearn >= 1.5)
    assert ours.coef_.shape == ref.coef_.shape == (k, X.shape[1])
    assert ours.intercept_.shape == (k,)
    f_ref = maxent_objective(ref.coef_, ref.intercept_, X, y, C)
    assert rel(ours.objective_, f_ref) < 1e-6
    assert rel(ours.objective_, maxent_objective(ours.coef_, ours.intercept_, X, y, C)) < 1e-12
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    # the intercept is only identified up to a common shift (it is unregularized)
    np.testing.assert_allclose(ours.intercept_ - ours.intercept_.mean(), ref.intercept_ - ref.intercept_.mean(),
                               atol=1e-4)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    # LogisticRegression with > 2 classes is the same multinomial model
    lr = LogisticRegression(C=C, tol=TIGHT).fit(X, y)
    np.testing.assert_allclose(lr.coef_, ours.coef_, atol=1e-7)


@pytest.mark.parametrize("k", [2, 3])
def test_class_weight_balanced_matches_sklearn(k):
    X, y = make_data(n=200, d=5, k=k, seed=4)
    keep = np.r_[np.flatnonzero(y == 0)[:30], np.flatnonzero(y != 0)]      # unbalance the classes
    X, y = X[keep], y[keep]
    sw = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    ours = LogisticRegression(C=0.7, class_weight="balanced", tol=TIGHT).fit(X, y, sample_weight=sw)
    ref = fit_quiet(sklearn_lr(0.7, class_weight="balanced"), X, y, sample_weight=sw)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4)
    # a dict with the balanced weights (from sample-weighted class totals) gives the same model
    totals = np.bincount(y, weights=sw)
    manual = {c: sw.sum() / (k * totals[c]) for c in range(k)}
    again = LogisticRegression(C=0.7, class_weight=manual, tol=TIGHT).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(again.coef_, ours.coef_, atol=1e-10)


# ------------------------------------------------------------- internal equivalences


@pytest.mark.parametrize("class_weight", [None, "balanced"])
@pytest.mark.parametrize("Est,k", [(LogisticRegression, 2), (MaxentClassifier, 3), (MaxentClassifier, 2)])
def test_sample_weight_equals_repeated_rows(Est, k, class_weight):
    X, y = make_data(n=80, d=5, k=k, seed=5)
    sw = np.random.default_rng(1).integers(0, 4, len(y))
    weighted = Est(C=0.5, tol=TIGHT, class_weight=class_weight).fit(X, y, sample_weight=sw)
    repeated = Est(C=0.5, tol=TIGHT, class_weight=class_weight).fit(np.repeat(X, sw, axis=0), np.repeat(y, sw))
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-6)
    np.testing.assert_allclose(weighted.intercept_, repeated.intercept_, atol=1e-6)
    assert rel(weighted.objective_, repeated.objective_) < 1e-9


def test_lr_as_one_label_maxent_equals_binary_lr():
    """Huang et al. sec. 5.2: binary LR is Maxent with features on label +1 only."""
    X, y = make_data(n=150, d=6, seed=6)
    C = 0.8
    problem = problem_from_matrix(X, y, label_subset={1})
    maxent = MaxentClassifier(C=C, tol=TIGHT).fit(problem)
    lr = LogisticRegression(C=C, fit_intercept=False, tol=TIGHT).fit(X, y)
    assert maxent.coef_.shape == (X.shape[1],)              # flat weight vector of the problem
    assert rel(maxent.objective_, lr.objective_) < 1e-6
    np.testing.assert_allclose(maxent.predict_proba(X)[:, 1], lr.predict_proba(X)[:, 1], atol=1e-6)
    np.testing.assert_allclose(maxent.coef_, lr.coef_[0], atol=1e-5)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil"])
def test_sparse_and_dense_give_the_same_model(fmt):
    X, y = make_data(n=120, d=10, k=3, seed=7)
    X[np.abs(X) < 0.8] = 0.0
    for Est in (MaxentClassifier, LogisticRegression):
        for labels in (y, y == 1):
            dense = Est(C=1.0).fit(X, labels)
            sparse = Est(C=1.0).fit(sp.csr_matrix(X).asformat(fmt), labels)
            np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(sparse.predict_proba(sp.csr_array(X).asformat(fmt)),
                                       dense.predict_proba(X), rtol=1e-10)


def test_warm_start_reduces_iterations():
    X, y = make_data(n=400, d=12, k=3, seed=8)
    est = MaxentClassifier(C=1.0, solver="lbfgs", tol=1e-8, warm_start=True).fit(X, y)
    est.set_params(C=1.1).fit(X, y)
    cold = MaxentClassifier(C=1.1, solver="lbfgs", tol=1e-8).fit(X, y)
    assert est.n_iter_ < cold.n_iter_
    np.testing.assert_allclose(est.coef_, cold.coef_, atol=1e-5)
    # warm_start=False starts from zero again
    again = est.set_params(warm_start=False).fit(X, y)
    assert again.n_iter_ == cold.n_iter_


# -------------------------------------------------------------------- predictions


@pytest.mark.parametrize("Est,k", [(LogisticRegression, 2), (MaxentClassifier, 2), (MaxentClassifier, 4)])
def test_prediction_methods_agree(Est, k):
    X, y = make_data(n=120, d=5, k=k, seed=9)
    est = Est().fit(X, y)
    P = est.predict_proba(X)
    assert P.shape == (len(y), k)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(est.predict_log_proba(X), np.log(P), rtol=1e-10)
    np.testing.assert_array_equal(est.predict(X), est.classes_[P.argmax(axis=1)])
    d = est.decision_function(X)
    if k == 2:
        assert d.shape == (len(y),)
        np.testing.assert_allclose(1 / (1 + np.exp(-d)), P[:, 1], rtol=1e-10)     # log-odds
        np.testing.assert_array_equal(est.predict(X), est.classes_[(d > 0).astype(int)])
    else:
        assert d.shape == (len(y), k)
        Xb = np.c_[X, np.ones(len(X))]
        np.testing.assert_allclose(d, Xb @ np.c_[est.coef_, est.intercept_].T, rtol=1e-10, atol=1e-12)
    assert est.score(X, y) == np.mean(est.predict(X) == y)


@pytest.mark.parametrize("Est", [LogisticRegression, MaxentClassifier])
def test_string_labels(Est):
    X, y = make_data(n=90, d=4, k=3, seed=10)
    names = np.array(["cat", "dog", "emu"])[y]
    est = Est().fit(X, names)
    np.testing.assert_array_equal(est.classes_, ["cat", "dog", "emu"])
    assert set(est.predict(X)) <= {"cat", "dog", "emu"}
    assert est.score(X, names) > 0.6
    two = names != "emu"
    binary = Est().fit(X[two], list(names[two]))
    assert binary.predict(X[:5]).dtype.kind == "U"
    d = binary.decision_function(X[two])
    np.testing.assert_array_equal(binary.predict(X[two]), np.where(d > 0, "dog", "cat"))


def test_pickle_and_model_file(tmp_path):
    X, y = make_data(n=100, d=5, k=3, seed=11)
    names = np.array(["a", "b", "c"])[y]
    est = MaxentClassifier(C=0.5).fit(X, names)
    clone = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(clone.predict_proba(X), est.predict_proba(X))
    path = tmp_path / "model.npz"
    est.model_.save(path)
    model = LinearModel.load(path)
    np.testing.assert_allclose(model.predict_proba(X), est.predict_proba(X), rtol=1e-12)
    np.testing.assert_array_equal(model.predict(X), est.predict(X))


def test_maxent_problem_from_events():
    contexts = [["sunny", "hot"], ["rainy"], ["sunny"], ["rainy", "cold"], ["hot"], ["cold", "rainy"]] * 5
    labels = ["out", "in", "out", "in", "out", "in"] * 5
    problem = problem_from_events(labels, contexts)
    est = MaxentClassifier(C=2.0, tol=TIGHT).fit(problem)
    assert est.n_features_in_ == problem.n_predicates
    assert est.coef_.shape == (problem.n_features,)
    np.testing.assert_array_equal(est.classes_, ["in", "out"])
    # same answer from a matrix of the problem's predicates and from raw events
    X = problem.context_matrix()
    np.testing.assert_allclose(est.predict_proba((contexts[:6], None)),
                               est.model_.predict_proba((contexts[:6], None)))
    assert list(est.predict((contexts[:6], None))) == labels[:6]
    assert est.predict_proba(X).shape == (X.shape[0], 2)
    with pytest.raises(ValueError, match="y=None"):
        est.fit(problem, labels)
    with pytest.raises(ValueError, match="builder"):
        est.fit(problem, sample_weight=np.ones(3))


# ------------------------------------------------------------------ input checks


def test_input_errors():
    X, y = make_data(n=40, d=3, seed=12)
    est = LogisticRegression()
    with pytest.raises(NotFittedError):
        est.predict(X)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(Xn, y)
    Xn[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(sp.csr_matrix(Xn), y)
    with pytest.raises(ValueError, match="one class"):
        est.fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError, match="continuous"):
        est.fit(X, y + 0.5)
    with pytest.raises(ValueError, match="requires y"):
        est.fit(X)
    with pytest.raises(ValueError, match="sample_weight"):
        est.fit(X, y, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="one class"):
        est.fit(X, y, sample_weight=(y == 1).astype(float))
    with pytest.raises(ValueError, match="C must be"):
        LogisticRegression(C=-1).fit(X, y)
    with pytest.raises(ValueError, match="solver_options may not set"):
        LogisticRegression(solver_options={"tol": 1}).fit(X, y)
    with pytest.warns(Warning, match="column-vector y"):
        est.fit(X, y.reshape(-1, 1))
    with pytest.raises(ValueError, match="X has 2 features, but LogisticRegression is expecting 3"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="Reshape your data"):
        est.predict(X[0])


def test_solver_validation_lists_valid_names():
    X, y = make_data(n=40, d=3, seed=13)
    with pytest.raises(ValueError, match="valid solvers: .*tron") as err:
        MaxentClassifier(solver="newton-magic").fit(X, y)
    assert "lbfgs" in str(err.value)
    maxent_only = set(available_solvers("maxent")) - set(available_solvers("binary"))
    assert "gis" in maxent_only                      # a Maxent method, not a binary-LR one
    with pytest.raises(ValueError, match="not available for binary problems"):
        LogisticRegression(solver="gis").fit(X, y)
    with pytest.warns(ConvergenceWarning):
        MaxentClassifier(solver="gis", max_iter=3).fit(np.abs(X), y)


def test_solver_errors_pass_through():
    """Dual solvers cannot keep the bias unregularized; their own message reaches the user."""
    X, y = make_data(n=40, d=3, seed=14)
    duals = [s for s in ("cddual", "eg") if s in available_solvers("binary")]
    if not duals:
        pytest.skip("no dual solver registered")
    with pytest.raises(InvalidInputError, match="unregularized bias"):
        LogisticRegression(solver=duals[0]).fit(X, y)
    est = LogisticRegression(solver=duals[0], regularize_intercept=True, max_iter=50).fit(X, y)
    assert est.score(X, y) > 0.7


def test_convergence_warning_and_trace():
    X, y = make_data(n=100, d=5, k=3, seed=15)
    with pytest.warns(ConvergenceWarning):
        est = MaxentClassifier(max_iter=1, tol=1e-12).fit(X, y)
    assert est.n_iter_ == 1 and len(est.trace_) == 2           # iteration 0 and 1
    assert est.trace_.records[-1]["objective"] == pytest.approx(est.objective_)


def test_verbose_shows_progress(capsys):
    X, y = make_data(n=60, d=3, seed=16)
    LogisticRegression(verbose=1).fit(X, y)
    assert "loglin tron" in capsys.readouterr().err


def test_works_without_sklearn():
    """sklearn is optional: the stand-in base classes give params, repr, score and errors."""
    code = r"""
import sys
sys.modules['sklearn'] = None            # import sklearn -> ImportError
import numpy as np
from loglin.estimators import MaxentClassifier, LogisticRegression, NotFittedError, HAVE_SKLEARN
assert not HAVE_SKLEARN
est = MaxentClassifier(C=2.0, max_iter=50)
assert est.get_params()['C'] == 2.0 and repr(est) == 'MaxentClassifier(C=2.0, max_iter=50)'
assert est.set_params(C=0.5) is est and est.C == 0.5
try:
    est.set_params(bogus=1); raise SystemExit('no error')
except ValueError:
    pass
try:
    est.predict(np.zeros((1, 2))); raise SystemExit('no error')
except NotFittedError:
    pass
rng = np.random.default_rng(0)
X = rng.normal(size=(60, 3)); y = (X[:, 0] > 0).astype(int)
assert LogisticRegression().fit(X, y).score(X, y) > 0.9
print('ok')
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_sparse_input_is_never_modified():
    """Explicit zeros / unsorted indices are tidied in a copy (read-only input works)."""
    from loglin.binary import binary_problem
    data, indices, indptr = np.array([1.0, 0.0, 2.0, 1.0, 3.0]), np.array([2, 1, 0, 0, 1]), np.array([0, 3, 4, 5])
    X = sp.csr_matrix((data, indices, indptr), shape=(3, 3))
    for a in (X.data, X.indices, X.indptr):
        a.flags.writeable = False
    y = np.array([0, 1, 1])
    problem_from_matrix(X, y)
    binary_problem(X, y)
    est = MaxentClassifier().fit(X, y)
    est.predict_proba(X)
    np.testing.assert_array_equal(X.indptr, indptr)
    np.testing.assert_array_equal(X.indices, indices)
    np.testing.assert_array_equal(X.data, data)


@pytest.mark.parametrize("make, classes", [(LogisticRegression, 2), (LogisticRegression, 3), (MaxentClassifier, 3)])
def test_save_and_load_restore_the_estimator(tmp_path, make, classes):
    from loglin.model_io import load_model
    X, y = make_data(n=90, d=4, seed=21)
    y = np.asarray(y) % classes
    est = make(C=0.7, tol=1e-6, intercept_scaling=2.0).fit(X, y)
    path = tmp_path / "est.npz"
    est.save(path)
    back = make.load(path)
    assert back.get_params() == est.get_params()
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    np.testing.assert_array_equal(back.predict_proba(X), est.predict_proba(X))
    assert load_model(path).predict(X).tolist() == est.predict(X).tolist()
    other = MaxentClassifier if make is LogisticRegression else LogisticRegression
    with pytest.raises(ValueError, match="was not written by"):
        other.load(path)
