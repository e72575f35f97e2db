"""k-best Viterbi of chain models against brute-force enumeration of every labelling."""
import itertools

import numpy as np
import pytest

from loglin.errors import InvalidInputError
from loglin.structured.chain import log_partition, viterbi
from loglin.structured.nbest import chain_n_best, kbest_viterbi


def enumerate_labellings(U, Tr, allowed=None, allowed_after=None):
    """Every labelling of finite score, sorted best first; ties by the labelling read right to left."""
    n, K = U.shape
    found = []
    for ys in itertools.product(range(K), repeat=n):
        if allowed is not None and not all(allowed[t, y] for t, y in enumerate(ys)):
            continue
        if allowed_after is not None and not (allowed_after[K, ys[0]]
                                              and all(allowed_after[a, b] for a, b in zip(ys, ys[1:]))):
            continue
        score = U[0, ys[0]]
        for t in range(1, n):
            score = score + Tr[ys[t - 1], ys[t]] + U[t, ys[t]]
        found.append((score, ys))
    found.sort(key=lambda item: (-item[0], item[1][::-1]))
    return found


def check_against_enumeration(U, Tr, k, allowed=None, allowed_after=None, exact=False):
    truth = enumerate_labellings(U, Tr, allowed, allowed_after)
    got = kbest_viterbi(U, Tr, k, allowed, allowed_after)
    assert len(got) == min(k, len(truth))
    for (labels, score), (true_score, true_labels) in zip(got, truth):
        if exact:           # integer scores: sums are exact, so the tie order must match exactly
            assert tuple(labels) == true_labels and score == true_score
        else:
            assert score == pytest.approx(true_score, rel=1e-12, abs=1e-12)
            assert tuple(labels) == true_labels
    return got


@pytest.mark.parametrize("n,K,seed", [(1, 3, 0), (2, 2, 1), (3, 3, 2), (4, 3, 3), (5, 2, 4), (3, 4, 5)])
def test_k_best_is_the_top_of_the_enumeration(n, K, seed):
    rng = np.random.default_rng(seed)
    U, Tr = rng.normal(size=(n, K)) * 2, rng.normal(size=(K, K))
    total = K ** n
    for k in sorted({1, 2, 5, total - 1, total, total + 3} - {0}):
        check_against_enumeration(U, Tr, k)


@pytest.mark.parametrize("seed", range(6))
def test_ties_come_in_a_fixed_order(seed):
    """Small integer scores tie often; sums of integers are exact, so the order must be the enumeration's."""
    rng = np.random.default_rng(100 + seed)
    n, K = int(rng.integers(2, 6)), int(rng.integers(2, 4))
    U, Tr = rng.integers(-1, 2, size=(n, K)).astype(float), rng.integers(-1, 2, size=(K, K)).astype(float)
    got = check_against_enumeration(U, Tr, K ** n, exact=True)
    again = kbest_viterbi(U, Tr, K ** n)
    assert all(np.array_equal(a[0], b[0]) and a[1] == b[1] for a, b in zip(got, again))


@pytest.mark.parametrize("seed", range(8))
def test_one_best_is_viterbi(seed):
    rng = np.random.default_rng(200 + seed)
    n, K = int(rng.integers(1, 30)), int(rng.integers(2, 9))
    if seed % 2:
        U, Tr = rng.integers(-2, 3, size=(n, K)).astype(float), rng.integers(-2, 3, size=(K, K)).astype(float)
    else:
        U, Tr = rng.normal(size=(n, K)), rng.normal(size=(K, K))
    best, best_score = viterbi(U, Tr)
    for k in (1, 2, 7):             # k = 1 runs Viterbi's loop; the chart's first entry must agree with it
        labels, score = kbest_viterbi(U, Tr, k)[0]
        assert np.array_equal(labels, best) and score == pytest.approx(best_score, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_constraints_and_forbidden_pairs_against_enumeration(seed):
    rng = np.random.default_rng(300 + seed)
    n, K = int(rng.integers(2, 6)), int(rng.integers(2, 4))
    U, Tr = rng.normal(size=(n, K)), rng.normal(size=(K, K))
    allowed = rng.random((n, K)) < 0.7
    allowed_after = rng.random((K + 1, K)) < 0.7
    for k in (1, 3, K ** n):
        check_against_enumeration(U, Tr, k, allowed=allowed)
        check_against_enumeration(U, Tr, k, allowed_after=allowed_after)
        check_against_enumeration(U, Tr, k, allowed=allowed, allowed_after=allowed_after)


def test_no_allowed_labelling_gives_an_empty_list():
    U, Tr = np.zeros((3, 2)), np.zeros((2, 2))
    allowed = np.ones((3, 2), dtype=bool)
    allowed[1] = False
    assert kbest_viterbi(U, Tr, 4, allowed) == []
    with pytest.raises(InvalidInputError, match="n"):
        kbest_viterbi(U, Tr, 0)


def random_chain_model(rng, n_sent, K, A):
    """A random first-order chain model over A attributes (one state weight per (attribute, label))
    and random sentences of 1..5 tokens with 1..3 attributes each."""
    lengths = rng.integers(1, 6, size=n_sent)
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    per_tok = rng.integers(1, 4, size=int(seq_ptr[-1]))
    tok_ptr = np.concatenate([[0], np.cumsum(per_tok)]).astype(np.int64)
    tok_attr = rng.integers(0, A, size=int(tok_ptr[-1])).astype(np.int64)
    map_ptr = (np.arange(A + 1) * K).astype(np.int64)
    map_label = np.tile(np.arange(K), A).astype(np.int32)
    map_feat = np.arange(A * K).astype(np.int64)
    w = rng.normal(size=A * K + K * K)
    return w, A * K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr


def sentence_scores(w, n_state, K, seq_ptr, tok_ptr, tok_attr, i):
    lo, hi = seq_ptr[i], seq_ptr[i + 1]
    U = np.zeros((hi - lo, K))
    for t in range(lo, hi):
        for a in tok_attr[tok_ptr[t]:tok_ptr[t + 1]]:
            U[t - lo] += w[a * K:(a + 1) * K]
    return U, w[n_state:].reshape(K, K)


@pytest.mark.parametrize("seed", range(3))
def test_crf_log_probabilities_match_the_forward_algorithm(seed):
    rng = np.random.default_rng(400 + seed)
    K = 3
    w, n_state, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr = random_chain_model(rng, 12, K, 7)
    k = 6
    labels, scores = chain_n_best(w, n_state, K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr, n=k)
    raw_labels, raw = chain_n_best(w, n_state, K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr, n=k,
                                   log_prob=False)
    assert np.array_equal(labels, raw_labels)
    for i in range(len(seq_ptr) - 1):
        U, Tr = sentence_scores(w, n_state, K, seq_ptr, tok_ptr, tok_attr, i)
        log_z = log_partition(U, Tr)
        truth = enumerate_labellings(U, Tr)
        m = min(k, len(truth))
        block = labels[seq_ptr[i]:seq_ptr[i + 1]]
        for r in range(m):
            assert tuple(block[:, r]) == truth[r][1]
            assert raw[i, r] == pytest.approx(truth[r][0], rel=1e-12, abs=1e-12)
            assert scores[i, r] == pytest.approx(truth[r][0] - log_z, rel=1e-10, abs=1e-10)
        assert np.all(block[:, m:] == -1) and np.all(scores[i, m:] == -np.inf)
        p = np.exp(scores[i, :m])
        assert np.all(np.diff(p) <= 0) and p.sum() <= 1 + 1e-12
        if m == len(truth):                     # every labelling listed: their probabilities sum to 1
            assert p.sum() == pytest.approx(1.0, rel=1e-10)


def test_corpus_kernel_with_constraints_matches_enumeration():
    rng = np.random.default_rng(500)
    K = 3
    w, n_state, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr = random_chain_model(rng, 10, K, 5)
    allowed = rng.random((int(seq_ptr[-1]), K)) < 0.6
    allowed_after = rng.random((K + 1, K)) < 0.6
    k = 5
    labels, scores = chain_n_best(w, n_state, K, map_ptr, map_label, map_feat, seq_ptr, tok_ptr, tok_attr, n=k,
                                  allowed=allowed, allowed_after=allowed_after, log_prob=False)
    for i in range(len(seq_ptr) - 1):
        lo, hi = seq_ptr[i], seq_ptr[i + 1]
        U, Tr = sentence_scores(w, n_state, K, seq_ptr, tok_ptr, tok_attr, i)
        truth = enumerate_labellings(U, Tr, allowed[lo:hi], allowed_after)
        if not truth:               # the pair constraint leaves nothing: it is dropped for this sentence
            truth = enumerate_labellings(U, Tr, allowed[lo:hi])
        m = min(k, len(truth))
        assert np.isfinite(scores[i]).sum() == m
        for r in range(m):
            assert tuple(labels[lo:hi, r]) == truth[r][1]
            assert scores[i, r] == pytest.approx(truth[r][0], rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------ second-order chains
def enumerate_second_order(U, E, T):
    n, K = U.shape
    found = []
    for ys in itertools.product(range(K), repeat=n):
        score = U[0, ys[0]]
        for t in range(1, n):
            score = score + E[ys[t - 1], ys[t]] + U[t, ys[t]]
            if t > 1:
                score = score + T[ys[t - 2], ys[t - 1], ys[t]]
        found.append((score, ys))
    found.sort(key=lambda item: (-item[0], item[1][::-1]))
    return found


@pytest.mark.parametrize("seed", range(8))
def test_second_order_k_best_against_enumeration(seed):
    from loglin.structured.chain2 import score2, viterbi2
    from loglin.structured.nbest import kbest_viterbi2
    rng = np.random.default_rng(600 + seed)
    n, K = int(rng.integers(1, 6)), int(rng.integers(2, 4))
    integer = seed % 2 == 1

    def draw(*shape):
        return rng.integers(-1, 2, size=shape).astype(float) if integer else rng.normal(size=shape)

    U, E, T = draw(n, K), draw(K, K), draw(K, K, K)
    truth = enumerate_second_order(U, E, T)
    for k in sorted({1, 4, len(truth), len(truth) + 2}):
        got = kbest_viterbi2(U, E, T, k)
        assert len(got) == min(k, len(truth))
        for (labels, score), (true_score, true_labels) in zip(got, truth):
            assert tuple(labels) == true_labels
            assert score == pytest.approx(true_score, rel=1e-12, abs=1e-12)
            assert score2(U, n, E, T, labels) == pytest.approx(score, rel=1e-12, abs=1e-12)
    best = np.empty(n, dtype=np.int32)
    if not integer:                 # viterbi2's ties go the other way round; without ties they agree
        viterbi2(U, n, E, T, np.empty((n, K, K)), np.empty((n, K, K), dtype=np.int64), best)
        assert np.array_equal(kbest_viterbi2(U, E, T, 1)[0][0], best)
