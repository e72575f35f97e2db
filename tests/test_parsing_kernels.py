"""Inside-outside, Eisner and loss-augmented Eisner against brute-force enumeration of projective trees."""
import itertools

import numpy as np
import pytest

from loglin.data.conll import is_projective
from loglin.errors import InvalidInputError
from loglin.structured import tree


def _is_tree(heads):
    n = len(heads)
    for m in range(1, n + 1):
        h, steps = m, 0
        while h != 0:
            h = heads[h - 1]
            steps += 1
            if steps > n:
                return False
    return True


def projective_trees(n):
    """Every head vector over words 1..n (root 0) that is a projective tree: brute force."""
    out = []
    for heads in itertools.product(range(n + 1), repeat=n):
        if any(h == m for m, h in enumerate(heads, 1)):
            continue
        if _is_tree(heads) and is_projective(np.array(heads)):
            out.append(np.array(heads))
    return out


TREES = {n: projective_trees(n) for n in range(1, 7)}


def _scores(S, trees):
    n = S.shape[0] - 1
    return np.array([S[h, np.arange(1, n + 1)].sum() for h in trees])


def test_tree_counts_are_the_projective_counts():
    # projective dependency trees on n words with a root that may take several children: 1, 3, 12, 55, 273, 1428
    assert [len(TREES[n]) for n in range(1, 7)] == [1, 3, 12, 55, 273, 1428]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_log_partition_and_marginals_match_enumeration(n):
    rng = np.random.default_rng(n)
    S = rng.normal(scale=2.0, size=(n + 1, n + 1))
    sc = _scores(S, TREES[n])
    log_z = np.logaddexp.reduce(sc)
    p = np.exp(sc - log_z)
    mu = np.zeros((n + 1, n + 1))
    for pi, heads in zip(p, TREES[n]):
        mu[heads, np.arange(1, n + 1)] += pi
    got_z, got_mu = tree.marginals(S)
    assert got_z == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    assert tree.log_partition(S) == pytest.approx(log_z, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(got_mu, mu, atol=1e-12)
    np.testing.assert_allclose(got_mu[:, 1:].sum(axis=0), 1.0)       # one head per word


def test_marginals_stable_for_large_scores():
    n = 5
    S = np.random.default_rng(0).normal(scale=300.0, size=(n + 1, n + 1))
    log_z, mu = tree.marginals(S)
    assert np.isfinite(log_z) and np.all(np.isfinite(mu))
    assert log_z == pytest.approx(np.logaddexp.reduce(_scores(S, TREES[n])), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_eisner_and_loss_augmented_eisner_match_enumeration(n):
    rng = np.random.default_rng(10 + n)
    for _ in range(3):
        S = rng.normal(size=(n + 1, n + 1))
        sc = _scores(S, TREES[n])
        heads, best = tree.eisner(S)
        assert best == pytest.approx(sc.max(), abs=1e-12)
        assert tree.tree_score(S, heads) == pytest.approx(best, abs=1e-12)
        assert any(np.array_equal(heads, t) for t in TREES[n])
        gold = TREES[n][rng.integers(len(TREES[n]))]
        aug = sc + np.array([(t != gold).sum() for t in TREES[n]])
        heads_a, best_a = tree.loss_augmented_eisner(S, gold)
        assert best_a == pytest.approx(aug.max(), abs=1e-12)
        assert tree.tree_score(S, heads_a) + (heads_a != gold).sum() == pytest.approx(best_a, abs=1e-12)


def test_input_checks():
    with pytest.raises(InvalidInputError):
        tree.marginals(np.zeros((1, 1)))
    with pytest.raises(InvalidInputError):
        tree.eisner(np.zeros((3, 4)))
    S = np.zeros((3, 3))
    S[1, 2] = np.nan
    with pytest.raises(InvalidInputError):
        tree.log_partition(S)
    with pytest.raises(InvalidInputError):
        tree.loss_augmented_eisner(np.zeros((3, 3)), [0, 5])
