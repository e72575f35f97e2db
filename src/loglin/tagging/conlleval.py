"""Chunk precision, recall and F1 as the CoNLL-2000 ``conlleval`` script defines them.

A chunk tag is ``O``, ``B-X``, ``I-X`` (also ``E-X`` of IOE and ``[-X``/``]-X``
brackets, which the script understands too). The script does not know IOBES
(BIOES) nor its BILOU spelling (``U-`` = ``S-``, ``L-`` = ``E-``): it would merge
``S-X S-X`` or ``B-X E-X S-X`` into one chunk. Tags that can only be IOBES or BILOU
(an ``S-`` or ``U-`` tag, or ``E-`` / ``L-`` tags beside ``B-`` tags) are read as
IOB2 first (``S-X``, ``U-X`` -> ``B-X``; ``E-X``, ``L-X`` -> ``I-X``), which delimits
the same chunks; token accuracy still compares the tags as written. Chunks start and
end by the script's two rules (its functions startOfChunk / endOfChunk): for
example ``I-NP`` after ``O`` or after ``I-VP`` *starts* a new NP chunk, and
every chunk ends at a sentence end. A guessed chunk is correct when a gold
chunk has the same type and the same first and last token. The counting is
the script's own, token by token (:func:`chunk_score`). Scores are in
percent: precision = correct / guessed, recall = correct / gold,
F1 = 2PR / (P + R) (0 when undefined).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..errors import InvalidInputError

OUTSIDE = "O"


def split_tag(tag: str) -> tuple[str, str]:
    """``B-NP`` -> (``B``, ``NP``); ``O`` -> (``O``, ``""``)."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, kind = tag.partition("-")
    if not sep:
        return prefix, ""
    return prefix, kind


# The rules of conlleval.pl (version 2004-01-26), pair by pair: (previous tag, tag).
_END_PAIRS = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
_START_PAIRS = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}


def end_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """True when a chunk ended between the previous and the current token (endOfChunk)."""
    if (prev_tag, tag) in _END_PAIRS:
        return True
    if prev_tag not in (OUTSIDE, ".") and prev_type != type_:
        return True
    return prev_tag in ("]", "[")                # bracket chunks have length 1


def start_of_chunk(prev_tag: str, tag: str, prev_type: str, type_: str) -> bool:
    """True when a chunk started between the previous and the current token (startOfChunk)."""
    if (prev_tag, tag) in _START_PAIRS:
        return True
    if tag not in (OUTSIDE, ".") and prev_type != type_:
        return True
    return tag in ("[", "]")


_SINGLE = ("S", "U")        # IOBES's and BILOU's one-token chunk
_LAST = ("E", "L")          # and their last token of a longer chunk


def is_iobes(sentences) -> bool:
    """True when the tags can only be IOBES or BILOU: an ``S-`` / ``U-`` tag, or ``E-`` / ``L-`` tags together
    with ``B-`` tags."""
    prefixes = {split_tag(tag)[0] for tags in sentences for tag in tags}
    return any(p in prefixes for p in _SINGLE) or ("B" in prefixes and any(p in prefixes for p in _LAST))


def iobes_to_iob2(tags) -> list[str]:
    """``S-X`` / ``U-X`` -> ``B-X`` and ``E-X`` / ``L-X`` -> ``I-X``: the same chunks in tags conlleval's rules
    understand."""
    out = []
    for tag in tags:
        prefix, kind = split_tag(tag)
        out.append(f"{'B' if prefix in _SINGLE else 'I'}-{kind}" if prefix in _SINGLE + _LAST and kind else tag)
    return out


def chunks(tags) -> list[tuple[int, int, str]]:
    """The chunks (first token, last token, type) of one sentence, as conlleval delimits them.

    A chunk that is interrupted by a new start before its end (possible only
    with malformed sequences) is not listed.
    """
    tags = list(tags)
    if is_iobes([tags]):
        tags = iobes_to_iob2(tags)
    spans = []
    prev_tag, prev_type, start = OUTSIDE, "", None
    for i, tag in enumerate(list(tags) + [OUTSIDE]):      # the sentence end closes every chunk
        tag_, type_ = split_tag(tag)
        if start is not None and end_of_chunk(prev_tag, tag_, prev_type, type_):
            spans.append((start, i - 1, prev_type))
            start = None
        if i < len(tags) and start_of_chunk(prev_tag, tag_, prev_type, type_):
            start = i
        prev_tag, prev_type = tag_, type_
    return spans


@dataclass
class ChunkScore:
    correct: Counter = field(default_factory=Counter)
    guessed: Counter = field(default_factory=Counter)
    gold: Counter = field(default_factory=Counter)
    tokens: int = 0
    correct_tokens: int = 0

    @staticmethod
    def _prf(c, g, t):
        p = 100.0 * c / g if g else 0.0
        r = 100.0 * c / t if t else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return p, r, f

    def overall(self) -> dict:
        p, r, f = self._prf(sum(self.correct.values()), sum(self.guessed.values()), sum(self.gold.values()))
        acc = 100.0 * self.correct_tokens / self.tokens if self.tokens else 0.0
        return {"precision": p, "recall": r, "f1": f, "accuracy": acc,
                "chunks_gold": sum(self.gold.values()), "chunks_guessed": sum(self.guessed.values()),
                "chunks_correct": sum(self.correct.values()), "tokens": self.tokens}

    def by_type(self) -> dict:
        out = {}
        for kind in sorted(set(self.gold) | set(self.guessed)):
            p, r, f = self._prf(self.correct[kind], self.guessed[kind], self.gold[kind])
            out[kind] = {"precision": p, "recall": r, "f1": f, "guessed": self.guessed[kind], "gold": self.gold[kind]}
        return out


def chunk_score(gold_sentences, guessed_sentences) -> ChunkScore:
    """Score guessed chunk tags against gold ones exactly as conlleval.pl counts.

    Gold and guessed chunks are counted where they start; a chunk is correct
    when both start at the same token with the same type and both end at the
    same token (the script's ``inCorrect`` state machine). Each sentence end
    acts as the script's boundary line (tag ``O``).
    """
    if len(gold_sentences) != len(guessed_sentences):
        raise InvalidInputError(f"{len(gold_sentences)} gold sentences but {len(guessed_sentences)} guessed")
    score = ChunkScore()
    iobes = is_iobes(gold_sentences) or is_iobes(guessed_sentences)
    for gold, guess in zip(gold_sentences, guessed_sentences):
        if len(gold) != len(guess):
            raise InvalidInputError("a guessed sentence differs in length from its gold sentence")
        score.tokens += len(gold)
        score.correct_tokens += sum(a == b for a, b in zip(gold, guess))
        if iobes:
            gold, guess = iobes_to_iob2(gold), iobes_to_iob2(guess)
        last_c, last_g, last_ct, last_gt = OUTSIDE, OUTSIDE, "", ""
        in_correct = False
        for i in range(len(gold) + 1):
            c, ct = split_tag(gold[i]) if i < len(gold) else (OUTSIDE, "")
            g, gt = split_tag(guess[i]) if i < len(gold) else (OUTSIDE, "")
            if in_correct:
                end_c = end_of_chunk(last_c, c, last_ct, ct)
                end_g = end_of_chunk(last_g, g, last_gt, gt)
                if end_c and end_g and last_gt == last_ct:
                    in_correct = False
                    score.correct[last_ct] += 1
                elif end_c != end_g or gt != ct:
                    in_correct = False
            start_c = start_of_chunk(last_c, c, last_ct, ct)
            start_g = start_of_chunk(last_g, g, last_gt, gt)
            if start_c and start_g and gt == ct:
                in_correct = True
            if start_c:
                score.gold[ct] += 1
            if start_g:
                score.guessed[gt] += 1
            last_c, last_g, last_ct, last_gt = c, g, ct, gt
    return score


def conlleval(gold_sentences, guessed_sentences) -> dict:
    """Overall precision, recall, F1 (and token accuracy), in percent, plus ``by_type``."""
    score = chunk_score(gold_sentences, guessed_sentences)
    result = score.overall()
    result["by_type"] = score.by_type()
    return result
