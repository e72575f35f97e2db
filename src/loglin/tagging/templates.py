"""Feature templates of chain taggers: a declarative set, a tiny text format, presets, and the compiler.

A *template* names token observables at offsets from the current token and
makes one attribute per token from their values, CRFsuite-style::

    w[-1]|w[0]        ->  "w[-1]|w[0]=He|reckons"
    suffix3[0]        ->  "suffix3[0]=ons"
    cap[0]            ->  "cap[0]"                (a flag: present or absent)
    __BOS__ / __EOS__ ->  at the first / last token;  bias  ->  at every token

A template gives no attribute at a token when a member position is outside
the sentence or a member has no value there (a prefix longer than the word,
a false flag). The attribute name is the template's text (or its alias,
``ALIAS = items``), then ``=`` and the values joined by ``|``.

Text format: one template per line, ``#`` starts a comment, blank lines are
ignored; ``w[-2..2]`` on its own expands to ``w[-2]``, ..., ``w[2]``.

Observables (:data:`OBSERVABLES`): ``w`` the word (column 0), ``pos`` column 1,
``c2``, ``c3``, ... further columns; of the word: ``lw`` lower case, ``shape``
(X x d per character, others kept: ``Xxxx-dd``), ``cshape`` (runs collapsed:
``Xx-d``), ``prefixN`` / ``suffixN`` (N = 1..9, the first / last N characters
of a word longer than N), and the flags ``cap`` (first character upper case),
``capstart`` / ``capmid`` (cap at / after the sentence's first token),
``allcap``, ``digit`` (has one), ``alldigit``, ``hyphen``, ``punct`` (only
punctuation characters).

The compiler (:class:`CompiledTemplates`) turns a corpus into the CSR
attribute arrays of a ChainProblem without building a string per token:
each observable's values get integer codes, a template's key at every token
is the mixed-radix number of its members' (shifted) codes, and the distinct
keys per template are the attribute ids (NumPy throughout). Attribute names
are only spelled out for the vocabulary. docs/decisions/0020 has the design
and its speed.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path

import numpy as np

from ..csr import offsets
from ..errors import DataFormatError, InvalidInputError, ModelFormatError
from ..limits import MAX_TEMPLATE_RANGE
from ..signals import check_command_time

SPECIALS = ("bias", "__BOS__", "__EOS__")
MAX_AFFIX = 9
FLAGS = ("cap", "capstart", "capmid", "allcap", "digit", "alldigit", "hyphen", "punct")
_ITEM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[\s*([+-]?\d+)\s*(?:\.\.\s*([+-]?\d+)\s*)?\]")


def _shape(word: str) -> str:
    return "".join("X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch for ch in word)


def _collapse(shape: str) -> str:
    return "".join(ch for i, ch in enumerate(shape) if i == 0 or ch != shape[i - 1])


def _is_punct(word: str) -> bool:
    return bool(word) and all(unicodedata.category(ch).startswith("P") for ch in word)


def _flag(test):
    return lambda words, starts: ["1" if test(w, s) else None for w, s in zip(words, starts)]


def _of_word(f):
    return lambda words, starts: [f(w) for w in words]


# observable -> (input column, f(column values, is-sentence-start flags) -> values, None = no value)
_WORD_FUNCTIONS = {
    "lw": _of_word(str.lower),
    "shape": _of_word(_shape),
    "cshape": _of_word(lambda w: _collapse(_shape(w))),
    "cap": _flag(lambda w, s: w[:1].isupper()),
    "capstart": _flag(lambda w, s: s and w[:1].isupper()),
    "capmid": _flag(lambda w, s: not s and w[:1].isupper()),
    "allcap": _flag(lambda w, s: w.isupper()),
    "digit": _flag(lambda w, s: any(ch.isdigit() for ch in w)),
    "alldigit": _flag(lambda w, s: w.isdigit()),
    "hyphen": _flag(lambda w, s: "-" in w),
    "punct": _flag(lambda w, s: _is_punct(w)),
}
for _n in range(1, MAX_AFFIX + 1):
    _WORD_FUNCTIONS[f"prefix{_n}"] = _of_word(lambda w, n=_n: w[:n] if len(w) > n else None)
    _WORD_FUNCTIONS[f"suffix{_n}"] = _of_word(lambda w, n=_n: w[-n:] if len(w) > n else None)
OBSERVABLES = ("w", "pos", "cN") + tuple(_WORD_FUNCTIONS)


def _column_of(name: str):
    """(input column, function or None) of an observable name; None if unknown."""
    if name == "w":
        return 0, None
    if name == "pos":
        return 1, None
    if re.fullmatch(r"c[1-9]\d*", name):
        return int(name[1:]), None
    if name in _WORD_FUNCTIONS:
        return 0, _WORD_FUNCTIONS[name]
    return None


@dataclass(frozen=True)
class Template:
    """Observables at offsets (``items``: ((name, offset), ...)) or a special (bias, __BOS__, __EOS__)."""

    items: tuple = ()
    special: str | None = None
    alias: str | None = None

    def __post_init__(self):
        if (self.special is None) == (not self.items):
            if self.special is None:
                raise InvalidInputError("a template needs at least one item or a special name")
            raise InvalidInputError("a special template has no items")
        if self.special is not None and self.special not in SPECIALS:
            raise InvalidInputError(f"unknown special template {self.special!r}; specials: {', '.join(SPECIALS)}")
        for name, offset in self.items:
            if _column_of(name) is None:
                raise InvalidInputError(f"unknown observable {name!r}; known: {', '.join(OBSERVABLES)}")
            if not isinstance(offset, (int, np.integer)):
                raise InvalidInputError(f"offset of {name!r} must be an integer, got {offset!r}")

    @property
    def text(self) -> str:
        """The template's own text (without alias): ``w[-1]|w[0]``."""
        return self.special or "|".join(f"{n}[{o}]" for n, o in self.items)

    @property
    def prefix(self) -> str:
        """What an attribute name starts with."""
        return self.alias or self.text

    @property
    def is_flag(self) -> bool:
        """Only flags (or a special): the attribute name carries no value."""
        return self.special is not None or all(n in FLAGS for n, _ in self.items)

    def line(self) -> str:
        return f"{self.alias} = {self.text}" if self.alias else self.text

    @classmethod
    def parse(cls, text: str) -> list:
        """The templates of one line (a range like ``w[-2..2]`` gives several)."""
        alias = None
        body = text.strip()
        if "=" in body:
            alias, body = (part.strip() for part in body.split("=", 1))
            if not alias or any(ch.isspace() for ch in alias):
                raise InvalidInputError(f"alias {alias!r} must be one word")
        if body in SPECIALS:
            return [cls(special=body, alias=alias)]
        items, ranged = [], None
        for part in body.split("|"):
            m = _ITEM.fullmatch(part.strip())
            if m is None:
                raise InvalidInputError(f"cannot read {part.strip()!r}: expected NAME[OFFSET] (e.g. w[-1], "
                                        f"suffix3[0]), NAME[A..B] alone, or one of {', '.join(SPECIALS)}")
            name, a, b = m.group(1), int(m.group(2)), m.group(3)
            if b is not None:
                ranged = (name, a, int(b))
            items.append((name, a))
        if ranged is not None:
            name, a, b = ranged
            if len(items) > 1 or alias is not None:
                raise InvalidInputError("a range NAME[A..B] must stand alone on its line, without alias")
            if b < a:
                raise InvalidInputError(f"empty range {name}[{a}..{b}]")
            if b - a + 1 > MAX_TEMPLATE_RANGE:     # expanded one template per offset
                raise InvalidInputError(f"range {name}[{a}..{b}] gives {b - a + 1:,} templates, more than the "
                                        f"{MAX_TEMPLATE_RANGE:,} allowed")
            return [cls(items=((name, k),)) for k in range(a, b + 1)]
        return [cls(items=tuple(items), alias=alias)]


class TemplateSet:
    """An ordered list of templates (attribute order within a token follows it)."""

    def __init__(self, templates=()):
        out = []
        for t in templates:
            out.extend(Template.parse(t) if isinstance(t, str) else [t])
        if not out:
            raise InvalidInputError("a template set needs at least one template")
        if any(not isinstance(t, Template) for t in out):
            raise InvalidInputError("templates must be Template objects or template strings")
        prefixes = [t.prefix for t in out]
        dup = sorted({p for p in prefixes if prefixes.count(p) > 1})
        if dup:
            raise InvalidInputError(f"templates repeated (their attributes would collide): {', '.join(dup)}")
        self.templates = tuple(out)

    def __iter__(self):
        return iter(self.templates)

    def __len__(self):
        return len(self.templates)

    def __eq__(self, other):
        return isinstance(other, TemplateSet) and self.templates == other.templates

    def __repr__(self):
        return f"TemplateSet({[t.line() for t in self.templates]!r})"

    def text(self) -> str:
        """The set in the text format (what a model file stores)."""
        return "".join(t.line() + "\n" for t in self.templates)

    @classmethod
    def from_text(cls, text: str, source: str = "<templates>") -> "TemplateSet":
        """Read the text format; an error names ``source`` and the line."""
        templates = []
        for lineno, raw in enumerate(text.splitlines(), 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                templates.extend(Template.parse(line))
            except InvalidInputError as exc:
                raise DataFormatError(source, lineno, str(exc)) from None
        if not templates:
            raise DataFormatError(source, None, "no templates")
        try:
            return cls(templates)
        except InvalidInputError as exc:
            raise DataFormatError(source, None, str(exc)) from None

    @classmethod
    def from_file(cls, path) -> "TemplateSet":
        from ..data._files import read_text_lines
        if not Path(path).is_file():
            raise InvalidInputError(f"{path}: no such template file")
        return cls.from_text("".join(line if line.endswith("\n") else line + "\n" for line in read_text_lines(path)),
                             str(path))


PRESETS = {
    # CRFsuite's chunking example, attribute for attribute; loglin-chain files of task chunk use it
    "chunk": """
        w[-2..2]
        w[-1]|w[0]
        w[0]|w[1]
        pos[-2..2]
        pos[-2]|pos[-1]
        pos[-1]|pos[0]
        pos[0]|pos[1]
        pos[1]|pos[2]
        pos[-2]|pos[-1]|pos[0]
        pos[-1]|pos[0]|pos[1]
        pos[0]|pos[1]|pos[2]
        __BOS__
        __EOS__
    """,
    # the CRF POS tagger's attributes (loglin-chain files of task pos)
    "pos": """
        bias
        w = w[0]
        lw = lw[0]
        w[-2] = lw[-2]
        w[-1] = lw[-1]
        w[1] = lw[1]
        w[2] = lw[2]
        suf1 = suffix1[0]
        pre1 = prefix1[0]
        suf2 = suffix2[0]
        pre2 = prefix2[0]
        suf3 = suffix3[0]
        pre3 = prefix3[0]
        digit = digit[0]
        hyphen = hyphen[0]
        upper = capmid[0]
        upper0 = capstart[0]
        __BOS__
        __EOS__
    """,
    # language-independent named entities: spelling and shape only, no gazetteer
    "ner": """
        bias
        w[0]
        lw[-2..2]
        shape[0]
        cshape[-2..2]
        cshape[-1]|cshape[0]
        cshape[0]|cshape[1]
        lw[-1]|lw[0]
        lw[0]|lw[1]
        prefix1[0]
        prefix2[0]
        prefix3[0]
        prefix4[0]
        suffix1[0]
        suffix2[0]
        suffix3[0]
        suffix4[0]
        cap[0]
        capstart[0]
        allcap[0]
        digit[0]
        alldigit[0]
        hyphen[0]
        punct[0]
        cap[-1]|cap[0]
        cap[0]|cap[1]
        __BOS__
        __EOS__
    """,
}


def template_set(features) -> TemplateSet:
    """A TemplateSet from a preset name, a template file, a TemplateSet or a list of template strings."""
    if isinstance(features, TemplateSet):
        return features
    if isinstance(features, str):
        if features in PRESETS:
            return TemplateSet.from_text(PRESETS[features], f"<preset {features}>")
        if Path(features).is_file():
            return TemplateSet.from_file(features)
        raise InvalidInputError(f"features must be a preset ({', '.join(PRESETS)}), a template file, a "
                                f"TemplateSet or a list of templates; got {features!r} (no such file)")
    if isinstance(features, Path):
        return TemplateSet.from_file(features)
    if isinstance(features, (list, tuple)):
        return TemplateSet(features)
    raise InvalidInputError(f"features must be a preset name, a file, a TemplateSet or a list, got "
                            f"{type(features).__name__}")


# ====================================================================== compiler

def token_columns(token):
    """The columns of one token: a string is (word,); a dict needs 'word' and may give 'pos'."""
    if isinstance(token, str):
        return (token,)
    if isinstance(token, dict):
        if "word" not in token:
            raise InvalidInputError(f"a token dict needs a 'word' key, got {sorted(token)[:8]} (sentences of "
                                    f"per-token feature dicts, as sklearn-crfsuite takes them: loglin.crfsuite.CRF)")
        return (token["word"], token["pos"]) if "pos" in token else (token["word"],)
    return tuple(token)


def _distinct_pairs(column, at_start):
    """(values, is-start flags) of the distinct (value, sentence start) pairs of a column in the order first
    seen, and each token's pair number."""
    seen = {}
    value_id = np.fromiter((seen.setdefault(v, len(seen)) for v in column), dtype=np.int64, count=len(column))
    pair = value_id * 2 + at_start
    unique, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    values = list(seen)
    ordered = unique[order]
    return [values[i] for i in (ordered >> 1).tolist()], (ordered & 1).astype(bool).tolist(), rank[inverse]


class CompiledTemplates:
    """A template set with the vocabularies and attribute keys of one training corpus.

    ``fit(sentences)`` builds them and returns the CSR attribute arrays
    (seq_ptr, tok_ptr, tok_attr); ``transform(sentences)`` encodes new
    sentences with them (attributes unseen in training dropped).
    """

    def __init__(self, templates: TemplateSet):
        self.templates = template_set(templates)
        self.observables = list(dict.fromkeys(n for t in self.templates for n, _ in t.items))
        self.vocab = {name: {} for name in self.observables}
        self.keys = None            # per template: sorted int64 keys seen in training
        self.offsets = None         # per template: id of its first attribute

    @property
    def n_attributes(self) -> int:
        return int(self.offsets[-1]) if self.offsets is not None else 0

    def _columns(self, sentences):
        """Flat token data: columns needed, position in sentence, sentence length."""
        seq_ptr = np.zeros(len(sentences) + 1, dtype=np.int64)
        rows = []
        for s, sentence in enumerate(sentences):
            if isinstance(sentence, (str, dict)):
                raise InvalidInputError(f"sentence {s} must be a list of tokens, got {type(sentence).__name__}")
            if len(sentence) == 0:
                raise InvalidInputError(f"sentence {s} is empty")
            rows.extend(map(token_columns, sentence))
            seq_ptr[s + 1] = len(rows)
        lengths = np.diff(seq_ptr)
        tlen = np.repeat(lengths, lengths)
        tpos = np.arange(len(rows), dtype=np.int64) - np.repeat(seq_ptr[:-1], lengths)
        needed = {_column_of(n)[0] for n in self.observables}
        columns = {}
        for k in sorted(needed):
            try:
                columns[k] = [str(r[k]) for r in rows]
            except IndexError:
                bad = next(i for i, r in enumerate(rows) if len(r) <= k)
                s = int(np.searchsorted(seq_ptr, bad, side="right") - 1)
                raise InvalidInputError(f"sentence {s}: the templates read column {k} "
                                        f"({'pos' if k == 1 else f'c{k}'}), but token {rows[bad]!r} has "
                                        f"{len(rows[bad])} column(s)") from None
        return seq_ptr, columns, tpos, tlen

    def _codes(self, columns, tpos, grow):
        """Each observable's code at every token, -1 for no value. Values are made and looked up once per
        distinct (column value, sentence start) pair, the pairs taken in the order first seen, so each
        vocabulary grows in the order its values are first seen in the corpus."""
        out, distinct = {}, {}
        for name in self.observables:
            k, f = _column_of(name)
            if k not in distinct:
                distinct[k] = _distinct_pairs(columns[k], tpos == 0)
            words, starts, token_pair = distinct[k]
            values = words if f is None else f(words, starts)
            vocab = self.vocab[name]
            if grow:
                codes = [-1 if v is None else vocab.setdefault(v, len(vocab)) for v in values]
            else:
                codes = list(map(vocab.get, values, repeat(-1)))
            out[name] = np.asarray(codes, dtype=np.int64)[token_pair]
        return out

    def _template_keys(self, template, codes, tpos, tlen):
        """int64 key of ``template`` at every token, -1 where it gives no attribute."""
        if template.special is not None:
            valid = {"bias": np.ones(len(tpos), dtype=bool), "__BOS__": tpos == 0,
                     "__EOS__": tpos == tlen - 1}[template.special]
            return np.where(valid, 0, -1).astype(np.int64)
        n = len(tpos)
        key = np.zeros(n, dtype=np.int64)
        valid = np.ones(n, dtype=bool)
        radix = 1
        for name, offset in template.items:
            size = max(len(self.vocab[name]), 1)
            radix *= size
            if radix >= 2 ** 62:
                raise InvalidInputError(f"template {template.text!r} has too many value combinations for "
                                        "64-bit keys; split it")
            at = tpos + offset
            ok = (at >= 0) & (at < tlen)
            src = np.where(ok, np.arange(n) + offset, 0)
            c = np.where(ok, codes[name][src], -1)
            valid &= c >= 0
            key = key * size + np.maximum(c, 0)
        return np.where(valid, key, -1)

    def _encode(self, sentences, grow):
        check_command_time("extracting features")
        seq_ptr, columns, tpos, tlen = self._columns(sentences)
        check_command_time("extracting features")
        codes = self._codes(columns, tpos, grow)
        T = len(self.templates)
        ids = np.full((len(tpos), T), -1, dtype=np.int64)
        if grow:
            self.keys, self.offsets = [], np.zeros(T + 1, dtype=np.int64)
        for j, template in enumerate(self.templates):
            check_command_time("extracting features")
            key = self._template_keys(template, codes, tpos, tlen)
            seen = key >= 0
            if grow:
                self.keys.append(np.unique(key[seen]))
                self.offsets[j + 1] = self.offsets[j] + len(self.keys[j])
            known = self.keys[j]
            at = np.searchsorted(known, key)
            hit = seen & (at < len(known))
            hit[hit] = known[at[hit]] == key[hit]
            ids[hit, j] = self.offsets[j] + at[hit]
        present = ids >= 0
        tok_ptr = offsets(present.sum(axis=1))
        return seq_ptr, tok_ptr, ids[present].astype(np.int32)

    def fit(self, sentences):
        """(seq_ptr, tok_ptr, tok_attr) of training sentences; builds the vocabularies and attribute ids."""
        self.vocab = {name: {} for name in self.observables}
        return self._encode(list(sentences), grow=True)

    def transform(self, sentences):
        """(seq_ptr, tok_ptr, tok_attr) of new sentences; attributes unseen in training are dropped."""
        if self.keys is None:
            raise InvalidInputError("the templates are not compiled yet: call fit first")
        return self._encode(list(sentences), grow=False)

    def attribute_names(self) -> list:
        """Name of every attribute id (as CRFsuite would spell the attribute)."""
        inverse = {name: list(v) for name, v in self.vocab.items()}       # dicts keep insertion = code order
        names = []
        for template, keys in zip(self.templates, self.keys):
            if template.special is not None:
                names.extend([template.prefix] * len(keys))
                continue
            sizes = [max(len(self.vocab[n]), 1) for n, _ in template.items]
            digits, rest = [], keys.copy()
            for size in reversed(sizes):
                digits.append(rest % size)
                rest //= size
            digits.reverse()
            if template.is_flag:
                names.extend([template.prefix] * len(keys))
                continue
            columns = [[inverse[n][c] for c in d.tolist()] for (n, _), d in zip(template.items, digits)]
            head = template.prefix + "="
            names.extend(head + "|".join(values) for values in zip(*columns))
        return names

    def token_attribute_names(self, sentences) -> list:
        """Per sentence, per token: attribute names, in template order (for inspection and tests)."""
        names = self.attribute_names()
        seq_ptr, tok_ptr, attr = self.transform(sentences)
        return [[[names[a] for a in attr[tok_ptr[t]:tok_ptr[t + 1]]] for t in range(seq_ptr[s], seq_ptr[s + 1])]
                for s in range(len(seq_ptr) - 1)]

    # ------------------------------------------------------------------ files (data only)
    def state(self):
        """(JSON metadata, arrays) that :meth:`from_state` restores."""
        meta = {"templates": self.templates.text(), "observables": self.observables}
        arrays = {f"vocab_{i}": np.asarray(list(self.vocab[n]), dtype=str) for i, n in enumerate(self.observables)}
        arrays["template_keys"] = np.concatenate(self.keys) if self.keys else np.zeros(0, dtype=np.int64)
        arrays["template_offsets"] = self.offsets
        return meta, arrays

    @classmethod
    def from_state(cls, meta, arrays, source="<model>"):
        try:
            compiled = cls(TemplateSet.from_text(meta["templates"], f"{source} (templates)"))
            if compiled.observables != list(meta["observables"]):
                raise ModelFormatError(f"{source}: template observables do not match")
            for i, name in enumerate(compiled.observables):
                values = arrays[f"vocab_{i}"].astype(str).tolist()
                compiled.vocab[name] = {v: k for k, v in enumerate(values)}
                if len(compiled.vocab[name]) != len(values):
                    raise ModelFormatError(f"{source}: repeated values in a template vocabulary")
            offsets = arrays["template_offsets"].astype(np.int64)
            keys = arrays["template_keys"].astype(np.int64)
            if (offsets.ndim != 1 or len(offsets) != len(compiled.templates) + 1 or offsets[0] != 0
                    or np.any(np.diff(offsets) < 0) or offsets[-1] != len(keys)):
                raise ModelFormatError(f"{source}: inconsistent template keys")
            compiled.offsets = offsets
            compiled.keys = [keys[offsets[j]:offsets[j + 1]] for j in range(len(compiled.templates))]
            if any(np.any(np.diff(k) <= 0) for k in compiled.keys):
                raise ModelFormatError(f"{source}: template keys are not sorted")
        except (KeyError, TypeError, ValueError, InvalidInputError) as exc:
            if isinstance(exc, ModelFormatError):
                raise
            raise ModelFormatError(f"{source}: invalid templates ({exc.__class__.__name__}: {exc})") from None
        return compiled
