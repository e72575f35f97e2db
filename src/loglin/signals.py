"""SIGINT / SIGTERM during training: stop at the next safe point and keep the model.

A KeyboardInterrupt raised inside a (parallel) Numba kernel surfaces as a SystemError and
loses the run, so while a training loop runs the handlers only set a flag, which the loop
polls between steps. The first signal restores the previous handlers, so a second Ctrl-C
(or SIGTERM) acts at once. Handlers can only be set from the main thread; elsewhere the
guard does nothing and the previous behaviour stays. A signal the process was started
ignoring (SIGINT for a background job of a non-interactive shell) stays ignored, as Python
itself leaves it: otherwise it would be lost before training and act during it.
"""
from __future__ import annotations

import signal
import sys
import threading
import time
from contextlib import contextmanager

CAUGHT = (signal.SIGINT, signal.SIGTERM)

_last_received: list[int] = []          # signals that stopped a run in this process, in order
_command_started: list[float] = []      # perf_counter() at the start of the running training command
_command_budget: list[dict] = []        # per running command: its wall-clock limit and whether training began


@contextmanager
def command_clock(started: float):
    """While a training command runs: wall-clock time limits count from ``started`` (the command's start), so
    that ``--time-limit`` bounds the whole command, reading and feature extraction included."""
    _command_started.append(started)
    _command_budget.append({"limit": None, "training": False})
    try:
        yield
    finally:
        _command_started.pop()
        _command_budget.pop()


def limit_command(seconds: float | None) -> None:
    """The running command's wall-clock ``--time-limit`` (None: none), for :func:`check_command_time`."""
    if _command_budget:
        _command_budget[-1]["limit"] = seconds


def training_started() -> None:
    """A solver began (:func:`loglin.solvers.base.minimize`): from here the solver owns the time limit."""
    if _command_budget:
        _command_budget[-1]["training"] = True


def check_command_time(doing: str) -> None:
    """Raise :class:`~loglin.errors.TimeLimitBeforeTraining` when the running command's time limit is used up
    before any training began; called at bounded intervals while data is read and features extracted. Does
    nothing outside a command with a limit (library calls) and once a solver has started."""
    if _command_budget and not _command_budget[-1]["training"]:
        check_command_deadline(doing)


def check_command_deadline(doing: str) -> None:
    """:func:`check_command_time` for work that trains but precedes the command's own training: the fold fits of
    a cross-validated C (-C auto, --cv), called between them. The limit holds even though solvers have run; the
    command stops with exit status 124 and no model, as when reading outlasts the limit. Does nothing outside a
    command with a limit."""
    if not _command_budget or _command_budget[-1]["limit"] is None:
        return
    elapsed = command_elapsed()
    if elapsed > _command_budget[-1]["limit"]:
        from .errors import TimeLimitBeforeTraining
        raise TimeLimitBeforeTraining(_command_budget[-1]["limit"], elapsed, doing)


def command_clock_state():
    """(the running command's start as a wall-clock time.time(), its wall-clock limit) to carry into a worker
    process (:func:`continued_command_clock`); None outside a command. Wall-clock time, not perf_counter(): the
    worker may start the work much later than it was sent (a fold queued behind others), and must count from
    the command's start, not from the sending."""
    if not _command_started:
        return None
    return time.time() - command_elapsed(), _command_budget[-1]["limit"]


@contextmanager
def continued_command_clock(state):
    """In a worker process: the clock of the command that sent the work (``state`` from
    :func:`command_clock_state`), so that its ``--time-limit`` bounds the solvers and reads here as in the
    command's own process. None: nothing changes."""
    if state is None:
        yield
        return
    started, limit = state
    with command_clock(time.perf_counter() - max(0.0, time.time() - started)):
        limit_command(limit)
        yield


@contextmanager
def call_clock(seconds, option: str = "time_limit", started: float | None = None):
    """A library call's wall-clock ``time_limit`` (``seconds``; None: none) bounding the whole call as
    ``--time-limit`` bounds a command: the call runs on a command clock started now (or at ``started``, a
    perf_counter() value: a cluster started for the call), so that its solvers count
    from here, :func:`check_command_deadline` holds between its fits (cross-validation folds), and the work it
    sends to worker processes carries the clock. Running out before the final fit raises
    :class:`~loglin.errors.TimeLimitBeforeTraining` naming ``option``. Inside a command (or a call that already
    runs on a clock) nothing changes: the outer clock rules."""
    if seconds is None or in_command():
        yield
        return
    from .errors import TimeLimitBeforeTraining
    with command_clock(time.perf_counter() if started is None else started):
        limit_command(float(seconds))
        try:
            yield
        except TimeLimitBeforeTraining as exc:          # raised here or in a fold worker: the call's own words
            raise TimeLimitBeforeTraining(exc.limit, exc.elapsed, exc.doing, option) from None


def in_command() -> bool:
    """Whether a command clock (:func:`command_clock`) is running."""
    return bool(_command_started)


def command_time_left() -> float | None:
    """Wall seconds left of the running command's time limit (never below 0); None outside a command with a
    limit (library calls)."""
    if not _command_budget or _command_budget[-1]["limit"] is None:
        return None
    return max(0.0, _command_budget[-1]["limit"] - command_elapsed())


def command_elapsed() -> float:
    """Wall seconds since the running training command started; 0 outside one (library calls)."""
    return time.perf_counter() - _command_started[-1] if _command_started else 0.0


class StopOnSignal:
    """Context manager: ``with StopOnSignal() as stop: ... if stop.requested: ...``."""

    def __init__(self):
        self.signum: int | None = None
        self._previous: dict = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str | None:
        return None if self.signum is None else signal.Signals(self.signum).name

    def _handle(self, signum, frame):
        self.signum = signum
        _last_received.append(signum)
        self._restore()                 # a second signal acts at once
        print(f"\nloglin: {self.name} received: stopping after the current step and keeping the best model "
              "so far (send it again to abort at once)", file=sys.stderr, flush=True)

    def _restore(self):
        for signum, handler in self._previous.items():
            try:
                signal.signal(signum, handler)
            except (ValueError, OSError):
                pass
        self._previous = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for signum in CAUGHT:
                previous = signal.getsignal(signum)
                if previous is None or previous == signal.SIG_IGN:    # set from C (could not be put back), ignored
                    continue
                self._previous[signum] = previous
                signal.signal(signum, self._handle)
        return self

    def __exit__(self, *exc):
        self._restore()
        return False


@contextmanager
def raising_on_signal(message: str):
    """While the main thread only waits in Python (on worker processes, never inside a compiled kernel):
    SIGINT / SIGTERM are recorded (for the exit status) and raise ``KeyboardInterrupt(message)`` at once, so
    that the waiting code can stop its workers. Elsewhere than the main thread: nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        _last_received.append(signum)
        raise KeyboardInterrupt(message)
    previous = {signum: signal.getsignal(signum) for signum in CAUGHT}
    for signum, handler in previous.items():
        if handler is not None and handler != signal.SIG_IGN:
            signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            if handler is not None and handler != signal.SIG_IGN:
                signal.signal(signum, handler)


def received_count() -> int:
    """How many signals have stopped training runs in this process so far (a mark for :func:`received`)."""
    return len(_last_received)


def received(since: int = 0) -> int | None:
    """The last signal that stopped a training run after mark ``since`` (for the exit status), or None."""
    recent = _last_received[since:]
    return recent[-1] if recent else None


def exit_status(signum: int) -> int:
    """The shell's convention for a command ended by a signal: 128 + its number."""
    return 128 + int(signum)
