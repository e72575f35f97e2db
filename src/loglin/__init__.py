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


def __getattr__(name):
    """``loglin.Tagger`` and ``loglin.Parser``, imported on first use (the kernels load with them)."""
    if name == "Tagger":
        from .tagging.estimator import Tagger
        return Tagger
    if name == "Parser":
        from .parsing.estimator import Parser
        return Parser
    raise AttributeError(f"module 'loglin' has no attribute {name!r}")


__all__ = ["Tagger", "Parser", "__version__"]
