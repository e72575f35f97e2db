"""sklearn-crfsuite's metrics: scores over all tokens of all sentences ("flat") and over whole sentences.

``flat_accuracy_score`` and ``sequence_accuracy_score`` need only NumPy; the
precision / recall / F scores and the report are scikit-learn's, applied to the
flattened label lists (scikit-learn is imported when they are called).
"""
from __future__ import annotations

from functools import wraps

import numpy as np


def flatten(y) -> list:
    """All labels of all sentences, in order."""
    return [label for seq in y for label in seq]


def _check(y_true, y_pred):
    y_true, y_pred = list(y_true), list(y_pred)
    if len(y_true) != len(y_pred):
        raise ValueError(f"{len(y_true)} true sequences but {len(y_pred)} predicted")
    for i, (a, b) in enumerate(zip(y_true, y_pred)):
        if len(a) != len(b):
            raise ValueError(f"sequence {i}: {len(a)} true labels but {len(b)} predicted")
    return y_true, y_pred


def _flat(function):
    @wraps(function)
    def wrapper(y_true, y_pred, *args, **kwargs):
        y_true, y_pred = _check(y_true, y_pred)
        return function(flatten(y_true), flatten(y_pred), *args, **kwargs)
    return wrapper


@_flat
def flat_accuracy_score(y_true, y_pred):
    """Fraction of tokens whose label is right."""
    if not y_true:
        return 0.0
    return float(np.mean([a == b for a, b in zip(y_true, y_pred)]))


@_flat
def flat_precision_score(y_true, y_pred, **kwargs):
    """scikit-learn's precision_score over the tokens (pass ``average=`` and ``labels=`` as there)."""
    from sklearn import metrics
    return metrics.precision_score(y_true, y_pred, **kwargs)


@_flat
def flat_recall_score(y_true, y_pred, **kwargs):
    """scikit-learn's recall_score over the tokens."""
    from sklearn import metrics
    return metrics.recall_score(y_true, y_pred, **kwargs)


@_flat
def flat_f1_score(y_true, y_pred, **kwargs):
    """scikit-learn's f1_score over the tokens."""
    from sklearn import metrics
    return metrics.f1_score(y_true, y_pred, **kwargs)


@_flat
def flat_fbeta_score(y_true, y_pred, beta, **kwargs):
    """scikit-learn's fbeta_score over the tokens."""
    from sklearn import metrics
    return metrics.fbeta_score(y_true, y_pred, beta=beta, **kwargs)


@_flat
def flat_classification_report(y_true, y_pred, labels=None, **kwargs):
    """scikit-learn's classification_report over the tokens."""
    from sklearn import metrics
    return metrics.classification_report(y_true, y_pred, labels=labels, **kwargs)


def sequence_accuracy_score(y_true, y_pred):
    """Fraction of sentences whose every label is right."""
    y_true, y_pred = _check(y_true, y_pred)
    if not y_true:
        return 0.0
    return sum(list(a) == list(b) for a, b in zip(y_true, y_pred)) / len(y_true)
