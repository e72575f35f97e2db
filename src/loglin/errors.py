"""Exceptions raised at loglin's boundaries (input files, arguments, model files)."""
from contextlib import contextmanager


class LoglinError(Exception):
    """Base class of every error loglin raises on purpose."""


class DataFormatError(LoglinError, ValueError):
    """A data file does not follow its format; the message names file and line."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class InvalidInputError(LoglinError, ValueError):
    """In-memory input (arrays, labels, weights, options) that cannot be used."""


class DataContentError(InvalidInputError):
    """Data that parses but cannot be used as a whole (no rows, one class, a cyclic tree): raised where the
    data is used, which does not know the file; :func:`about_file` at the reading boundary adds its name."""


@contextmanager
def about_file(path):
    """Within the block, a :class:`DataContentError` becomes a :class:`DataFormatError` naming ``path``."""
    try:
        yield
    except DataContentError as exc:
        raise DataFormatError(path, None, str(exc)) from None


class TimeLimitBeforeTraining(LoglinError):
    """A command's ``--time-limit`` ran out while it read its data or extracted features, or cross-validated C:
    nothing was trained and no model is written (the command exits with 124, as GNU ``timeout``). Raised too
    by a library call whose ``time_limit`` bounds the whole call (:func:`loglin.signals.call_clock`:
    ``MaxentClassifierCV.fit``, ``cross_validation_path``, an estimator's ``n_workers`` cluster) when it runs
    out before the final fit."""

    EXIT_STATUS = 124

    def __init__(self, limit: float, elapsed: float, doing: str, option: str = "--time-limit"):
        self.limit, self.elapsed, self.doing, self.option = limit, elapsed, doing, option
        outcome = "no model written" if option.startswith("--") else "no model fitted"     # a command, or a call
        super().__init__(f"time limit of {limit:g} s reached before training started ({elapsed:.1f} s spent "
                         f"{doing}): {outcome}; give a larger {option}")

    def __reduce__(self):               # raised in a fold worker process, re-raised in the command's
        return type(self), (self.limit, self.elapsed, self.doing, self.option)


class ModelFormatError(LoglinError, ValueError):
    """A model file is truncated, corrupted, or from an unsupported version."""


class DataUnavailable(InvalidInputError):
    """A data set an experiment or test needs is not on this machine; the message says where it
    was looked for and how to provide it (``LOGLIN_DATA`` or a ``shared/data`` directory)."""

    def __init__(self, path, hint=None):
        self.path = None if path is None else str(path)
        where = "no data directory" if path is None else f"data not found: {self.path}"
        how = "set LOGLIN_DATA to the directory holding the data sets, or put them in ../shared/data beside the repository"
        super().__init__(f"{where} ({hint}); {how}" if hint else f"{where}; {how}")


class ConvergenceWarning(UserWarning):
    """A run stopped before its optimality test held (a limit, a stall, a signal): the model may be off."""


class DataScaleWarning(UserWarning):
    """Feature values span so many orders of magnitude that solvers lose accuracy: scale the data."""
