"""loglin: log-linear models (Maxent, logistic regression, CRFs, M3N) with the optimizers of the literature."""

__version__ = "0.1.0"
