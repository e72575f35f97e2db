"""Predicate templates of the Maxent POS tagger and chunker.

A *template* names a kind of contextual predicate and the token attributes
(*atoms*) whose values make it up; at token i of a sentence an atom reads one
column at position i + offset. Instantiating a template at a token gives one
predicate, e.g. template ``p`` (previous word) gives ``p=the``.

Positions outside the sentence: up to ``pad`` steps beyond an edge an atom
reads the boundary symbol (``*BOS*`` before the start, ``*EOS*`` after the
end); further out the template does not fire at that token. This reproduces
both OpenNLP context generators: the POS tagger writes ``p=*SB*`` at the
first word but no ``t=`` predicate at all (pad 1 for words, 0 for tags), the
chunker fills its whole +-2 window with ``bos``/``eos`` (pad 2).

Columns:

* ``word``, ``tag``: the input words and (for chunking) their POS tags;
* ``label``: the *previous predictions* of the model (tag history); they are
  gold labels in training and are recomputed from each hypothesis when
  decoding, so only negative offsets make sense;
* ``suf1``..``suf4``, ``pre1``..``pre4``, ``hyphen``, ``upper``, ``digit``:
  spelling attributes of the current word, present only for rare words
  (Ratnaparkhi 1996, section 3).

Templates with the same ``group`` share their predicates: ``suf1``..``suf4``
all produce ``suf=<string>``, so a predicate ``suf=ing`` counts once whatever
suffix length produced it (OpenNLP works on predicate strings).
"""
from __future__ import annotations

from dataclasses import dataclass

SPELLING_COLUMNS = ("suf1", "suf2", "suf3", "suf4", "pre1", "pre2", "pre3", "pre4", "hyphen", "upper", "digit")
AFFIX_COLUMNS = SPELLING_COLUMNS[:8]
FLAG_COLUMNS = SPELLING_COLUMNS[8:]
MAX_AFFIX = 4


@dataclass(frozen=True)
class Atom:
    column: str
    offset: int = 0
    pad: int = 0


@dataclass(frozen=True)
class Template:
    group: str
    atoms: tuple[Atom, ...] = ()

    @property
    def history(self) -> bool:
        """True when the predicate depends on previous predictions."""
        return any(a.column == "label" for a in self.atoms)

    @property
    def label_atoms(self) -> tuple[Atom, ...]:
        return tuple(a for a in self.atoms if a.column == "label")

    @property
    def static_atoms(self) -> tuple[Atom, ...]:
        return tuple(a for a in self.atoms if a.column != "label")


_CHUNK_LETTER = {"word": "w", "tag": "t", "label": "p"}


def _t(group, *atoms):
    return Template(group, tuple(atoms))


def pos_templates() -> tuple[Template, ...]:
    """Ratnaparkhi (1996, Table 1) as OpenNLP's DefaultPOSContextGenerator writes it.

    ``default`` (a bias), the word ``w``, for rare words its prefixes and
    suffixes of length 1-4 and the hyphen / upper case / digit flags; the
    words at -2..+2 (``pp p n nn``) and the previous tag ``t`` and tag pair
    ``t2``.
    """
    W, L = "word", "label"
    return (
        _t("default"),
        _t("w", Atom(W, 0)),
        *(_t("suf", Atom(f"suf{k}", 0)) for k in range(1, MAX_AFFIX + 1)),
        *(_t("pre", Atom(f"pre{k}", 0)) for k in range(1, MAX_AFFIX + 1)),
        _t("h", Atom("hyphen", 0)),
        _t("c", Atom("upper", 0)),
        _t("d", Atom("digit", 0)),
        _t("p", Atom(W, -1, 1)),
        _t("t", Atom(L, -1, 0)),
        _t("pp", Atom(W, -2, 1)),
        _t("t2", Atom(L, -2, 0), Atom(L, -1, 0)),
        _t("n", Atom(W, 1, 1)),
        _t("nn", Atom(W, 2, 1)),
    )


def chunk_templates() -> tuple[Template, ...]:
    """The 41 predicates of OpenNLP's DefaultChunkerContextGenerator.

    Words w and POS tags t at -2..+2 with word bigrams around the current
    word and tag bi-/trigrams; the previous two chunk labels p; and the
    previous label conjoined with each tag and word n-gram. Every position of
    the +-2 window is filled (``bos``/``eos`` outside the sentence).
    """
    names = {-2: "_2", -1: "_1", 0: "0", 1: "1", 2: "2"}

    def w(o):
        return Atom("word", o, 2)

    def t(o):
        return Atom("tag", o, 2)

    def p(o):
        return Atom("label", o, 2)

    def name(atoms):
        return "".join(_CHUNK_LETTER[a.column] + names[a.offset] for a in atoms)

    word_grams = [(w(-2),), (w(-1),), (w(0),), (w(1),), (w(2),), (w(-1), w(0)), (w(0), w(1))]
    tag_grams = [(t(-2),), (t(-1),), (t(0),), (t(1),), (t(2),),
                 (t(-2), t(-1)), (t(-1), t(0)), (t(0), t(1)), (t(1), t(2)),
                 (t(-2), t(-1), t(0)), (t(-1), t(0), t(1)), (t(0), t(1), t(2))]
    label_grams = [(p(-2),), (p(-1),), (p(-2), p(-1))]
    grams = (word_grams + tag_grams + label_grams
             + [(p(-1),) + g for g in tag_grams] + [(p(-1),) + g for g in word_grams])
    return tuple(_t(name(g), *g) for g in grams)


TEMPLATE_SETS = {"pos": pos_templates, "chunk": chunk_templates}
