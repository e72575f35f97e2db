"""Model selection over C: a warm-started regularization path scored by k-fold cross-validation.

    path = cross_validation_path(MaxentClassifier(), X, y, Cs=np.logspace(-4, 4, 10), cv=5)
    path.best_C, path.table(), path.plot("path.png")

Each fold keeps one estimator that walks the Cs in increasing order with ``warm_start=True``
(the optimum at C is the start at the next, larger C: as LIBLINEAR's ``-C`` search does), and
is scored on its held-out rows. ``patience``: stop the path once the mean score has not improved
for that many consecutive Cs (LIBLINEAR's search stops the same way). The folds are stratified
(each class spread over the folds in proportion) and fixed by ``random_state``.
:class:`MaxentClassifierCV` / :class:`LogisticRegressionCV` wrap it as estimators
(scikit-learn's LogisticRegressionCV parameters: ``Cs``, ``cv``, ``scoring``, ``refit``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import InvalidInputError
from .estimators import LogisticRegression, MaxentClassifier, _check_y
from .signals import received, received_count

DEFAULT_CS = 10                    # np.logspace(-4, 4, 10), scikit-learn's LogisticRegressionCV grid
AUTO_CS = tuple(2.0 ** k for k in range(-6, 11))   # `-C auto`: LIBLINEAR's doubling search, 1/64 ... 1024
DEFAULT_PATIENCE = 4


def c_grid(Cs) -> np.ndarray:
    """An int n: n values log-spaced on [1e-4, 1e4]; else the given positive values, sorted."""
    if isinstance(Cs, (int, np.integer)) and not isinstance(Cs, bool):
        if Cs < 1:
            raise InvalidInputError(f"Cs must be a positive count or a list of C values, got {Cs}")
        return np.logspace(-4, 4, int(Cs))
    values = np.asarray(Cs, dtype=np.float64).ravel()
    if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise InvalidInputError(f"Cs must be positive finite C values, got {Cs!r}")
    return np.unique(values)


def stratified_folds(codes, k: int, random_state=0) -> list[np.ndarray]:
    """k held-out index sets; each class's rows, shuffled, are dealt to the folds in turn."""
    codes = np.asarray(codes)
    if not 2 <= k <= len(codes):
        raise InvalidInputError(f"cv must be between 2 and the number of rows ({len(codes)}), got {k}")
    rng = np.random.default_rng(random_state)
    fold_of = np.empty(len(codes), dtype=np.int64)
    start = 0
    for c in np.unique(codes):
        rows = rng.permutation(np.flatnonzero(codes == c))
        fold_of[rows] = (start + np.arange(len(rows))) % k
        start += len(rows)
    return [np.flatnonzero(fold_of == f) for f in range(k)]


def _splits(cv, X, y, codes, random_state) -> list[tuple[np.ndarray, np.ndarray]]:
    """(train, test) index pairs: ``cv`` folds (an int), a scikit-learn splitter, or the pairs themselves."""
    if isinstance(cv, (int, np.integer)) and not isinstance(cv, bool):
        everything = np.arange(len(codes))
        return [(np.setdiff1d(everything, test, assume_unique=True), test)
                for test in stratified_folds(codes, int(cv), random_state)]
    pairs = cv.split(X, y) if hasattr(cv, "split") else cv
    try:
        out = [(np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64)) for train, test in pairs]
    except (TypeError, ValueError):
        raise InvalidInputError(f"cv must be a number of folds, a splitter or (train, test) index pairs; "
                                f"got {cv!r}") from None
    if not out:
        raise InvalidInputError("cv gave no (train, test) splits")
    return out


@dataclass
class Path:
    """Scores of a cross-validated regularization path: ``scores[f, j]`` is fold f at ``Cs[j]``."""

    Cs: np.ndarray
    scores: np.ndarray
    scoring: str
    nonzeros: np.ndarray = field(default_factory=lambda: np.zeros(0))    # mean non-zero weights per C

    @property
    def mean(self) -> np.ndarray:
        return self.scores.mean(axis=0)

    @property
    def best_index(self) -> int:
        """The best mean score; among ties the smallest C (the most regularized model)."""
        return int(np.flatnonzero(self.mean >= self.mean.max() - 1e-12)[0])

    @property
    def best_C(self) -> float:
        return float(self.Cs[self.best_index])

    def table(self) -> str:
        """The path as text: C, mean and spread of the fold scores, non-zero weights, the chosen row."""
        lines = [f"{'C':>12}  {self.scoring:>10}  {'std':>8}  {'nonzeros':>9}"]
        for j, C in enumerate(self.Cs):
            mark = "  <- best" if j == self.best_index else ""
            nnz = f"{self.nonzeros[j]:9.0f}" if len(self.nonzeros) > j and np.isfinite(self.nonzeros[j]) else f"{'':9}"
            lines.append(f"{C:12.6g}  {self.mean[j]:10.5f}  {self.scores[:, j].std():8.5f}  {nnz}{mark}")
        return "\n".join(lines)

    def plot(self, path) -> None:
        """A PNG of the mean score (with the folds' spread) against C on a log axis."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        std = self.scores.std(axis=0)
        ax.semilogx(self.Cs, self.mean, "o-")
        ax.fill_between(self.Cs, self.mean - std, self.mean + std, alpha=0.2)
        ax.axvline(self.best_C, color="gray", linestyle="--", label=f"best C = {self.best_C:g}")
        ax.set_xlabel("C")
        ax.set_ylabel(f"cross-validated {self.scoring}")
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def _scorer(scoring):
    """(name, score(estimator, X, y)); None: accuracy (the estimator's own score)."""
    if scoring is None or scoring == "accuracy":
        return "accuracy", lambda est, X, y: float(est.score(X, y))
    if callable(scoring):
        return getattr(scoring, "__name__", "score"), scoring
    try:
        from sklearn.metrics import get_scorer
    except ImportError:
        raise InvalidInputError(f"scoring {scoring!r} needs scikit-learn; without it use None (accuracy) or a "
                                f"callable(estimator, X, y)") from None
    return str(scoring), get_scorer(scoring)


def cross_validation_path(estimator, X, y, Cs=DEFAULT_CS, cv: int = 5, scoring=None, random_state=0,
                          patience: int | None = None, sample_weight=None) -> Path:
    """The :class:`Path` of ``estimator`` (a loglin classifier; its C is replaced) over ``Cs``.
    ``sample_weight`` weighs the rows in the fits (the held-out scores are unweighted)."""
    name, score = _scorer(scoring)
    classes, codes = _check_y(y, np.shape(X)[0], type(estimator).__name__)
    y = classes[codes]                          # validated labels (an object array of numbers becomes numeric)
    folds = _splits(cv, X, y, codes, random_state)
    params = {**estimator.get_params(), "warm_start": True}
    models = [type(estimator)(**params) for _ in folds]
    sample_weight = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

    def fold_score(C, f):
        train, test = folds[f]
        models[f].set_params(C=float(C))
        models[f].fit(X[train], y[train], None if sample_weight is None else sample_weight[train])
        return score(models[f], X[test], y[test]), np.count_nonzero(models[f].coef_)
    return walk_path(c_grid(Cs), len(folds), fold_score, name, patience)


def grouped_path(items, fit, score, Cs=AUTO_CS, cv: int = 5, random_state=0, patience: int | None = None,
                 scoring: str = "score") -> Path:
    """The path for models trained on a list of items (sentences, documents): ``fit(train_items, C) ->
    model`` and ``score(model, test_items) -> float``; the folds are a random partition of the items.
    Each fit starts cold (the problem is rebuilt from its fold's items)."""
    n, k = len(items), int(cv)
    if not 2 <= k <= n:
        raise InvalidInputError(f"cv must be between 2 and the number of items ({n}), got {k}")
    order = np.random.default_rng(random_state).permutation(n)
    folds = [np.sort(order[f::k]) for f in range(k)]

    def fold_score(C, f):
        held = set(folds[f].tolist())
        model = fit([items[i] for i in range(n) if i not in held], float(C))
        return score(model, [items[i] for i in folds[f]]), None
    return walk_path(c_grid(Cs), k, fold_score, scoring, patience)


def walk_path(Cs, n_folds, fold_score, scoring, patience) -> Path:
    """Cs in increasing order, every fold at each; stops after ``patience`` Cs without a better mean, or on
    Ctrl-C / SIGTERM during any fit (the whole path, not only that fit). ``fold_score(C, f) -> (score,
    non-zero weights or None)``."""
    import warnings
    from .errors import ConvergenceWarning
    scores, nonzeros = [], []
    best, since_best = -np.inf, 0
    mark = received_count()
    for C in Cs:
        row, nnz = [], []
        for f in range(n_folds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)     # reported once, on the refit
                value, count = fold_score(C, f)
            if received(mark) is not None:
                raise KeyboardInterrupt
            row.append(value)
            if count is not None:
                nnz.append(count)
        scores.append(row)
        nonzeros.append(np.mean(nnz) if nnz else np.nan)
        mean = float(np.mean(row))
        best, since_best = (mean, 0) if mean > best + 1e-12 else (best, since_best + 1)
        if patience is not None and since_best >= patience:
            break
    n = len(scores)
    return Path(Cs=Cs[:n], scores=np.asarray(scores).T, scoring=scoring, nonzeros=np.asarray(nonzeros))


class _CVMixin:
    """fit: the path over Cs, then (refit=True) one fit at the best C on all rows."""

    def fit(self, X, y=None, sample_weight=None):
        base = self._base()(**{k: v for k, v in self.get_params().items() if k not in _CV_PARAMS})
        base._check_params()
        from .estimators import _check_X
        from .estimators import _check_sample_weight
        X_checked, _ = _check_X(X, type(self).__name__)
        weight = None if sample_weight is None else _check_sample_weight(sample_weight, X_checked.shape[0])
        path = cross_validation_path(base, X_checked, y, self.Cs, self.cv, self.scoring, self.random_state or 0,
                                     sample_weight=weight)
        self.path_ = path
        self.Cs_ = path.Cs
        self.scores_ = path.scores
        self.C_ = path.best_C
        if self.refit:
            C, self.C = self.C, self.C_
            try:
                super().fit(X, y, sample_weight)
            finally:
                self.C = C
        return self


_CV_PARAMS = ("Cs", "cv", "scoring", "refit")


def _cv_init(self, Cs=DEFAULT_CS, *, cv=5, scoring=None, refit=True, C=1.0, penalty="l2", l1_ratio=None,
             solver="auto", tol=1e-4, max_iter=1000, fit_intercept=True, intercept_scaling=1.0,
             regularize_intercept=False, class_weight=None, warm_start=False, random_state=None, verbose=0,
             time_limit=None, solver_options=None):
    self.Cs, self.cv, self.scoring, self.refit = Cs, cv, scoring, refit
    type(self)._base().__init__(self, C, penalty=penalty, l1_ratio=l1_ratio, solver=solver, tol=tol,
                                max_iter=max_iter, fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                                regularize_intercept=regularize_intercept, class_weight=class_weight,
                                warm_start=warm_start, random_state=random_state, verbose=verbose,
                                time_limit=time_limit, solver_options=solver_options)


class MaxentClassifierCV(_CVMixin, MaxentClassifier):
    """:class:`~loglin.estimators.MaxentClassifier` with C chosen by cross-validation (``C_``, ``Cs_``,
    ``scores_`` of shape (folds, Cs), ``path_``); ``C`` is unused when ``refit`` picks ``C_``."""

    __init__ = _cv_init

    @staticmethod
    def _base():
        return MaxentClassifier


class LogisticRegressionCV(_CVMixin, LogisticRegression):
    """:class:`~loglin.estimators.LogisticRegression` with C chosen by cross-validation (see
    :class:`MaxentClassifierCV`)."""

    __init__ = _cv_init

    @staticmethod
    def _base():
        return LogisticRegression
