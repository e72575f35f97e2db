"""The feature space of chain models of a task preset (CoNLL-2000 chunking, POS tagging), as ChainProblem arrays.

The attributes are those of the template presets "chunk" (CRFsuite's chunking
example: words w[-2..2], word bigrams, POS tags pos[-2..2], POS bigrams and
trigrams, __BOS__ / __EOS__) and "pos" (words in a +-2 window, lower case,
affixes, shape flags) of :mod:`loglin.tagging.templates`, made by its compiler.
Here attribute ids follow the order in which the attributes are first seen in
the corpus, the numbering of ``loglin-chain`` model files, which store the
attribute names; new sentences are compiled and mapped through those names.
Transition features (label bigrams) are added by the model itself (ChainProblem).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain, repeat

import numpy as np
from numba import njit

from ..csr import offsets
from ..errors import DataContentError, InvalidInputError
from .problem import ChainProblem, attribute_label_map

TASKS = ("chunk", "pos")


def gold_column(task):
    """Which column of a token tuple holds the label to predict."""
    return 2 if task == "chunk" else 1


@lru_cache(maxsize=None)
def _preset(task):
    from ..tagging.templates import template_set      # lazy: tagging imports structured
    return template_set(task)


def _compiled_preset(sentences, task):
    """(CompiledTemplates fitted on ``sentences``, its (seq_ptr, tok_ptr, tok_attr)) of the task's preset."""
    from ..tagging.templates import CompiledTemplates
    if task not in TASKS:
        raise InvalidInputError(f"task must be one of {TASKS}, got {task!r}")
    compiled = CompiledTemplates(_preset(task))
    return compiled, compiled.fit(sentences)


@njit(cache=True)
def _first_seen_ranks(tok_attr, n_attributes):
    """(rank of every attribute id in order of first occurrence, the ids in that order)."""
    rank = np.full(n_attributes, -1, dtype=np.int32)
    order = np.empty(n_attributes, dtype=np.int64)
    k = 0
    for a in tok_attr:
        if rank[a] < 0:
            rank[a] = k
            order[k] = a
            k += 1
    return rank, order[:k]


def first_seen_attributes(sentences, task):
    """(seq_ptr, tok_ptr, tok_attr, attribute names) of the task preset, ids in the order first seen."""
    compiled, (seq_ptr, tok_ptr, tok_attr) = _compiled_preset(sentences, task)
    rank, order = _first_seen_ranks(tok_attr, compiled.n_attributes)
    names = compiled.attribute_names()
    return seq_ptr, tok_ptr, rank[tok_attr], [names[k] for k in order.tolist()]


def token_attributes(sentences, task):
    """Per sentence, per token: the task preset's attribute names (CRFsuite's xseq)."""
    compiled, _ = _compiled_preset(sentences, task)
    return compiled.token_attribute_names(sentences)


def _drop_unseen(seq_ptr, tok_ptr, ids):
    """CSR arrays without the entries whose id is negative (attributes unseen in training)."""
    seen = ids >= 0
    kept = np.concatenate(([0], np.cumsum(seen)))
    return seq_ptr, kept[tok_ptr], ids[seen].astype(np.int32)


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
        compiled, (seq_ptr, tok_ptr, local) = _compiled_preset(sentences, self.task)
        index = self.attribute_index()
        to_space = np.fromiter(map(index.get, compiled.attribute_names(), repeat(-1)), dtype=np.int64,
                               count=compiled.n_attributes)
        return _drop_unseen(seq_ptr, tok_ptr, to_space[local])

    def encode_attributes(self, attribute_sequences):
        """encode() for sentences given as their tokens' attribute names (CRFsuite's xseq: one list of
        names per token), e.g. made by a caller's own template; names unseen in training are dropped."""
        tokens = [names for sentence in attribute_sequences for names in sentence]
        ids = np.fromiter(map(self.attribute_index().get, chain.from_iterable(tokens), repeat(-1)), dtype=np.int64)
        return _drop_unseen(offsets([len(s) for s in attribute_sequences]), offsets([len(t) for t in tokens]), ids)

    def attribute_index(self) -> dict:
        """attribute -> id, built on first use and kept (rebuilt if ``attributes`` was replaced)."""
        cached = self.__dict__.get("_index")
        if cached is None or cached[0] is not self.attributes or len(cached[1]) != len(self.attributes):
            cached = (self.attributes, {a: i for i, a in enumerate(self.attributes)})
            self.__dict__["_index"] = cached
        return cached[1]


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
    seq_ptr, tok_ptr, tok_attr, attributes = first_seen_attributes(sentences, task)
    names = [tok[col] for sentence in sentences for tok in sentence]
    if labels is None:
        labels = np.array(sorted(set(names)))
    lookup = {lab: i for i, lab in enumerate(labels.tolist())}
    try:
        gold = np.array([lookup[x] for x in names], dtype=np.int32)
    except KeyError as exc:
        raise InvalidInputError(f"label {exc.args[0]!r} is not among the model's labels") from None
    return chain_problem(task, (seq_ptr, tok_ptr, tok_attr), gold, attributes, labels, all_pairs=all_pairs)


def chain_problem(task, encoded, gold, attributes, labels, *, all_pairs=False, weight=None):
    """(ChainProblem, ChainFeatureSpace) of encoded sentences (seq_ptr, tok_ptr, tok_attr) with gold label ids;
    state features for the seen (attribute, label) pairs, or for all with ``all_pairs``."""
    seq_ptr, tok_ptr, tok_attr = encoded
    space = chain_space(task, encoded, gold, attributes, labels, all_pairs=all_pairs)
    problem = ChainProblem(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=None, map_ptr=space.map_ptr,
                           map_label=space.map_label, map_feat=space.map_feat, n_state=space.n_state, labels=labels,
                           gold=gold, weight=weight, attributes=attributes)
    return problem, space


def chain_space(task, encoded, gold, attributes, labels, *, all_pairs=False) -> ChainFeatureSpace:
    """:func:`chain_problem`'s feature space alone (also of one label, which has no training problem)."""
    _, tok_ptr, tok_attr = encoded
    map_ptr, map_label, map_feat, n_state = attribute_label_map((tok_attr, tok_ptr), gold, len(attributes),
                                                                len(labels), all_pairs=all_pairs)
    return ChainFeatureSpace(task=task, attributes=attributes, labels=labels, map_ptr=map_ptr,
                             map_label=map_label, map_feat=map_feat, n_state=n_state)
