"""Exceptions raised at loglin's boundaries (input files, arguments, model files)."""


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


class ModelFormatError(LoglinError, ValueError):
    """A model file is truncated, corrupted, or from an unsupported version."""


class ConvergenceWarning(UserWarning):
    """The solver stopped on a limit before meeting its tolerance."""
