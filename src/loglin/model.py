"""A trained linear log-linear model: weights plus what maps inputs to features.

Two kinds share one class:

* ``maxent``: predicate x label features through the predicate map
  (P(y|x) = softmax over labels, Huang et al. eq. 1);
* ``binary``: logistic regression, weights over input columns (plus the bias
  weight last when ``bias`` > 0), P(+1|x) = sigmoid(w^T x).

Inputs are rows of predicate values: a SciPy/NumPy matrix whose columns are
the training predicates, or raw events (predicate names) translated through
the stored vocabulary (unknown predicates are ignored, as in OpenNLP).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .errors import InvalidInputError, ModelFormatError
from .kernels import logistic as lk
from .kernels import maxent as mk
from .model_io import label_map_is_valid, load_npz_model, save_npz_model
from .problem import _as_float_csr, events_to_matrix

FORMAT = "loglin-linear"
FORMAT_VERSION = 1


@dataclass
class LinearModel:
    kind: str
    w: np.ndarray
    labels: np.ndarray
    n_inputs: int
    map_ptr: np.ndarray | None = None
    map_label: np.ndarray | None = None
    map_feat: np.ndarray | None = None
    bias: float = 0.0
    predicates: list | None = None
    info: dict = field(default_factory=dict)

    # ------------------------------------------------------------ building
    @classmethod
    def from_maxent(cls, problem, w, n_inputs=None, bias=0.0, info=None):
        n_pred = problem.n_predicates
        return cls("maxent", np.asarray(w, dtype=np.float64), np.asarray(problem.labels), n_inputs or n_pred,
                   problem.map_ptr, problem.map_label, problem.map_feat, bias, problem.predicates, dict(info or {}))

    @classmethod
    def from_binary(cls, problem, w, info=None):
        n_inputs = problem.n_features - (1 if problem.bias > 0 else 0)
        return cls("binary", np.asarray(w, dtype=np.float64), np.asarray(problem.classes), n_inputs,
                   bias=problem.bias, info=dict(info or {}))

    # ---------------------------------------------------------- prediction
    def _rows(self, X) -> sp.csr_matrix:
        if isinstance(X, tuple) and len(X) == 2:      # (contexts, values) raw events
            if self.predicates is None:
                raise InvalidInputError("this model has no predicate names; pass a matrix")
            vocab = {p: i for i, p in enumerate(self.predicates[: self.n_inputs])}
            X = events_to_matrix(X[0], X[1], vocab)
        X = _as_float_csr(X)
        if X.shape[1] != self.n_inputs:
            raise InvalidInputError(f"X has {X.shape[1]} features, but the model was trained with {self.n_inputs}")
        if self.bias > 0:
            X = sp.hstack([X, np.full((X.shape[0], 1), self.bias)], format="csr")
        X.sort_indices()
        return X

    def decision_function(self, X) -> np.ndarray:
        """Scores: w^T x for binary models, sum_t w_t f_t(x, y) per label for Maxent."""
        X = self._rows(X)
        if self.kind == "binary":
            return lk.decision_rows(self.w, X.indptr.astype(np.int64), X.indices, X.data)
        return mk.decision_rows(self.w, len(self.labels), X.indptr.astype(np.int64), X.indices, X.data,
                                self.map_ptr, self.map_label, self.map_feat)

    def predict_log_proba(self, X) -> np.ndarray:
        s = self.decision_function(X)
        if self.kind == "binary":
            return np.column_stack([-np.logaddexp(0, s), -np.logaddexp(0, -s)])
        m = s.max(axis=1, keepdims=True)
        return s - (m + np.log(np.exp(s - m).sum(axis=1, keepdims=True)))

    def predict_proba(self, X) -> np.ndarray:
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        s = self.decision_function(X)
        idx = (s > 0).astype(int) if self.kind == "binary" else s.argmax(axis=1)
        return self.labels[idx]

    # ---------------------------------------------------------------- disk
    def save(self, path):
        meta = {"loglin_format": FORMAT, "format_version": FORMAT_VERSION, "kind": self.kind,
                "n_inputs": int(self.n_inputs), "bias": float(self.bias), "info": self.info,
                "label_dtype": self.labels.dtype.kind, "has_predicates": self.predicates is not None}
        arrays = {"w": self.w, "labels": self.labels.astype(str) if self.labels.dtype == object else self.labels}
        if self.kind == "maxent":
            arrays.update(map_ptr=self.map_ptr, map_label=self.map_label, map_feat=self.map_feat)
        if self.predicates is not None:
            arrays["predicates"] = np.asarray([str(p) for p in self.predicates])
        save_npz_model(path, meta, arrays)

    @classmethod
    def load(cls, path) -> "LinearModel":
        meta, a = load_npz_model(path, FORMAT, FORMAT_VERSION, required=("w", "labels"))
        kind = meta.get("kind")
        if kind not in ("maxent", "binary"):
            raise ModelFormatError(f"{path}: unknown model kind {kind!r}")
        try:
            n_inputs = int(meta["n_inputs"])
            bias = float(meta.get("bias", 0.0))
        except (KeyError, TypeError, ValueError):
            raise ModelFormatError(f"{path}: corrupted model metadata") from None
        w, labels = a["w"].astype(np.float64), a["labels"]
        predicates = a["predicates"].tolist() if "predicates" in a else None
        model = cls(kind, w, labels, n_inputs, bias=bias, predicates=predicates, info=meta.get("info", {}))
        if kind == "maxent":
            for name in ("map_ptr", "map_label", "map_feat"):
                if name not in a:
                    raise ModelFormatError(f"{path}: model file is missing array {name!r}")
            model.map_ptr = a["map_ptr"].astype(np.int64)
            model.map_label = a["map_label"].astype(np.int32)
            model.map_feat = a["map_feat"].astype(np.int64)
            _check_maxent_arrays(path, model)
        elif len(w) != n_inputs + (1 if bias > 0 else 0) or len(labels) != 2:
            raise ModelFormatError(f"{path}: inconsistent binary model (weights/labels do not match)")
        return model


def _check_maxent_arrays(path, m: LinearModel):
    """Bounds that the compiled kernels rely on; checked once at load time."""
    n_pred = m.n_inputs + (1 if m.bias > 0 else 0)
    if not label_map_is_valid(m.map_ptr, m.map_label, m.map_feat, n_pred, len(m.labels), len(m.w)):
        raise ModelFormatError(f"{path}: inconsistent Maxent model arrays (corrupted file?)")
