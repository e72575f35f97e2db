"""Attributes of CRF chunkers and taggers, indexed into the arrays of a ChainProblem.

Chunking (CoNLL-2000) uses the template of CRFsuite's chunking example, so
that training time and accuracy can be compared with CRFsuite on the very
same features: words w[-2..2], word bigrams w[-1]|w[0], w[0]|w[1], POS
tags pos[-2..2], POS bigrams and trigrams inside the +-2 window, and
__BOS__ / __EOS__ at the sentence edges. A window position outside the
sentence gives no attribute. Transition features (label bigrams) are added
by the model itself (ChainProblem).

POS tagging (task "pos", input ``(word, tag)`` tokens) uses words in a +-2
window, the lower-cased word, suffixes and prefixes up to 3 characters and
simple shape flags.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ..errors import DataContentError, InvalidInputError
from .problem import ChainProblem, attribute_label_map

TASKS = ("chunk", "pos")


def chunk_attributes(words, tags):
    """CRFsuite's chunking attributes of every token of one sentence.

    Written for speed (it is most of a tagger's time per token): the window
    is read from lists padded with None, and each bigram / trigram string is
    built once per sentence position and shared by the tokens whose window
    contains it.
    """
    n = len(words)
    W = [None, None, *words, None, None]            # W[t + 2 + k] is w[k] of token t
    P = [None, None, *tags, None, None]
    # POS n-grams starting at each padded position (None when a member is outside the sentence)
    bi = [f"{P[i]}|{P[i + 1]}" if P[i] is not None and P[i + 1] is not None else None for i in range(n + 3)]
    tri = [f"{bi[i]}|{P[i + 2]}" if bi[i] is not None and P[i + 2] is not None else None for i in range(n + 2)]
    out = []
    for t in range(n):
        c = t + 2
        a = [f"w[{k}]={W[c + k]}" for k in (-2, -1, 0, 1, 2) if W[c + k] is not None]
        if t > 0:
            a.append(f"w[-1]|w[0]={W[c - 1]}|{W[c]}")
        if t < n - 1:
            a.append(f"w[0]|w[1]={W[c]}|{W[c + 1]}")
        a.extend(f"pos[{k}]={P[c + k]}" for k in (-2, -1, 0, 1, 2) if P[c + k] is not None)
        a.extend(f"pos[{k}]|pos[{k + 1}]={bi[c + k]}" for k in (-2, -1, 0, 1) if bi[c + k] is not None)
        a.extend(f"pos[{k}]|pos[{k + 1}]|pos[{k + 2}]={tri[c + k]}" for k in (-2, -1, 0) if tri[c + k] is not None)
        if t == 0:
            a.append("__BOS__")
        if t == n - 1:
            a.append("__EOS__")
        out.append(a)
    return out


def pos_attributes(words):
    """Word-window and spelling attributes for a CRF POS tagger."""
    n = len(words)
    out = []
    for t, word in enumerate(words):
        a = ["bias", f"w={word}", f"lw={word.lower()}"]
        for k in (-2, -1, 1, 2):
            if 0 <= t + k < n:
                a.append(f"w[{k}]={words[t + k].lower()}")
        for m in (1, 2, 3):
            if len(word) > m:
                a.append(f"suf{m}={word[-m:]}")
                a.append(f"pre{m}={word[:m]}")
        if any(ch.isdigit() for ch in word):
            a.append("digit")
        if "-" in word:
            a.append("hyphen")
        if word[:1].isupper():
            a.append("upper" if t else "upper0")
        if t == 0:
            a.append("__BOS__")
        if t == n - 1:
            a.append("__EOS__")
        out.append(a)
    return out


def sentence_attributes(sentence, task):
    """Attributes of the tokens of one sentence given as tuples (word, pos[, chunk]) or (word, tag)."""
    if task == "chunk":
        return chunk_attributes([tok[0] for tok in sentence], [tok[1] for tok in sentence])
    if task == "pos":
        return pos_attributes([tok[0] for tok in sentence])
    raise InvalidInputError(f"task must be one of {TASKS}, got {task!r}")


def gold_column(task):
    """Which column of a token tuple holds the label to predict."""
    return 2 if task == "chunk" else 1


@dataclass
class ChainFeatureSpace:
    """The attribute vocabulary, labels and attribute map of a trained chain model."""

    task: str
    attributes: list
    labels: np.ndarray
    map_ptr: np.ndarray
    map_label: np.ndarray
    map_feat: np.ndarray
    n_state: int

    @property
    def n_labels(self):
        return len(self.labels)

    @property
    def n_features(self):
        return self.n_state + self.n_labels ** 2

    def encode(self, sentences):
        """(seq_ptr, tok_ptr, tok_attr) of sentences; attributes unseen in training are dropped."""
        return self.encode_attributes([sentence_attributes(s, self.task) for s in sentences])

    def encode_attributes(self, attribute_sequences):
        """encode() for sentences given as their tokens' attribute names (CRFsuite's xseq: one list of
        names per token), e.g. made by a caller's own template; names unseen in training are dropped."""
        return _encode(attribute_sequences, self.attribute_index())

    def attribute_index(self) -> dict:
        """attribute -> id, built on first use and kept (rebuilt if ``attributes`` was replaced)."""
        cached = self.__dict__.get("_index")
        if cached is None or cached[0] is not self.attributes or len(cached[1]) != len(self.attributes):
            cached = (self.attributes, {a: i for i, a in enumerate(self.attributes)})
            self.__dict__["_index"] = cached
        return cached[1]


def _encode(attribute_sequences, index, grow=False):
    """CSR arrays of attribute ids; ``grow`` adds unseen names to ``index`` (training), else drops them."""
    seq_ptr = np.zeros(len(attribute_sequences) + 1, dtype=np.int64)
    tok_ptr = [0]
    attr = []
    get = index.get
    unseen = repeat(-1)
    for s, tokens in enumerate(attribute_sequences):
        for names in tokens:
            if grow:
                for name in names:
                    k = get(name)
                    if k is None:
                        k = index[name] = len(index)
                    attr.append(k)
            else:
                attr.extend(map(get, names, unseen))       # -1: unseen in training, dropped below
            tok_ptr.append(len(attr))
        seq_ptr[s + 1] = len(tok_ptr) - 1
    attr = np.asarray(attr, dtype=np.int32)
    tok_ptr = np.asarray(tok_ptr, dtype=np.int64)
    if not grow:
        kept = np.concatenate(([0], np.cumsum(attr >= 0)))
        tok_ptr, attr = kept[tok_ptr], attr[attr >= 0]
    return seq_ptr, tok_ptr, attr


def check_sentences(sentences, task):
    width = 3 if task == "chunk" else 2
    if task not in TASKS:
        raise InvalidInputError(f"task must be one of {TASKS}, got {task!r}")
    if len(sentences) == 0:
        raise DataContentError("no sentences to train on")
    for i, sentence in enumerate(sentences):
        if len(sentence) == 0:
            raise InvalidInputError(f"sentence {i} is empty")
        for tok in sentence:
            if len(tok) < width:
                raise InvalidInputError(f"sentence {i}: task {task!r} needs tokens with {width} columns, got {tok!r}")


def build_chain_problem(sentences, task="chunk", *, all_pairs=False, labels=None):
    """(ChainProblem, ChainFeatureSpace) from labelled sentences."""
    check_sentences(sentences, task)
    col = gold_column(task)
    index = {}
    seq_ptr, tok_ptr, tok_attr = _encode([sentence_attributes(s, task) for s in sentences], index, grow=True)
    names = [tok[col] for sentence in sentences for tok in sentence]
    if labels is None:
        labels = np.array(sorted(set(names)))
    lookup = {lab: i for i, lab in enumerate(labels.tolist())}
    try:
        gold = np.array([lookup[x] for x in names], dtype=np.int32)
    except KeyError as exc:
        raise InvalidInputError(f"label {exc.args[0]!r} is not among the model's labels") from None
    attributes = [None] * len(index)
    for name, k in index.items():
        attributes[k] = name
    map_ptr, map_label, map_feat, n_state = attribute_label_map((tok_attr, tok_ptr), gold, len(attributes),
                                                                len(labels), all_pairs=all_pairs)
    problem = ChainProblem(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=None, map_ptr=map_ptr,
                           map_label=map_label, map_feat=map_feat, n_state=n_state, labels=labels, gold=gold,
                           attributes=attributes)
    space = ChainFeatureSpace(task=task, attributes=attributes, labels=labels, map_ptr=map_ptr,
                              map_label=map_label, map_feat=map_feat, n_state=n_state)
    return problem, space
