"""Accuracy and chunk F1 of predicted label sequences.

Chunk F1 uses ``loglin.tagging.conlleval`` (the project's conlleval-compatible
scorer); a local implementation of the same rules (conlleval's startOfChunk /
endOfChunk on IOB tags) stands in when that module is unavailable.
"""
from __future__ import annotations


def chunk_f1(gold_sequences, predicted_sequences) -> float:
    """Overall chunk F1 in percent (conlleval's definition)."""
    try:
        from ..tagging.conlleval import chunk_score
    except ImportError:
        return _chunk_f1(gold_sequences, predicted_sequences)
    return float(chunk_score(list(gold_sequences), list(predicted_sequences)).overall()["f1"])


def _split(tag):
    if tag == "O" or "-" not in tag:
        return "O", ""
    prefix, kind = tag.split("-", 1)
    return prefix, kind


def _chunks(tags):
    """Set of (start, end, type) chunks by conlleval's rules."""
    chunks = set()
    start, kind = None, ""
    prev_tag, prev_type = "O", ""
    for i, tag in enumerate(list(tags) + ["O"]):
        t, k = _split(tag)
        end = (prev_tag == "B" and t in ("B", "O")) or (prev_tag == "I" and t in ("B", "O")) or \
            (prev_tag not in ("O", "") and prev_type != k)
        begin = t == "B" or (t == "I" and (prev_tag == "O" or prev_type != k))
        if end and start is not None:
            chunks.add((start, i - 1, kind))
            start = None
        if begin:
            start, kind = i, k
        prev_tag, prev_type = t, k
    return chunks


def _chunk_f1(gold_sequences, predicted_sequences):
    found = guessed = correct = 0
    for g, p in zip(gold_sequences, predicted_sequences):
        cg, cp = _chunks(g), _chunks(p)
        found += len(cg)
        guessed += len(cp)
        correct += len(cg & cp)
    if correct == 0:
        return 0.0
    precision, recall = correct / guessed, correct / found
    return 100.0 * 2 * precision * recall / (precision + recall)
