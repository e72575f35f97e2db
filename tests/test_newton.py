"""Newton with the Hessian formed (binary LR, few features): the Hessian against an independent
X^T D X, the optimum against TRON's, the driver's stopping rule, the sub-sampled first steps."""
import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.kernels import logistic as lk
from loglin.solvers import minimize, resolve
from loglin.solvers.newton import MAX_FEATURES


def _tall(rows=600, features=12, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(rows, features, density=density, random_state=seed, format="csr")
    X.data = rng.normal(size=X.nnz)
    w = rng.normal(size=features)
    y = np.where(X @ w + 0.5 * rng.normal(size=rows) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("stride", [1, 3])
def test_hessian_is_x_t_d_x_plus_the_regularizer(stride):
    X, y = _tall()
    obj = binary_problem(X, y, C=2.0, bias=1.0, regularize_bias=False).objective()
    w = np.random.default_rng(1).normal(size=obj.n)
    obj.fun_grad(w)
    obj.accept()
    z = obj.problem.y * (obj.problem.X @ w)
    sig = 1.0 / (1.0 + np.exp(-z))
    d = obj.problem.cost * sig * (1.0 - sig)
    rows = np.arange(0, X.shape[0], stride) if stride > 1 else np.arange(X.shape[0])
    Xs = obj.problem.X[rows]
    expected = stride * (Xs.T @ sp.diags(d[rows]) @ Xs).toarray() + np.diag(obj.reg)
    if stride == 1:         # the full Hessian also against its products H v
        v = np.random.default_rng(2).normal(size=obj.n)
        np.testing.assert_allclose(expected @ v, obj.hess_vec(v), rtol=1e-10)
    got = obj.hessian(stride) if stride == 1 else _one_block_hessian(obj, stride)
    np.testing.assert_allclose(np.tril(got), np.tril(expected), rtol=1e-10, atol=1e-12)


def _one_block_hessian(obj, stride):
    """stride > 1 picks rows per thread block; compare on one block so the rows are 0, s, 2s, ..."""
    X = obj.problem.X
    h = lk.hessian_matrix(obj.n, np.array([0, X.shape[0]]), X.indptr, X.indices, X.data, obj._d, stride)
    h = h * stride
    h[np.diag_indices(obj.n)] += obj.reg
    return h


@pytest.mark.parametrize("bias", [None, "regularized", "free"])
@pytest.mark.parametrize("strides", [(4, 2, 1), (1,)])
def test_newton_reaches_trons_optimum(bias, strides):
    X, y = _tall(seed=3)
    kw = {} if bias is None else {"bias": 1.0, "regularize_bias": bias == "regularized"}
    obj = binary_problem(X, y, C=4.0, **kw).objective()
    a = minimize(obj, "tron", tol=1e-8, max_iter=500)
    b = minimize(obj, "newton", tol=1e-10, max_iter=100, strides=strides)
    assert b.converged and b.stop_reason != "max_iter"
    assert abs(b.f - a.f) <= 1e-8 * abs(a.f)
    np.testing.assert_allclose(b.w, a.w, atol=1e-6)


def test_newton_objective_decreases_and_converges_quadratically():
    X, y = _tall(rows=3000, features=20, seed=4)
    obj = binary_problem(X, y, C=1.0).objective()
    r = minimize(obj, "newton", tol=1e-12, max_iter=100)
    f = r.trace.column("objective")
    assert all(b <= a for a, b in zip(f, f[1:]))
    assert r.converged and r.iterations <= 15


def test_newton_stops_on_the_drivers_rule_not_its_own():
    """At a loose tol the run ends at the driver's gradient test, with a certified objective."""
    X, y = _tall(rows=2000, features=15, seed=5)
    obj = binary_problem(X, y, C=1.0).objective()
    loose = minimize(obj, "newton", tol=1e-2)
    tight = minimize(obj, "newton", tol=1e-10)
    g0 = np.linalg.norm(obj.fun_grad(np.zeros(obj.n), keep_cache=False)[1])
    assert loose.converged and loose.grad_norm <= 1e-2 * g0
    assert loose.iterations < tight.iterations


def test_newton_refuses_many_features_and_serves_binary_only(small_multiclass):
    X = sp.random(50, MAX_FEATURES + 1, density=0.001, format="csr", random_state=0)
    y = np.where(np.arange(50) % 2, 1, -1)
    with pytest.raises(ValueError, match="tron"):
        minimize(binary_problem(X, y).objective(), "newton")
    from loglin.errors import InvalidInputError
    from loglin.problem import problem_from_matrix
    with pytest.raises(InvalidInputError):
        resolve("newton", problem_from_matrix(*small_multiclass).objective(1.0))


def test_compiled_cholesky_solves_against_numpy_and_refuses_an_indefinite_matrix():
    from loglin.kernels.vector import cholesky_solve
    rng = np.random.default_rng(7)
    for n in (1, 5, 60):
        A = rng.normal(size=(n, 2 * n))
        H = A @ A.T + 0.1 * np.eye(n)
        b = rng.normal(size=n)
        x = np.empty(n)
        assert cholesky_solve(np.tril(H).copy(), b, x)
        np.testing.assert_allclose(x, np.linalg.solve(H, b), rtol=1e-9, atol=1e-12)
    assert not cholesky_solve(np.array([[1.0, 0.0], [2.0, 1.0]]), np.ones(2), np.empty(2))
