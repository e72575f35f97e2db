"""The Brown corpus in its NLTK distribution: files ``ca01`` ... ``cr09`` of ``word/tag`` tokens.

Each non-blank line is one sentence (lines start with a tab; blank lines
separate most sentences but not all, e.g. a headline is often followed
directly by the next sentence), so sentences are split on lines, as NLTK does.
This gives the corpus's 57,340 sentences and 1,161,192 tokens.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ..errors import DataFormatError
from ._files import PathLike, fields, read_text_lines, show, takes_encoding

_CORPUS_FILE_RE = re.compile(r"c[a-r]\d\d")
# Tag modifiers dropped by Huang et al. (2010) and Yu et al. (2011): foreign
# word, title, cited (emphasised) word, headline.
_MODIFIERS = frozenset({"fw", "tl", "nc", "hl"})

TaggedSentence = list[tuple[str, str]]


def simplify_brown_tag(tag: str) -> str:
    """Drop the modifiers ``fw``, ``tl``, ``nc`` and ``hl`` from a Brown tag.

    The tag is split on ``-`` and those components removed: ``np-tl`` ->
    ``np``, ``fw-nn-tl`` -> ``nn``, ``np$-tl`` -> ``np$``. Other parts are kept
    as they are, including the negation mark (``bez*``) and contractions
    (``ppss+ber``). A tag made only of dashes is the dash punctuation tag
    (``--``) and is returned unchanged; ``---hl`` (a headline dash) becomes
    ``--``, because its leading components are the empty strings around the
    dashes. A tag made only of modifiers is returned unchanged.
    """
    if not tag.strip("-"):
        return tag
    parts = tag.split("-")
    kept = [part for part in parts if part not in _MODIFIERS]
    if len(kept) == len(parts):
        return tag
    return "-".join(kept) or tag


def brown_corpus_files(directory: PathLike) -> list[Path]:
    """The corpus files of ``directory`` (names ``c[a-r]NN``), sorted by name.

    Other files of the NLTK distribution (``cats.txt``, ``CONTENTS``,
    ``README``) are ignored.
    """
    directory = Path(directory)
    files = sorted(p for p in directory.iterdir() if _CORPUS_FILE_RE.fullmatch(p.name) and p.is_file())
    if not files:
        raise DataFormatError(directory, None, "expected Brown corpus files named like 'ca01' in this directory")
    return files


def read_brown_files(directory: PathLike, simplify_tags: bool = False) -> dict[str, list[TaggedSentence]]:
    """Read every corpus file of ``directory``: ``{file name: sentences}`` in sorted order.

    Experiments split the Brown corpus by article, i.e. by file, which is
    why the grouping is kept here.
    """
    return {path.name: _read_file(path, simplify_tags) for path in brown_corpus_files(directory)}


@takes_encoding
def read_brown(paths_or_dir: PathLike | Iterable[PathLike], simplify_tags: bool = False) -> list[TaggedSentence]:
    """Read Brown sentences as lists of ``(word, tag)`` pairs.

    ``paths_or_dir`` is a corpus directory (its ``c[a-r]NN`` files are read in
    sorted order), a single file, or an iterable of files (read in the order
    given). With ``simplify_tags``, tags go through :func:`simplify_brown_tag`.
    """
    if isinstance(paths_or_dir, (str, os.PathLike)):
        path = Path(paths_or_dir)
        paths = brown_corpus_files(path) if path.is_dir() else [path]
    else:
        paths = [Path(p) for p in paths_or_dir]
    sentences: list[TaggedSentence] = []
    for path in paths:
        sentences.extend(_read_file(path, simplify_tags))
    return sentences


def _read_file(path: Path, simplify_tags: bool) -> list[TaggedSentence]:
    sentences = []
    simplified: dict[str, str] = {}  # ~500 distinct tags: cache instead of re-splitting 1M times
    for lineno, line in enumerate(read_text_lines(path), 1):
        tokens = fields(line)
        if not tokens:
            continue
        sentence = []
        for token in tokens:
            # Split on the last "/": words may contain slashes ("1/2/cd").
            word, slash, tag = token.rpartition("/")
            if not (slash and word and tag):
                raise DataFormatError(path, lineno, f"expected a 'word/tag' token, got {show(token)}")
            if simplify_tags:
                tag = simplified.get(tag) or simplified.setdefault(tag, simplify_brown_tag(tag))
            sentence.append((word, tag))
        sentences.append(sentence)
    return sentences
