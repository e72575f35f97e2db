"""Size limits: no number read from a file or an option decides an allocation before it is checked.

Readers and model loading size arrays from what they have seen (features, tokens,
bytes of the file); a number that would make an array larger than these limits is
refused with one error naming the file (and line) instead of a MemoryError, an
OverflowError or a machine that swaps for minutes. docs/decisions/0011 gives the reasons.
"""
from __future__ import annotations

MAX_BEAM = 1000                 # a beam keeps beam x labels hypotheses per token
# feature indices of a data file: models keep one dense weight per index and class, and every solver a few
# vectors of that size (LIBSVM's largest data set, kdd2010, has 29.9 million features)
MAX_FEATURES = 2 ** 25
MAX_ARRAY_BYTES_PER_FILE_BYTE = 10 ** 4   # a compressed model member cannot expand beyond this ratio
MAX_TEMPLATE_RANGE = 1000       # templates that one NAME[A..B] line of a template file expands to

__all__ = ["MAX_ARRAY_BYTES_PER_FILE_BYTE", "MAX_BEAM", "MAX_FEATURES", "MAX_TEMPLATE_RANGE"]
