"""conlleval scoring: hand-worked examples and agreement with chunk-set matching on IOB2 data."""
import numpy as np
import pytest

from loglin.errors import InvalidInputError
from loglin.tagging.conlleval import chunks, conlleval


def test_hand_worked_example():
    gold = [["B-NP", "I-NP", "B-VP", "B-NP", "I-NP", "O"]]
    # NP(0-1) right; VP right; NP ends one token early -> wrong
    guess = [["B-NP", "I-NP", "B-VP", "B-NP", "O", "O"]]
    r = conlleval(gold, guess)
    assert (r["chunks_gold"], r["chunks_guessed"], r["chunks_correct"]) == (3, 3, 2)
    assert r["precision"] == pytest.approx(200 / 3) and r["recall"] == pytest.approx(200 / 3)
    assert r["f1"] == pytest.approx(200 / 3)
    assert r["accuracy"] == pytest.approx(500 / 6)
    assert r["by_type"]["VP"]["f1"] == 100.0 and r["by_type"]["NP"]["precision"] == 50.0


def test_i_after_o_starts_a_chunk():
    # conlleval reads I-NP after O as the start of an NP chunk (IOB1 style), so this guess is right
    gold = [["O", "B-NP", "I-NP"]]
    guess = [["O", "I-NP", "I-NP"]]
    assert chunks(guess[0]) == [(1, 2, "NP")]
    r = conlleval(gold, guess)
    assert r["f1"] == 100.0 and r["accuracy"] == pytest.approx(200 / 3)


def test_type_change_splits_chunks():
    # I-VP after I-NP: the NP ends and a VP starts
    assert chunks(["B-NP", "I-NP", "I-VP", "I-VP"]) == [(0, 1, "NP"), (2, 3, "VP")]
    gold = [["B-NP", "I-NP", "B-VP", "I-VP"]]
    r = conlleval(gold, [["B-NP", "I-NP", "I-VP", "I-VP"]])
    assert r["chunks_correct"] == 2 and r["f1"] == 100.0
    # B-NP B-NP: two chunks
    assert chunks(["B-NP", "B-NP"]) == [(0, 0, "NP"), (1, 1, "NP")]


def test_sentence_end_closes_chunks():
    # the chunk at the end of sentence 1 must not run into sentence 2
    gold = [["B-NP", "I-NP"], ["I-NP", "O"]]
    guess = [["B-NP", "I-NP"], ["I-NP", "O"]]
    r = conlleval(gold, guess)
    assert r["chunks_gold"] == 2 and r["chunks_correct"] == 2
    # a guessed chunk that is longer than the gold one only because it ends at the sentence end
    r = conlleval([["B-NP", "O"]], [["B-NP", "I-NP"]])
    assert r["chunks_correct"] == 0 and r["precision"] == 0.0 and r["f1"] == 0.0


def test_no_chunks_gives_zero_not_error():
    r = conlleval([["O", "O"]], [["O", "O"]])
    assert r["precision"] == r["recall"] == r["f1"] == 0.0 and r["accuracy"] == 100.0


def test_shape_errors():
    with pytest.raises(InvalidInputError):
        conlleval([["O"]], [])
    with pytest.raises(InvalidInputError):
        conlleval([["O"]], [["O", "O"]])


def _random_iob2(rng, n):
    types = ["NP", "VP", "PP"]
    out, inside = [], None
    for _ in range(n):
        r = rng.random()
        if inside and r < 0.4:
            out.append("I-" + inside)
        elif r < 0.8:
            inside = types[rng.integers(3)]
            out.append("B-" + inside)
        else:
            inside = None
            out.append("O")
    return out


def _spans(tags):
    """Chunks of well-formed IOB2 tags, independently of conlleval's rules."""
    spans, start, kind = set(), None, None
    for i, t in enumerate(tags + ["O"]):
        if start is not None and not t.startswith("I-"):
            spans.add((start, i - 1, kind))
            start = None
        if t.startswith("B-"):
            start, kind = i, t[2:]
    return spans


def test_agrees_with_exact_span_matching_on_iob2():
    rng = np.random.default_rng(0)
    gold = [_random_iob2(rng, int(rng.integers(1, 12))) for _ in range(300)]
    guess = [[g if rng.random() < 0.8 else t for g, t in zip(s, _random_iob2(rng, len(s)))] for s in gold]
    # repair the guess into IOB2 (an I- must continue a chunk of its type) so span matching applies
    for s in guess:
        for i, t in enumerate(s):
            if t.startswith("I-") and (i == 0 or s[i - 1] == "O" or s[i - 1][2:] != t[2:]):
                s[i] = "B-" + t[2:]
    g_spans = [_spans(s) for s in gold]
    h_spans = [_spans(s) for s in guess]
    correct = sum(len(a & b) for a, b in zip(g_spans, h_spans))
    n_gold, n_guess = sum(map(len, g_spans)), sum(map(len, h_spans))
    r = conlleval(gold, guess)
    assert (r["chunks_correct"], r["chunks_gold"], r["chunks_guessed"]) == (correct, n_gold, n_guess)
    p, rec = 100 * correct / n_guess, 100 * correct / n_gold
    assert r["f1"] == pytest.approx(2 * p * rec / (p + rec))


def _random_spans(rng, n_sentences=40):
    """Sentences of (length, [(start, end, type)]) with adjacent chunks of one type (where IOB1 would merge)."""
    out = []
    for _ in range(n_sentences):
        n, i, spans = int(rng.integers(1, 12)), 0, []
        while i < n:
            length = int(rng.integers(1, 4))
            if rng.random() < 0.6 and i + length <= n:
                spans.append((i, i + length - 1, str(rng.choice(["NP", "LOC"]))))
            i += length
        out.append((n, spans))
    return out


def _encode(n, spans, scheme):
    tags = ["O"] * n
    for start, end, kind in spans:
        for i in range(start, end + 1):
            if scheme == "iob2":
                prefix = "B" if i == start else "I"
            elif scheme == "bioes":
                prefix = "S" if start == end else "B" if i == start else "E" if i == end else "I"
            else:      # bilou: BIOES's U- (unit) and L- (last)
                prefix = "U" if start == end else "B" if i == start else "L" if i == end else "I"
            tags[i] = f"{prefix}-{kind}"
    return tags


def test_bioes_tags_delimit_the_same_chunks_as_iob2():
    rng = np.random.default_rng(4)
    gold, guess = _random_spans(rng), _random_spans(rng)
    guess = [(n, spans if rng.random() < 0.5 else other) for (n, spans), (_, other) in
             zip(gold, [(g[0], [s for s in g[1] if rng.random() < 0.7]) for g in gold])]
    n_gold = sum(len(spans) for _, spans in gold)
    n_correct = sum(len(set(a) & set(b)) for (_, a), (_, b) in zip(gold, guess))
    for scheme in ("iob2", "bioes", "bilou"):
        r = conlleval([_encode(n, s, scheme) for n, s in gold], [_encode(n, s, scheme) for n, s in guess])
        assert r["chunks_gold"] == n_gold and r["chunks_correct"] == n_correct, scheme
    assert [tuple(c) for c in chunks(["S-NP", "S-NP", "B-NP", "E-NP"])] == [(0, 0, "NP"), (1, 1, "NP"), (2, 3, "NP")]
    r = conlleval([["S-NP", "S-NP"]], [["B-NP", "E-NP"]])
    assert r["chunks_gold"] == 2 and r["chunks_guessed"] == 1 and r["chunks_correct"] == 0
    assert r["accuracy"] == 0.0       # token accuracy compares the tags as written


def test_bilou_unit_chunks_side_by_side_stay_two_chunks():
    from loglin.tagging.estimator import is_chunk_labels
    assert [tuple(c) for c in chunks(["U-PER", "U-PER", "B-LOC", "I-LOC", "L-LOC"])] == \
        [(0, 0, "PER"), (1, 1, "PER"), (2, 4, "LOC")]
    r = conlleval([["U-PER", "U-PER"]], [["B-PER", "L-PER"]])
    assert r["chunks_gold"] == 2 and r["chunks_guessed"] == 1 and r["chunks_correct"] == 0
    assert is_chunk_labels(["O", "U-PER", "B-LOC", "L-LOC"])       # scored by chunk F1, as IOBES
