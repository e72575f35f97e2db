"""Size limits: no number read from a file or an option decides an allocation before it is checked.

Readers and model loading size arrays from what they have seen (features, tokens,
bytes of the file); a number that would make an array larger than these limits is
refused with one error naming the file (and line) instead of a MemoryError, an
OverflowError or a machine that swaps for minutes.

    check_count(value, MAX_FEATURES, "feature index", path, line)   # DataFormatError when too large
"""
from __future__ import annotations

from .errors import DataFormatError

MAX_BEAM = 1000                 # a beam keeps beam x labels hypotheses per token
# feature indices of a data file: models keep one dense weight per index and class, and every solver a few
# vectors of that size (LIBSVM's largest data set, kdd2010, has 29.9 million features)
MAX_FEATURES = 2 ** 25
MAX_SENTENCE_TOKENS = 10 ** 6   # tokens of one sentence: parsers allocate n^2 arc scores
MAX_ARRAY_BYTES_PER_FILE_BYTE = 10 ** 4   # a compressed model member cannot expand beyond this ratio


def check_count(value: int, limit: int, what: str, path, line=None) -> int:
    """``value`` if 0 <= value <= limit, else a :class:`DataFormatError` naming file and line."""
    if not 0 <= value <= limit:
        raise DataFormatError(path, line, f"{what} {value} is out of range (at most {limit:,} is supported)")
    return value


__all__ = ["MAX_ARRAY_BYTES_PER_FILE_BYTE", "MAX_BEAM", "MAX_FEATURES", "MAX_SENTENCE_TOKENS", "check_count"]
