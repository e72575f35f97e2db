"""Predicate extraction checked against a plain string re-implementation of OpenNLP's context generators."""
import re
from collections import Counter

import numpy as np
import pytest

from loglin.data import read_conll2000
from loglin.errors import InvalidInputError
from loglin.features import FeatureExtractor, spelling
from loglin.problem import problem_from_events
from loglin.tagging.datasets import bundled_conll2000_small

BOS, EOS = "*BOS*", "*EOS*"


@pytest.fixture(scope="module")
def small():
    train, _ = bundled_conll2000_small()
    sents = read_conll2000(train)[:150]
    return ([[t[0] for t in s] for s in sents], [[t[1] for t in s] for s in sents],
            [[t[2] for t in s] for s in sents])


def ref_pos(words, tags, i, rare=None):
    """OpenNLP DefaultPOSContextGenerator, written from its description, as a set of strings."""
    n, w = len(words), words[i]
    out = {"default", "w=" + w}
    if rare is None or w in rare:
        for k in range(1, 5):
            if k <= len(w):
                out |= {"suf=" + w[-k:], "pre=" + w[:k]}
        if "-" in w:
            out.add("h")
        if re.search("[A-Z]", w):
            out.add("c")
        if re.search("[0-9]", w):
            out.add("d")
    if i == 0:
        out.add("p=" + BOS)
    else:
        out |= {"p=" + words[i - 1], "t=" + tags[i - 1]}
        if i == 1:
            out.add("pp=" + BOS)
        else:
            out |= {"pp=" + words[i - 2], "t2=" + tags[i - 2] + "," + tags[i - 1]}
    if i == n - 1:
        out.add("n=" + EOS)
    else:
        out.add("n=" + words[i + 1])
        out.add("nn=" + (words[i + 2] if i + 2 < n else EOS))
    return out


CHUNK_GRAMS = (["w-2", "w-1", "w0", "w1", "w2", "w-1 w0", "w0 w1",
                "t-2", "t-1", "t0", "t1", "t2", "t-2 t-1", "t-1 t0", "t0 t1", "t1 t2",
                "t-2 t-1 t0", "t-1 t0 t1", "t0 t1 t2", "p-2", "p-1", "p-2 p-1"]
               + ["p-1 " + g for g in ["t-2", "t-1", "t0", "t1", "t2", "t-2 t-1", "t-1 t0", "t0 t1", "t1 t2",
                                        "t-2 t-1 t0", "t-1 t0 t1", "t0 t1 t2"]]
               + ["p-1 " + g for g in ["w-2", "w-1", "w0", "w1", "w2", "w-1 w0", "w0 w1"]])


def ref_chunk(words, pos, preds, i):
    """OpenNLP DefaultChunkerContextGenerator: 41 predicates over a +-2 window padded with bos/eos."""
    n = len(words)

    def value(kind, o):
        j = i + o
        if j < 0:
            return BOS
        if kind == "p":
            return preds[j]
        if j >= n:
            return EOS
        return (words if kind == "w" else pos)[j]

    out = set()
    for gram in CHUNK_GRAMS:
        atoms = [(a[0], int(a[1:])) for a in gram.split()]
        name = "".join(k + ("_" + str(-o) if o < 0 else str(o)) for k, o in atoms)
        out.add(name + "=" + ",".join(value(k, o) for k, o in atoms))
    return out


def test_spelling_of_short_and_long_words():
    affixes, flags = spelling("Dog-2")
    assert affixes == ["2", "-2", "g-2", "og-2", "D", "Do", "Dog", "Dog-"]
    assert flags == (True, True, True)
    affixes, flags = spelling("at")
    assert affixes == ["t", "at", None, None, "a", "at", None, None]
    assert flags == (False, False, False)


@pytest.mark.parametrize("rare_threshold", [None, 2])
def test_pos_predicates_match_opennlp(small, rare_threshold):
    words, pos, _ = small
    fx = FeatureExtractor("pos", cutoff=1, rare_threshold=rare_threshold)
    fx.fit(words, pos)
    counts = Counter(w for s in words for w in s)
    rare = None if rare_threshold is None else {w for w, c in counts.items() if c < rare_threshold}
    got = fx.event_predicates(words, pos)
    expected = [ref_pos(s, t, i, rare) for s, t in zip(words, pos) for i in range(len(s))]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert len(g) == len(set(g))
        assert set(g) == e


def test_chunk_predicates_match_opennlp(small):
    words, pos, chunk = small
    fx = FeatureExtractor("chunk", cutoff=1)
    fx.fit(words, chunk, pos)
    got = fx.event_predicates(words, chunk, pos)
    expected = [ref_chunk(s, t, c, i) for s, t, c in zip(words, pos, chunk) for i in range(len(s))]
    for g, e in zip(got, expected):
        assert len(e) == 41 and set(g) == e


def _name_weights(names_pairs, seed=0):
    """Deterministic pseudo-random weight for a (predicate name, label) pair."""
    return np.array([(hash((n, y)) % 1000) / 500.0 - 1.0 for n, y in names_pairs])


@pytest.mark.parametrize("task,cutoff", [("pos", 3), ("chunk", 2)])
def test_problem_equals_core_builder_from_reference_events(small, task, cutoff):
    """Same contexts, features, #nz and objective as problem_from_events on the string events."""
    words, pos, chunk = small
    labels = pos if task == "pos" else chunk
    fx = FeatureExtractor(task, cutoff=cutoff, rare_threshold=None, count_repeated_affixes=False)
    ours, _ = fx.fit(words, labels, None if task == "pos" else pos)
    if task == "pos":
        contexts = [sorted(ref_pos(s, t, i)) for s, t in zip(words, pos) for i in range(len(s))]
    else:
        contexts = [sorted(ref_chunk(s, t, c, i)) for s, t, c in zip(words, pos, chunk) for i in range(len(s))]
    flat = [y for s in labels for y in s]
    ref = problem_from_events(flat, contexts, cutoff=cutoff)
    assert (ours.n_contexts, ours.n_labels, ours.n_features, ours.nnz()) == \
           (ref.n_contexts, ref.n_labels, ref.n_features, ref.nnz())
    # the same weights by name give the same objective and gradient
    names = fx.predicate_names()
    our_pairs = [(names[p], str(ours.labels[ours.map_label[j]])) for p in range(ours.n_predicates)
                 for j in range(ours.map_ptr[p], ours.map_ptr[p + 1])]
    ref_pairs = [(ref.predicates[p], str(ref.labels[ref.map_label[j]])) for p in range(ref.n_predicates)
                 for j in range(ref.map_ptr[p], ref.map_ptr[p + 1])]
    assert sorted(our_pairs) == sorted(ref_pairs)
    w_ours, w_ref = _name_weights(our_pairs), _name_weights(ref_pairs)
    f1, g1 = ours.objective(10.0).fun_grad(w_ours)
    f2, g2 = ref.objective(10.0).fun_grad(w_ref)
    assert f1 == pytest.approx(f2, rel=1e-10)
    by_name = dict(zip(ref_pairs, g2))
    np.testing.assert_allclose(g1, [by_name[pair] for pair in our_pairs], rtol=1e-8, atol=1e-8)


def test_cutoff_counts_events_and_repeated_affixes():
    # "ab" is shorter than 4: OpenNLP lists it as suffix of length 2, 3 and 4 (and prefix likewise),
    # so one occurrence counts 3 times towards the cut-off of its affix predicates.
    words = [["ab", "xyzw"], ["xyzw", "xyzw"]]
    tags = [["A", "B"], ["B", "A"]]
    fx = FeatureExtractor("pos", cutoff=3, rare_threshold=None)
    fx.fit(words, tags)
    names = set(fx.predicate_names())
    assert {"suf=ab", "pre=ab"} <= names          # 3 repetitions reach the cut-off
    assert "suf=b" not in names and "w=ab" not in names   # one event only
    assert {"w=xyzw", "suf=w", "pre=x", "default"} <= names  # three events
    fx = FeatureExtractor("pos", cutoff=3, rare_threshold=None, count_repeated_affixes=False)
    fx.fit(words, tags)
    assert "suf=ab" not in set(fx.predicate_names())


def test_unknown_words_get_spelling_and_no_word_predicate(small):
    words, pos, _ = small
    fx = FeatureExtractor("pos", cutoff=1, rare_threshold=3)
    fx.fit(words, pos)
    tokens = fx.encode([["Zyxwv-9", "the"]])
    ptr, pred = fx.static_predicates(tokens)
    first = {fx.predicate_name(p) for p in pred[ptr[0]:ptr[1]]}
    assert "w=Zyxwv-9" not in first and {"h", "c", "d", "default", "n=the"} <= first
    second = {fx.predicate_name(p) for p in pred[ptr[1]:ptr[2]]}
    assert not any(n.startswith(("suf=", "pre=")) for n in second)   # "the" is frequent


def test_invalid_arguments():
    with pytest.raises(InvalidInputError):
        FeatureExtractor("ner")
    with pytest.raises(InvalidInputError):
        FeatureExtractor("pos", cutoff=0)
    fx = FeatureExtractor("pos")
    with pytest.raises(InvalidInputError):
        fx.fit([["a", "b"]], [["X", "X"]])                   # one label
    with pytest.raises(InvalidInputError):
        fx.fit([["a", "b"]], [["X"]])                         # shape mismatch
    with pytest.raises(InvalidInputError):
        FeatureExtractor("chunk").fit([["a"]], [["O"]])       # no POS tags
    with pytest.raises(InvalidInputError):
        fx.fit([[]], [[]])


def test_state_roundtrip(small):
    words, pos, chunk = small
    fx = FeatureExtractor("chunk", cutoff=2)
    fx.fit(words, chunk, pos)
    meta, arrays = fx.state()
    fy = FeatureExtractor.from_state(meta, arrays)
    assert fy.predicate_names() == fx.predicate_names()
    a = fx.static_predicates(fx.encode(words[:5], pos[:5]))
    b = fy.static_predicates(fy.encode(words[:5], pos[:5]))
    np.testing.assert_array_equal(a[1], b[1])
    arrays = dict(arrays, feat_keys=arrays["feat_keys"][::-1].copy())
    with pytest.raises(InvalidInputError):
        FeatureExtractor.from_state(meta, arrays)


def test_all_pairs_gives_every_predicate_every_label(small):
    words, pos, _ = small
    seen, _ = FeatureExtractor("pos", cutoff=2).fit(words, pos)
    full, _ = FeatureExtractor("pos", cutoff=2).fit(words, pos, all_pairs=True)
    assert full.n_features == full.n_predicates * full.n_labels
    assert seen.n_features < full.n_features and seen.n_contexts == full.n_contexts
    # same empirical counts on the seen pairs, zero elsewhere
    assert full.emp.sum() == pytest.approx(seen.emp.sum())
