"""Model selection over C: a warm-started regularization path scored by k-fold cross-validation.

    path = cross_validation_path(MaxentClassifier(), X, y, Cs=np.logspace(-4, 4, 10), cv=5)
    path.best_C, path.table(), path.plot("path.png")

Each fold keeps one estimator that walks the Cs in increasing order with ``warm_start=True``
(the optimum at C is the start at the next, larger C: as LIBLINEAR's ``-C`` search does), and
is scored on its held-out rows. ``patience``: stop the path once the mean score has not improved
for that many consecutive Cs (LIBLINEAR's search stops the same way). The folds are stratified
(each class spread over the folds in proportion) and fixed by ``random_state``.
:class:`MaxentClassifierCV` / :class:`LogisticRegressionCV` wrap it as estimators
(scikit-learn's LogisticRegressionCV parameters: ``Cs``, ``cv``, ``scoring``, ``refit``, ``n_jobs``: folds in
worker processes, :class:`FoldPool`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import InvalidInputError, LoglinError
from .estimators import LogisticRegression, MaxentClassifier, _check_y
from .params import store_params
from .signals import (call_clock, check_command_deadline, command_clock_state, continued_command_clock,
                      raising_on_signal, received, received_count)

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
    iterations: np.ndarray = field(default_factory=lambda: np.zeros(0))  # solver iterations per C, all folds

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


def _accuracy(estimator, X, y) -> float:
    return float(estimator.score(X, y))


def _scorer(scoring):
    """(name, score(estimator, X, y)); None: accuracy (the estimator's own score)."""
    if scoring is None or scoring == "accuracy":
        return "accuracy", _accuracy
    if callable(scoring):
        return getattr(scoring, "__name__", "score"), scoring
    try:
        from sklearn.metrics import get_scorer
    except ImportError:
        raise InvalidInputError(f"scoring {scoring!r} needs scikit-learn; without it use None (accuracy) or a "
                                f"callable(estimator, X, y)") from None
    return str(scoring), get_scorer(scoring)


def cross_validation_path(estimator, X, y, Cs=DEFAULT_CS, cv: int = 5, scoring=None, random_state=0,
                          patience: int | None = None, sample_weight=None, n_jobs=None) -> Path:
    """The :class:`Path` of ``estimator`` (a loglin classifier; its C is replaced) over ``Cs``.
    ``sample_weight`` weighs the rows in the fits (the held-out scores are unweighted). ``n_jobs``: folds run
    in that many worker processes (None: 1, in this process; -1: every core; see :func:`walk_path`). The
    estimator's ``time_limit`` (seconds of wall time) bounds the whole path, not each fold fit: a fit that
    reaches it stops there, and the path then raises :class:`~loglin.errors.TimeLimitBeforeTraining`
    (:func:`loglin.signals.call_clock`; inside a ``loglin`` command, the command's ``--time-limit`` rules)."""
    with call_clock(getattr(estimator, "time_limit", None)):
        return _path(estimator, X, y, Cs, cv, scoring, random_state, patience, sample_weight, n_jobs)


def _path(estimator, X, y, Cs, cv, scoring, random_state, patience, sample_weight, n_jobs) -> Path:
    name, score = _scorer(scoring)
    classes, codes = _check_y(y, np.shape(X)[0], type(estimator).__name__)
    y = classes[codes]                          # validated labels (an object array of numbers becomes numeric)
    folds = _splits(cv, X, y, codes, random_state)
    params = {**estimator.get_params(), "warm_start": True}
    task = _MatrixFolds(type(estimator), params, X, y, folds,
                        None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64), score)
    return walk_path(c_grid(Cs), len(folds), task, name, patience, n_jobs)


class _MatrixFolds:
    """One fold's fit at C and its held-out score; the fold's estimator carries its weights to the next C
    (``warm_start=True``: the optimum at C is the start at the next, larger C)."""

    def __init__(self, kind, params, X, y, folds, sample_weight, score):
        self.kind, self.params, self.X, self.y, self.folds = kind, params, X, y, folds
        self.sample_weight, self.score = sample_weight, score

    def __call__(self, f, C, model):
        train, test = self.folds[f]
        model = self.kind(**self.params) if model is None else model
        model.set_params(C=float(C))
        model.fit(self.X[train], self.y[train], None if self.sample_weight is None else self.sample_weight[train])
        return (self.score(model, self.X[test], self.y[test]), np.count_nonzero(model.coef_),
                getattr(model, "n_iter_", None), model)


def grouped_path(items, fit, score, Cs=AUTO_CS, cv: int = 5, random_state=0, patience: int | None = None,
                 scoring: str = "score", warm_start: bool = False, n_jobs=None,
                 time_limit: float | None = None) -> Path:
    """The path for models trained on a list of items (sentences, documents): ``fit(train_items, C) ->
    model`` and ``score(model, test_items) -> float``; the folds are a random partition of the items.
    ``warm_start``: ``fit`` is called as ``fit(train_items, C, previous)`` with the fold's model at the
    previous C (None at the first) to start from; else each fit starts cold. ``n_jobs`` as in
    :func:`cross_validation_path` (then ``fit`` and ``score`` must be picklable: module-level functions or
    objects). ``time_limit`` (seconds of wall time) bounds the whole path as in :func:`cross_validation_path`:
    no fit starts after it, loglin's solvers inside ``fit`` stop at it, and the path then raises
    :class:`~loglin.errors.TimeLimitBeforeTraining`."""
    n, k = len(items), int(cv)
    if not 2 <= k <= n:
        raise InvalidInputError(f"cv must be between 2 and the number of items ({n}), got {k}")
    if time_limit is not None and not time_limit > 0:
        raise InvalidInputError(f"time_limit must be a positive number of seconds or None, got {time_limit!r}")
    order = np.random.default_rng(random_state).permutation(n)
    folds = [np.sort(order[f::k]) for f in range(k)]
    task = _ItemFolds(items, folds, fit, score, warm_start)
    with call_clock(time_limit):
        return walk_path(c_grid(Cs), k, task, scoring, patience, n_jobs)


class _ItemFolds:
    """:func:`grouped_path`'s fold fits: train on the other folds' items, score on the fold's own."""

    def __init__(self, items, folds, fit, score, warm_start):
        self.items, self.folds, self.fit, self.score, self.warm_start = items, folds, fit, score, warm_start

    def __call__(self, f, C, previous):
        held = set(self.folds[f].tolist())
        train = [x for i, x in enumerate(self.items) if i not in held]
        model = self.fit(train, float(C), previous) if self.warm_start else self.fit(train, float(C))
        value = self.score(model, [self.items[i] for i in self.folds[f]])
        return value, None, getattr(model, "n_iter_", None), model if self.warm_start else None


def n_workers(n_jobs, n_tasks: int) -> int:
    """scikit-learn's n_jobs: None or 1 -> 1; -1 -> every core; -2 -> all but one; capped at ``n_tasks``."""
    import os
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InvalidInputError(f"n_jobs must be a non-zero integer or None, got {n_jobs!r}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    wanted = int(n_jobs) if n_jobs > 0 else max(1, cores + 1 + int(n_jobs))
    return max(1, min(wanted, n_tasks))


def walk_path(Cs, n_folds, task, scoring, patience, n_jobs=None) -> Path:
    """Cs in increasing order, every fold at each; stops after ``patience`` Cs without a better mean, or on
    Ctrl-C / SIGTERM during any fit (the whole path, not only that fit). ``task(f, C, state) -> (score,
    non-zero weights or None, iterations or None, state)``: the state (the fold's model) is handed back at
    the next C. ``n_jobs`` > 1: the folds of each C run at once in worker processes (:class:`FoldPool`)."""
    scores, nonzeros, iterations = [], [], []
    best, since_best = -np.inf, 0
    states = [None] * n_folds
    with FoldPool(task, n_workers(n_jobs, n_folds)) as pool:
        for C in Cs:
            results = pool.run(C, states)
            states = [r[3] for r in results]
            row = [r[0] for r in results]
            nnz = [r[1] for r in results if r[1] is not None]
            its = [r[2] for r in results if r[2] is not None]
            scores.append(row)
            nonzeros.append(np.mean(nnz) if nnz else np.nan)
            iterations.append(np.sum(its) if its else np.nan)
            mean = float(np.mean(row))
            best, since_best = (mean, 0) if mean > best + 1e-12 else (best, since_best + 1)
            if patience is not None and since_best >= patience:
                break
    n = len(scores)
    return Path(Cs=Cs[:n], scores=np.asarray(scores).T, scoring=scoring, nonzeros=np.asarray(nonzeros),
                iterations=np.asarray(iterations))


def _quiet(task, f, C, state):
    import warnings
    from .errors import ConvergenceWarning, DataScaleWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)     # reported once, on the refit
        warnings.simplefilter("ignore", DataScaleWarning)       # the same data: once, on the refit
        return task(f, C, state)


_WORKER_TASK = None


def _start_worker(task, threads):
    """A fold worker: the task (with the data) arrives once; Ctrl-C is the parent's to handle; the cores
    are shared among the workers (numba threads)."""
    import multiprocessing
    import signal
    global _WORKER_TASK
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import numba
    # Numba's first thread launch takes a process lock of the start method's context: under "forkserver" a
    # named semaphore, registered with the resource tracker the workers share with the command and released
    # only at a normal exit, so a worker killed when the path stops (a signal, the time limit) left "leaked
    # semaphore objects" for the tracker to report after the command's error line (docs/decisions/0063).
    # Under "fork" the lock is unlinked at once and never registered; the worker starts no process itself.
    method = multiprocessing.get_start_method(allow_none=True)
    multiprocessing.set_start_method("fork", force=True)
    try:
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    finally:
        multiprocessing.set_start_method(method, force=True)
    _WORKER_TASK = task


def _run_in_worker(f, C, state, clock=None):
    with continued_command_clock(clock):        # the command's --time-limit bounds the fold here too
        return _quiet(_WORKER_TASK, f, C, state)


STOPPED_PATH = "cross-validation stopped, its fold workers ended; no model written"

_PRELOAD = ("loglin.selection", "loglin.tagging.estimator", "loglin.parsing.estimator", "loglin.crfsuite")


class FoldPool:
    """Runs a path's fold fits: in this process (1 worker), or in worker processes that each receive the
    task and its data once, with the cores divided among them. Processes, not threads: loglin's Numba
    kernels hold the GIL (none is ``nogil``), so threads would run the folds one at a time. Workers are
    forked from a fresh fork server that has imported loglin (``_PRELOAD``), never from this process (a
    fork after the OpenMP pool has started is unsafe); spawned where there is no fork server. Each fold's
    model travels to a worker and back with its weights, so a fold's warm start is the same whichever
    worker runs it, and the results equal those of one worker (up to the kernels' summation order at
    other thread counts)."""

    def __init__(self, task, workers: int):
        self.task, self.workers, self.executor = task, int(workers), None

    def __enter__(self):
        if self.workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            import numba
            threads = max(1, numba.get_num_threads() // self.workers)
            if "forkserver" in multiprocessing.get_all_start_methods():
                context = multiprocessing.get_context("forkserver")
                context.set_forkserver_preload(list(_PRELOAD))
            else:
                context = multiprocessing.get_context("spawn")
            self.executor = ProcessPoolExecutor(self.workers, mp_context=context,
                                                initializer=_start_worker, initargs=(self.task, threads))
        return self

    def run(self, C, states):
        if self.executor is None:
            out, mark = [], received_count()
            for f, state in enumerate(states):
                check_command_deadline(f"cross-validating C (fold {f + 1} at C = {C:g})")
                out.append(_quiet(self.task, f, C, state))
                if received(mark) is not None:
                    raise KeyboardInterrupt(STOPPED_PATH)
            return out
        import pickle
        from concurrent.futures.process import BrokenProcessPool
        mark = received_count()
        check_command_deadline(f"cross-validating C (at C = {C:g})")
        clock = command_clock_state()
        try:
            with raising_on_signal(STOPPED_PATH):       # the pool is stopped on the way out (__exit__)
                futures = [self.executor.submit(_run_in_worker, f, C, state, clock) for f, state in enumerate(states)]
                return [future.result() for future in futures]
        except BrokenProcessPool:
            if received(mark) is not None:                # the signal reached the workers' group first
                raise KeyboardInterrupt(STOPPED_PATH) from None
            raise LoglinError("a cross-validation worker process died (killed, or out of memory); run the "
                              "folds in this process with --jobs 1") from None
        except (pickle.PicklingError, AttributeError, TypeError) as exc:
            if not isinstance(exc, pickle.PicklingError) and "pickle" not in str(exc):
                raise                                   # a failure of the fit itself
            raise InvalidInputError(f"n_jobs > 1 runs the folds in worker processes, which receive the estimator, "
                                    f"scoring and fit functions by pickling: use module-level functions, not "
                                    f"lambdas or closures ({exc})") from None

    def __exit__(self, kind, exc, tb):
        if self.executor is not None:
            if exc is not None:     # Ctrl-C, SIGTERM or a failed fit: end the others now (a SIGTERM would only
                for process in list(getattr(self.executor, "_processes", {}).values()):    # stop their solver)
                    process.kill()
            self.executor.shutdown(wait=exc is None, cancel_futures=True)
        return False


class _CVMixin:
    """fit: the path over Cs, then (refit=True) one fit at the best C on all rows."""

    def fit(self, X, y=None, sample_weight=None):
        """The path over ``Cs``, then the refit at the best C; ``time_limit`` bounds the whole call (see the
        class)."""
        base = self._base()(**{k: v for k, v in self.get_params().items() if k not in _CV_PARAMS})
        base._check_params()
        with call_clock(self.time_limit):
            return self._fit_path(base, X, y, sample_weight)

    def _fit_path(self, base, X, y, sample_weight):
        from .estimators import _check_X
        from .estimators import _check_sample_weight
        X_checked, _ = _check_X(X, type(self).__name__)
        weight = None if sample_weight is None else _check_sample_weight(sample_weight, X_checked.shape[0])
        path = cross_validation_path(base, X_checked, y, self.Cs, self.cv, self.scoring, self.random_state or 0,
                                     sample_weight=weight, n_jobs=self.n_jobs)
        self.path_ = path
        self.Cs_ = path.Cs
        self.scores_ = path.scores
        self.C_ = path.best_C
        if self.refit:
            check_command_deadline("cross-validating C")        # the refit gets what is left, if anything
            C, self.C = self.C, self.C_
            try:
                super().fit(X, y, sample_weight)
            finally:
                self.C = C
        return self


_CV_PARAMS = ("Cs", "cv", "scoring", "refit", "n_jobs")


def _cv_init(self, Cs=DEFAULT_CS, *, cv=5, scoring=None, refit=True, n_jobs=None, C=1.0, penalty="l2", l1_ratio=None,
             solver="auto", tol=1e-4, max_iter=1000, fit_intercept=True, intercept_scaling=1.0,
             regularize_intercept=False, class_weight=None, warm_start=False, random_state=None, verbose=0,
             time_limit=None, solver_options=None):
    store_params(self, locals())


class MaxentClassifierCV(_CVMixin, MaxentClassifier):
    """:class:`~loglin.estimators.MaxentClassifier` with C chosen by cross-validation (``C_``, ``Cs_``,
    ``scores_`` of shape (folds, Cs), ``path_``); ``C`` is unused when ``refit`` picks ``C_``.

    ``time_limit`` (seconds of wall time) bounds the whole ``fit`` call, the fold fits and the refit together,
    as ``loglin train -C auto --time-limit`` bounds the command: when it runs out during the cross-validation
    (or before the refit), ``fit`` raises :class:`~loglin.errors.TimeLimitBeforeTraining` and fits nothing,
    after at most one more solver step of the fold that was running; the refit gets what is left and, when
    that runs out, stops with its best weights and a ConvergenceWarning, as a plain estimator's fit does."""

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
