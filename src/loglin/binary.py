"""Binary logistic regression data, y in {-1, +1} (Yu et al. 2011, eq. 1).

The bias, when asked for, is LIBLINEAR's: an extra feature of constant value
B appended to every instance, regularized unless ``regularize_bias=False``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .errors import DataContentError, InvalidInputError
from .scale import warn_if_badly_scaled
from .problem import _as_float_csr, _check_weights, class_weight_vector, index_dtype


@dataclass
class BinaryProblem:
    """Instances X (CSR), labels y = +-1, per-instance costs C_i = C * weight_i."""

    X: sp.csr_matrix
    y: np.ndarray
    cost: np.ndarray
    reg: np.ndarray
    classes: np.ndarray
    bias: float = 0.0
    C: float = 1.0

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_instances(self) -> int:
        return self.X.shape[0]

    def objective(self, C=None):
        from .objective import LogisticObjective
        if C is not None and C != self.C:
            return LogisticObjective(self.with_C(C))
        return LogisticObjective(self)

    def with_C(self, C):
        return BinaryProblem(self.X, self.y, self.cost * (C / self.C), self.reg, self.classes, self.bias, C)

    def counts(self):
        return int(np.sum(self.y > 0)), int(np.sum(self.y < 0))


def binary_problem(X, y, C=1.0, *, sample_weight=None, class_weight=None, bias=0.0,
                   regularize_bias=True, classes=None) -> BinaryProblem:
    """Validate and build a binary LR problem.

    The class listed second in ``classes`` (sorted order by default) is +1,
    as scikit-learn does; labels already in {-1, +1} keep their sign.
    """
    if not np.isfinite(C) or C <= 0:
        raise InvalidInputError(f"C must be positive and finite, got {C}")
    X = _as_float_csr(X)
    n = X.shape[0]
    if n == 0:
        raise DataContentError("the training data is empty")
    y = np.asarray(y)
    if y.shape != (n,):
        raise InvalidInputError(f"X has {n} rows but y has shape {y.shape}")
    if classes is None:
        classes = np.unique(y)
    classes = np.asarray(classes)
    if len(classes) != 2:
        raise DataContentError(f"binary logistic regression needs exactly two classes, got {len(classes)}: "
                                f"{classes[:5].tolist()}")
    codes = np.searchsorted(classes, y) if classes.dtype.kind in "iufU" else None
    if codes is None or np.any(codes >= 2) or np.any(classes[np.minimum(codes, 1)] != y):
        lookup = {c: i for i, c in enumerate(classes.tolist())}
        try:
            codes = np.array([lookup[v] for v in y.tolist()])
        except KeyError as exc:
            raise InvalidInputError(f"label {exc.args[0]!r} is not one of {classes.tolist()}") from None
    sign = np.where(codes == 1, 1.0, -1.0)
    weight = _check_weights(sample_weight, n)
    if class_weight is not None:
        weight = weight * class_weight_vector(class_weight, classes, codes, weight)[codes]
    if bias and bias > 0:
        X = sp.hstack([X, np.full((n, 1), float(bias))], format="csr")
    warn_if_badly_scaled(X)
    X.sort_indices()
    X = sp.csr_matrix((X.data, X.indices.astype(index_dtype(X.shape[1])), X.indptr.astype(np.int64)),
                      shape=X.shape)
    reg = np.ones(X.shape[1])
    if bias and bias > 0 and not regularize_bias:
        reg[-1] = 0.0
    return BinaryProblem(X=X, y=sign, cost=C * weight, reg=reg, classes=classes, bias=float(bias or 0.0),
                         C=float(C))
