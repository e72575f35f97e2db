"""Fast predicate extraction: sentences -> predicate ids -> a MaxentProblem.

Strings are touched once per distinct word (interning); everything after
that is NumPy over flat token arrays. A predicate is identified by its
template group and an integer *key*, the mixed-radix code of its atom values
(label atoms first, then the others), so counting predicates, applying the
cut-off and looking them up are ``np.unique`` and ``np.searchsorted`` calls.
Predicate ids are positions in the concatenation of the groups' sorted kept
keys.

Training events use the gold label history (Ratnaparkhi 1996); decoding
recomputes the history predicates per hypothesis from the tables returned by
:meth:`FeatureExtractor.history_tables`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..csr import offsets
from ..errors import DataContentError, InvalidInputError
from ..model_io import strictly_increasing
from ..problem import MaxentProblem, index_dtype
from ..signals import check_command_time
from .templates import AFFIX_COLUMNS, FLAG_COLUMNS, MAX_AFFIX, TEMPLATE_SETS, Template

BOS, EOS, UNK = 0, 1, 2
SPECIALS = ("*BOS*", "*EOS*", "*UNK*")
KEY_LIMIT = 2 ** 62


class Vocabulary:
    """Strings <-> ids, with the boundary and unknown symbols at 0, 1, 2."""

    def __init__(self, strings=()):
        self.strings = list(SPECIALS)
        self.index = {s: i for i, s in enumerate(self.strings)}
        for s in strings:
            self.add(s)

    def add(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.strings)
            self.strings.append(s)
        return i

    def get(self, s: str) -> int:
        return self.index.get(s, UNK)

    def __len__(self):
        return len(self.strings)

    def user_strings(self) -> list:
        return self.strings[len(SPECIALS):]


@dataclass
class Tokens:
    """A corpus as flat per-token arrays (ids; -1 where an attribute is absent)."""

    sent_ptr: np.ndarray
    columns: dict
    word_ids: np.ndarray        # id in the training word vocabulary (UNK if unseen)

    @property
    def n_tokens(self) -> int:
        return int(self.sent_ptr[-1])

    def positions(self):
        """(position in sentence, sentence length) of every token (computed once)."""
        if getattr(self, "_positions", None) is None:
            lengths = np.diff(self.sent_ptr)
            length = np.repeat(lengths, lengths)
            position = np.arange(self.n_tokens) - np.repeat(self.sent_ptr[:-1], lengths)
            self._positions = (position, length)
        return self._positions


def spelling(word: str) -> tuple[list[str | None], tuple[bool, bool, bool]]:
    """Affixes (suffixes then prefixes of length 1..4) and (hyphen, upper, digit).

    An affix longer than the word is None: it would repeat the whole word,
    which is already the affix of the word's own length.
    """
    n = len(word)
    suffixes = [word[-k:] if k <= n else None for k in range(1, MAX_AFFIX + 1)]
    prefixes = [word[:k] if k <= n else None for k in range(1, MAX_AFFIX + 1)]
    upper = any("A" <= ch <= "Z" for ch in word)
    digit = any("0" <= ch <= "9" for ch in word)
    return suffixes + prefixes, ("-" in word, upper, digit)


def sentence_pointer(sentences) -> np.ndarray:
    lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
    if np.any(lengths == 0):
        raise InvalidInputError("empty sentence")
    return offsets(lengths)


def intern(flat_strings) -> tuple[np.ndarray, list]:
    """Local ids of a flat string list and the distinct strings in id order."""
    local: dict = {}
    ids = np.fromiter((local.setdefault(s, len(local)) for s in flat_strings), dtype=np.int64,
                      count=len(flat_strings))
    return ids, list(local)


class LabelledPredicates:
    """Sizes of a tagger's predicate index (``labels``, predicate ``keys``), as the beam decoder reads them."""

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_predicates(self) -> int:
        return len(self.keys)


class FeatureExtractor(LabelledPredicates):
    """Templates + vocabularies + kept predicates: a fitted predicate index.

    ``task`` is ``"pos"`` (input: words) or ``"chunk"`` (input: words and
    POS tags). ``rare_threshold``: words seen fewer times in training get
    spelling predicates (Ratnaparkhi's rule is 5; the default None gives them
    to every word, as OpenNLP does without a word dictionary: on CoNLL2000-P
    that tags 97.62% right against 97.32% with 5). ``cutoff``: a predicate must occur
    in at least that many training events to be kept (OpenNLP's default 5).
    ``count_repeated_affixes``: count affixes for the cut-off the way OpenNLP
    does (see :meth:`_counted_keys`); with it the statistics of Huang et al.
    (2010, Table 3) are reproduced.
    """

    def __init__(self, task: str = "pos", *, cutoff: int = 5, rare_threshold: int | None = None,
                 count_repeated_affixes: bool = True):
        if task not in TEMPLATE_SETS:
            raise InvalidInputError(f"task must be one of {sorted(TEMPLATE_SETS)}, got {task!r}")
        if int(cutoff) < 1 or (rare_threshold is not None and int(rare_threshold) < 0):
            raise InvalidInputError("cutoff must be >= 1 and rare_threshold >= 0 or None")
        self.task = task
        self.cutoff = int(cutoff)
        self.rare_threshold = None if rare_threshold is None else int(rare_threshold)
        self.count_repeated_affixes = bool(count_repeated_affixes)
        self.templates: tuple[Template, ...] = TEMPLATE_SETS[task]()
        self.groups = list(dict.fromkeys(t.group for t in self.templates))
        self.template_group = np.array([self.groups.index(t.group) for t in self.templates])
        self.uses_tags = any(a.column == "tag" for t in self.templates for a in t.atoms)
        self.words = Vocabulary()
        self.tags = Vocabulary()
        self.affixes = Vocabulary()
        self.labels: list = []
        self.rare = np.zeros(0, dtype=bool)
        self.keys = np.zeros(0, dtype=np.int64)
        self.group_ptr = np.zeros(len(self.groups) + 1, dtype=np.int64)
        self.dict_ptr = np.zeros(1, dtype=np.int64)
        self.dict_label = np.zeros(0, dtype=np.int32)

    # ------------------------------------------------------------ encoding
    def _radix(self, column: str) -> int:
        if column == "word":
            return len(self.words)
        if column == "tag":
            return len(self.tags)
        if column == "label":
            return self.n_labels + 1          # + the history's start symbol
        if column in AFFIX_COLUMNS:
            return len(self.affixes)
        return 1                              # flags: present (0) or absent

    def encode(self, words, tags=None, *, grow: bool = False) -> Tokens:
        """Flat token arrays of sentences (lists of words, with POS tags for chunking).

        ``grow`` adds unseen words, tags and affixes to the vocabularies
        (training); otherwise they map to the unknown symbol.
        """
        check_command_time("extracting features")
        sent_ptr = sentence_pointer(words)
        flat = [w for s in words for w in s]
        local_ids, types = intern(flat)
        check_command_time("extracting features")
        if grow:
            word_of_type = np.array([self.words.add(w) for w in types], dtype=np.int64)
            counts = np.bincount(word_of_type[local_ids], minlength=len(self.words))
            self.rare = np.ones(len(counts), bool) if self.rare_threshold is None else counts < self.rare_threshold
            self.rare[:len(SPECIALS)] = False
        else:
            word_of_type = np.array([self.words.get(w) for w in types], dtype=np.int64)
        rare_type = (word_of_type == UNK) | self.rare[np.minimum(word_of_type, len(self.rare) - 1)]
        n_affix = len(AFFIX_COLUMNS)
        spell = np.full((len(types), n_affix + len(FLAG_COLUMNS) + 2), -1, dtype=np.int64)
        lookup = self.affixes.add if grow else self.affixes.get
        for k, i in enumerate(np.flatnonzero(rare_type)):
            if k % 8192 == 0:
                check_command_time("extracting features")
            word = types[i]
            affixes, flags = spelling(word)
            spell[i, :n_affix] = [-1 if a is None else lookup(a) for a in affixes]
            spell[i, n_affix:-2] = [0 if f else -1 for f in flags]
            if len(word) < MAX_AFFIX:       # OpenNLP repeats the whole word as its longer affixes
                spell[i, -2:] = lookup(word), len(word)
        word_ids = word_of_type[local_ids]
        columns = {"word": word_ids}
        for c, name in enumerate(AFFIX_COLUMNS + FLAG_COLUMNS + ("whole", "short_length")):
            columns[name] = spell[local_ids, c]
        if self.uses_tags:
            if tags is None:
                raise InvalidInputError("chunking needs the POS tag of every word")
            if len(tags) != len(words) or any(len(a) != len(b) for a, b in zip(tags, words)):
                raise InvalidInputError("tags must have the same shape as words")
            tag_local, tag_types = intern([t for s in tags for t in s])
            add = self.tags.add if grow else self.tags.get
            columns["tag"] = np.array([add(t) for t in tag_types], dtype=np.int64)[tag_local]
        return Tokens(sent_ptr, columns, word_ids)

    def _atom_values(self, tokens: Tokens, atom, position, length, column=None):
        """Value of one atom at every token; boundary symbols / -1 outside the sentence."""
        col = tokens.columns[atom.column] if column is None else column
        if atom.offset == 0:
            return col
        rel = position + atom.offset
        out = np.full(tokens.n_tokens, -1, dtype=np.int64)
        inside = (rel >= 0) & (rel < length)
        idx = np.flatnonzero(inside)
        out[idx] = col[idx + atom.offset]
        bos = self.n_labels if atom.column == "label" else BOS
        out[(rel < 0) & (-rel <= atom.pad)] = bos
        out[(rel >= length) & (rel - length + 1 <= atom.pad)] = EOS
        return out

    def _codes(self, tokens: Tokens, atoms, position, length, column=None):
        """Mixed-radix code of ``atoms`` at every token (-1 where absent) and the radix product."""
        code = np.zeros(tokens.n_tokens, dtype=np.int64)
        absent = np.zeros(tokens.n_tokens, dtype=bool)
        radix = 1
        for atom in atoms:
            v = self._atom_values(tokens, atom, position, length, column)
            r = self._radix(atom.column)
            code = code * r + v
            absent |= v < 0
            radix *= r
        if radix >= KEY_LIMIT:
            raise InvalidInputError("vocabulary too large for 64-bit predicate keys")
        code[absent] = -1
        return code, radix

    def _template_keys(self, tokens: Tokens, template: Template, labels=None):
        """Keys of one template at every token; history atoms read ``labels``."""
        position, length = tokens.positions()
        static, radix = self._codes(tokens, template.static_atoms, position, length)
        if not template.history:
            return static
        if labels is None:
            raise InvalidInputError("history predicates need the label sequence")
        hist, hist_radix = self._codes(tokens, template.label_atoms, position, length, column=labels)
        if hist_radix * radix >= KEY_LIMIT:
            raise InvalidInputError("vocabulary too large for 64-bit predicate keys")
        keys = hist * radix + static
        keys[(hist < 0) | (static < 0)] = -1
        return keys

    def _lookup(self, group: int, keys):
        lo, hi = self.group_ptr[group], self.group_ptr[group + 1]
        kept = self.keys[lo:hi]
        if len(kept) == 0:
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(kept, keys), len(kept) - 1)
        return np.where((keys >= 0) & (kept[at] == keys), lo + at, -1)

    # ------------------------------------------------------------ training
    def fit(self, words, labels, tags=None, *, all_pairs: bool = False,
            sentence_weight=None) -> tuple[MaxentProblem, dict]:
        """Index the predicates of training sentences; return the Maxent problem and statistics.

        ``labels`` are the gold label sequences (POS tags or chunk tags).
        Features are the (predicate, label) pairs seen in training (OpenNLP,
        the papers), or with ``all_pairs`` every pair (a full multinomial
        model, K weights per predicate). ``sentence_weight``: positive weights, one per sentence, that
        multiply the counts of its tokens' events (the cut-off still counts occurrences).
        """
        tokens = self.encode(words, tags, grow=True)
        flat_labels = [y for s in labels for y in s]
        if len(flat_labels) != tokens.n_tokens:
            raise InvalidInputError("labels must have the same shape as words")
        label_local, label_types = intern(flat_labels)
        self.labels = sorted(label_types)
        if len(self.labels) < 2:
            raise DataContentError("need at least two distinct labels to train")
        rank = {y: i for i, y in enumerate(self.labels)}
        y = np.array([rank[t] for t in label_types], dtype=np.int64)[label_local]
        keys_by_template = []
        for t in self.templates:
            check_command_time("extracting features")
            keys_by_template.append(self._template_keys(tokens, t, y))
        counted = [self._counted_keys(tokens, t, k) for t, k in zip(self.templates, keys_by_template)]
        kept, ptr = [], [0]
        for g in range(len(self.groups)):
            check_command_time("extracting features")
            keys = np.concatenate([k for k, tg in zip(counted, self.template_group) if tg == g])
            uniq, counts = np.unique(keys[keys >= 0], return_counts=True)
            kept.append(uniq[counts >= self.cutoff])
            ptr.append(ptr[-1] + len(kept[-1]))
        self.keys = np.concatenate(kept)
        self.group_ptr = np.array(ptr, dtype=np.int64)
        self._names = None
        check_command_time("extracting features")
        pred = np.stack([self._lookup(g, k) for g, k in zip(self.template_group, keys_by_template)], axis=1)
        self._fit_tag_dictionary(tokens.word_ids, y)
        token_weight = None
        if sentence_weight is not None:
            token_weight = np.repeat(np.asarray(sentence_weight, dtype=np.float64), np.diff(tokens.sent_ptr))
        check_command_time("building the training problem")
        problem = self._problem(pred, y, all_pairs, token_weight)
        stats = {"tokens": tokens.n_tokens, "sentences": len(tokens.sent_ptr) - 1,
                 "distinct_events": len(problem.obs_label)}
        return problem, stats

    def _counted_keys(self, tokens: Tokens, template: Template, keys):
        """Keys as the cut-off counts them.

        With ``count_repeated_affixes`` (OpenNLP), a word shorter than 4
        letters lists itself as each of its longer affixes, and the cut-off
        counts every repetition (the context itself keeps one copy).
        """
        atoms = template.atoms
        if not self.count_repeated_affixes or len(atoms) != 1 or atoms[0].column not in AFFIX_COLUMNS:
            return keys
        k = int(atoms[0].column[3:])
        repeat = (keys < 0) & (tokens.columns["short_length"] >= 0) & (tokens.columns["short_length"] < k)
        return np.where(repeat, tokens.columns["whole"], keys)

    def _problem(self, pred, y, all_pairs=False, token_weight=None) -> MaxentProblem:
        """Merge identical contexts; predicate x label features seen in training (OpenNLP). ``token_weight``:
        each event's multiplier of its (context, label) count (None: 1)."""
        K = self.n_labels
        pred = pred.astype(np.int32 if self.n_predicates < 2 ** 31 else np.int64)
        first, ctx_of = _merge_rows(pred)
        U = pred[first]
        present = U >= 0
        ctx_ptr = offsets(present.sum(axis=1))
        ctx_pred = U[present].astype(index_dtype(self.n_predicates))
        pairs, pair_count = np.unique(ctx_of * K + y, return_counts=True)
        if token_weight is not None:            # weighted counts c(x, y); pairs is sorted
            pair_count = np.bincount(np.searchsorted(pairs, ctx_of * K + y), weights=token_weight,
                                     minlength=len(pairs))
        obs_ctx = pairs // K
        obs_label = (pairs % K).astype(np.int32)
        obs_ptr = offsets(np.bincount(obs_ctx, minlength=len(U)))
        ctx_count = np.bincount(obs_ctx, weights=pair_count, minlength=len(U))
        # (predicate, label) pairs seen in training: from the distinct (context, label) pairs
        lengths = np.diff(ctx_ptr)[obs_ctx]
        starts = np.repeat(ctx_ptr[obs_ctx], lengths)
        within = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        if all_pairs:
            seen = np.arange(self.n_predicates * K, dtype=np.int64)
        else:
            seen = _distinct(ctx_pred[starts + within].astype(np.int64) * K + np.repeat(obs_label, lengths),
                             self.n_predicates * K)
        map_pred = seen // K
        map_ptr = offsets(np.bincount(map_pred, minlength=self.n_predicates))
        n_features = len(seen)
        return MaxentProblem(
            ctx_ptr=ctx_ptr, ctx_pred=ctx_pred, ctx_val=None,
            map_ptr=map_ptr, map_label=(seen % K).astype(np.int32),
            map_feat=np.arange(n_features, dtype=index_dtype(n_features)),
            ctx_count=ctx_count.astype(np.float64), obs_ptr=obs_ptr, obs_label=obs_label,
            obs_count=pair_count.astype(np.float64), n_features=n_features,
            labels=np.array(self.labels), predicates=None)

    def _fit_tag_dictionary(self, word_ids, y):
        """Labels seen with each training word (for tag-dictionary decoding)."""
        K = self.n_labels
        pairs = np.unique(word_ids * K + y)
        self.dict_ptr = offsets(np.bincount(pairs // K, minlength=len(self.words)))
        self.dict_label = (pairs % K).astype(np.int32)

    # ------------------------------------------------------------ decoding
    def static_predicates(self, tokens: Tokens):
        """CSR (ptr, pred) of the predicates that do not depend on the label history."""
        cols = [self._lookup(g, self._template_keys(tokens, t))
                for t, g in zip(self.templates, self.template_group) if not t.history]
        pred = np.stack(cols, axis=1) if cols else np.full((tokens.n_tokens, 0), -1)
        present = pred >= 0
        ptr = offsets(present.sum(axis=1))
        return ptr, pred[present].astype(np.int64)

    def history_static_codes(self, tokens: Tokens) -> np.ndarray:
        """(tokens x history templates) codes of the non-history atoms of each history template."""
        position, length = tokens.positions()
        hist = [t for t in self.templates if t.history]
        out = np.empty((tokens.n_tokens, len(hist)), dtype=np.int64)
        for h, t in enumerate(hist):
            out[:, h] = self._codes(tokens, t.static_atoms, position, length)[0]
        return out

    def history_tables(self) -> dict:
        """Per history template: label offsets, pad, static radix and its key range."""
        hist = [(t, g) for t, g in zip(self.templates, self.template_group) if t.history]
        H = len(hist)
        offsets = np.zeros((H, 2), dtype=np.int64)
        n_atoms = np.zeros(H, dtype=np.int64)
        pad = np.zeros(H, dtype=np.int64)
        radix = np.ones(H, dtype=np.int64)
        lo = np.zeros(H, dtype=np.int64)
        hi = np.zeros(H, dtype=np.int64)
        for h, (t, g) in enumerate(hist):
            atoms = t.label_atoms
            if len(atoms) > 2 or len({a.pad for a in atoms}) != 1 or any(a.offset >= 0 for a in atoms):
                raise InvalidInputError(f"template {t.group}: history atoms must look back, share a pad, at most 2")
            n_atoms[h] = len(atoms)
            offsets[h, :len(atoms)] = [a.offset for a in atoms]
            pad[h] = atoms[0].pad
            for a in t.static_atoms:
                radix[h] *= self._radix(a.column)
            lo[h], hi[h] = self.group_ptr[g], self.group_ptr[g + 1]
        return {"offsets": offsets, "n_atoms": n_atoms, "pad": pad, "radix": radix, "lo": lo, "hi": hi}

    def token_dictionary_rows(self, tokens: Tokens) -> np.ndarray:
        """Row of the tag dictionary for each token, -1 for words unseen in training."""
        ids = tokens.word_ids
        return np.where(ids >= len(SPECIALS), ids, -1)

    # ------------------------------------------------------------ names
    def predicate_name(self, p: int) -> str:
        """OpenNLP-style string of predicate ``p``, e.g. ``p=the`` or ``t2=DT,NN``."""
        g = int(np.searchsorted(self.group_ptr, p, side="right") - 1)
        template = self.templates[int(np.argmax(self.template_group == g))]
        atoms = template.label_atoms + template.static_atoms
        key = int(self.keys[p])
        values = []
        for atom in reversed(atoms):
            key, v = divmod(key, self._radix(atom.column))
            if atom.column not in FLAG_COLUMNS:       # a flag predicate is just its name ("h")
                values.append(self._value_string(atom.column, v))
        return f"{template.group}={','.join(reversed(values))}" if values else template.group

    def _value_string(self, column, v):
        if column == "label":
            return "*BOS*" if v == self.n_labels else str(self.labels[v])
        if column == "word":
            return self.words.strings[v]
        if column == "tag":
            return self.tags.strings[v]
        return self.affixes.strings[v]

    def event_predicates(self, words, labels, tags=None) -> list[list[str]]:
        """Kept predicate names of every token, with ``labels`` as the history (for inspection)."""
        tokens = self.encode(words, tags)
        index = {y: i for i, y in enumerate(self.labels)}
        y = np.array([index[t] for s in labels for t in s], dtype=np.int64)
        pred = np.stack([self._lookup(g, self._template_keys(tokens, t, y))
                         for t, g in zip(self.templates, self.template_group)], axis=1)
        names = self.predicate_names()
        return [[names[p] for p in row if p >= 0] for row in pred.tolist()]

    def predicate_names(self) -> list[str]:
        """Names of all predicates, in id order (computed once per fitted index)."""
        if getattr(self, "_names", None) is None or len(self._names) != self.n_predicates:
            self._names = [self.predicate_name(p) for p in range(self.n_predicates)]
        return list(self._names)

    # ------------------------------------------------------------ persistence
    def state(self) -> tuple[dict, dict]:
        meta = {"task": self.task, "cutoff": self.cutoff, "rare_threshold": self.rare_threshold,
                "count_repeated_affixes": self.count_repeated_affixes,
                "labels": [str(y) for y in self.labels], "words": self.words.user_strings(),
                "tags": self.tags.user_strings(), "affixes": self.affixes.user_strings()}
        arrays = {"feat_keys": self.keys, "feat_group_ptr": self.group_ptr, "feat_rare": self.rare.astype(np.uint8),
                  "feat_dict_ptr": self.dict_ptr, "feat_dict_label": self.dict_label}
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict) -> "FeatureExtractor":
        """Rebuild a fitted extractor; raises InvalidInputError on inconsistent parts."""
        fx = cls(meta["task"], cutoff=meta["cutoff"], rare_threshold=meta["rare_threshold"],
                 count_repeated_affixes=meta.get("count_repeated_affixes", True))
        for name in ("labels", "words", "tags", "affixes"):
            if not isinstance(meta[name], list) or not all(isinstance(s, str) for s in meta[name]):
                raise InvalidInputError(f"vocabulary {name!r} must be a list of strings")
        fx.labels = list(meta["labels"])
        fx.words, fx.tags, fx.affixes = Vocabulary(meta["words"]), Vocabulary(meta["tags"]), Vocabulary(meta["affixes"])
        fx.keys = np.asarray(arrays["feat_keys"], dtype=np.int64)
        fx.group_ptr = np.asarray(arrays["feat_group_ptr"], dtype=np.int64)
        fx.rare = np.asarray(arrays["feat_rare"]).astype(bool)
        fx.dict_ptr = np.asarray(arrays["feat_dict_ptr"], dtype=np.int64)
        fx.dict_label = np.asarray(arrays["feat_dict_label"], dtype=np.int32)
        fx._check()
        return fx

    def _check(self):
        P, K, V = len(self.keys), self.n_labels, len(self.words)
        ok = (len(self.group_ptr) == len(self.groups) + 1 and self.group_ptr[0] == 0 and self.group_ptr[-1] == P
              and np.all(np.diff(self.group_ptr) >= 0) and len(self.rare) == V and K >= 2
              and len(self.dict_ptr) == V + 1 and self.dict_ptr[0] == 0 and self.dict_ptr[-1] == len(self.dict_label)
              and np.all(np.diff(self.dict_ptr) >= 0)
              and (len(self.dict_label) == 0 or (self.dict_label.min() >= 0 and self.dict_label.max() < K))
              and (P == 0 or self.keys.min() >= 0))
        if ok:
            for g in range(len(self.groups)):
                if not strictly_increasing(self.keys[self.group_ptr[g]:self.group_ptr[g + 1]]):
                    ok = False
        if not ok:
            raise InvalidInputError("inconsistent feature index")


def _distinct(values, bound: int) -> np.ndarray:
    """Sorted distinct values of a non-negative int array below ``bound`` (a bitmap when small)."""
    if bound <= 1 << 28:
        mark = np.zeros(bound, dtype=bool)
        mark[values] = True
        return np.flatnonzero(mark)
    return np.unique(values)


def _merge_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First occurrence of each distinct row and the distinct-row index of every row.

    Rows are hashed to one int64 each and the hashes made unique; a hash
    collision (checked exactly) falls back to comparing whole rows.
    """
    mixed = np.zeros(len(rows), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for c in range(rows.shape[1]):
            mixed = (mixed ^ (rows[:, c].astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15))) \
                * np.uint64(0xBF58476D1CE4E5B9)
            mixed ^= mixed >> np.uint64(31)
    _, first, inverse = np.unique(mixed, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    if np.array_equal(rows[first[inverse]], rows):
        return first, inverse
    view = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1])))[:, 0]
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    return first, inverse.ravel()
