"""OpenNLP-style event files: one event per line, ``label pred1 pred2=0.5 ...``.

Tokens are separated by ASCII whitespace (:func:`~loglin.data._files.fields`). The first token is the
outcome label, every other token a predicate (context feature):

* ``name`` — a binary predicate, value 1.0;
* ``name=value`` — a real-valued predicate, **only** when the text after the
  *last* ``=`` is a decimal number (``0.5``, ``-2``, ``1e-3``) and ``name`` is
  not empty. Otherwise the whole token is the name: ``w=foo``, ``a=b=c`` and
  ``=3`` are names with value 1.0. ``nan``/``inf`` after ``=`` are read as
  values and rejected, since a model cannot use them.

Blank lines are skipped; a label alone on its line is an event with an empty
context. Files are UTF-8; ``.gz``, ``.bz2`` and ``.xz`` are decompressed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..errors import DataFormatError, InvalidInputError
from ._files import PathLike, fields, open_text_for_write, read_text_lines, show, takes_encoding

# Same spelling as OpenNLP's Float.parseFloat minus hex and type suffixes; the
# non-finite spellings are included so that they are reported, not silently
# turned into predicate names.
_NUMBER_RE = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.I)


@dataclass
class Events:
    """A list of training events.

    ``labels[i]`` is the outcome of event ``i``, ``contexts[i]`` its predicate
    names and, for real-valued data, ``values[i][k]`` the value of
    ``contexts[i][k]``. ``values`` is ``None`` when every value is 1.0
    (binary data), which lets trainers use cheaper binary-feature code.
    """

    labels: list[str]
    contexts: list[list[str]]
    values: list[list[float]] | None = None

    def __post_init__(self):
        if len(self.contexts) != len(self.labels):
            raise InvalidInputError(f"{len(self.labels)} labels but {len(self.contexts)} contexts")
        if self.values is not None:
            if len(self.values) != len(self.labels):
                raise InvalidInputError(f"{len(self.labels)} labels but {len(self.values)} value lists")
            for i, (names, vals) in enumerate(zip(self.contexts, self.values)):
                if len(names) != len(vals):
                    raise InvalidInputError(f"event {i}: {len(names)} predicates but {len(vals)} values")

    def __len__(self) -> int:
        return len(self.labels)


@takes_encoding
def read_events(path: PathLike) -> Events:
    """Read an event file (format in the module docstring) into :class:`Events`."""
    return events_from_lines(read_text_lines(path), path)


def events_from_lines(lines, path: PathLike) -> Events:
    """:class:`Events` of decoded text ``lines`` (``path`` names them in errors): a shard's lines."""
    labels: list[str] = []
    contexts: list[list[str]] = []
    values: list[list[float]] = []
    real_valued = False
    for lineno, line in enumerate(lines, 1):
        tokens = fields(line)
        if not tokens:
            continue
        names: list[str] = []
        vals: list[float] = []
        for token in tokens[1:]:
            name, value = _split_predicate(token)
            if value is None:
                value = 1.0
            elif not math.isfinite(value):
                raise DataFormatError(path, lineno, f"expected a finite predicate value, got {show(token)}")
            elif value != 1.0:
                real_valued = True
            names.append(name)
            vals.append(value)
        labels.append(tokens[0])
        contexts.append(names)
        values.append(vals)
    return Events(labels, contexts, values if real_valued else None)


def _split_predicate(token: str) -> tuple[str, float | None]:
    """Apply the ``name=value`` rule; value None means "plain name"."""
    name, eq, value = token.rpartition("=")
    if eq and name and _NUMBER_RE.fullmatch(value):
        return name, float(value)
    return token, None


def write_events(path: PathLike, events: Events) -> None:
    """Write ``events`` so that :func:`read_events` gives them back unchanged.

    A predicate is written as ``name=value`` when its value is not 1.0, and
    also when a plain ``name`` would itself read back as ``name=value`` (e.g. a
    predicate named ``"x=2"`` is written ``x=2=1``).
    """
    values = events.values
    with open_text_for_write(path) as out:
        for i, (label, names) in enumerate(zip(events.labels, events.contexts)):
            _check_token(label, f"event {i}: label")
            fields = [label]
            for k, name in enumerate(names):
                _check_token(name, f"event {i}: predicate")
                value = 1.0 if values is None else float(values[i][k])
                if not math.isfinite(value):
                    raise InvalidInputError(f"event {i}: predicate {name!r} has non-finite value {value}")
                if value != 1.0 or _split_predicate(name)[1] is not None:
                    fields.append(f"{name}={value!r}")
                else:
                    fields.append(name)
            out.write(" ".join(fields) + "\n")


def _check_token(text: str, what: str) -> None:
    if not isinstance(text, str) or fields(text) != [text]:
        raise InvalidInputError(f"{what} {text!r} must be a non-empty string without whitespace")
