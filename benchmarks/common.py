"""What every comparison shares: clocks, peak memory, machine facts, black-box sweeps, output.

Peak memory is the **RSS high-water mark delta** of the benchmark process: before each
measured call the kernel's peak counter is reset (``echo 5 > /proc/self/clear_refs``),
and after it the peak (VmHWM) minus the resident size before (VmRSS) is the memory the
call needed on top of what was already resident (data, compiled kernels). It counts C
allocations (LIBLINEAR, CRFsuite, BLAS) as well as NumPy's, which tracemalloc would not.
Memory freed earlier but kept by the allocator can be reused without raising RSS, so it
is a lower bound; None where /proc is unavailable.
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
LEVELS = (1e-2, 1e-4, 1e-6)


def now():
    """(wall, cpu) seconds."""
    return time.perf_counter(), time.process_time()


def level_key(eps):
    return f"{eps:.0e}"


# ----------------------------------------------------------------------------- memory
def _status_kb(field):
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class PeakMemory:
    """``with PeakMemory() as m: ...`` then ``m.mb``: RSS high-water delta in MB (see module doc)."""

    def __enter__(self):
        gc.collect()
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.base = _status_kb("VmRSS")
        except OSError:
            self.base = None
        self.mb = None
        self.peaks = []
        self.retained = 0            # kB an excluded evaluation left resident (the allocator kept its freed pages)
        return self

    def __exit__(self, *exc):
        last = _status_kb("VmHWM")
        peak = max([p for p in self.peaks + [None if last is None else last - self.retained] if p is not None],
                   default=None)
        if self.base is not None and peak is not None:
            self.mb = max(0.0, (peak - self.base) / 1024.0)
        return False

    @contextlib.contextmanager
    def excluded(self):
        """``with m.excluded(): ...``: what runs inside (the benchmark's own evaluation of a trace point) does not
        count: the high-water mark so far is kept and the kernel's counter reset after it; what it leaves
        resident (freed pages the allocator keeps in a heap fragmented by the benchmark's own objects) is taken
        off the later high-water marks."""
        hwm, rss = _status_kb("VmHWM"), _status_kb("VmRSS")
        self.peaks.append(None if hwm is None else hwm - self.retained)
        try:
            yield
        finally:
            if self.base is not None:
                after = _status_kb("VmRSS")
                if rss is not None and after is not None:
                    self.retained += max(0, after - rss)
                Path("/proc/self/clear_refs").write_text("5")


# ----------------------------------------------------------------------------- machine
def loadavg():
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def machine():
    import numba
    import scipy
    from importlib.metadata import PackageNotFoundError, version

    def ver(dist):
        try:
            return version(dist)
        except PackageNotFoundError:
            return None
    return {"cpus": os.cpu_count(), "numba_threads": numba.get_num_threads(), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "numba": numba.__version__,
            "sklearn": ver("scikit-learn"), "liblinear": ver("liblinear-official"),
            "python-crfsuite": ver("python-crfsuite")}


# ----------------------------------------------------------------------------- measurements
def median_or_none(values):
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals and len(vals) == len(values) else None


def rel_diff(f, p_star):
    return (f - p_star) / abs(p_star)


def trace_time_to(points, p_star, eps, clock=0):
    """First point (wall, cpu, f, ...) of a trace within eps of P*."""
    for p in points:
        if rel_diff(p[2], p_star) <= eps:
            return p[clock]
    return None


def sweep_time_to(points, p_star, eps, clock=0):
    """Fastest call of a tolerance sweep whose weights are within eps of P*."""
    times = [p[clock] for p in points if rel_diff(p[2], p_star) <= eps]
    return min(times) if times else None


def run_sweep(fit, fun, tolerances, stop_below=None, time_budget=None):
    """Call ``fit(tol) -> ((wall, cpu), w, extra)`` for each tolerance (loosest first).

    The objective of every returned w is recomputed by ``fun`` (our kernel, untimed).
    Stops early once a call's relative difference to ``stop_below[0]`` (a P* estimate) is
    <= ``stop_below[1]``, or after ``time_budget`` CPU seconds of calls (the machine is shared).
    Returns points (wall, cpu, f, tol, peak MB) and the weights of the last call.
    """
    points, w_last, spent = [], None, 0.0
    for tol in tolerances:
        gc.collect()
        with PeakMemory() as mem:
            seconds, w, _ = fit(tol)
        f = fun(w)
        points.append((seconds[0], seconds[1], f, tol, mem.mb))
        w_last = w
        spent += seconds[1]
        if stop_below is not None and rel_diff(f, stop_below[0]) <= stop_below[1]:
            break
        if time_budget is not None and spent > time_budget:
            break
    return points, w_last


def summarize_tool(runs, p_star, levels, kind):
    """runs: list of point lists (one per repeat). Per clock and level: per-run times, median."""
    pick = trace_time_to if kind == "trace" else sweep_time_to
    out = {}
    for c, clock in enumerate(("wall", "cpu")):
        out[clock] = {}
        for eps in levels:
            times = [pick(points, p_star, eps, c) for points in runs]
            out[clock][level_key(eps)] = {"runs": times, "median": median_or_none(times)}
    return out


def fmt_s(x):
    if x is None:
        return "not reached"
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def fmt_ratio(x):
    return "—" if x is None else f"{x:.2f}×"


def write(name, md, result, out=None):
    """``<name>.md``, the short report ``<name>.json`` (what is committed) and, when the result has
    per-iteration traces, the full result ``<name>.full.json`` (git ignores it; docs/decisions/0054)."""
    from .report import command_line, compact, full_path, has_traces
    out = Path(out) if out else RESULTS
    out.mkdir(parents=True, exist_ok=True)
    result = {**result, "reproduce": result.get("reproduce") or command_line()}
    report = compact(result)
    (out / f"{name}.md").write_text(md)
    (out / f"{name}.json").write_text(json.dumps(report, indent=1, default=_json_default))
    if has_traces(result):
        full_path(out / f"{name}.json").write_text(json.dumps(result, indent=1, default=_json_default))
    print(md)
    return out / f"{name}.md"


def _json_default(obj):
    if isinstance(obj, (np.floating, np.integer)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serializable: {type(obj)}")


def load_result(name, out=None):
    path = (Path(out) if out else RESULTS) / f"{name}.json"
    return json.loads(path.read_text()) if path.is_file() else None
