"""One warning for data whose feature values span too many orders of magnitude.

A feature of 1e6 among 0/1 features makes the objective so ill-conditioned that first-order
solvers crawl and plain CG stalls, and it inflates ||grad f(0)|| so that LIBLINEAR's relative
stopping test means little. The stopping rule (:mod:`loglin.solvers.stopping`) then refuses to
call such a run converged; this warning names the cause up front, as scikit-learn does.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

from ..errors import DataScaleWarning

MAX_SPAN = 1e6      # largest column scale over the smallest one before we warn


def column_scale_span(X) -> float:
    """max_j s_j / min_j s_j over the nonzero columns, with s_j = max_i |x_ij| (1 for an empty matrix)."""
    X = sp.csc_matrix(X)
    if X.nnz == 0:
        return 1.0
    scales = abs(X).max(axis=0).toarray().ravel()
    scales = scales[scales > 0]
    if not len(scales) or not np.all(np.isfinite(scales)):
        return float("inf") if len(scales) else 1.0
    return float(scales.max() / scales.min())


def warn_if_badly_scaled(X, stacklevel: int = 3) -> None:
    """Warn once (DataScaleWarning) when the columns of X (bias included) span more than MAX_SPAN."""
    span = column_scale_span(X)
    if span >= MAX_SPAN:
        warnings.warn(f"feature values span {span:.1e} between the largest and the smallest feature scale; "
                      "solvers may stop far from the optimum or slowly: scale each feature to a similar "
                      "range (e.g. [-1, 1]) and keep the bias value near 1", DataScaleWarning,
                      stacklevel=stacklevel)
