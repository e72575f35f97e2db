"""Trained dependency parsers (CRF or M3N over arcs, and an arc labeller): parsing, UAS / LAS, saving/loading.

    model = loglin.Parser(model="crf", solver="eg", C=0.1).fit(train_sentences).model_
    heads = model.parse(sentences)             # list of int arrays (0 = root)
    labels = model.label(sentences, heads)     # DEPREL strings per sentence (None without a labeller)
    n_best = model.parse_n_best(sentences, 5)  # per sentence [(heads, score), ...], best first
    uas(sentences, heads)                       # {"uas": ..., "uas_no_punct": ...} in percent
    las(sentences, heads, labels)               # {"las": ..., "label_accuracy": ..., ...} in percent
    model.save("parser.npz"); ParserModel.load("parser.npz")

Solvers: "eg" (online EG, randomized order, section 7 step sizes), "eg-batch",
"lbfgs" and "sgd" (CRF only), "cutting-plane" (M3N only).
"""
from __future__ import annotations

import time
import unicodedata
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidInputError, ModelFormatError
from ..kernels.maxent import _blocks
from ..model_io import load_npz_model, save_npz_model, strictly_increasing
from ..structured.passes import decode_all
from ..structured.tree import tree_data
from .features import ArcFeatureSpace
from .labeller import ArcLabeller, has_labels

FORMAT, VERSION = "loglin-parser", 1
MODELS = ("crf", "m3n")
PUNCT_TAGS = {"punct", "punc", "f", "."}   # UPOS PUNCT, Spanish CoNLL 'F*' (checked on the first letter), PTB '.'


def is_punctuation(form: str, cpos: str, pos: str = "") -> bool:
    """Punctuation: coarse tag PUNCT (UD), a Spanish/Catalan CoNLL tag starting with 'F' (Fc, Fp, ...),
    or a form made only of Unicode punctuation characters (P* categories)."""
    if cpos.lower() in PUNCT_TAGS:
        return True
    return bool(form) and all(unicodedata.category(ch).startswith("P") for ch in form)


def uas(sentences, predicted_heads) -> dict:
    """Unlabeled attachment scores in percent, punctuation included and excluded."""
    if len(sentences) != len(predicted_heads):
        raise InvalidInputError(f"{len(sentences)} sentences but {len(predicted_heads)} predictions")
    right = total = right_np = total_np = 0
    for s, pred in zip(sentences, predicted_heads):
        ok = np.asarray(pred) == s.heads
        punct = _punctuation_mask(s)
        right += int(ok.sum())
        total += len(ok)
        right_np += int(ok[~punct].sum())
        total_np += int((~punct).sum())
    return {"uas": 100.0 * right / max(total, 1), "uas_no_punct": 100.0 * right_np / max(total_np, 1),
            "tokens": total, "tokens_no_punct": total_np, "sentences": len(sentences)}


def _punctuation_mask(s) -> np.ndarray:
    return np.array([is_punctuation(f, c, p) for f, c, p in zip(s.forms, s.cpos, s.pos)], dtype=bool)


def las(sentences, predicted_heads, predicted_labels) -> dict:
    """Labeled attachment score (head and DEPREL right) and label accuracy (DEPREL right) in percent,
    punctuation included and excluded as by :func:`uas` (the same tokens count)."""
    if not len(sentences) == len(predicted_heads) == len(predicted_labels):
        raise InvalidInputError(f"{len(sentences)} sentences but {len(predicted_heads)} head and "
                                f"{len(predicted_labels)} label predictions")
    counts = np.zeros(4, dtype=np.int64)       # LAS and label hits, with and without punctuation
    total = total_np = 0
    for s, heads, labels in zip(sentences, predicted_heads, predicted_labels):
        label_ok = np.asarray(labels, dtype=object) == np.asarray(s.deprels, dtype=object)
        both = label_ok & (np.asarray(heads) == s.heads)
        keep = ~_punctuation_mask(s)
        counts += [both.sum(), label_ok.sum(), both[keep].sum(), label_ok[keep].sum()]
        total += len(s)
        total_np += int(keep.sum())
    total, total_np = max(total, 1), max(total_np, 1)
    right = 100.0 * counts.astype(np.float64) / [total, total, total_np, total_np]
    return dict(zip(("las", "label_accuracy", "las_no_punct", "label_accuracy_no_punct"), map(float, right)))


def per_label_scores(sentences, predicted_heads, predicted_labels) -> dict:
    """Per DEPREL label L, punctuation included: support (gold arcs labelled L), predicted (arcs predicted L),
    and precision / recall in percent of the arcs with head and label right (CoNLL-X eval.pl's table)."""
    gold, guess, right = {}, {}, {}
    for s, heads, labels in zip(sentences, predicted_heads, predicted_labels):
        for g, p, ok in zip(s.deprels, labels, np.asarray(heads) == s.heads):
            gold[g] = gold.get(g, 0) + 1
            guess[p] = guess.get(p, 0) + 1
            right[g] = right.get(g, 0) + int(bool(ok) and g == p)
    return {label: {"support": gold.get(label, 0), "predicted": guess.get(label, 0),
                    "precision": 100.0 * right.get(label, 0) / max(guess.get(label, 0), 1),
                    "recall": 100.0 * right.get(label, 0) / max(gold.get(label, 0), 1)}
            for label in sorted(set(gold) | set(guess))}


@dataclass
class ParserModel:
    """Arc weights over an :class:`ArcFeatureSpace`, and the arc labeller (None: heads only)."""

    space: ArcFeatureSpace
    w: np.ndarray
    model: str = "crf"
    C: float = 1.0
    solver: str = ""
    info: dict = field(default_factory=dict)
    labeller: object = None            # parsing.labeller.ArcLabeller

    def label(self, sentences, heads) -> list | None:
        """The DEPREL of every arc of the given trees (lists of strings), None for a parser without labeller."""
        return None if self.labeller is None else self.labeller.label(sentences, heads)

    def parse(self, sentences, constraints=None) -> list[np.ndarray]:
        """Best projective tree of every sentence (Eisner): heads[m - 1] = head of word m, 0 = root.
        ``constraints``: per sentence None or, per word, None / -1 (free) or the head it must keep; the best
        tree keeping them (:mod:`loglin.structured.tree_constrained`), an error naming the sentence if none can."""
        if len(sentences) == 0:
            return []
        for i, s in enumerate(sentences):
            if len(s) == 0:
                raise InvalidInputError(f"sentence {i + 1} is empty")
        fixed = None
        if constraints is not None:
            from ..structured.tree_constrained import fixed_heads
            fixed = fixed_heads(list(constraints), [len(s) for s in sentences])
        sent_ptr, arc_off, feat_ptr, feat_idx = self.space.encode(sentences)
        out = np.zeros(int(sent_ptr[-1]), dtype=np.int32)
        if fixed is None or not np.any(fixed >= 0):
            decode_all(tree_data(sent_ptr, arc_off, feat_ptr, feat_idx), self.w, _blocks(len(sentences)), out)
        else:
            from ..structured.tree_constrained import constrained_parse_kernel
            scores = np.zeros(len(sentences))
            constrained_parse_kernel(sent_ptr, arc_off, feat_ptr, feat_idx, np.ascontiguousarray(self.w), fixed,
                                     _blocks(len(sentences)), out, scores)
            impossible = np.flatnonzero(~np.isfinite(scores))
            if impossible.size:
                raise InvalidInputError(f"sentence {impossible[0] + 1}: no projective tree keeps its fixed heads "
                                        "(they cross or form a cycle)")
        return [out[sent_ptr[i]:sent_ptr[i + 1]].copy() for i in range(len(sentences))]

    def parse_n_best(self, sentences, n: int = 3) -> list:
        """Per sentence the n best projective trees as [(heads, score), ...], best first (exact k-best Eisner,
        :mod:`loglin.structured.tree_nbest`; fewer when the sentence has fewer trees). CRF: the score is
        log P(tree | sentence); M3N: the raw score w . f. The first tree is :meth:`parse`'s."""
        from ..structured.tree_nbest import check_n_trees, n_best_trees, tree_n_best
        n = check_n_trees(n)
        for i, s in enumerate(sentences):
            if len(s) == 0:
                raise InvalidInputError(f"sentence {i + 1} is empty")
        if len(sentences) == 0:
            return []
        sent_ptr, arc_off, feat_ptr, feat_idx = self.space.encode(sentences)
        heads, scores = tree_n_best(self.w, sent_ptr, arc_off, feat_ptr, feat_idx, n=n,
                                    log_prob=self.model == "crf")
        return n_best_trees(heads, scores, sent_ptr)

    def label_n_best(self, sentences, n_best) -> list | None:
        """The DEPREL of every arc of every tree of :meth:`parse_n_best`'s lists: per sentence one list of
        strings per tree (None for a parser without labeller)."""
        if self.labeller is None:
            return None
        flat = self.labeller.label([s for s, trees in zip(sentences, n_best) for _ in trees],
                                   [heads for trees in n_best for heads, _ in trees])
        out, at = [], 0
        for trees in n_best:
            out.append(flat[at:at + len(trees)])
            at += len(trees)
        return out

    def evaluate(self, sentences) -> dict:
        start, cpu = time.perf_counter(), time.process_time()
        heads = self.parse(sentences)
        labels = self.label(sentences, heads) if has_labels(sentences) else None    # no LAS against "_" only
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        result = uas(sentences, heads)
        if labels is not None:
            result.update(las(sentences, heads, labels), per_label=per_label_scores(sentences, heads, labels))
        result.update(parse_seconds=seconds, sentences_per_second=len(sentences) / max(seconds, 1e-9),
                      parse_cpu_seconds=cpu, sentences_per_cpu_second=len(sentences) / max(cpu, 1e-9))
        return result

    def save(self, path) -> None:
        meta = {"loglin_format": FORMAT, "format_version": VERSION, "model": self.model, "C": self.C,
                "solver": self.solver, "cutoff": int(self.space.cutoff), "n_features": int(self.space.n_features),
                "info": self.info}
        arrays = {"w": self.w, "keys": self.space.keys, "words": np.asarray(self.space.words, dtype=str),
                  "tags": np.asarray(self.space.tags, dtype=str), "ctags": np.asarray(self.space.ctags, dtype=str),
                  "prefixes": np.asarray(self.space.prefixes, dtype=str)}
        if self.labeller is not None:
            meta["labeller"] = self.labeller.info
            arrays.update(self.labeller.arrays())
        save_npz_model(path, meta, arrays)

    @classmethod
    def load(cls, path) -> "ParserModel":
        meta, a = load_npz_model(path, FORMAT, VERSION, required=("w", "keys", "words", "tags", "ctags", "prefixes"))
        try:
            w = a["w"].astype(np.float64)
            keys = a["keys"].astype(np.uint64)
            words, tags, ctags, prefixes = (a[k].tolist() for k in ("words", "tags", "ctags", "prefixes"))
            model, C = str(meta.get("model", "crf")), float(meta.get("C", 1.0))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"{path}: invalid parser model ({exc})") from None
        ok = (w.ndim == 1 and keys.ndim == 1 and len(w) == len(keys) and model in MODELS
              and np.all(np.isfinite(w)) and min(len(words), len(tags), len(ctags), len(prefixes)) >= 3
              and strictly_increasing(keys))
        if not ok:
            raise ModelFormatError(f"{path}: inconsistent parser model arrays")
        space = ArcFeatureSpace(words, tags, ctags, keys, int(meta.get("cutoff", 1)), prefixes)
        labeller = ArcLabeller.from_arrays(path, a, meta.get("labeller"))     # None in files without one
        return cls(space=space, w=w, model=model, C=C, solver=str(meta.get("solver", "")),
                   info=dict(meta.get("info", {})), labeller=labeller)


def check_options(model, solver):
    """One error for a model name or a solver that cannot train it (the solver table decides; "auto" passes)."""
    from ..solvers import check
    if model not in MODELS:
        raise InvalidInputError(f"model must be one of {MODELS}, got {model!r}")
    if solver not in (None, "auto"):
        check(solver, "tree", "ll" if model == "crf" else "mm")


def solve(problem, model="crf", solver="eg", C=1.0, *, random_state=0, space=None, **options):
    """Run one solver on a built TreeProblem through :func:`loglin.training.train`; returns the driver's Result."""
    from ..training import train
    check_options(model, solver)
    return train(problem, C, solver, loss="ll" if model == "crf" else "mm", random_state=random_state,
                 space=space, **options)[1]


def dev_uas_metric(dev_sentences, space):
    """The training trace's ``metric`` for a dev treebank: its UAS in percent, punctuation included, as
    :func:`uas` reports it (None without dev sentences)."""
    if dev_sentences is None:
        return None
    return lambda w: uas(dev_sentences, ParserModel(space, w).parse(dev_sentences))["uas"]


def training_info(n_sentences, skipped, space, build_seconds) -> dict:
    """What a trained parser's ``info`` records of its training data and feature build."""
    return {"train_sentences": int(n_sentences), "non_projective_skipped": skipped,
            "n_features": space.n_features, "feature_build_seconds": build_seconds}
