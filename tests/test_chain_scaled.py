"""Scaled-space forward-backward and its log-space fallback against brute-force enumeration."""
import numpy as np
import pytest

from loglin.structured import chain
from test_chain import brute_marginals


def _infer(U, Tr, tables, reuse):
    n, K = U.shape
    mu, edge = np.empty((n, K)), np.empty((K, K))
    log_z = chain.sentence_inference(U, n, Tr, tables, reuse, True, mu, edge)
    return log_z, mu, edge


def _workspace(L, K):
    return chain._tables(np.full(chain._table_size(L, K), np.nan), L, K)


def _assert_brute(got, U, Tr):
    log_z, mu, edge = got
    bz, bmu, bedge = brute_marginals(U, Tr)
    assert log_z == pytest.approx(bz, rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(mu, bmu, atol=1e-10)
    np.testing.assert_allclose(edge, bedge, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_scores_of_800_go_through_the_log_space_fallback(seed):
    rng = np.random.default_rng(seed)
    n, K = 5, 3
    U = rng.choice([-800.0, 0.0, 800.0], size=(n, K)) + rng.normal(size=(n, K))
    Tr = rng.choice([-800.0, 0.0, 800.0], size=(K, K)) + rng.normal(size=(K, K))
    _assert_brute(chain.forward_backward(U, Tr), U, Tr)
    assert chain.log_partition(U, Tr) == pytest.approx(brute_marginals(U, Tr)[0], rel=1e-12)


@pytest.mark.parametrize("width", [540.0, 620.0])
def test_both_sides_of_the_range_bound(width):
    """Node-score ranges just inside (scaled space) and just outside (log space) SCALED_RANGE."""
    rng = np.random.default_rng(11)
    n, K = 6, 3
    U = rng.uniform(-1.0, 1.0, size=(n, K))
    U[:, 0] += width / 2
    U[:, 1] -= width / 2
    U[2] = -U[2]                            # the unlikely label at one position is the likely one at another
    Tr = 10.0 * rng.normal(size=(K, K))
    Tr -= Tr.min()
    t = _workspace(n, K)
    alpha, E, ET, Ue, c = t[0], t[5], t[6], t[2], t[10]
    tr_max, tr_range = chain.transition_exp(Tr, E, ET)
    scaled = chain.scaled_forward(U, n, E, tr_max, tr_range, Ue, alpha, c)
    assert np.isnan(scaled) == (width > chain.SCALED_RANGE)
    _assert_brute(chain.forward_backward(U, Tr), U, Tr)


def test_scaled_path_agrees_with_log_space_path():
    rng = np.random.default_rng(3)
    n, K = 40, 7
    U, Tr = 5.0 * rng.normal(size=(n, K)), 3.0 * rng.normal(size=(K, K))
    log_z, mu, edge = chain.forward_backward(U, Tr)
    Ecol, Erow, colmax, rowmax = np.empty((K, K)), np.empty((K, K)), np.empty(K), np.empty(K)
    chain.transition_tables(Tr, Ecol, colmax, Erow, rowmax)
    alpha, beta, tmp = np.empty((n, K)), np.empty((n, K)), np.empty(K)
    ref_z = chain.forward(U, n, Tr, Ecol, colmax, alpha, tmp)
    chain.backward(U, n, Tr, Erow, rowmax, beta, tmp)
    ref_mu, ref_edge = np.empty((n, K)), np.empty((K, K))
    chain.marginals(U, n, Tr, Ecol, colmax, alpha, beta, ref_z, ref_mu, ref_edge, tmp)
    assert log_z == pytest.approx(ref_z, rel=1e-13)
    np.testing.assert_allclose(mu, ref_mu, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(edge, ref_edge, rtol=1e-10, atol=1e-13)


def test_forbidden_transitions_and_labels_are_exact():
    """-inf scores (not accepted by the Python entry points) take the log-space path of the kernel."""
    rng = np.random.default_rng(5)
    n, K = 5, 3
    U = rng.normal(size=(n, K))
    U[1, 2] = -np.inf
    Tr = rng.normal(size=(K, K))
    Tr[0, 0] = Tr[2, 1] = -np.inf
    _assert_brute(_infer(U, Tr, _workspace(n, K), False), U, Tr)


def test_reused_tables_serve_both_paths():
    """Sentences sharing one transition block on one workspace: scaled, fallback, scaled again."""
    rng = np.random.default_rng(9)
    K, L = 3, 6
    Tr = rng.normal(size=(K, K))
    tables = _workspace(L, K)
    for i, (n, scale) in enumerate([(4, 1.0), (5, 900.0), (6, 2.0), (3, 1200.0)]):
        U = scale * rng.normal(size=(n, K))
        _assert_brute(_infer(U, Tr, tables, i > 0), U, Tr)
