"""Chain inference against brute-force enumeration of all K^n labellings."""
import itertools

import numpy as np
import pytest

from loglin.errors import InvalidInputError
from loglin.structured import chain


def enumerate_scores(U, Tr):
    n, K = U.shape
    ys = np.array(list(itertools.product(range(K), repeat=n)))
    scores = U[np.arange(n), ys].sum(axis=1)
    if n > 1:
        scores += Tr[ys[:, :-1], ys[:, 1:]].sum(axis=1)
    return ys, scores


def brute_marginals(U, Tr):
    ys, scores = enumerate_scores(U, Tr)
    m = scores.max()
    log_z = m + np.log(np.exp(scores - m).sum())
    p = np.exp(scores - log_z)
    n, K = U.shape
    mu = np.zeros((n, K))
    edge = np.zeros((K, K))
    for y, py in zip(ys, p):
        mu[np.arange(n), y] += py
        for t in range(1, n):
            edge[y[t - 1], y[t]] += py
    return log_z, mu, edge


@pytest.mark.parametrize("n,K,scale,seed", [(1, 3, 1.0, 0), (2, 2, 1.0, 1), (4, 3, 2.0, 2), (5, 4, 1.0, 3),
                                            (3, 5, 50.0, 4), (6, 2, 300.0, 5)])
def test_forward_backward_matches_enumeration(n, K, scale, seed):
    rng = np.random.default_rng(seed)
    U = scale * rng.normal(size=(n, K))
    Tr = scale * rng.normal(size=(K, K))
    log_z, mu, edge = chain.forward_backward(U, Tr)
    bz, bmu, bedge = brute_marginals(U, Tr)
    assert log_z == pytest.approx(bz, rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(mu, bmu, atol=1e-10)
    np.testing.assert_allclose(edge, bedge, atol=1e-10)
    assert chain.log_partition(U, Tr) == pytest.approx(bz, rel=1e-12, abs=1e-9)
    np.testing.assert_allclose(mu.sum(axis=1), 1.0, atol=1e-12)


def test_extreme_transitions_stay_finite():
    """Forbidden transitions (-1e4) make some sums underflow: the exact fallback keeps log Z right."""
    rng = np.random.default_rng(7)
    U = rng.normal(size=(5, 3))
    Tr = np.full((3, 3), -1e4)
    Tr[0, 1] = Tr[1, 2] = Tr[2, 0] = 0.0
    Tr[2, 2] = -700.0
    log_z, mu, edge = chain.forward_backward(U, Tr)
    bz, bmu, bedge = brute_marginals(U, Tr)
    assert log_z == pytest.approx(bz, rel=1e-12)
    np.testing.assert_allclose(mu, bmu, atol=1e-10)
    np.testing.assert_allclose(edge, bedge, atol=1e-10)


@pytest.mark.parametrize("n,K,seed", [(1, 4, 0), (3, 3, 1), (5, 4, 2), (7, 2, 3)])
def test_viterbi_and_loss_augmented_match_enumeration(n, K, seed):
    rng = np.random.default_rng(seed)
    U, Tr = rng.normal(size=(n, K)), rng.normal(size=(K, K))
    ys, scores = enumerate_scores(U, Tr)
    best, score = chain.viterbi(U, Tr)
    assert score == pytest.approx(scores.max())
    assert chain.sequence_score(U, Tr, best) == pytest.approx(scores.max())
    gold = rng.integers(0, K, size=n)
    aug = scores + 0.7 * (ys != gold).sum(axis=1)
    best_aug, score_aug = chain.loss_augmented_viterbi(U, Tr, gold, weight=0.7)
    assert score_aug == pytest.approx(aug.max())
    assert chain.sequence_score(U, Tr, best_aug) + 0.7 * (best_aug != gold).sum() == pytest.approx(aug.max())


def test_bad_shapes_are_rejected():
    with pytest.raises(InvalidInputError):
        chain.log_partition(np.zeros((3, 2)), np.zeros((3, 3)))
    with pytest.raises(InvalidInputError):
        chain.log_partition(np.full((2, 2), np.nan), np.zeros((2, 2)))
    with pytest.raises(InvalidInputError):
        chain.loss_augmented_viterbi(np.zeros((2, 2)), np.zeros((2, 2)), [0, 5])
