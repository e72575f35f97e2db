"""A drop-in for sklearn-crfsuite on loglin's chain CRF: change the import line only.

    from loglin.crfsuite import CRF, metrics      # was: from sklearn_crfsuite import CRF, metrics

See :class:`CRF` (:mod:`loglin.crfsuite.estimator`), :mod:`loglin.crfsuite.metrics`,
:mod:`loglin.crfsuite.scorers` and docs/decisions/0015-crfsuite-drop-in.md.
"""
from . import metrics
from .estimator import CRF, CRFsuiteCompatibilityWarning, TrainingLog, crfsuite_regularization

__all__ = ["CRF", "CRFsuiteCompatibilityWarning", "TrainingLog", "crfsuite_regularization", "metrics"]
