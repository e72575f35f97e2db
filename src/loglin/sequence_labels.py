"""Label sequences of any plain type for the sequence estimators: str, int or bool labels in, the same out.

The trainers and model files work with string labels; a scikit-learn user may label tokens with ints (tag
ids) or bools and expects them back from ``predict`` and in ``classes_``. The labels are mapped to strings
on the way in and back on the way out; a model file records the type by name, never as a pickled object.
"""
from __future__ import annotations

import numbers

import numpy as np

from .errors import ModelFormatError

LABEL_TYPES = ("str", "int", "bool")


def _kind_of(label) -> str | None:
    if isinstance(label, (str, np.str_)):
        return "str"
    if isinstance(label, (bool, np.bool_)):
        return "bool"
    if isinstance(label, numbers.Integral):
        return "int"
    return None


def labels_as_strings(y, what: str) -> tuple[list[list[str]], str]:
    """(y's label sequences as lists of str, the labels' type: 'str', 'int' or 'bool'); a ValueError naming
    the first label of another type (floats, tuples, None ...) or of a type other than the first label's."""
    out, kind = [], None
    for i, labels in enumerate(y):
        strings = []
        for j, label in enumerate(labels):
            this = _kind_of(label)
            if this is None:
                raise ValueError(f"{what}: labels must be str, int or bool; sentence {i}, token {j} has "
                                 f"{label!r} ({type(label).__name__})")
            if kind is None:
                kind = this
            elif this != kind:
                raise ValueError(f"{what}: labels must all have one type; sentence {i}, token {j} has {label!r} "
                                 f"({type(label).__name__}) after {kind} labels")
            strings.append(label_to_string(label, this))
        out.append(strings)
    return out, kind or "str"


def label_to_string(label, kind: str) -> str:
    """One label of type ``kind`` as :func:`labels_as_strings` writes it (for constraints given at predict time)."""
    if kind == "int" and _kind_of(label) == "int":
        return str(int(label))
    if kind == "bool" and _kind_of(label) == "bool":
        return str(bool(label))
    return str(label)


def constraints_as_strings(constraints, kind: str):
    """Per-sentence constraints (None, or per token None / a label / a set of labels) with string labels."""
    if kind == "str" or constraints is None:
        return constraints

    def token(c):
        if c is None:
            return None
        if isinstance(c, (set, frozenset, list, tuple)):
            return {label_to_string(x, kind) for x in c}
        return label_to_string(c, kind)
    return [None if sent is None else [token(c) for c in sent] for sent in constraints]


def label_from_string(text: str, kind: str):
    """The label ``text`` (as :func:`labels_as_strings` wrote it) back in its type."""
    if kind == "int":
        return int(text)
    if kind == "bool":
        return text == "True"
    return text


def sequences_from_strings(sequences, kind: str) -> list:
    """Label sequences of str back in their type (unchanged lists for 'str')."""
    if kind == "str":
        return sequences
    return [[label_from_string(label, kind) for label in labels] for labels in sequences]


def checked_label_type(value, path) -> str:
    """A model file's recorded label type (absent: 'str'); a ModelFormatError naming ``path`` if unknown."""
    kind = "str" if value is None else value
    if kind not in LABEL_TYPES:
        raise ModelFormatError(f"{path}: unknown label type {value!r} (expected one of {', '.join(LABEL_TYPES)})")
    return kind


__all__ = ["LABEL_TYPES", "labels_as_strings", "label_to_string", "constraints_as_strings", "label_from_string", "sequences_from_strings",
           "checked_label_type"]
