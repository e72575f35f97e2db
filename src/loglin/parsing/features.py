"""First-order arc features in the style of McDonald, Crammer & Pereira (2005), indexed with a cut-off.

For an arc (h, m) with words w, fine POS p and coarse POS c (index 0 = the
artificial root, outside the sentence = a boundary symbol), the templates are

    unigram   hw.hp  hw  hp  mw.mp  mw  mp
    bigram    hw.hp.mw.mp  hp.mw.mp  hw.mw.mp  hw.hp.mp  hw.hp.mw  hw.mw  hp.mp  hc.mc
    prefix    the unigram and bigram templates with words replaced by their 5-character prefixes
    between   hc.bc.mc for every distinct coarse tag bc strictly between h and m, and hp.bp.mp for every
              distinct fine tag bp (McDonald et al. use both tag sets)
    context   hp.hp+1.mp-1.mp  hp-1.hp.mp-1.mp  hp.hp+1.mp.mp+1  hp-1.hp.mp.mp+1, and the same on coarse tags

each emitted twice: alone and conjoined with the arc's direction and distance
bucket (1, 2, 3, 4, 5, 6-10, > 10). A feature is the 64-bit hash of its
template and values; the *index* keeps the features occurring on gold arcs
of the training trees at least ``cutoff`` times (MSTParser's way: an arc's
other hashes are dropped). Words are lower-cased forms.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange
from ..csr import offsets
from ..signals import check_command_time

UNK, ROOT, BOUNDARY = 0, 1, 2
PREFIX = 5
SPECIALS = ("<unk>", "<root>", "<boundary>")
N_TEMPLATES = 33
_M1 = np.uint64(0x9E3779B97F4A7C15)
_M2 = np.uint64(0xBF58476D1CE4E5B9)
_M3 = np.uint64(0x94D049BB133111EB)


@njit(cache=True)
def _mix(h, v):
    x = (h ^ np.uint64(v + 1)) * _M1
    x = (x ^ (x >> np.uint64(30))) * _M2
    x = (x ^ (x >> np.uint64(27))) * _M3
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def _key(t, dd, a, b, c, d):
    h = _mix(np.uint64(t * 16 + dd), a)
    h = _mix(h, b)
    h = _mix(h, c)
    return _mix(h, d)


@njit(cache=True)
def _dist_dir(h, m):
    dist = abs(h - m)
    bucket = dist - 1 if dist <= 5 else (5 if dist <= 10 else 6)
    return 1 + bucket + (7 if h < m else 0)


@njit(cache=True)
def arc_keys(W, W5, P, Cp, o, n, h, m, mark, fine_mark, out):
    """The feature hashes of arc (h, m) of a sentence whose token ids start at o (root first); returns the count."""
    hw, hp, hc, mw, mp, mc = W[o + h], P[o + h], Cp[o + h], W[o + m], P[o + m], Cp[o + m]
    h5, m5 = W5[o + h], W5[o + m]
    hp_l = P[o + h - 1] if h > 0 else BOUNDARY
    hp_r = P[o + h + 1] if h < n else BOUNDARY
    mp_l = P[o + m - 1] if m > 0 else BOUNDARY
    mp_r = P[o + m + 1] if m < n else BOUNDARY
    hc_l = Cp[o + h - 1] if h > 0 else BOUNDARY
    hc_r = Cp[o + h + 1] if h < n else BOUNDARY
    mc_l = Cp[o + m - 1] if m > 0 else BOUNDARY
    mc_r = Cp[o + m + 1] if m < n else BOUNDARY
    dd = _dist_dir(h, m)
    k = 0
    for x in (0, dd):
        out[k] = _key(1, x, hw, hp, 0, 0)
        out[k + 1] = _key(2, x, hw, 0, 0, 0)
        out[k + 2] = _key(3, x, hp, 0, 0, 0)
        out[k + 3] = _key(4, x, mw, mp, 0, 0)
        out[k + 4] = _key(5, x, mw, 0, 0, 0)
        out[k + 5] = _key(6, x, mp, 0, 0, 0)
        out[k + 6] = _key(7, x, hw, hp, mw, mp)
        out[k + 7] = _key(8, x, hp, mw, mp, 0)
        out[k + 8] = _key(9, x, hw, mw, mp, 0)
        out[k + 9] = _key(10, x, hw, hp, mp, 0)
        out[k + 10] = _key(11, x, hw, hp, mw, 0)
        out[k + 11] = _key(12, x, hw, mw, 0, 0)
        out[k + 12] = _key(13, x, hp, mp, 0, 0)
        out[k + 13] = _key(14, x, hc, mc, 0, 0)
        out[k + 14] = _key(15, x, hp, hp_r, mp_l, mp)
        out[k + 15] = _key(16, x, hp_l, hp, mp_l, mp)
        out[k + 16] = _key(17, x, hp, hp_r, mp, mp_r)
        out[k + 17] = _key(18, x, hp_l, hp, mp, mp_r)
        out[k + 18] = _key(19, x, hc, hc_r, mc_l, mc)
        out[k + 19] = _key(20, x, hc_l, hc, mc_l, mc)
        out[k + 20] = _key(21, x, hc, hc_r, mc, mc_r)
        out[k + 21] = _key(22, x, hc_l, hc, mc, mc_r)
        out[k + 22] = _key(24, x, h5, hp, 0, 0)
        out[k + 23] = _key(25, x, h5, 0, 0, 0)
        out[k + 24] = _key(26, x, m5, mp, 0, 0)
        out[k + 25] = _key(27, x, m5, 0, 0, 0)
        out[k + 26] = _key(28, x, h5, hp, m5, mp)
        out[k + 27] = _key(29, x, h5, m5, 0, 0)
        out[k + 28] = _key(30, x, hp, m5, mp, 0)
        out[k + 29] = _key(31, x, h5, hp, mp, 0)
        k += 30
    lo, hi = (h, m) if h < m else (m, h)
    for b in range(lo + 1, hi):
        bc = Cp[o + b]
        if mark[bc] == 0:                  # each distinct in-between tag once
            mark[bc] = 1
            out[k] = _key(23, 0, hc, bc, mc, 0)
            out[k + 1] = _key(23, dd, hc, bc, mc, 0)
            k += 2
    for b in range(lo + 1, hi):
        mark[Cp[o + b]] = 0
    for b in range(lo + 1, hi):            # the same on fine tags
        bp = P[o + b]
        if fine_mark[bp] == 0:
            fine_mark[bp] = 1
            out[k] = _key(32, 0, hp, bp, mp, 0)
            out[k + 1] = _key(32, dd, hp, bp, mp, 0)
            k += 2
    for b in range(lo + 1, hi):
        fine_mark[P[o + b]] = 0
    return k


@njit(cache=True)
def max_keys(n_cpos, n_pos):
    return 60 + 2 * n_cpos + 2 * n_pos


# ------------------------------------------------------------------ open-addressing index of kept hashes
@njit(cache=True)
def build_table(keys):
    size = 1
    while size < 2 * keys.shape[0] + 2:
        size *= 2
    tk = np.zeros(size, dtype=np.uint64)
    tv = np.full(size, -1, dtype=np.int64)
    mask = np.uint64(size - 1)
    for i in range(keys.shape[0]):
        j = keys[i] & mask
        while tv[j] >= 0:
            j = (j + np.uint64(1)) & mask
        tk[j] = keys[i]
        tv[j] = i
    return tk, tv


@njit(cache=True)
def _lookup(tk, tv, key):
    mask = np.uint64(tk.shape[0] - 1)
    j = key & mask
    while tv[j] >= 0:
        if tk[j] == key:
            return tv[j]
        j = (j + np.uint64(1)) & mask
    return -1


@njit(cache=True)
def gold_keys(W, W5, P, Cp, sent_ptr, heads, n_cpos, n_pos):
    """All feature hashes of all gold arcs (with repetitions)."""
    n_sent = sent_ptr.shape[0] - 1
    total = 0
    buf = np.empty(max_keys(n_cpos, n_pos), dtype=np.uint64)
    mark = np.zeros(n_cpos, dtype=np.int64)
    fine_mark = np.zeros(n_pos, dtype=np.int64)
    for i in range(n_sent):
        o = sent_ptr[i] + i
        n = sent_ptr[i + 1] - sent_ptr[i]
        for m in range(1, n + 1):
            total += arc_keys(W, W5, P, Cp, o, n, heads[sent_ptr[i] + m - 1], m, mark, fine_mark, buf)
    out = np.empty(total, dtype=np.uint64)
    k = 0
    for i in range(n_sent):
        o = sent_ptr[i] + i
        n = sent_ptr[i + 1] - sent_ptr[i]
        for m in range(1, n + 1):
            c = arc_keys(W, W5, P, Cp, o, n, heads[sent_ptr[i] + m - 1], m, mark, fine_mark, buf)
            out[k:k + c] = buf[:c]
            k += c
    return out


@njit(cache=True, parallel=True)
def _kept_arc_features(W, W5, P, Cp, sent_ptr, arc_off, tk, tv, n_cpos, n_pos, fill, counts, feat_ptr, feat_idx):
    """The two passes of building the arc CSR: ``fill=False`` counts each slot's kept features into
    ``counts``; ``fill=True`` writes their ids into ``feat_idx`` at ``feat_ptr`` (hashes are recomputed
    rather than stored: storing every arc's keys would take far more memory than the CSR)."""
    for i in prange(sent_ptr.shape[0] - 1):
        buf = np.empty(max_keys(n_cpos, n_pos), dtype=np.uint64)
        mark = np.zeros(n_cpos, dtype=np.int64)
        fine_mark = np.zeros(n_pos, dtype=np.int64)
        o = sent_ptr[i] + i
        n = sent_ptr[i + 1] - sent_ptr[i]
        for h in range(n + 1):
            for m in range(1, n + 1):
                if h == m:
                    continue
                c = arc_keys(W, W5, P, Cp, o, n, h, m, mark, fine_mark, buf)
                slot = arc_off[i] + h * (n + 1) + m
                q = feat_ptr[slot] if fill else 0
                for j in range(c):
                    f = _lookup(tk, tv, buf[j])
                    if f >= 0:
                        if fill:
                            feat_idx[q] = f
                        q += 1
                if not fill:
                    counts[slot] = q


@dataclass
class ArcFeatureSpace:
    """Vocabularies and the kept feature hashes (sorted; feature id = position)."""

    words: list
    tags: list
    ctags: list
    keys: np.ndarray
    cutoff: int = 1
    prefixes: list | None = None

    def __post_init__(self):
        if self.prefixes is None:
            self.prefixes = list(SPECIALS)
        self._w5 = {s: i for i, s in enumerate(self.prefixes)}
        self._w = {s: i for i, s in enumerate(self.words)}
        self._p = {s: i for i, s in enumerate(self.tags)}
        self._c = {s: i for i, s in enumerate(self.ctags)}
        self.keys = np.asarray(self.keys, dtype=np.uint64)
        self._table = build_table(self.keys)

    @property
    def n_features(self) -> int:
        return len(self.keys)

    @classmethod
    def fit(cls, sentences, cutoff=1):
        """Vocabularies of the training sentences and the gold-arc features seen >= cutoff times."""
        words, tags, ctags, prefixes = (list(SPECIALS) for _ in range(4))
        seen_w, seen_p, seen_c, seen_5 = set(words), set(tags), set(ctags), set(prefixes)
        for k, s in enumerate(sentences):
            if k % 2048 == 0:
                check_command_time("extracting features")
            for x, seen, out in ((map(str.lower, s.forms), seen_w, words), (s.pos, seen_p, tags),
                                 (s.cpos, seen_c, ctags), ((f.lower()[:PREFIX] for f in s.forms), seen_5, prefixes)):
                for v in x:
                    if v not in seen:
                        seen.add(v)
                        out.append(v)
        space = cls(words, tags, ctags, np.zeros(0, dtype=np.uint64), cutoff, prefixes)
        W, W5, P, Cp, sent_ptr = space.token_ids(sentences)
        heads = np.concatenate([s.heads for s in sentences]).astype(np.int32)
        check_command_time("extracting features")
        keys, counts = np.unique(gold_keys(W, W5, P, Cp, sent_ptr, heads, len(ctags), len(tags)), return_counts=True)
        space.keys = keys[counts >= cutoff]
        space._table = build_table(space.keys)
        return space

    def token_ids(self, sentences):
        """(W, W5, P, C, sent_ptr): id arrays (words, 5-prefixes, tags, coarse tags), the root token first in
        every sentence (unknown -> 0)."""
        lens = np.array([len(s) for s in sentences], dtype=np.int64)
        sent_ptr = offsets(lens)
        W, W5, P, Cp = [], [], [], []
        for k, s in enumerate(sentences):
            if k % 2048 == 0:
                check_command_time("extracting features")
            W5.append(ROOT)
            W5.extend(self._w5.get(x.lower()[:PREFIX], UNK) for x in s.forms)
            W.append(ROOT)
            P.append(ROOT)
            Cp.append(ROOT)
            W.extend(self._w.get(x.lower(), UNK) for x in s.forms)
            P.extend(self._p.get(x, UNK) for x in s.pos)
            Cp.extend(self._c.get(x, UNK) for x in s.cpos)
        return tuple(np.array(a, dtype=np.int64) for a in (W, W5, P, Cp)) + (sent_ptr,)

    def encode(self, sentences):
        """(sent_ptr, arc_off, feat_ptr, feat_idx): the kept features of every arc slot of every sentence."""
        W, W5, P, Cp, sent_ptr = self.token_ids(sentences)
        lens = np.diff(sent_ptr)
        arc_off = offsets((lens + 1) ** 2)
        counts = np.zeros(int(arc_off[-1]), dtype=np.int64)
        tk, tv = self._table
        feat_ptr = np.zeros(len(counts) + 1, dtype=np.int64)
        feat_idx = np.empty(0, dtype=np.int32)
        sizes = (len(self.ctags), len(self.tags))
        check_command_time("extracting features")
        _kept_arc_features(W, W5, P, Cp, sent_ptr, arc_off, tk, tv, *sizes, False, counts, feat_ptr, feat_idx)
        check_command_time("extracting features")
        np.cumsum(counts, out=feat_ptr[1:])
        feat_idx = np.empty(int(feat_ptr[-1]), dtype=np.int32)
        _kept_arc_features(W, W5, P, Cp, sent_ptr, arc_off, tk, tv, *sizes, True, counts, feat_ptr, feat_idx)
        return sent_ptr, arc_off, feat_ptr, feat_idx
