"""Progress of a training run, in a terminal and in a log, with a remaining-time estimate from the stopping test.

In a terminal: a tqdm line (iterations, elapsed time, f, the measure the stopping rule watches and
the estimate). Otherwise (stderr redirected to a log): one plain line every LOG_SECONDS and the
last state when the run ends. The
estimate extrapolates the recent linear rate of log(measure) per second to the tolerance: the
measure is the relative gradient ||g|| / ||g0|| against ``tol``, or for solvers stopping on the
duality gap the relative gap against ``gap_tol``; it is shown only once the rate is downward (and a
relative gap below 1: before, the dual bound is still <= 0 and its drift predicts nothing),
never from --max-iter (which a converging run does not reach).
"""
from __future__ import annotations

import math
import sys
import time

LOG_SECONDS = 5.0       # a log line at most this often
WINDOW = 8              # recent records the rate is fitted on


class Progress:
    """``update(record)`` after every recorded iteration; ``close()`` at the end."""

    def __init__(self, solver: str, tol: float, gap_tol: float | None, stream=None, terminal: bool | None = None,
                 clock=time.perf_counter):
        self.solver, self.stream, self.clock = solver, stream if stream is not None else sys.stderr, clock
        self.target = gap_tol if (tol == 0 and gap_tol) else tol
        self.use_gap = tol == 0 and bool(gap_tol)
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.recent: list[tuple[float, float]] = []
        self.started = clock()
        self.last_line = self.started
        self.bar = None
        self.last_text = self.emitted = None
        if self.terminal:
            from tqdm.auto import tqdm
            self.bar = tqdm(desc=f"loglin {solver}", unit="it", leave=False, file=self.stream)

    def measure(self, record) -> float | None:
        if self.use_gap:
            gap, f = record.get("duality_gap"), record.get("objective")
            return abs(gap) / abs(f) if gap is not None and f else None
        return record.get("rel_grad")

    def remaining(self) -> float | None:
        """Seconds until the measure reaches the target at the recent rate, or None if it is not falling."""
        if len(self.recent) < 3 or not self.target or self.target <= 0:
            return None
        (t0, m0), (t1, m1) = self.recent[0], self.recent[-1]
        if t1 <= t0 or m1 <= 0 or m0 <= m1 or (self.use_gap and m1 >= 1.0):
            return None
        if m1 <= self.target:
            return 0.0
        rate = (math.log(m0) - math.log(m1)) / (t1 - t0)
        return (math.log(m1) - math.log(self.target)) / rate

    def update(self, record, iterations: int = 1) -> None:
        now = self.clock()
        m = self.measure(record)
        if m is not None and math.isfinite(m) and m > 0:
            self.recent = (self.recent + [(now - self.started, m)])[-WINDOW:]
        eta = self.remaining()
        what = "gap" if self.use_gap else "rel_grad"
        if self.bar is not None:
            self.bar.update(iterations)
            post = {"f": f"{record.get('objective', float('nan')):.6g}"}
            if m is not None:
                post[what] = f"{m:.2e}"
            if eta is not None:
                post["eta"] = f"{eta:.0f}s"
            self.bar.set_postfix(post)
        else:
            self.last_record, self.last_text = record, self._line(record, m, what, eta, now)
            if now - self.last_line >= LOG_SECONDS:
                self.last_line = now
                self._emit()

    def _line(self, record, m, what, eta, now) -> str:
        shown = f", {what} {m:.2e} (tol {self.target:g})" if m is not None else ""
        guess = f", about {eta:.0f} s to go at the current rate" if eta else ""
        return (f"loglin {self.solver}: iteration {record.get('iteration')}, {now - self.started:.0f} s, "
                f"f = {record.get('objective', float('nan')):.8g}{shown}{guess}")

    def _emit(self) -> None:
        print(self.last_text, file=self.stream, flush=True)
        self.emitted = self.last_text

    def close(self) -> None:
        """Ends the bar; in a log, the last state is the closing line (once)."""
        if self.bar is not None:
            self.bar.close()
        elif self.last_text is not None and self.emitted != self.last_text:
            self._emit()
