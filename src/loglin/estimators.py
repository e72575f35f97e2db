"""scikit-learn compatible classifiers: :class:`MaxentClassifier` and :class:`LogisticRegression`.

Both are thin shells over the shared :func:`loglin.training.train`: ``fit``
validates the input once, builds a problem (:func:`loglin.problem.problem_from_matrix`
or :func:`loglin.binary.binary_problem`), trains it with the named solver and
keeps the resulting :class:`loglin.model.LinearModel` as ``model_``; the
prediction methods are the model's.

Scale of C
    LIBLINEAR's, as in scikit-learn's ``LogisticRegression(C=C)``:
    f(w) = 1/2 sum_t r_t w_t^2 + C sum_i s_i * (-log P(y_i | x_i)), with s_i
    the sample weight times the class weight. ``objective_`` is this f at the
    returned weights.
Intercept
    LIBLINEAR's bias: a constant feature of value B = ``intercept_scaling``
    is appended and ``intercept_ = B * w_bias``. ``regularize_intercept=False``
    (the default, as in scikit-learn's lbfgs) gives the bias weight r_t = 0,
    so B then only affects conditioning; ``True`` is LIBLINEAR's ``-B``.

scikit-learn is optional
    loglin does not depend on scikit-learn at run time. When it is importable
    the estimators inherit from ``sklearn.base.ClassifierMixin`` and
    ``BaseEstimator`` (so ``clone``, pipelines, ``GridSearchCV`` and
    ``check_estimator`` see genuine scikit-learn estimators) and raise its
    ``NotFittedError`` / ``DataConversionWarning``. Without it, the small
    stand-ins below give the same ``get_params``/``set_params``/``__repr__``/
    ``score`` and exceptions of the same names; the ``loglin`` command uses the
    stand-ins too (``loglin.SKLEARN_BASES``), unless scikit-learn is already loaded. Input validation is loglin's
    own either way (:func:`_check_X`, :func:`_check_y`) and uses scikit-learn's
    wording where its common checks look for it. ``ConvergenceWarning`` is
    :class:`loglin.training.ConvergenceWarning` (a ``UserWarning``).

scikit-learn's common checks
    ``check_estimator`` passes in full for both classes with their defaults
    (tests/test_sklearn_compat.py), so no tag waives a check. The one
    configuration-specific failure, documented there: with
    ``fit_intercept=False`` ``check_class_weight_classifiers`` cannot pass, as
    a hyperplane through the origin cannot be moved past uncentred blobs by
    class weights (scikit-learn's own estimator fails it the same way).
    scikit-learn 1.9 has no tag for expected failures (``_xfail_checks`` is
    gone); they are passed to ``parametrize_with_checks`` instead.
"""
from __future__ import annotations

import inspect
import numbers
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from .binary import binary_problem
from .problem import MaxentProblem, class_weight_vector, problem_from_matrix
from .training import ConvergenceWarning, available_solvers, train
from .params import check_number, check_training_params, scale_out_keywords, seed as _seed, store_params
from . import SKLEARN_BASES as _wants_sklearn_bases

__all__ = ["MaxentClassifier", "LogisticRegression", "ConvergenceWarning", "NotFittedError"]

try:
    if not (_wants_sklearn_bases or "sklearn" in sys.modules):
        raise ImportError("the loglin command does not use scikit-learn's bases")
    from sklearn.base import BaseEstimator as _BaseEstimator
    from sklearn.base import ClassifierMixin as _ClassifierMixin
    from sklearn.exceptions import DataConversionWarning, NotFittedError
    HAVE_SKLEARN = True
except ImportError:                                     # without sklearn, and in the `loglin` command
    HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):
        """A prediction method was called before ``fit``."""

    class DataConversionWarning(UserWarning):
        """The input was converted (e.g. a column-vector y raveled)."""

    class _BaseEstimator:
        """get_params / set_params / repr as scikit-learn defines them (flat parameters only)."""

        @classmethod
        def _get_param_names(cls):
            params = inspect.signature(cls.__init__).parameters.values()
            return sorted(p.name for p in params if p.name != "self" and p.kind != p.VAR_KEYWORD)

        def get_params(self, deep=True):
            return {name: getattr(self, name) for name in self._get_param_names()}

        def set_params(self, **params):
            valid = self._get_param_names()
            for name, value in params.items():
                if name not in valid:
                    raise ValueError(f"Invalid parameter {name!r} for estimator {type(self).__name__}. "
                                     f"Valid parameters are: {valid!r}.")
                setattr(self, name, value)
            return self

        def __repr__(self):
            defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
            changed = [f"{k}={v!r}" for k, v in self.get_params().items() if not _is_default(v, defaults.get(k))]
            return f"{type(self).__name__}({', '.join(changed)})"

    class _ClassifierMixin:
        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None):
            """Mean accuracy of ``predict(X)`` against y (weighted by ``sample_weight``)."""
            return float(np.average(self.predict(X) == np.asarray(y).ravel(), weights=sample_weight))

    def _is_default(value, default):
        try:
            return value is default or (type(value) is type(default) and bool(value == default))
        except (TypeError, ValueError):
            return False

# keyword arguments of train() that the estimator sets itself
_RESERVED_OPTIONS = {"problem", "C", "penalty", "l1_ratio", "solver", "w0", "tol", "max_iter", "time_limit", "random_state",
                     "progress", "evaluate", "callback", "warn", "info", "backend", "shards"}


# =================================================================== validation


def _plain(value) -> bool:
    """A parameter value that JSON keeps as it is (what a saved estimator can restore)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def _check_X(X, owner: str):
    """Validated CSR float64 copy of X (own arrays: the core sorts and prunes in place).

    Returns (X, feature_names or None).
    """
    names = _feature_names(X)
    if sp.issparse(X):
        if np.issubdtype(X.dtype, np.complexfloating):
            raise ValueError("Complex data not supported")
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    else:
        X = np.asarray(X)
        if np.iscomplexobj(X):
            raise ValueError(f"Complex data not supported\n{X}\n")
        X = X.astype(np.float64)        # numpy's TypeError/ValueError for non-numeric entries
        if X.ndim < 2:
            raise ValueError(f"Expected 2D array, got {'scalar' if X.ndim == 0 else '1D'} array instead:\n"
                             f"array={X}.\nReshape your data either using array.reshape(-1, 1) if your data "
                             "has a single feature or array.reshape(1, -1) if it contains a single sample.")
        if X.ndim > 2:
            raise ValueError(f"Found array with dim {X.ndim}. {owner} expected <= 2.")
        X = sp.csr_matrix(X)
    n, d = X.shape
    if n < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required "
                         f"by {owner}.")
    if d < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 is required "
                         f"by {owner}.")
    if X.nnz:
        if np.isnan(X.data).any():
            raise ValueError(f"Input X contains NaN. {owner} does not accept missing values.")
        if np.isinf(X.data).any():
            raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
    X.eliminate_zeros()
    X.sum_duplicates()                  # also sorts the indices
    if X.nnz < np.iinfo(np.int32).max and d < np.iinfo(np.int32).max:   # one compiled kernel variant
        X.indices, X.indptr = X.indices.astype(np.int32, copy=False), X.indptr.astype(np.int32, copy=False)
    return X, names


def _feature_names(X):
    columns = getattr(X, "columns", None)
    if columns is None or sp.issparse(X):
        return None
    names = np.asarray(list(columns), dtype=object)
    return names if len(names) and all(isinstance(c, str) for c in names) else None


def _check_y(y, n_samples: int, owner: str):
    """Labels as a 1-D array of n_samples discrete values; (classes, codes)."""
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None.")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                      "of y to (n_samples, ), for example using ravel().", DataConversionWarning, stacklevel=4)
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    if len(y) != n_samples:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n_samples}, {len(y)}]")
    if np.iscomplexobj(y):
        raise ValueError("Complex data not supported")
    if y.dtype == object:
        if all(isinstance(v, str) for v in y):
            y = y.astype(str)
        elif all(isinstance(v, numbers.Real) for v in y):
            y = y.astype(np.float64) if any(isinstance(v, float) for v in y) else y.astype(np.int64)
        else:
            raise ValueError("Unknown label type: labels must be all strings or all numbers.")
    if y.dtype.kind == "f":
        if np.isnan(y).any():
            raise ValueError("Input y contains NaN.")
        if np.isinf(y).any():
            raise ValueError("Input y contains infinity or a value too large for dtype('float64').")
        if np.any(y != np.round(y)):
            raise ValueError("Unknown label type: continuous. Maybe you are trying to fit a classifier, which "
                             "expects discrete classes on a regression target with continuous values.")
    elif y.dtype.kind not in "biuUS":
        raise ValueError(f"Unknown label type: labels of dtype {y.dtype}.")
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"{owner} needs samples of at least 2 classes in the data, but the data contains "
                         f"only one class: {classes[0]!r}.")
    return classes, codes.astype(np.int32)


def not_fitted(estimator) -> NotFittedError:
    """scikit-learn's NotFittedError for ``estimator``, with scikit-learn's text."""
    return NotFittedError(f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
                          "appropriate arguments before using this estimator.")


def fitted_model(estimator):
    """``estimator.model_``, or :func:`not_fitted`'s error."""
    if not hasattr(estimator, "model_"):
        raise not_fitted(estimator)
    return estimator.model_


def _check_sample_weight(sample_weight, n_samples: int):
    if sample_weight is None:
        return np.ones(n_samples)
    w = np.array(sample_weight, dtype=np.float64)          # a copy: never touch the caller's array
    if w.ndim == 0:
        w = np.full(n_samples, float(w))
    if w.shape != (n_samples,):
        raise ValueError(f"sample_weight.shape == {w.shape}, expected {(n_samples,)}!")
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(w < 0):
        raise ValueError("Negative values in data passed to sample_weight.")
    if not np.any(w > 0):
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return w


# ==================================================================== estimators


class _LoglinClassifier(_ClassifierMixin, _BaseEstimator):
    """Shared parameters, fitting and prediction; subclasses choose the model per number of classes."""

    def __init__(self, C=1.0, *, penalty="l2", l1_ratio=None, solver="auto", tol=1e-4, max_iter=1000,
                 fit_intercept=True, intercept_scaling=1.0, regularize_intercept=False, class_weight=None,
                 warm_start=False, random_state=None, verbose=0, time_limit=None, solver_options=None,
                 backend=None, client=None, n_workers=None):
        store_params(self, locals())

    def _binary_native(self) -> bool:
        """True if two classes are fitted as one binary LR weight vector."""
        raise NotImplementedError

    # ------------------------------------------------------------------ fit
    def fit(self, X, y=None, sample_weight=None):
        """Fit the model; returns self.

        X: dense array-like or SciPy sparse matrix (any format), n_samples x n_features.
        y: class labels (numbers or strings). sample_weight: non-negative weights
        per sample (multiplied by the class weights).
        """
        self._check_params()
        owner = type(self).__name__
        if isinstance(X, MaxentProblem):
            return self._fit_problem(X, y, sample_weight)
        X, names = _check_X(X, owner)
        classes, codes = _check_y(y, X.shape[0], owner)
        weight = _check_sample_weight(sample_weight, X.shape[0])
        # per-class multipliers ("balanced" uses sample-weighted class totals)
        weight = weight * class_weight_vector(self.class_weight, classes, codes, weight)[codes]
        per_class = np.bincount(codes, weights=weight, minlength=len(classes))
        if np.count_nonzero(per_class > 0) < 2:
            raise ValueError("Only one class has positive sample weight "
                             f"({classes[np.argmax(per_class)]!r}); need samples of at least 2 classes.")
        n_features = X.shape[1]
        bias = float(self.intercept_scaling) if self.fit_intercept else 0.0
        if len(classes) == 2 and self._binary_native():
            problem = binary_problem(X, codes, self.C, sample_weight=weight, bias=bias,
                                     regularize_bias=bool(self.regularize_intercept))
            model, result = self._train(problem, "binary", problem.n_features, classes)
            w = model.w
            self.coef_ = w[:n_features].reshape(1, -1).copy()
            self.intercept_ = np.array([w[n_features] * bias if bias else 0.0])
        else:
            problem = problem_from_matrix(X, codes, sample_weight=weight, all_pairs=True, bias=bias or None,
                                          regularize_bias=bool(self.regularize_intercept))
            model, result = self._train(problem, "maxent", problem.n_features, classes)
            # feature t = p * K + k (predicate-major, all pairs): one row of W per class
            W = model.w.reshape(problem.n_predicates, len(classes)).T
            self.coef_ = W[:, :n_features].copy()
            self.intercept_ = W[:, n_features] * bias if bias else np.zeros(len(classes))
        model.labels = classes
        self.classes_ = classes
        self.n_features_in_ = n_features
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._set_result(model, result)
        return self

    def _fit_problem(self, problem, y, sample_weight):
        """Fit a prebuilt MaxentProblem (its own features, counts and bias)."""
        owner = type(self).__name__
        if not isinstance(self, MaxentClassifier):
            raise ValueError(f"{owner} takes matrices; fit a MaxentProblem with MaxentClassifier")
        if y is not None:
            raise ValueError("when X is a MaxentProblem its labels are inside it: pass y=None")
        if sample_weight is not None or self.class_weight is not None:
            raise ValueError("sample_weight and class_weight cannot be applied to a prebuilt MaxentProblem; "
                             "pass them to the problem builder instead")
        model, result = self._train(problem, "maxent", problem.n_features, np.asarray(problem.labels))
        self.classes_ = np.asarray(problem.labels)
        self.n_features_in_ = int(model.n_inputs)
        self.coef_ = model.w.copy()
        self.intercept_ = 0.0
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._set_result(model, result)
        return self

    def _train(self, problem, kind, n_weights, classes):
        solvers = available_solvers(kind)
        if self.solver != "auto" and self.solver not in solvers:
            raise ValueError(f"solver {self.solver!r} is not available for {kind} problems; "
                             f"valid solvers: {', '.join(solvers)}")
        w0 = None
        previous = getattr(self, "model_", None)
        if (self.warm_start and previous is not None and previous.kind == kind and len(previous.w) == n_weights
                and len(previous.labels) == len(classes) and np.array_equal(previous.labels, classes)):
            w0 = previous.w
        return train(problem, C=float(self.C), solver=self.solver, penalty=self.penalty, l1_ratio=self.l1_ratio,
                     w0=w0, tol=float(self.tol),
                     max_iter=int(self.max_iter), time_limit=self.time_limit,
                     random_state=_seed(self.random_state), progress=self.verbose > 0,
                     **scale_out_keywords(self), **(self.solver_options or {}))

    def _set_result(self, model, result):
        self.model_ = model
        self.n_iter_ = int(result.iterations)
        self.objective_ = float(result.f)
        self.trace_ = result.trace

    # ------------------------------------------------------------------ files
    def save(self, path) -> None:
        """Write the fitted estimator as a loglin model file (arrays and JSON, never code): `loglin info`,
        `predict` and `evaluate` read it, and :meth:`load` restores the estimator."""
        import dataclasses
        if not hasattr(self, "model_"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet; nothing to save.")
        meta = {"class": type(self).__name__, "params": {k: v for k, v in self.get_params().items() if _plain(v)},
                "n_features_in": int(self.n_features_in_), "coef_shape": list(np.shape(self.coef_)),
                "objective": self.objective_, "n_iter": self.n_iter_}
        if hasattr(self, "feature_names_in_"):
            meta["feature_names_in"] = [str(x) for x in self.feature_names_in_]
        dataclasses.replace(self.model_, info={**self.model_.info, "estimator": meta}).save(path)

    @classmethod
    def load(cls, path):
        """The estimator that :meth:`save` wrote to ``path`` (its parameters, coef_, intercept_, classes_)."""
        from .model import LinearModel
        model = LinearModel.load(path)
        meta = model.info.get("estimator")
        if not isinstance(meta, dict) or meta.get("class") != cls.__name__:
            raise ValueError(f"{path} was not written by {cls.__name__}.save (load it with "
                             f"loglin.model.LinearModel.load or loglin.model_io.load_model)")
        valid = set(cls._get_param_names())
        est = cls(**{k: v for k, v in meta.get("params", {}).items() if k in valid})
        n, w, classes = int(meta["n_features_in"]), model.w, np.asarray(model.labels)
        if meta.get("coef_shape") == [len(w)]:                  # fitted on a prebuilt MaxentProblem
            est.coef_, est.intercept_ = w.copy(), 0.0
        elif model.kind == "binary":
            est.coef_ = w[:n].reshape(1, -1).copy()
            est.intercept_ = np.array([w[n] * model.bias if model.bias else 0.0])
        else:
            W = w.reshape(-1, len(classes)).T                   # feature p * K + k: one row of W per class
            est.coef_ = W[:, :n].copy()
            est.intercept_ = W[:, n] * model.bias if model.bias else np.zeros(len(classes))
        est.classes_, est.n_features_in_, est.model_ = classes, n, model
        est.objective_, est.n_iter_ = float(meta.get("objective", np.nan)), int(meta.get("n_iter", 0))
        if "feature_names_in" in meta:
            est.feature_names_in_ = np.asarray(meta["feature_names_in"], dtype=object)
        return est

    def _check_params(self):
        check_training_params(self)
        if self.fit_intercept:
            check_number(self, "intercept_scaling", 0, True)
        cw = self.class_weight
        if not (cw is None or cw == "balanced" or isinstance(cw, dict)):
            raise ValueError(f"class_weight must be None, a dict or 'balanced', got {cw!r}")
        opts = self.solver_options
        if opts is not None:
            clash = sorted(_RESERVED_OPTIONS.intersection(opts))
            if clash:
                raise ValueError(f"solver_options may not set {clash}; use the estimator's parameters")

    # ----------------------------------------------------------- prediction
    def _rows(self, X):
        """Validated prediction input (raw (contexts, values) events pass through to the model)."""
        fitted_model(self)
        if isinstance(X, tuple) and len(X) == 2 and self.model_.predicates is not None and not sp.issparse(X):
            if isinstance(X[0], (list, tuple)) and (len(X[0]) == 0 or isinstance(X[0][0], (list, tuple))):
                return X
        names = getattr(self, "feature_names_in_", None)
        X, given = _check_X(X, type(self).__name__)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                             f"{self.n_features_in_} features as input.")
        if names is not None and given is not None and not np.array_equal(names, given):
            raise ValueError("The feature names should match those that were passed during fit.")
        return X

    def decision_function(self, X):
        """Scores: shape (n,) for two classes (> 0 means classes_[1]), else (n, n_classes)."""
        X = self._rows(X)                        # raises NotFittedError first
        s = self.model_.decision_function(X)
        if s.ndim == 2 and s.shape[1] == 2:
            return s[:, 1] - s[:, 0]             # log-odds, like the binary model's w^T x
        return s

    def predict_log_proba(self, X):
        """log P(class | x), shape (n, n_classes), columns in the order of ``classes_``."""
        X = self._rows(X)
        return self.model_.predict_log_proba(X)

    def predict_proba(self, X):
        """P(class | x), shape (n, n_classes); rows sum to one."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The most probable class of each row."""
        X = self._rows(X)
        return self.model_.predict(X)

    if HAVE_SKLEARN:
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.sparse = True
            return tags


class MaxentClassifier(_LoglinClassifier):
    """Multinomial maximum-entropy (softmax) classifier, trained by any loglin solver.

    P(y | x) = exp(w_y . x + b_y) / sum_k exp(w_k . x + b_k): one feature per
    (input column, class) pair, so ``coef_`` has shape (n_classes, n_features)
    and ``intercept_`` (n_classes,), as scikit-learn's multinomial
    ``LogisticRegression``. With two classes the model still has two weight
    vectors; ``decision_function`` then returns the log-odds w_1 . x - w_0 . x
    (shape (n,)).

    ``fit`` also takes a prebuilt :class:`loglin.problem.MaxentProblem` as X
    (with y=None): the problem's own features, counts and bias are used,
    ``coef_`` is then the flat weight vector, ``intercept_`` is 0.0, and the
    prediction methods take matrices whose columns are the problem's
    predicates (or (contexts, values) events when it has predicate names).

    Parameters (scikit-learn conventions; ``__init__`` only stores them)
    ----------
    C : float, default 1.0
        LIBLINEAR's regularization constant (see the module docstring).
    penalty : "l2", "l1" or "elasticnet", default "l2"
        With an L1 term the objective is l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2 + C sum loss
        (scikit-learn's scale; "l1" is l1_ratio = 1, LIBLINEAR -s 6): sparse ``coef_``.
    l1_ratio : float in [0, 1] or None
        The L1 share of "elasticnet" (only there).
    solver : str, default "auto"
        "auto": loglin's default for the problem kind and penalty (:func:`loglin.training.default_solver`),
        else any solver for Maxent problems (``loglin.training.available_solvers("maxent")``).
    tol : float, default 1e-4
        Stop when ||grad f(w)|| <= tol * ||grad f(0)||.
    max_iter : int, default 1000
        Outer iterations of the solver.
    fit_intercept : bool, default True
    intercept_scaling : float, default 1.0
        Value B of the constant bias feature.
    regularize_intercept : bool, default False
        Regularize the bias weight (LIBLINEAR) or not (scikit-learn). Solvers
        that cannot handle an unregularized bias raise their own error.
    class_weight : None, dict or "balanced"
    warm_start : bool, default False
        Start from the previous ``fit``'s weights when their shape matches.
    random_state : None, int or Generator
        Seed of stochastic solvers (SGD, shuffled coordinate orders).
    verbose : int, default 0
        > 0 shows a progress bar.
    time_limit : float or None
        Seconds of training after which the solver stops.
    solver_options : dict or None
        Extra keyword arguments of the solver (e.g. ``{"cg_tol": 0.1}`` for TRON).
    backend : None, "inprocess", "threads", "dask" or a loglin.scale Backend
        Evaluate the objective over row shards on that backend (:func:`loglin.scale.sharded`; TRON or
        L-BFGS, the same model to rounding); "dask" alone starts a 2-worker LocalCluster for the fit.
    client : distributed.Client or None
        Shard on the workers of this Dask client's cluster (left open).
    n_workers : int or None
        Shard on a LocalCluster of that many one-thread worker processes, started and closed by ``fit``.

    Attributes
    ----------
    classes_, coef_, intercept_, n_features_in_, feature_names_in_ (when X had
    string column names), n_iter_ (outer iterations), objective_ (final
    primal objective, LIBLINEAR scale), trace_ (:class:`loglin.trace.Trace`),
    model_ (:class:`loglin.model.LinearModel`; save it with ``model_.save``).
    """

    def _binary_native(self) -> bool:
        return False


class LogisticRegression(_LoglinClassifier):
    """Logistic regression; binary natively, multinomial (Maxent) beyond two classes.

    With two classes this is binary LR, P(classes_[1] | x) = sigmoid(w . x + b),
    with ``coef_`` of shape (1, n_features) and ``intercept_`` (1,). With more
    than two classes it fits the multinomial Maxent model instead (exactly
    :class:`MaxentClassifier`: ``coef_`` (n_classes, n_features),
    ``intercept_`` (n_classes,)), as scikit-learn's lbfgs does; there is no
    one-vs-rest mode. Parameters and attributes are those of
    :class:`MaxentClassifier`; the solver must support the problem kind
    (``available_solvers("binary")`` for two classes, ``"maxent"`` beyond).
    """

    def _binary_native(self) -> bool:
        return True
