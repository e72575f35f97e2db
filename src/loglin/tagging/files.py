"""The files of ``loglin tag``: gold corpora and tagging input read, predictions and n-best lists written.

Input is CoNLL columns (one token a line, word first) or plain tokenized text, one sentence a line; CoNLL
input is written back with the prediction appended as a last column, text as ``word/LABEL``.
"""
from __future__ import annotations

import math
from pathlib import Path

from ..errors import InvalidInputError


def read_gold(path, fmt: str, task: str, split: str | None = None) -> list:
    """Gold sentences as token tuples: (word, tag) for POS, (word, pos, chunk) for chunking.

    ``split`` ("train" / "test", Brown folders only): the papers' fixed-seed
    4/5 of the files, or the other 1/5 (:func:`~loglin.tagging.datasets.brown_split_files`).
    """
    from ..data import brown_corpus_files, read_brown, read_columns, read_conll2000
    if split is not None and (fmt != "brown" or not Path(path).is_dir()):
        raise InvalidInputError("--split needs --format brown and a corpus folder")
    if fmt != "brown":
        refuse_foreign_corpus(path)
    if task == "ner":
        if fmt == "brown":
            raise InvalidInputError("the Brown corpus has POS tags only (use --task pos)")
        sentences = read_columns(path)          # word, other columns, label last; -DOCSTART- skipped
        if sentences and len(sentences[0][0]) < 2:
            raise InvalidInputError(f"{path}: ner needs a word and a label column, found 1 column")
        return sentences
    if fmt == "brown":
        if task != "pos":
            raise InvalidInputError("the Brown corpus has POS tags only (use --task pos)")
        if split is not None:
            from .datasets import brown_split_files
            by_name = {f.name: f for f in brown_corpus_files(path)}
            chosen = brown_split_files(by_name)[0 if split == "train" else 1]
            return read_brown([by_name[n] for n in chosen], simplify_tags=True)
        return read_brown(path, simplify_tags=True)
    sentences = read_conll2000(path) if fmt == "conll2000" else read_columns(path)
    need = 2 if task == "pos" else 3
    if sentences and len(sentences[0][0]) < need:
        raise InvalidInputError(f"{path}: {task} needs {need} columns, found {len(sentences[0][0])}")
    return [[t[:need] for t in s] for s in sentences]


def refuse_foreign_corpus(path) -> None:
    """One error naming ``path`` when the tagging corpus is a file of another format (CoNLL-U, svmlight), which
    would read as columns and be learnt (decision 0050). Reads the file's head only: `tag train --workers` checks
    it before its cluster starts, whose workers read the data themselves."""
    from ..data._files import read_head_lines
    from ..data.sniff import refuse_foreign_format
    refuse_foreign_format(path, read_head_lines(path), "a tagging corpus is CoNLL columns (word [POS ...] label, a "
                          "blank line between sentences)", INSTEAD_OF_TAGGING_CORPUS)


def detect_format(path, lines, task: str, labels) -> str:
    """'conll' or 'text' for ``--input-format auto``, decided on evidence, never on line widths alone. A -DOCSTART-
    line (CoNLL-2002/2003) is CoNLL, and so are wide columns with blank-line sentence breaks
    (:func:`~loglin.data.sniff.token_columns`). Otherwise CoNLL columns need a constant width and either a gold
    column whose values are all labels of the model (:func:`_label_column`; two lines or more at widths >= 4,
    where one line is as likely a line of text) or, at width <= 3, blank lines between sentences; "I love you"
    lines stay text."""
    from ..data._files import fields, is_blank
    from ..data.sniff import MIN_COLUMNS, token_columns
    if any(line.startswith("-DOCSTART-") for line in lines) or token_columns(lines):
        return "conll"
    rows = [fields(line) for line in lines if not is_blank(line)]
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        return "text"
    width = widths.pop()
    gold = _label_column(task, width)
    if (gold is not None and (width < MIN_COLUMNS or len(rows) >= 2)
            and _all_labels([r[gold] for r in rows], labels)):
        return "conll"
    if width > (1 if task == "pos" else 2):             # wide enough for a gold column, whose values are not labels
        return "text"
    blank = any(is_blank(line) for line in lines)
    if blank or (width == 1 and len(rows) > 1):
        return "conll"
    return "text"


def _label_column(task, width):
    """The column a labelled file carries the model's labels in: POS second, chunk third, NER last (None: the
    rows are too narrow to carry one)."""
    gold = {"pos": 1, "chunk": 2}.get(task, width - 1)
    return gold if 1 <= gold < width else None


def _all_labels(values, labels) -> bool:
    """Whether the column's values are all labels of the model and not all punctuation: a POS model knows ".",
    which ends many lines of text."""
    known = set(str(y) for y in labels)
    return all(v in known for v in values) and any(any(c.isalnum() for c in v) for v in values)


def read_input(path, fmt: str, task: str, labels=()):
    """(token tuples for MaxentTaggerModel.tag, raw lines to echo, 'conll' or 'text', the echo plan: per input
    line what :func:`write_output` writes in its place, see :func:`echo_plan`)."""
    from ..data._files import fields, is_blank, read_text_lines
    from ..data.conll import columns_from_lines
    from ..data.sniff import refuse_foreign_format
    lines = read_text_lines(path)
    refuse_foreign_format(path, lines, "a tagging model reads CoNLL columns (word [POS] ...) or one sentence "
                          "per line", INSTEAD_OF_TAGGING)
    if fmt == "auto":
        fmt = detect_format(path, lines, task, labels)
    if fmt == "conll":
        sentences = columns_from_lines(lines, path)
        plan = echo_plan(lines)
        need = 1 if task in ("pos", "ner") else 2
        if sentences and len(sentences[0][0]) < need:
            raise InvalidInputError(f"{path}: chunking needs the POS tag in the second column")
        if task == "ner":
            return [list(s) for s in sentences], sentences, "conll", plan   # the templates read what they need
        return [[t if task == "chunk" else t[0] for t in s] for s in sentences], sentences, "conll", plan
    sentences = [fields(line) for line in lines if not is_blank(line)]
    plan = [None if not is_blank(line) else "" for line in lines]          # a blank line stays one
    if task == "chunk":
        pairs = []
        for k, s in enumerate(sentences):
            row = [tok.rpartition("/") for tok in s]
            if any(not (w and sep and pos) for w, sep, pos in row):
                raise InvalidInputError(f"{path}: sentence {k + 1}: chunking input tokens must be word/POS "
                                        "(for CoNLL columns give --input-format conll)")
            pairs.append([(w, pos) for w, _, pos in row])
        return pairs, sentences, "text", plan
    return sentences, sentences, "text", plan


DOCUMENT_LABEL = "O"        # the label column of an echoed -DOCSTART- line


def echo_plan(lines) -> list:
    """Per line of CoNLL input: None where a token line is (its tagged row goes there), else the text that stands
    for the line in the output: "" for a blank line, and a ``-DOCSTART-`` line (skipped by the readers, as
    CoNLL-2002/2003 put one before each document) echoed with ``O`` appended as its prediction, so that the
    output lines up with the input line for line (``paste``) and every non-blank line has the same number of
    columns, as conlleval requires (``-DOCSTART- -X- -X- O O``); ``O`` is no chunk, so the line changes no
    chunk score (docs/decisions/0063)."""
    from ..data._files import fields, is_blank
    from ..data.conll import is_docstart
    plan = []
    for line in lines:
        if is_blank(line):
            plan.append("")
        elif is_docstart(line):
            plan.append(" ".join(fields(line)) + f" {DOCUMENT_LABEL}")
        else:
            plan.append(None)
    return plan


INSTEAD_OF_TAGGING = {"CoNLL-U": "give its FORM column, one token per line and a blank line between sentences "
                                 "(no comment, range or empty-node lines)",
                      "svmlight": "predict it with a model trained by `loglin train`"}


INSTEAD_OF_TAGGING_CORPUS = {"CoNLL-U": "train a parser on it with `loglin parse train`, or give its FORM and a label "
                                        "column, one token per line",
                             "svmlight": "train and evaluate it with `loglin train` / `loglin evaluate`"}


FREE_LABELS = ("_", "?", "")      # --keep-labels: a label column holding one of these leaves the token free


def given_labels(rows, column: int):
    """Per sentence, per token: the label in ``column`` of the CoNLL rows, or None where free (_, ?)."""
    return [[row[column] if row[column] not in FREE_LABELS else None for row in s] for s in rows]


def need_columns(fmt, rows, width, path):
    """--keep-labels reads a label column: CoNLL input whose rows have at least ``width`` columns (no sentence
    at all: nothing to keep, empty output)."""
    if fmt != "conll" and rows:
        raise InvalidInputError("--keep-labels needs CoNLL column input (--input-format conll)")
    for k, s in enumerate(rows):
        if any(len(row) < width for row in s):
            raise InvalidInputError(f"{path}: sentence {k + 1}: --keep-labels needs a label column (column "
                                    f"{width}; _ or ? leaves a token free)")


def write_n_best(out, raw, lists, fmt, probability, plan=None):
    """The n-best lists of every sentence; CoNLL input's ``-DOCSTART-`` lines (``plan``, :func:`echo_plan`) are
    written once, each as a block of its own, where they stood between the sentences."""
    before = _documents_before(raw, plan) if fmt == "conll" and plan is not None else None
    for k, (tokens, candidates) in enumerate(zip(raw, lists)):
        if before is not None:
            out.write("".join(line + "\n\n" for line in before[k]))
        for rank, (labels, score) in enumerate(candidates):
            out.write(f"# {rank} {math.exp(score) if probability else score:.6g}\n")
            write_output(out, [tokens], [labels], fmt)
        if fmt != "conll":
            out.write("\n")
    if before is not None:
        out.write("".join(line + "\n\n" for line in before[len(raw)]))


def _documents_before(raw, plan):
    """Per sentence the echoed -DOCSTART- lines of ``plan`` before its first token (the last list: after every
    sentence)."""
    from bisect import bisect_left
    from itertools import accumulate
    first = list(accumulate((len(s) for s in raw[:-1]), initial=0))     # each sentence's first token
    before = [[] for _ in range(len(raw) + 1)]
    seen = 0
    for entry in plan:
        if entry is None:
            seen += 1
        elif entry:
            before[bisect_left(first, seen)].append(entry)
    return before


def write_output(out, raw, predicted, fmt, plan=None):
    """The tagged sentences: CoNLL rows with the label appended (a blank line after each sentence), text as
    ``word/LABEL`` (a sentence a line). ``plan`` (:func:`echo_plan`, from the input): one output line per input
    line instead, blank and ``-DOCSTART-`` lines where the input had them."""
    if plan is None:
        out.write("".join(line + "\n" for line in _rows(raw, predicted, fmt, sentence_break=True)))
        return
    rows = iter(_rows(raw, predicted, fmt))
    out.write("".join((next(rows) if entry is None else entry) + "\n" for entry in plan))


def _rows(raw, predicted, fmt, sentence_break=False):
    """The output line of every token (CoNLL; ``sentence_break``: a blank line after each sentence) or
    sentence (text)."""
    for tokens, labels in zip(raw, predicted):
        if fmt != "conll":
            yield " ".join(f"{tok}/{y}" for tok, y in zip(tokens, labels))
            continue
        yield from (" ".join(tok) + f" {y}" for tok, y in zip(tokens, labels))
        if sentence_break:
            yield ""


def other_split(split):
    return {"train": "test", "test": "train"}.get(split)
