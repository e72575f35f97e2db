"""The fused vector kernels against plain NumPy expressions of the same formulas."""
import numpy as np
import pytest

from loglin.kernels import vector as vk


def numpy_two_loop(g, pairs):
    """Textbook two-loop recursion (Nocedal & Wright Algorithm 7.4) on (s, y) pairs, oldest first."""
    q = g.copy()
    alphas = []
    for s, y in reversed(pairs):
        a = float(s @ q) / float(s @ y)
        alphas.append(a)
        q = q - a * y
    if pairs:
        s, y = pairs[-1]
        q = q * (float(s @ y) / float(y @ y))
    for (s, y), a in zip(pairs, reversed(alphas)):
        b = float(y @ q) / float(s @ y)
        q = q + (a - b) * s
    return -q


@pytest.mark.parametrize("k, memory, newest", [(0, 4, -1), (1, 4, 0), (3, 4, 2), (4, 4, 1), (5, 5, 4)])
def test_lbfgs_direction_matches_two_loop(k, memory, newest):
    rng = np.random.default_rng(k * 10 + memory)
    n = 57
    A = rng.standard_normal((n, n))
    H = A @ A.T + n * np.eye(n)                    # y = H s gives s'y > 0
    S, Y = np.zeros((memory, n)), np.zeros((memory, n))
    rho = np.zeros(memory)
    order = (np.arange(newest - k + 1, newest + 1) % memory).astype(np.int64)
    pairs = []
    for row in order:                              # ring rows, oldest first (wraps around)
        s = rng.standard_normal(n)
        S[row], Y[row] = s, H @ s
        rho[row] = 1.0 / float(S[row] @ Y[row])
        pairs.append((S[row], Y[row]))
    gamma = float(pairs[-1][0] @ pairs[-1][1]) / float(pairs[-1][1] @ pairs[-1][1]) if pairs else 1.0
    g = rng.standard_normal(n)
    d = np.empty(n)
    vk.lbfgs_direction(g, S, Y, rho, gamma, order, d)
    np.testing.assert_allclose(d, numpy_two_loop(g, pairs), rtol=1e-10, atol=1e-12)


def test_step_and_gradient_kernels():
    rng = np.random.default_rng(3)
    n = 1001
    w, d, g, g_new, emp, e = (rng.standard_normal(n) for _ in range(6))
    reg = (rng.random(n) > 0.1).astype(float)
    assert vk.half_weighted_sq_norm(reg, w) == pytest.approx(0.5 * float(reg * w @ w), rel=1e-12)
    assert vk.dot(w, d) == pytest.approx(float(w @ d), rel=1e-12)
    out = e.copy()
    vk.regularized_gradient_inplace(out, reg, w, 2.5, emp)
    np.testing.assert_allclose(out, reg * w + 2.5 * (e - emp), rtol=1e-13, atol=1e-13)
    out = e.copy()
    vk.add_regularizer_inplace(out, reg, w, 0.5)
    np.testing.assert_allclose(out, reg * w + 0.5 * e, rtol=1e-13, atol=1e-13)
    trial = np.empty(n)
    vk.axpy_into(trial, w, 0.3, d)
    np.testing.assert_allclose(trial, w + 0.3 * d, rtol=1e-13, atol=1e-13)
    w2, s_row, y_row = w.copy(), np.empty(n), np.empty(n)
    sy, yy = vk.take_step(w2, s_row, y_row, 0.7, d, g_new, g)
    np.testing.assert_allclose(w2, w + 0.7 * d, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(s_row, 0.7 * d, rtol=1e-13)
    np.testing.assert_allclose(y_row, g_new - g, rtol=1e-13)
    assert sy == pytest.approx(float((0.7 * d) @ (g_new - g)), rel=1e-12)
    assert yy == pytest.approx(float((g_new - g) @ (g_new - g)), rel=1e-12)


def test_sum_rows():
    acc = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(vk.sum_rows(acc), acc.sum(axis=0))
    np.testing.assert_array_equal(vk.sum_rows(acc[:1]), acc[0])


def test_vectorizable_exp_against_numpy():
    from numba import njit
    from loglin.kernels.elementary import exp_v

    @njit
    def apply(x, out):
        for i in range(x.shape[0]):
            out[i] = exp_v(x[i])

    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-708, 709, 200_000), rng.uniform(-5, 5, 200_000),
                        rng.uniform(-1e-9, 1e-9, 1000), np.arange(-708.0, 709.0, 0.5)])
    out = np.empty_like(x)
    apply(x, out)
    ref = np.exp(x)
    assert np.max(np.abs(out - ref) / ref) <= 2.3e-16          # within one ulp
    special = np.array([0.0, -0.0, -708.5, -745.0, -1e300, 709.5, np.inf, -np.inf, np.nan])
    out = np.empty_like(special)
    apply(special, out)
    np.testing.assert_array_equal(out[:2], [1.0, 1.0])
    np.testing.assert_array_equal(out[2:5], 0.0)
    assert np.isposinf(out[5]) and np.isposinf(out[6]) and out[7] == 0.0 and np.isnan(out[8])


def test_cg_kernels():
    rng = np.random.default_rng(5)
    s, r, d, Hd = (rng.standard_normal(333) for _ in range(4))
    m = rng.uniform(0.5, 3.0, 333)
    s2, r2, d2 = s.copy(), r.copy(), d.copy()
    sms, rr, rz = vk.pcg_step(s2, r2, d, Hd, 0.4, m)
    np.testing.assert_allclose(s2, s + 0.4 * d, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(r2, r - 0.4 * Hd, rtol=1e-13, atol=1e-13)
    assert sms == pytest.approx(float(s2 @ (m * s2)), rel=1e-12) and rr == pytest.approx(float(r2 @ r2), rel=1e-12)
    assert rz == pytest.approx(float(r2 @ (r2 / m)), rel=1e-12)
    vk.pcg_direction(d2, r, m, 0.7)
    np.testing.assert_allclose(d2, r / m + 0.7 * d, rtol=1e-13, atol=1e-13)
    assert vk.m_products(s, d, m) == pytest.approx((s @ (m * d), s @ (m * s), d @ (m * d)), rel=1e-12)


def test_prefetch_is_a_hint_that_changes_nothing():
    """kernels/memory.prefetch compiles to llvm.prefetch: the sum read after prefetching every row (including the
    last element and an empty row) equals NumPy's, and the arrays are untouched."""
    from numba import njit
    import scipy.sparse as sp
    from loglin.kernels.memory import prefetch, prefetch_csr_row_lines

    @njit
    def summed(indptr, indices, data):
        total = 0.0
        for j in range(indptr.shape[0] - 1):
            prefetch_csr_row_lines(indptr, indices, data, j)
            prefetch(data, data.shape[0] - 1)
            for k in range(indptr[j], indptr[j + 1]):
                total += data[k] * (indices[k] + 1)
        return total

    X = sp.random(50, 40, density=0.3, random_state=0, format="csr")
    X = sp.vstack([X, sp.csr_matrix((1, 40))]).tocsr()          # an empty last row
    before = (X.indptr.copy(), X.indices.copy(), X.data.copy())
    assert summed(X.indptr, X.indices, X.data) == pytest.approx(float(X.data @ (X.indices + 1)), rel=1e-12)
    for a, b in zip(before, (X.indptr, X.indices, X.data)):
        np.testing.assert_array_equal(a, b)


def test_scalar_at_reads_the_element_and_keeps_sparse_dots_free_of_gathers():
    """kernels/memory.scalar_at is array[index] for float32 / float64 arrays and int32 / int64 / uint64 indices
    (decision 0066), and a reassociating sparse dot written with it compiles without vector gathers on a
    machine that has them (without it, the same loop does on AVX2 / AVX-512: checked, so that the test can
    fail); on other machines the first part is the test."""
    import platform
    import scipy.sparse as sp
    from numba import njit
    from loglin.kernels.memory import scalar_at

    @njit
    def picked(a, idx):
        out = np.empty(idx.shape[0], a.dtype)
        for k in range(idx.shape[0]):
            out[k] = scalar_at(a, idx[k])
        return out

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        a = rng.standard_normal(1000).astype(dtype)
        for itype in (np.int32, np.int64, np.uint64):
            idx = rng.integers(0, 1000, 300).astype(itype)
            np.testing.assert_array_equal(picked(a, idx), a[idx])

    fast = {"nsz", "arcp", "contract", "reassoc"}

    def dots(loaded):
        def kernel(indptr, indices, data, w, out):
            for i in range(indptr.shape[0] - 1):
                d = 0.0
                for k in range(indptr[i], indptr[i + 1]):
                    d += data[k] * loaded(w, indices[k])
                out[i] = d
        return njit(fastmath=fast)(kernel)

    plain = njit(inline="always")(lambda w, j: w[np.uint64(j)])
    X = sp.random(60, 500, density=0.1, random_state=1, format="csr")
    w = rng.standard_normal(500)
    results = {}
    for name, loaded in (("plain", plain), ("scalar_at", scalar_at)):
        kernel = dots(loaded)
        out = np.empty(60)
        kernel(X.indptr, X.indices, X.data, w, out)
        np.testing.assert_allclose(out, X @ w, rtol=1e-12, atol=1e-12)
        results[name] = kernel.inspect_asm(kernel.signatures[0])
    if platform.machine() in ("x86_64", "AMD64") and "vgather" in results["plain"]:
        assert "vgather" not in results["scalar_at"]
