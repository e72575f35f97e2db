"""scikit-learn's common estimator checks for loglin's estimators.

Every check of scikit-learn 1.9's ``check_estimator`` (legacy=True, i.e. the
full set) passes for the default estimators; nothing is waived for them. A
few checks *skip* themselves in this environment (pandas inputs when pandas
is absent, array-API inputs without SCIPY_ARRAY_API): skipping is
scikit-learn's decision, not ours, and pytest reports them as skipped.

Besides the defaults we check the configurations that change the code path:
LIBLINEAR's regularized bias, no intercept, and L-BFGS. The one waiver is for
``fit_intercept=False``: ``check_class_weight_classifiers`` expects class
weights {0: 1000, 1: 1e-4} to make > 87% of predictions class 0 on uncentred
noisy blobs, which a hyperplane through the origin cannot do (scikit-learn's
own ``LogisticRegression(fit_intercept=False)`` fails it the same way).
"""
import warnings

import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from loglin.estimators import LogisticRegression, MaxentClassifier  # noqa: E402
from loglin.training import ConvergenceWarning  # noqa: E402

NO_INTERCEPT_WAIVERS = {
    "check_class_weight_classifiers": "without an intercept the decision boundary passes through the origin, "
                                      "so class weights cannot move it past uncentred blobs (sklearn's own "
                                      "LogisticRegression(fit_intercept=False) fails this check too)",
}


def expected_failures(estimator) -> dict:
    """check name -> reason it is expected to fail for this configuration."""
    return {} if estimator.fit_intercept else NO_INTERCEPT_WAIVERS

ESTIMATORS = [
    LogisticRegression(),
    MaxentClassifier(),
    LogisticRegression(fit_intercept=True, regularize_intercept=True, intercept_scaling=2.0),
    MaxentClassifier(fit_intercept=False),
    LogisticRegression(solver="lbfgs", tol=1e-6),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failures)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        # a few checks fit tiny or pathological data on purpose
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_clone_and_grid_search():
    from sklearn.base import clone
    from sklearn.datasets import make_classification
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(120, 6, n_informative=4, n_classes=3, random_state=0)
    est = MaxentClassifier(C=0.5, solver="tron", max_iter=50)
    assert clone(est).get_params() == est.get_params()
    search = GridSearchCV(make_pipeline(StandardScaler(), est), {"maxentclassifier__C": [0.1, 1.0]}, cv=3)
    search.fit(X, y)
    assert search.best_params_["maxentclassifier__C"] in (0.1, 1.0)
    assert 0.5 < search.score(X, y) <= 1.0
