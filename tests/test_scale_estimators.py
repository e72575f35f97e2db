"""backend= / client= / n_workers= on the estimators: the same fitted model as in one process (1e-10)."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.estimators import LogisticRegression, MaxentClassifier


def _data(classes, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(300, 20, density=0.25, random_state=seed, format="csr")
    X.data = rng.uniform(0.2, 2.0, X.nnz)
    y = np.argmax(X @ rng.normal(size=(20, classes)) + rng.gumbel(size=(300, classes)), axis=1)
    return X, np.array(["a", "b", "c"])[y]


def _fit(cls, X, y, **scale):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls(C=2.0, solver="tron", tol=1e-11, max_iter=500, **scale).fit(X, y)


@pytest.mark.parametrize("cls, classes", [(MaxentClassifier, 3), (LogisticRegression, 2)])
@pytest.mark.parametrize("scale", ["inprocess", "threads", "client"])
def test_sharded_fit_gives_the_one_process_model(request, cls, classes, scale):
    X, y = _data(classes)
    one = _fit(cls, X, y)
    options = {"client": request.getfixturevalue("client")} if scale == "client" else {"backend": scale}
    many = _fit(cls, X, y, **options)
    for name in ("coef_", "intercept_"):
        a, b = getattr(one, name), getattr(many, name)
        assert np.linalg.norm(b - a) <= 1e-10 * max(np.linalg.norm(a), 1e-300), name
    assert many.objective_ == pytest.approx(one.objective_, rel=1e-12)
    np.testing.assert_array_equal(many.predict(X), one.predict(X))


def test_scale_out_parameters_are_checked_before_any_work():
    X, y = _data(3)
    with pytest.raises(ValueError, match="not both"):
        MaxentClassifier(backend="threads", client=object()).fit(X, y)
    with pytest.raises(ValueError, match="n_workers"):
        MaxentClassifier(backend="threads", n_workers=2).fit(X, y)
    with pytest.raises(ValueError, match="n_workers"):
        MaxentClassifier(n_workers=0).fit(X, y)


class _HandedOver:
    """A backend handed over with the call, as the CLI's and n_workers=' LocalCluster are."""
    close_with_objective = True

    def __init__(self):
        self.closed = 0

    def close(self):
        self.closed += 1


@pytest.mark.parametrize("refusal", [dict(C=-1.0), dict(loss="squared"), dict(solver="gis"),
                                     dict(penalty="l7")])
def test_a_refused_call_closes_the_backend_it_was_handed(refusal):
    from loglin.errors import LoglinError
    from loglin.problem import problem_from_matrix
    from loglin.training import train
    X, y = _data(3)
    backend = _HandedOver()
    with pytest.raises(LoglinError):
        train(problem_from_matrix(X, y), **{"solver": "lbfgs", **refusal}, backend=backend)
    assert backend.closed == 1
