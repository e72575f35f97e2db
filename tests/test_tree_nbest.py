"""k-best Eisner (structured.tree_nbest) against enumeration of every projective tree, ties included."""
import functools
import itertools

import numpy as np
import pytest

from loglin.data.conll import is_projective
from loglin.errors import InvalidInputError
from loglin.structured import tree
from loglin.structured.tree_nbest import kbest_eisner


@functools.lru_cache(maxsize=None)
def _forests(a, b):
    """Every sequence of adjacent projective subtrees covering words a..b: (their roots, {word: head})."""
    if a > b:
        return [((), ())]
    out = []
    for e in range(a, b + 1):
        for root, heads in _subtrees(a, e):
            for roots, rest in _forests(e + 1, b):
                out.append(((root,) + roots, heads + rest))
    return out


@functools.lru_cache(maxsize=None)
def _subtrees(a, e):
    """Every projective subtree covering exactly words a..e: (its root c, ((word, head), ...))."""
    out = []
    for c in range(a, e + 1):
        for left_roots, left in _forests(a, c - 1):
            for right_roots, right in _forests(c + 1, e):
                out.append((c, left + right + tuple((m, c) for m in left_roots + right_roots)))
    return out


def all_trees(n):
    """Every projective tree over words 1..n with root 0 (which may take several children), as head arrays."""
    trees = []
    for roots, pairs in _forests(1, n):
        heads = np.zeros(n, dtype=np.int64)
        for m, h in pairs:
            heads[m - 1] = h
        trees.append(heads)
    return trees


def _by_head_vectors(n):
    """The same set from all (n+1)^n head vectors (small n): a check of the generator."""
    found = []
    for heads in itertools.product(range(n + 1), repeat=n):
        h = np.array(heads)
        if any(h[m - 1] == m for m in range(1, n + 1)):
            continue
        ok = True
        for m in range(1, n + 1):
            x, steps = m, 0
            while x != 0 and steps <= n:
                x, steps = h[x - 1], steps + 1
            ok &= x == 0
        if ok and is_projective(h):
            found.append(tuple(heads))
    return sorted(found)


def test_generator_yields_every_projective_tree_once():
    # projective trees on n words, multiple root children allowed: (3n choose n) / (2n + 1)
    assert [len(all_trees(n)) for n in range(1, 8)] == [1, 3, 12, 55, 273, 1428, 7752]
    for n in range(1, 5):
        assert sorted(tuple(h) for h in all_trees(n)) == _by_head_vectors(n)


def tie_key(S, heads):
    """The documented order of trees: the key of the Eisner derivation, (-score, split, left key, right key)."""
    n = len(heads)
    head = np.concatenate([[-1], heads])
    children = [[m for m in range(1, n + 1) if head[m] == h] for h in range(n + 1)]

    def desc(x):
        out, todo = {x}, [x]
        while todo:
            for c in children[todo.pop()]:
                out.add(c)
                todo.append(c)
        return out

    def score(words):
        return float(sum(S[head[m], m] for m in words))

    def complete_right(s, t):                   # CR[s, t]: head s, words s+1..t
        if s == t:
            return (0.0,)
        r = max(c for c in children[s] if s < c <= t)
        return (-score(range(s + 1, t + 1)), r, incomplete(s, r, right=True), complete_right(r, t))

    def complete_left(s, t):                    # CL[s, t]: head t, words s..t-1
        if s == t:
            return (0.0,)
        r = min(c for c in children[t] if s <= c < t)
        return (-score(range(s, t)), r, complete_left(s, r), incomplete(r, t, right=False))

    def incomplete(s, t, right):                # IR[s, t] (arc s -> t) or IL[s, t] (arc t -> s)
        if right:
            below_t = desc(t)
            r = max(m for m in range(s, t) if m not in below_t)
            words = range(s + 1, t + 1)
        else:
            below_s = desc(s)
            r = max(m for m in range(s, t) if m in below_s)
            words = range(s, t)
        return (-score(words), r, complete_right(s, r), complete_left(r + 1, t))

    return complete_right(0, n)


def _reference(S, k):
    trees = all_trees(S.shape[0] - 1)
    order = sorted(trees, key=lambda h: tie_key(S, h))
    return [(h, tree.tree_score(S, h)) for h in order[:k]], len(trees)


def _check_against_enumeration(S, k, exact):
    want, count = _reference(S, k)
    got = kbest_eisner(S, k)
    assert len(got) == min(k, count)
    for (h_got, s_got), (h_want, s_want) in zip(got, want):
        if exact:
            assert s_got == s_want
        else:
            assert s_got == pytest.approx(s_want, rel=1e-12, abs=1e-12)
        assert h_got.tolist() == h_want.tolist()
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("k", [2, 5, 23])
def test_real_scores_match_the_top_of_the_enumeration(n, k):
    rng = np.random.default_rng(100 * n + k)
    S = rng.normal(scale=2.0, size=(n + 1, n + 1))
    _check_against_enumeration(S, k, exact=False)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("k", [1, 3, 10, 40])
def test_integer_scores_with_ties_follow_the_tie_rule(n, k):
    rng = np.random.default_rng(7 * n + k)
    S = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(np.float64)
    _check_against_enumeration(S, k, exact=True)


def test_all_equal_scores_order_every_tree_by_the_rule():
    S = np.ones((6, 6))
    _check_against_enumeration(S, 273, exact=True)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_k_beyond_the_number_of_trees_returns_them_all(n):
    rng = np.random.default_rng(n)
    S = rng.integers(-1, 2, size=(n + 1, n + 1)).astype(np.float64)
    count = len(all_trees(n))
    got = kbest_eisner(S, count + 5)
    assert len(got) == count
    assert len({tuple(h) for h, _ in got}) == count
    _check_against_enumeration(S, count + 5, exact=True)


@pytest.mark.parametrize("seed", range(6))
def test_one_best_is_eisner_ties_included(seed):
    rng = np.random.default_rng(seed)
    n = 3 + seed * 4
    for S in (rng.normal(size=(n + 1, n + 1)), rng.integers(0, 2, size=(n + 1, n + 1)).astype(np.float64)):
        heads, score = tree.eisner(S)
        (h1, s1), = kbest_eisner(S, 1)
        assert h1.tolist() == heads.tolist() and s1 == score
        (h2, s2) = kbest_eisner(S, 4)[0]           # the chart of k entries starts with the same tree
        assert h2.tolist() == heads.tolist() and s2 == score


def test_longer_sentence_lists_distinct_trees_in_order_with_their_scores():
    rng = np.random.default_rng(3)
    n = 30
    S = rng.normal(size=(n + 1, n + 1))
    got = kbest_eisner(S, 50)
    assert len(got) == 50
    assert len({tuple(h) for h, _ in got}) == 50
    for heads, score in got:
        assert is_projective(heads)
        assert score == pytest.approx(tree.tree_score(S, heads), rel=1e-12)
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_k_is_refused(bad):
    with pytest.raises(InvalidInputError):
        kbest_eisner(np.zeros((3, 3)), bad)
