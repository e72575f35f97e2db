"""Recognising a file of another format before a reader takes it as plain text.

A tagger reads one sentence per line, so any text file "works": an svmlight file or a CoNLL-U treebank
would be tagged token by token and give garbage without a word of warning. The test is strict (every
content line of the file's head must have the other format's shape), so ordinary text is never refused.
:func:`token_columns` recognises wide CoNLL token columns (CoNLL-2003) that have no ``-DOCSTART-`` line.
"""
from __future__ import annotations

import re

from ..errors import DataFormatError
from ._files import fields, is_blank

HEAD_LINES = 200                        # content lines looked at: the decision never reads the whole file

_CONLLU_ID = re.compile(r"[0-9]+([-.][0-9]+)?")           # 3, a multiword range 1-2, an empty node 8.1
_SVMLIGHT_PAIR = re.compile(r"(qid|[0-9]+):[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _conllu_row(line: str) -> bool:
    """A CoNLL-U / CoNLL-X token line as :func:`~loglin.data.conll.read_conllx` reads it: 10 fields, split at tabs
    when the line has one, else at spaces (CoNLL-X files written with spaces, which a tagger would otherwise
    read as columns whose word is the token's ID)."""
    line = line.rstrip("\r")
    columns = line.split("\t") if "\t" in line else fields(line)
    return len(columns) == 10 and _CONLLU_ID.fullmatch(columns[0].strip()) is not None


def _svmlight_row(line: str) -> bool:
    tokens = fields(line.split("#", 1)[0])
    return (len(tokens) >= 2 and all(_is_number(y) for y in tokens[0].split(","))
            and all(_SVMLIGHT_PAIR.fullmatch(t) for t in tokens[1:]))


def foreign_format(lines) -> str | None:
    """'CoNLL-U' or 'svmlight' when every content line of the head has that shape, else None."""
    content = [line for line in lines if not is_blank(line) and not line.lstrip().startswith("#")][:HEAD_LINES]
    if not content:
        return None
    if all(_conllu_row(line) for line in content):
        return "CoNLL-U"
    if all(_svmlight_row(line) for line in content):
        return "svmlight"
    return None


MIN_COLUMNS = 4                 # narrower files are told from text by other evidence (the model's labels)


def token_columns(lines) -> bool:
    """Whether the lines are CoNLL token columns without a ``-DOCSTART-`` line (e.g. CoNLL-2003's word POS
    chunk NE): every content line of the head has the same number (>= MIN_COLUMNS) of whitespace-separated fields, blank
    lines separate the sentences, and the sentences have two lines or more on average. Text written one
    sentence a line never passes: its lines differ in width, or it has no blank lines, or its blank lines
    separate single lines (double spacing)."""
    widths, sentences, content, in_sentence = set(), 0, 0, False
    for line in lines:
        if is_blank(line):
            in_sentence = False
            continue
        sentences += not in_sentence
        in_sentence = True
        content += 1
        widths.add(len(fields(line)))
        if len(widths) > 1:
            return False
        if content >= HEAD_LINES:
            break
    return (len(widths) == 1 and widths.pop() >= MIN_COLUMNS and sentences >= 2
            and content >= 2 * sentences)


def refuse_foreign_format(path, lines, reads: str, instead: dict) -> None:
    """Raise :class:`DataFormatError` naming ``path`` if its lines are in a format the command does not read.
    ``reads``: what the command reads; ``instead``: per format, the command that takes it."""
    found = foreign_format(lines)
    if found is not None:
        what = {"CoNLL-U": "a CoNLL-U / CoNLL-X treebank (10 columns, an ID first)",
                "svmlight": "an svmlight / LIBSVM file (label index:value ...)"}[found]
        raise DataFormatError(path, None, f"this looks like {what}, but {reads}; {instead[found]}")


__all__ = ["foreign_format", "refuse_foreign_format", "token_columns"]
