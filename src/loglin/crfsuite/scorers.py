"""scikit-learn scorers for model selection of :class:`loglin.crfsuite.CRF` (needs scikit-learn).

    GridSearchCV(CRF(), {"c2": [0.01, 0.1, 1]}, scoring=scorers.sequence_accuracy)
"""
from sklearn.metrics import make_scorer

from . import metrics

flat_accuracy = make_scorer(metrics.flat_accuracy_score)
sequence_accuracy = make_scorer(metrics.sequence_accuracy_score)
