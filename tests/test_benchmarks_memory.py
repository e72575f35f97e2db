"""benchmarks.common.PeakMemory: what an excluded evaluation leaves resident is not counted; what the measured
code allocates is."""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.common import PeakMemory  # noqa: E402

MB = 1 << 20


def _touched(n_mb):
    a = np.empty(n_mb * MB, dtype=np.uint8)
    a[::4096] = 1                           # every page resident
    return a


def test_memory_left_by_an_excluded_evaluation_is_not_counted_but_the_measured_code_is():
    if not Path("/proc/self/clear_refs").exists():
        pytest.skip("no /proc/self/clear_refs")
    kept = []
    with PeakMemory() as mem:
        with mem.excluded():
            kept.append(_touched(120))      # the evaluation's memory stays resident
        work = _touched(40)                 # the measured code's own peak
        del work
    if mem.base is None:
        pytest.skip("clear_refs not writable here")
    assert 30 <= mem.mb <= 80, mem.mb       # ~40 MB, not ~160
