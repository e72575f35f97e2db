"""loglin: log-linear models (Maxent, logistic regression, CRFs, M3N) with the optimizers of the literature."""
import os

# Numba's OpenMP threads spin between parallel passes by default, which makes
# short passes slow on a busy machine (docs/decisions/0007-openmp-passive-wait.md).
# Must be set before the OpenMP runtime loads, i.e. before any kernel is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

# The estimators inherit scikit-learn's BaseEstimator and ClassifierMixin when it is installed. The `loglin`
# command sets this False before it imports them: it never hands an estimator to scikit-learn, so they take
# loglin's stand-in bases and the command does not wait for scikit-learn's import (loglin.estimators).
SKLEARN_BASES = True


# the public estimators, imported on first use (the kernels load with them): loglin.LogisticRegression etc.
_LAZY = {"MaxentClassifier": "estimators", "LogisticRegression": "estimators", "MaxentClassifierCV": "selection",
         "LogisticRegressionCV": "selection", "Tagger": "tagging.estimator", "Parser": "parsing.estimator"}


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'loglin' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = [*_LAZY, "__version__"]
