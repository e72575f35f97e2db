"""Column-per-token corpora: CoNLL-2000 chunking and CoNLL-X / CoNLL-U dependencies.

All of them put one token per line and a blank line between sentences. Line
numbers are kept while parsing so that every error can name its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataFormatError, InvalidInputError
from ..signals import check_command_time
from ._files import (WHITESPACE, PathLike, fields as split_fields, open_text_for_write, read_text_lines, show,
                     takes_encoding)

_IOB_RE = re.compile(r"O|[BI]-\S+")
_MULTIWORD_RE = re.compile(r"\d+-\d+")   # CoNLL-U multiword token range, e.g. "3-4"
_EMPTY_NODE_RE = re.compile(r"\d+\.\d+")  # CoNLL-U empty node, e.g. "5.1"
_UINT_RE = re.compile(r"\d+")

_Block = list[tuple[int, str]]  # (line number, line text) of one sentence
CHECK_EVERY_LINES = 8192        # lines between two looks at the command's time limit


def _blocks(path: PathLike, skip: Callable[[str], bool], lines=None) -> Iterator[_Block]:
    """Yield the token lines of each blank-line separated sentence, with line numbers.

    Lines for which ``skip`` is true are dropped without ending the sentence;
    runs of blank lines and a missing final blank line are both fine. ``lines``: the
    decoded lines when already read (a shard's part of the file), else ``path`` is read.
    """
    block: _Block = []
    for lineno, line in enumerate(read_text_lines(path) if lines is None else lines, 1):
        if lineno % CHECK_EVERY_LINES == 0:
            check_command_time(f"reading {path}")
        if not line.strip() and not line.strip(WHITESPACE):     # is_blank (the second test only on blank-looking lines)
            if block:
                yield block
                block = []
        elif not skip(line):
            block.append((lineno, line))
    if block:
        yield block


def is_docstart(line: str) -> bool:
    """A CoNLL-2002/2003 document line (``-DOCSTART- -X- -X- O``): no token; the readers skip it."""
    return line.startswith("-DOCSTART-")


def _read_columns_numbered(path: PathLike, n_columns: int | None, lines=None) -> list[list[tuple[int, tuple[str, ...]]]]:
    sentences = []
    for block in _blocks(path, is_docstart, lines):
        sentence = []
        for lineno, line in block:
            fields = tuple(line.split() if line.isascii() else split_fields(line))   # split_fields' fast path
            if n_columns is None:
                n_columns = len(fields)  # fixed by the first token line of the file
            elif len(fields) != n_columns:
                raise DataFormatError(path, lineno, f"expected {n_columns} columns, got {len(fields)}")
            sentence.append((lineno, fields))
        sentences.append(sentence)
    return sentences


@takes_encoding
def read_columns(path: PathLike, n_columns: int | None = None) -> list[list[tuple[str, ...]]]:
    """Read whitespace-separated columns, one token per line, sentences separated by blank lines.

    Every token line must have ``n_columns`` columns (default: as many as the
    first token line). ``-DOCSTART-`` lines are skipped. Returns a list of
    sentences, each a list of per-token tuples of strings.
    """
    if n_columns is not None and (not isinstance(n_columns, int) or n_columns < 1):
        raise InvalidInputError(f"n_columns must be a positive integer, got {n_columns!r}")
    return [[fields for _, fields in sentence] for sentence in _read_columns_numbered(path, n_columns)]


def columns_from_lines(lines, path: PathLike) -> list[list[tuple[str, ...]]]:
    """:func:`read_columns` of decoded ``lines`` (``path`` names them in errors)."""
    return [[fields for _, fields in sentence] for sentence in _read_columns_numbered(path, None, lines)]


@takes_encoding
def read_conll2000(path: PathLike) -> list[list[tuple[str, str, str]]]:
    """Read a ``word POS chunk`` file (CoNLL-2000 chunking; also CoNLL-2002-style NER).

    The third column must be an IOB tag: ``O``, ``B-X`` or ``I-X``.
    """
    return conll2000_from_lines(None, path)


def conll2000_from_lines(lines, path: PathLike) -> list[list[tuple[str, str, str]]]:
    """:func:`read_conll2000` of decoded ``lines`` (None: read ``path``, which names them in errors)."""
    sentences = _read_columns_numbered(path, 3, lines)
    for sentence in sentences:
        for lineno, fields in sentence:
            if not _IOB_RE.fullmatch(fields[2]):
                raise DataFormatError(path, lineno, f"expected an IOB tag 'O', 'B-X' or 'I-X', got {show(fields[2])} "
                                                      "(other tags, e.g. IOBES: read_columns, --format columns)")
    return [[fields for _, fields in sentence] for sentence in sentences]


@dataclass
class Sentence:
    """One dependency-annotated sentence; token ``i`` (0-based) has id ``i + 1``.

    ``heads[i]`` is the id of token ``i``'s head, 0 for the root.
    """

    ids: np.ndarray          # int32, 1..n
    forms: list[str]
    lemmas: list[str]
    cpos: list[str]          # CoNLL-X CPOSTAG / CoNLL-U UPOS
    pos: list[str]           # CoNLL-X POSTAG / CoNLL-U XPOS (UPOS when XPOS is "_")
    feats: list[str]
    heads: np.ndarray        # int32
    deprels: list[str]

    def __len__(self) -> int:
        return len(self.forms)


@takes_encoding
def read_conllx(path: PathLike, heads_required: bool = True, partial_heads: bool = False) -> list[Sentence]:
    """Read a CoNLL-X or CoNLL-U dependency file.

    Lines have 10 columns, split on tabs when the line has any (CoNLL-U forms
    may contain spaces), else on whitespace; stray spaces around fields are
    stripped. CoNLL-U ``#`` comments, multiword-token lines (``3-4``) and
    empty nodes (``5.1``) are skipped. Token ids must run 1, 2, ..., n and
    every head must be an integer in [0, n]. ``heads_required=False`` (text to be
    parsed) also accepts HEAD ``_`` on every token of a sentence; its heads are then -1.
    ``partial_heads`` (heads given as constraints) accepts ``_`` on any tokens (-1) and
    leaves the given ones unchecked for cycles (the constrained decoder reports them).
    """
    return conllx_from_lines(None, path, heads_required, partial_heads)


def conllx_from_lines(lines, path: PathLike, heads_required: bool = True,
                      partial_heads: bool = False) -> list[Sentence]:
    """:func:`read_conllx` of decoded ``lines`` (None: read ``path``, which names them in errors)."""
    return [_parse_sentence(path, block, heads_required, partial_heads)
            for block in _blocks(path, lambda line: line.startswith("#"), lines)]


def _check_acyclic(path, heads: list[int], lines: list[int]) -> None:
    """DataFormatError at the first word whose head chain never reaches the root (0)."""
    state = [0] * (len(heads) + 1)           # 0: unvisited, 1: on the current chain, 2: reaches the root
    state[0] = 2
    for start in range(1, len(heads) + 1):
        chain, m = [], start
        while state[m] == 0:
            state[m] = 1
            chain.append(m)
            m = heads[m - 1]
        if state[m] == 1:
            raise DataFormatError(path, lines[m - 1], f"expected a tree, but the heads form a cycle through "
                                                      f"token {m}")
        for k in chain:
            state[k] = 2


def _parse_sentence(path: PathLike, block: _Block, heads_required: bool = True,
                    partial_heads: bool = False) -> Sentence:
    rows: list[list[str]] = []
    head_lines: list[int] = []
    for lineno, line in block:
        if line.isascii():              # str.strip / str.split: the same as at ASCII whitespace, and faster
            fields = [field.strip() for field in (line.strip().split("\t") if "\t" in line else line.split())]
        else:
            fields = [field.strip(WHITESPACE) for field in
                      (line.strip(WHITESPACE).split("\t") if "\t" in line else split_fields(line))]
        if len(fields) != 10:
            raise DataFormatError(path, lineno, f"expected 10 columns, got {len(fields)}")
        if "" in fields:
            raise DataFormatError(path, lineno, f"expected a value in column {fields.index('') + 1} ('_' if none), got an empty field")
        token_id = fields[0]
        if _MULTIWORD_RE.fullmatch(token_id) or _EMPTY_NODE_RE.fullmatch(token_id):
            continue  # CoNLL-U extras: not nodes of the basic tree
        if token_id != str(len(rows) + 1):
            raise DataFormatError(path, lineno, f"expected token id {len(rows) + 1}, got {show(token_id)}")
        if not (_UINT_RE.fullmatch(fields[6]) or (fields[6] == "_" and not heads_required)):
            raise DataFormatError(path, lineno, f"expected an integer head, got {show(fields[6])}")
        rows.append(fields)
        head_lines.append(lineno)
    if not rows:  # only multiword/empty-node lines
        raise DataFormatError(path, block[0][0], "expected at least one token line with an integer id")
    n = len(rows)
    missing = [fields[6] == "_" for fields in rows]
    if any(missing) and not all(missing) and not partial_heads:
        bad = missing.index(not missing[0])
        raise DataFormatError(path, head_lines[bad], "expected HEAD '_' on every token of the sentence or on none")
    # checked as Python ints before any array: a HEAD of 2**40 is an error, not an overflow
    values = [-1 if gap else int(fields[6]) for gap, fields in zip(missing, rows)]
    for value, lineno in zip(values, head_lines):
        if value > n:
            raise DataFormatError(path, lineno, f"expected a head in [0, {n}], got {value}")
    if not any(missing) and not partial_heads:
        _check_acyclic(path, values, head_lines)
    heads = np.array(values, dtype=np.int32)
    columns = list(zip(*rows))
    upos, xpos = columns[3], columns[4]
    return Sentence(
        ids=np.arange(1, n + 1, dtype=np.int32),
        forms=list(columns[1]),
        lemmas=list(columns[2]),
        cpos=list(upos),
        pos=[x if x != "_" else u for u, x in zip(upos, xpos)],
        feats=list(columns[5]),
        heads=heads,
        deprels=list(columns[7]),
    )


def write_conllx(path: PathLike, sentences: Sequence[Sentence],
                 heads: Sequence[Sequence[int]] | None = None,
                 deprels: Sequence[Sequence[str]] | None = None) -> None:
    """Write ``sentences`` as 10-column, tab-separated CoNLL-X.

    ``heads`` / ``deprels`` (one sequence per sentence), when given, replace
    the gold ones, e.g. to write a parser's predictions. PHEAD and PDEPREL are
    written as ``_``; empty fields are written as ``_``.
    """
    for name, override in (("heads", heads), ("deprels", deprels)):
        if override is not None and len(override) != len(sentences):
            raise InvalidInputError(f"{len(sentences)} sentences but {len(override)} {name}")
    with open_text_for_write(path) as out:
        for s, sentence in enumerate(sentences):
            n = len(sentence)
            sent_heads = sentence.heads if heads is None else heads[s]
            sent_rels = sentence.deprels if deprels is None else deprels[s]
            if len(sent_heads) != n or len(sent_rels) != n:
                raise InvalidInputError(f"sentence {s}: {n} tokens but {len(sent_heads)} heads and {len(sent_rels)} deprels")
            for i in range(n):
                head = int(sent_heads[i])
                if not 0 <= head <= n:
                    raise InvalidInputError(f"sentence {s}, token {i + 1}: head {head} outside [0, {n}]")
                fields = [sentence.forms[i], sentence.lemmas[i], sentence.cpos[i], sentence.pos[i],
                          sentence.feats[i], str(head), sent_rels[i], "_", "_"]
                out.write(f"{i + 1}\t" + "\t".join(_field(f, s, i) for f in fields) + "\n")
            out.write("\n")


def _field(text: str, s: int, i: int) -> str:
    text = str(text).strip()
    if "\t" in text or "\n" in text or "\r" in text:
        raise InvalidInputError(f"sentence {s}, token {i + 1}: field {text!r} contains a tab or newline")
    return text or "_"


def is_projective(heads) -> bool:
    """True when no two arcs cross, the artificial root being position 0.

    ``heads[i]`` is the head (0 = root) of token ``i + 1``. Arcs (a, b) and
    (c, d), written with a < b and c < d, cross when a < c < b < d. This is an
    O(n^2) all-pairs check, vectorized; it does not check that heads form a tree.
    """
    heads = np.asarray(heads)
    if heads.ndim != 1:
        raise InvalidInputError(f"heads must be 1-D, got shape {heads.shape}")
    n = heads.shape[0]
    if n == 0:
        return True
    if not np.issubdtype(heads.dtype, np.integer):
        raise InvalidInputError(f"heads must be integers, got dtype {heads.dtype}")
    if heads.min() < 0 or heads.max() > n:
        raise InvalidInputError(f"heads must lie in [0, {n}]")
    dependents = np.arange(1, n + 1)
    lo, hi = np.minimum(heads, dependents), np.maximum(heads, dependents)
    crossing = (lo[:, None] < lo[None, :]) & (lo[None, :] < hi[:, None]) & (hi[:, None] < hi[None, :])
    return not crossing.any()
