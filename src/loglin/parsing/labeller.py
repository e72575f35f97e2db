"""Arc labels (DEPREL) of a given tree: a multi-class Maxent over features local to the arc (pipeline).

The parser picks the heads; each arc (h, m) of the tree then gets the label
argmax_l P(l | x, h, m) of a conditional Maxent (Huang et al. 2010, eq. 1)
trained on the gold arcs of the training trees, with loglin's own Maxent
training (:func:`loglin.training.train`, automatic solver). The labels are the
treebank's own DEPREL strings. For an arc with head h and dependent m
(index 0 = the artificial root; outside the sentence = a boundary symbol):

    dependent   mw  ml  mc  mp  ms  mf (each FEATS item)  mf.hc
    head        hw  hl  hc  hp  hf (each FEATS item)
    pairs       hc.mc  hp.mp  hw.mc  hc.mw  hl.ml  hw.mw  mf.hf (same attribute)
    shape       dir  dist.dir  hc.mc.dist.dir  mc.dir  hp.mp.dir
    neighbours  mc-1.mc  mc.mc+1  hc.mc-1.mc  hc.mc.mc+1  hc-1.hc.mc  hc.hc+1.mc
    prior       one constant feature (a per-label bias)

w: lower-cased form, l: lemma, c: coarse tag (UPOS / CPOSTAG), p: fine tag
(XPOS / POSTAG), s: 3-character suffix of w. Nothing depends on the rest of
the tree (e.g. the head's other dependents), so any tree can be labelled.
A feature is a 64-bit hash (parsing.features) kept when seen on at least
``cutoff`` gold arcs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from ..csr import offsets
from .features import BOUNDARY, ROOT, UNK, _dist_dir, _key

SPECIALS = ("<unk>", "<root>", "<boundary>")
SUFFIX = 3
N_COLUMNS = 5                 # per token: form, lemma, coarse tag, fine tag, suffix
FIXED_KEYS = 24


@njit(cache=True)
def _attribute(f_key, f_idx, j):
    """The attribute id of FEATS item j (items are stored as item ids; f_key maps an item to its attribute)."""
    return f_key[f_idx[j]]


@njit(cache=True)
def arc_label_keys(T, f_ptr, f_idx, f_key, o, n, h, m, out):
    """The feature hashes of arc (h, m) of a sentence whose rows start at o in T (root first); returns the count."""
    hw, hl, hc, hp = T[o + h, 0], T[o + h, 1], T[o + h, 2], T[o + h, 3]
    mw, ml, mc, mp, ms = T[o + m, 0], T[o + m, 1], T[o + m, 2], T[o + m, 3], T[o + m, 4]
    mc_l = T[o + m - 1, 2]
    mc_r = T[o + m + 1, 2] if m < n else BOUNDARY
    hc_l = T[o + h - 1, 2] if h > 0 else BOUNDARY
    hc_r = T[o + h + 1, 2] if h < n else BOUNDARY
    dd = _dist_dir(h, m)
    right = 1 if h < m else 2
    out[0] = _key(0, 0, 0, 0, 0, 0)
    out[1] = _key(1, 0, mw, 0, 0, 0)
    out[2] = _key(2, 0, ml, 0, 0, 0)
    out[3] = _key(3, 0, mc, 0, 0, 0)
    out[4] = _key(4, 0, mp, 0, 0, 0)
    out[5] = _key(5, 0, ms, 0, 0, 0)
    out[6] = _key(6, 0, hw, 0, 0, 0)
    out[7] = _key(7, 0, hl, 0, 0, 0)
    out[8] = _key(8, 0, hc, 0, 0, 0)
    out[9] = _key(9, 0, hp, 0, 0, 0)
    out[10] = _key(10, 0, hc, mc, 0, 0)
    out[11] = _key(11, 0, hp, mp, 0, 0)
    out[12] = _key(12, 0, hw, mc, 0, 0)
    out[13] = _key(13, 0, hc, mw, 0, 0)
    out[14] = _key(14, 0, hl, ml, 0, 0)
    out[15] = _key(15, 0, hw, mw, 0, 0)
    out[16] = _key(16, right, 0, 0, 0, 0)
    out[17] = _key(17, dd, 0, 0, 0, 0)
    out[18] = _key(18, dd, hc, mc, 0, 0)
    out[19] = _key(19, right, mc, 0, 0, 0)
    out[20] = _key(20, right, hp, mp, 0, 0)
    out[21] = _key(21, 0, mc_l, mc, mc_r, 0)
    out[22] = _key(22, 0, hc, mc_l, mc, 0)
    out[23] = _key(23, 0, hc, mc, mc_r, 0)
    k = FIXED_KEYS
    out[k] = _key(24, 0, hc_l, hc, mc, 0)
    out[k + 1] = _key(25, 0, hc, hc_r, mc, 0)
    k += 2
    for j in range(f_ptr[o + m], f_ptr[o + m + 1]):
        out[k] = _key(26, 0, f_idx[j], 0, 0, 0)
        out[k + 1] = _key(27, 0, f_idx[j], hc, 0, 0)
        k += 2
        for i in range(f_ptr[o + h], f_ptr[o + h + 1]):      # agreement: the same attribute on both ends
            a = _attribute(f_key, f_idx, j)
            if a > 0 and _attribute(f_key, f_idx, i) == a:
                out[k] = _key(28, 0, f_idx[j], f_idx[i], 0, 0)
                k += 1
    for i in range(f_ptr[o + h], f_ptr[o + h + 1]):
        out[k] = _key(29, 0, f_idx[i], 0, 0, 0)
        k += 1
    return k


@njit(cache=True)
def _max_keys(n_feats_m, n_feats_h):
    return FIXED_KEYS + 2 + 2 * n_feats_m + n_feats_m * n_feats_h + n_feats_h


@njit(cache=True, parallel=True)
def _all_arc_keys(T, f_ptr, f_idx, f_key, sent_ptr, heads, fill, row_ptr, out):
    """The two passes over every word's arc (heads[m - 1], m): ``fill=False`` writes each arc's key count into
    row_ptr[1:], ``fill=True`` writes the keys at ``row_ptr``."""
    width = 1
    for t in range(f_ptr.shape[0] - 1):
        width = max(width, f_ptr[t + 1] - f_ptr[t])
    for i in prange(sent_ptr.shape[0] - 1):
        buf = np.empty(_max_keys(width, width), dtype=np.uint64)
        o = sent_ptr[i] + i
        n = sent_ptr[i + 1] - sent_ptr[i]
        for m in range(1, n + 1):
            row = sent_ptr[i] + m - 1
            c = arc_label_keys(T, f_ptr, f_idx, f_key, o, n, heads[row], m, buf)
            if fill:
                out[row_ptr[row]:row_ptr[row] + c] = buf[:c]
            else:
                row_ptr[row + 1] = c


def _feats_items(feats: str) -> list[str]:
    return [] if feats in ("_", "") else feats.split("|")


@dataclass
class ArcLabeller:
    """A trained arc labeller: token vocabulary, kept feature hashes and the Maxent model over them."""

    vocab: list                     # "w:" / "l:" / "c:" / "p:" / "s:" / "f:" + value; SPECIALS first
    keys: np.ndarray                # sorted kept hashes: predicate id = position
    model: object                   # loglin.model.LinearModel (kind "maxent") over the predicates
    info: dict = field(default_factory=dict)

    def __post_init__(self):
        self._index = {v: i for i, v in enumerate(self.vocab)}
        self.keys = np.asarray(self.keys, dtype=np.uint64)

    @property
    def labels(self) -> list:
        return [str(x) for x in self.model.labels]

    # ------------------------------------------------------------------ training
    @classmethod
    def fit(cls, sentences, *, C, cutoff=1, sample_weight=None, **train_options):
        """(labeller, the driver's Result): trained on the gold arcs of ``sentences`` (every tree, projective or
        not) by :func:`loglin.training.train` with the automatic Maxent solver; ``sample_weight``: one loss
        multiplier per sentence, given to each of its arcs; ``train_options``: tol, max_iter, penalty, ..."""
        labeller, problem = cls.training_problem(sentences, cutoff=cutoff, sample_weight=sample_weight)
        return labeller.train(problem, C, **train_options)

    def train(self, problem, C, **train_options):
        """(self, the driver's Result): the Maxent weights of :meth:`training_problem`'s ``problem``."""
        from ..training import train
        self.model, result = train(problem, C, "auto", **train_options)
        self.info = {"n_predicates": int(len(self.keys)), "n_weights": int(problem.n_features),
                     "n_labels": int(problem.n_labels), "train_arcs": self.info["train_arcs"],
                     "solver": self.model.info.get("solver"), "C": float(C),
                     "iterations": int(result.iterations), "converged": bool(result.converged),
                     "objective": float(result.f), "train_seconds": float(result.train_seconds)}
        return self, result

    @classmethod
    def constant(cls, label: str, train_arcs: int) -> "ArcLabeller":
        """The labeller of a treebank whose arcs all have one DEPREL ("dep" everywhere, "root" on one-word
        sentences): that label on every arc. A Maxent needs two labels; nothing is left to learn."""
        from ..model import LinearModel
        model = LinearModel("maxent", np.zeros(0), np.asarray([label], dtype=str), 0, np.zeros(1, dtype=np.int64),
                            np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int64))
        info = {"n_predicates": 0, "n_weights": 0, "n_labels": 1, "train_arcs": int(train_arcs), "solver": None,
                "C": None, "iterations": 0, "converged": True, "objective": 0.0, "train_seconds": 0.0}
        return cls(list(SPECIALS), np.zeros(0, dtype=np.uint64), model, info)

    @classmethod
    def training_problem(cls, sentences, *, cutoff=1, sample_weight=None):
        """(untrained labeller, MaxentProblem): the vocabulary and kept features of ``sentences``' gold arcs, and
        the Maxent problem over them (every (predicate, label) pair a weight)."""
        from ..problem import problem_from_matrix
        vocab = list(SPECIALS)
        index = {v: i for i, v in enumerate(vocab)}
        for s in sentences:
            for name, values in _columns(s) + (("f:", [x for f in s.feats for x in _feats_items(f)]),):
                for v in values:
                    key = name + v
                    if key not in index:
                        index[key] = len(vocab)
                        vocab.append(key)
        labeller = cls(vocab, np.zeros(0, dtype=np.uint64), None)
        keys, row_ptr = labeller._arc_keys(sentences, [s.heads for s in sentences])
        unique, counts = np.unique(keys, return_counts=True)
        labeller.keys = unique[counts >= cutoff]
        X = labeller._rows(keys, row_ptr)
        y = np.asarray([r for s in sentences for r in s.deprels], dtype=object).astype(str)
        weight = None if sample_weight is None else np.repeat(np.asarray(sample_weight, dtype=np.float64),
                                                              [len(s) for s in sentences])
        labeller.info = {"train_arcs": int(len(y))}
        return labeller, problem_from_matrix(X, y, sample_weight=weight, all_pairs=True)

    # ------------------------------------------------------------------ labelling
    def label(self, sentences, heads) -> list[list[str]]:
        """The most probable label of every arc (heads[i][m - 1], m) of every sentence."""
        if len(sentences) == 0:
            return []
        if len(self.labels) == 1:                       # ArcLabeller.constant
            return [[self.labels[0]] * len(s) for s in sentences]
        keys, row_ptr = self._arc_keys(sentences, heads)
        best = self.model.predict(self._rows(keys, row_ptr)).astype(str)
        ends = np.cumsum([len(s) for s in sentences])
        return [part.tolist() for part in np.split(best, ends[:-1])]

    # ------------------------------------------------------------------ arrays
    def _token_table(self, sentences):
        """(T, f_ptr, f_idx, f_key, sent_ptr): per token (root first in each sentence) its vocabulary ids, and
        its FEATS items as a CSR (f_key: the attribute id of every vocabulary entry that is a FEATS item)."""
        lens = np.array([len(s) for s in sentences], dtype=np.int64)
        sent_ptr = offsets(lens)
        rows, f_counts, f_items = [], [], []
        get = self._index.get
        for s in sentences:
            rows.append((ROOT,) * N_COLUMNS)
            f_counts.append(0)
            columns = [[get(name + v, UNK) for v in values] for name, values in _columns(s)]
            rows.extend(zip(*columns))
            for feats in s.feats:
                items = [get("f:" + x, UNK) for x in _feats_items(feats)]
                f_counts.append(len(items))
                f_items.extend(items)
        T = np.array(rows, dtype=np.int64).reshape(-1, N_COLUMNS)
        f_ptr = offsets(np.array(f_counts, dtype=np.int64))
        f_idx = np.array(f_items, dtype=np.int64)
        attribute = {}
        f_key = np.zeros(len(self.vocab), dtype=np.int64)
        for i, v in enumerate(self.vocab):
            if v.startswith("f:"):
                f_key[i] = attribute.setdefault(v[2:].split("=")[0], len(attribute) + 1)
        return T, f_ptr, f_idx, f_key, sent_ptr

    def _arc_keys(self, sentences, heads):
        """(keys, row_ptr): the feature hashes of each word's arc, one row per word."""
        T, f_ptr, f_idx, f_key, sent_ptr = self._token_table(sentences)
        all_heads = np.concatenate([np.asarray(h, dtype=np.int64) for h in heads])
        row_ptr = np.zeros(int(sent_ptr[-1]) + 1, dtype=np.int64)
        _all_arc_keys(T, f_ptr, f_idx, f_key, sent_ptr, all_heads, False, row_ptr, np.empty(0, dtype=np.uint64))
        np.cumsum(row_ptr, out=row_ptr)
        keys = np.empty(int(row_ptr[-1]), dtype=np.uint64)
        _all_arc_keys(T, f_ptr, f_idx, f_key, sent_ptr, all_heads, True, row_ptr, keys)
        return keys, row_ptr

    def _rows(self, keys, row_ptr) -> sp.csr_matrix:
        """0/1 rows over the kept predicates (hashes not kept are dropped)."""
        ids = np.searchsorted(self.keys, keys)
        ids[ids == len(self.keys)] = 0
        kept = (self.keys[ids] == keys) if len(self.keys) else np.zeros(len(keys), dtype=bool)
        row_of = np.repeat(np.arange(len(row_ptr) - 1), np.diff(row_ptr))
        X = sp.csr_matrix((np.ones(int(kept.sum())), (row_of[kept], ids[kept])),
                          shape=(len(row_ptr) - 1, len(self.keys)))
        X.sum_duplicates()
        X.data[:] = 1.0
        return X

    # ------------------------------------------------------------------ model file
    def arrays(self) -> dict:
        """The labeller's arrays for the parser's model file (names prefixed "labeller_")."""
        m = self.model
        return {"labeller_vocab": np.asarray(self.vocab, dtype=str), "labeller_keys": self.keys,
                "labeller_w": m.w, "labeller_labels": np.asarray(m.labels, dtype=str),
                "labeller_map_ptr": m.map_ptr, "labeller_map_label": m.map_label, "labeller_map_feat": m.map_feat}

    @classmethod
    def from_arrays(cls, path, a, info) -> "ArcLabeller | None":
        """The labeller stored in a parser model file's arrays ``a``, or None (files without one)."""
        from ..errors import ModelFormatError
        from ..model import LinearModel, _check_maxent_arrays
        from ..model_io import strictly_increasing
        names = ("labeller_vocab", "labeller_keys", "labeller_w", "labeller_labels", "labeller_map_ptr",
                 "labeller_map_label", "labeller_map_feat")
        present = [n in a for n in names]
        if not any(present):
            return None
        if not all(present):
            raise ModelFormatError(f"{path}: incomplete arc labeller arrays")
        try:
            keys = a["labeller_keys"].astype(np.uint64)
            model = LinearModel("maxent", a["labeller_w"].astype(np.float64), a["labeller_labels"].astype(str),
                                len(keys), a["labeller_map_ptr"].astype(np.int64),
                                a["labeller_map_label"].astype(np.int32), a["labeller_map_feat"].astype(np.int64))
            vocab = a["labeller_vocab"].tolist()
        except (TypeError, ValueError) as exc:
            raise ModelFormatError(f"{path}: invalid arc labeller ({exc})") from None
        if (keys.ndim != 1 or not strictly_increasing(keys) or len(vocab) < len(SPECIALS)
                or len(model.labels) < 1):
            raise ModelFormatError(f"{path}: inconsistent arc labeller arrays")
        _check_maxent_arrays(path, model)
        return cls(vocab, keys, model, dict(info or {}))


def _columns(s):
    """(vocabulary prefix, values) of a sentence's token columns, in the order of T's columns."""
    words = [f.lower() for f in s.forms]
    return (("w:", words), ("l:", list(s.lemmas)), ("c:", list(s.cpos)), ("p:", list(s.pos)),
            ("s:", [w[-SUFFIX:] for w in words]))


def one_label(sentences) -> str | None:
    """The DEPREL of every arc of a treebank when there is only one, else None."""
    labels = {r for s in sentences for r in s.deprels}
    return labels.pop() if len(labels) == 1 else None


def has_labels(sentences) -> bool:
    """Whether a treebank has DEPREL annotation: some label other than "_"."""
    return any(r != "_" for s in sentences for r in s.deprels)
