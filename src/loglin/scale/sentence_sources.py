"""Sentence shards read by the workers from CoNLL files: chain CRF (CoNLL-2000 chunking / POS columns)
and parser (CoNLL-X / CoNLL-U) problems, built as the one-process builders build them.

* chain (:func:`~loglin.structured.crf_features.build_chain_problem`): attributes in first-seen
  order, labels sorted, one state feature per (attribute, label) pair seen in training. One counting
  pass returns each part's attributes in first-seen order and its seen pairs; the driver merges them
  in file order.
* tree (:meth:`~loglin.parsing.features.ArcFeatureSpace.fit`): the four vocabularies in first-seen
  order (pass 1), then the gold-arc feature hashes counted with the global vocabularies (pass 2),
  kept when their global count reaches the cut-off, sorted.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataContentError


def read_part(source, index, n):
    """The sentences of part ``index`` of ``n`` of a CoNLL source (blank-line aligned)."""
    from ..data._files import decode_lines
    from ..data.conll import conll2000_from_lines, conllx_from_lines
    lines = decode_lines(source.part(index, n), source.path, source.encoding)
    if source.format == "conllx":
        return conllx_from_lines(lines, source.path)
    need = 2 if source.task == "pos" else 3         # as `loglin tag train --format conll2000`
    return [[t[:need] for t in s] for s in conll2000_from_lines(lines, source.path)]


# ---------------------------------------------------------------- chain

def count_chain(source, index, n) -> dict:
    from ..structured.crf_features import check_sentences, first_seen_attributes, gold_column
    sentences = read_part(source, index, n)
    if not sentences:
        return {"rows": 0}
    check_sentences(sentences, source.task)
    _, tok_ptr, tok_attr, attributes = first_seen_attributes(sentences, source.task)
    col = gold_column(source.task)
    gold = [tok[col] for s in sentences for tok in s]
    labels = {t: k for k, t in enumerate(dict.fromkeys(gold))}
    if len(labels) >= 4096:
        raise DataContentError("more than 4095 labels in one part of the file")
    y = np.fromiter(map(labels.__getitem__, gold), dtype=np.int64, count=len(gold))
    keys = np.unique(tok_attr.astype(np.int64) * 4096 + np.repeat(y, np.diff(tok_ptr)))
    return {"rows": len(sentences), "attributes": attributes, "labels": list(labels), "pairs": keys}


def chain_index(source, counts):
    """The global ChainFeatureSpace (attributes, labels, attribute map) and the index a shard needs."""
    from ..structured.crf_features import ChainFeatureSpace
    from ..structured.problem import attribute_label_map
    index = {}
    for c in counts:
        for name in c.get("attributes", ()):
            index.setdefault(name, len(index))
    labels = np.array(sorted({t for c in counts for t in c.get("labels", ())}))
    if not len(index):
        raise DataContentError("no sentences to train on")
    code = {t: i for i, t in enumerate(labels.tolist())}
    attr_rows, label_cols = [], []
    for c in counts:
        if not c["rows"]:
            continue
        local_attr = np.array([index[a] for a in c["attributes"]], dtype=np.int64)
        local_label = np.array([code[t] for t in c["labels"]], dtype=np.int64)
        attr_rows.append(local_attr[c["pairs"] // 4096])
        label_cols.append(local_label[c["pairs"] % 4096])
    attr, lab = np.concatenate(attr_rows), np.concatenate(label_cols)
    # attribute_label_map's seen-pair form: one token per pair, carrying the attribute, labelled with the label
    map_ptr, map_label, map_feat, n_state = attribute_label_map(
        (attr.astype(np.int32), np.arange(len(attr) + 1, dtype=np.int64)), lab, len(index), len(labels),
        all_pairs=source.all_pairs)
    attributes = list(index)
    return ChainFeatureSpace(task=source.task, attributes=attributes, labels=labels, map_ptr=map_ptr,
                             map_label=map_label, map_feat=map_feat, n_state=n_state)


def build_chain_part(source, index, n, space):
    from ..structured.crf_features import gold_column
    from ..structured.problem import ChainProblem
    sentences = read_part(source, index, n)
    seq_ptr, tok_ptr, tok_attr = space.encode(sentences)
    col = gold_column(source.task)
    code = {t: i for i, t in enumerate(space.labels.tolist())}
    gold = np.array([code[tok[col]] for s in sentences for tok in s], dtype=np.int32)
    return ChainProblem(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=None, map_ptr=space.map_ptr,
                        map_label=space.map_label, map_feat=space.map_feat, n_state=space.n_state,
                        labels=space.labels, gold=gold)


# ---------------------------------------------------------------- tree

def count_tree_vocabularies(source, index, n) -> dict:
    """Pass 1: the part's projective training trees' vocabularies in first-seen order."""
    from ..parsing.features import PREFIX
    kept, skipped = _trees(source, index, n)
    vocabularies = [dict(), dict(), dict(), dict()]
    for s in kept:
        for values, seen in ((map(str.lower, s.forms), vocabularies[0]), (s.pos, vocabularies[1]),
                             (s.cpos, vocabularies[2]), ((f.lower()[:PREFIX] for f in s.forms), vocabularies[3])):
            for v in values:
                seen.setdefault(v, None)
    return {"rows": len(kept), "skipped": skipped, "vocabularies": [list(v) for v in vocabularies]}


def _trees(source, index, n):
    from ..parsing.problem import check_tree
    from ..data.conll import is_projective
    kept, skipped = [], 0
    for s in read_part(source, index, n):
        check_tree(s.heads, "")
        if is_projective(s.heads):
            kept.append(s)
        else:
            skipped += 1
    return kept, skipped


def tree_vocabularies(counts):
    from ..parsing.features import SPECIALS
    merged = []
    for k in range(4):
        seen = dict.fromkeys(SPECIALS)
        for c in counts:
            for v in c["vocabularies"][k]:
                seen.setdefault(v, None)
        merged.append(list(seen))
    if not sum(c["rows"] for c in counts):
        raise DataContentError("no projective training tree")
    return merged


def count_tree_keys(source, index, n, vocabularies) -> dict:
    """Pass 2: the part's gold-arc feature hashes and their counts, with the global vocabularies."""
    from ..parsing.features import ArcFeatureSpace, gold_keys
    kept, _ = _trees(source, index, n)
    if not kept:
        return {"keys": np.zeros(0, dtype=np.uint64), "counts": np.zeros(0, dtype=np.int64)}
    words, tags, ctags, prefixes = vocabularies
    space = ArcFeatureSpace(words, tags, ctags, np.zeros(0, dtype=np.uint64), 1, prefixes)
    W, W5, P, Cp, sent_ptr = space.token_ids(kept)
    heads = np.concatenate([s.heads for s in kept]).astype(np.int32)
    keys, counts = np.unique(gold_keys(W, W5, P, Cp, sent_ptr, heads, len(ctags), len(tags)), return_counts=True)
    return {"keys": keys, "counts": counts}


def tree_space(source, vocabularies, key_counts):
    from ..parsing.features import ArcFeatureSpace
    keys = np.concatenate([c["keys"] for c in key_counts]).astype(np.uint64)
    unique, inverse = np.unique(keys, return_inverse=True)
    totals = np.bincount(inverse, weights=np.concatenate([c["counts"] for c in key_counts]),
                         minlength=len(unique))
    words, tags, ctags, prefixes = vocabularies
    return ArcFeatureSpace(words, tags, ctags, unique[totals >= source.cutoff], source.cutoff, prefixes)


def build_tree_part(source, index, n, space):
    from ..parsing.problem import TreeProblem
    kept, _ = _trees(source, index, n)
    sent_ptr, arc_off, feat_ptr, feat_idx = space.encode(kept)
    heads = np.concatenate([s.heads for s in kept]).astype(np.int32)
    return TreeProblem(sent_ptr, arc_off, feat_ptr, feat_idx, heads, space.n_features)
