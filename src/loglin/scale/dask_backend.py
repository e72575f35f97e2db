"""The Dask backend: one long-lived ``distributed`` actor per shard, holding the shard and its Numba state.

Actors answer in about a millisecond-scale round trip and keep state between calls (TRON's
``accept`` swaps a cache on the shard). A call to an actor on a dead worker never returns, so
every round waits at most ``timeout`` seconds (a shard's start or a pass over its part of a file:
``start_timeout``) and then raises :class:`ShardError` naming the shard; a scheduler address that
does not answer within ``connect_timeout`` raises :class:`SchedulerUnreachable` before any work.

Inside a training command with a wall-clock ``--time-limit`` (loglin.signals.command_clock) the cluster's
start, the shards' start and the counting pass count against the limit: a wait that would outlast it
stops there with :class:`~loglin.errors.TimeLimitBeforeTraining` (no model). ``close`` waits at most
``CLOSE_WAIT`` seconds, then abandons the cluster and kills its worker processes (docs/decisions/0051).
"""
from __future__ import annotations

import logging
import multiprocessing
import threading
import time
import warnings

from ..errors import InvalidInputError
from ..signals import check_command_time, command_time_left
from .backends import Backend, SchedulerUnreachable, ShardError

DEFAULT_TIMEOUT = 600.0          # seconds one round may take on every shard
DEFAULT_CONNECT_TIMEOUT = 10.0
PING_WAIT = 5.0                  # seconds a shard may take to answer a ping after a round could not be sent
DEFAULT_START_TIMEOUT = 600.0    # a shard's start builds its arrays and warms (on a cold cache, compiles) its kernels
CLOSE_WAIT = 3.0                 # seconds a closing cluster may take before its worker processes are killed
CLOSE_WAIT_PAST_LIMIT = 0.5      # the same once the command's time limit is used up: no graceful shutdown then


class ShardActor:
    """A shard on a Dask worker: built, and its kernels warmed, in the constructor."""

    def __init__(self, kind, arrays, C, threads=1, shared=None):
        import numba
        from .shards import ShardPart, warm_kernels
        numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
        if callable(arrays):            # a recipe: this worker reads its part of the data file
            arrays = arrays() if shared is None else arrays(shared)
        warm_kernels(kind, arrays, C, threads)
        self.part = ShardPart(kind, arrays, C, threads)

    def call(self, method, *args):
        return getattr(self.part, method)(*args)


def _actor_call(actor, method, args):
    """A task on the actor's worker: its result stays there, for the reduction tree's next level."""
    return actor.call(method, *args).result()


def _held(args):
    """A task whose result is its argument (a round's arguments, the shards' shared feature space), kept on
    its worker for the shards' tasks."""
    return args


def _combine(a, b):
    from .backends import add_parts
    return add_parts(a, b)


def _text(exc) -> str:
    return f"{type(exc).__name__}: {exc}"


def _distributed():
    try:
        import distributed
    except ImportError:                  # pragma: no cover - the extra is not installed
        raise InvalidInputError("the Dask backend needs the 'distributed' package: "
                                "pip install 'loglin[dask]'") from None
    return distributed


def _start_wait(seconds):
    """(seconds a start-up wait may take, whether the command's time limit is what bounds it)."""
    left = command_time_left()
    return (seconds, False) if left is None or left >= seconds else (left, True)


def _collect(futures, workers, deadline, seconds, what, limited=False):
    """The results of futures[i] (running on workers[i]) in order, all by ``deadline``; a ShardError
    naming the shard and its worker when one fails or does not answer in time (``limited``: the deadline is
    the command's time limit, then TimeLimitBeforeTraining)."""
    results = []
    for i, future in enumerate(futures):
        try:
            results.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
        except TimeoutError:
            if limited:
                check_command_time(f"waiting for {what} on the workers")
            raise ShardError(i, f"no answer to {what} from worker {workers[i]} within {seconds:g} s "
                                "(the worker died or is stuck)") from None
        except Exception as exc:
            raise ShardError(i, f"{what} failed on worker {workers[i]}: {_text(exc)}") from exc
    return results


def _departed(workers, live, what):
    """A ShardError for the first shard whose worker has left the cluster (``live``: the scheduler's workers
    now), else None: a dead worker also stalls the live shards that wait on data it held, so it goes first."""
    for i, worker in enumerate(workers):
        if worker not in live:
            return ShardError(i, f"no answer to {what}: worker {worker} left the cluster (it died)")
    return None


def _failed_leaf(leaves, workers, what, seconds, live=None):
    """A ShardError for the first shard whose worker left the cluster, else whose call in a reduction tree
    failed, else for the first one that has not finished (its worker died or is stuck); None when every
    shard's call finished (a pairwise sum failed)."""
    gone = None if live is None else _departed(workers, live, what)
    if gone is not None:
        return gone
    for i, leaf in enumerate(leaves):
        if leaf.status == "error":
            return ShardError(i, f"{what} failed on worker {workers[i]}: {_text(leaf.exception(timeout=1))}")
    for i, leaf in enumerate(leaves):
        if leaf.status != "finished":
            return ShardError(i, f"no answer to {what} from worker {workers[i]} within {seconds:g} s "
                                 "(the worker died or is stuck)")
    return None


class DaskBackend(Backend):
    """Shards as Dask actors. Give one of ``client`` (an existing ``distributed.Client``, left open),
    ``address`` (a scheduler to connect to) or ``n_workers`` (a LocalCluster of that many worker
    processes with one thread each, closed with the backend; ``memory_limit``: each such worker's, as Dask
    takes it, e.g. "1.2GB": the nanny restarts a worker that grows past it)."""

    name = "dask"

    def __init__(self, client=None, address=None, n_workers=None, timeout=DEFAULT_TIMEOUT,
                 connect_timeout=DEFAULT_CONNECT_TIMEOUT, memory_limit="auto", start_timeout=DEFAULT_START_TIMEOUT):
        if sum(x is not None for x in (client, address, n_workers)) > 1:
            raise InvalidInputError("give at most one of client, address and n_workers")
        if not timeout > 0:
            raise InvalidInputError(f"timeout must be positive, got {timeout!r}")
        distributed = _distributed()
        self.timeout = float(timeout)
        self.start_timeout = max(float(start_timeout), self.timeout)
        self.cluster = None
        self.client = None
        self.own_client = client is None
        self.actors = []
        self.workers = []
        self._children_before = None      # pids of this process's children before the LocalCluster started
        # a LocalCluster made for one call: train() counts its time_limit from here (docs/decisions/0051)
        self.started = time.perf_counter() if client is None and address is None else None
        if client is not None:
            self.client = client
        elif address is not None:
            wait, limited = _start_wait(float(connect_timeout))
            try:
                self.client = distributed.Client(address, timeout=max(wait, 0.1), direct_to_workers=True,
                                                 set_as_default=False)
            except (OSError, TimeoutError) as exc:
                if limited:
                    check_command_time(f"connecting to the Dask scheduler at {address}")
                raise SchedulerUnreachable(f"the Dask scheduler at {address} did not answer within "
                                           f"{connect_timeout:g} s ({type(exc).__name__}: {exc})") from None
        else:
            n_workers = 2 if n_workers is None else int(n_workers)
            if n_workers < 1:
                raise InvalidInputError(f"workers must be at least 1, got {n_workers}")
            self._children_before = {p.pid for p in multiprocessing.active_children()}
            # the start itself is not interruptible (it is a few seconds); the limit is checked right after it
            # silence_logs: the workers' warnings about tasks cancelled by a close after a time limit are noise, and
            # a task's failure (bad data on a worker) comes back as one error line, never the worker's traceback;
            # a worker that dies still raises ShardError naming it
            self.cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                                    dashboard_address=":0", memory_limit=memory_limit,
                                                    silence_logs=logging.CRITICAL)
            try:
                self.client = distributed.Client(self.cluster, direct_to_workers=True, set_as_default=False)
            except BaseException:
                self.close()
                raise
        try:
            check_command_time("starting the Dask cluster" if self.cluster is not None else "connecting to Dask")
        except BaseException:
            self.close()
            raise

    def default_shards(self) -> int:
        """One shard per worker."""
        return max(1, len(self.client.scheduler_info()["workers"]))

    def _live_workers(self):
        workers = sorted(self.client.scheduler_info()["workers"])
        if not workers:
            raise ShardError(0, "the Dask cluster has no workers")
        return workers

    def load(self, kind, shards, C, threads=1):
        workers = self._live_workers()
        self.workers = [workers[i % len(workers)] for i in range(len(shards))]
        futures = [self.client.submit(ShardActor, kind, arrays, C, threads, shared, actor=True, workers=[worker],
                                      allow_other_workers=False, pure=False)
                   for (arrays, shared), worker in zip(self._hold_shared(shards), self.workers)]
        self.actors = []
        wait, limited = _start_wait(self.start_timeout)
        deadline = time.monotonic() + wait
        for i, future in enumerate(futures):
            try:
                with self.client.as_current():      # the actor proxy binds to the current client, not another one
                    self.actors.append(future.result(timeout=max(0.0, deadline - time.monotonic())))
            except TimeoutError as exc:
                if limited:
                    check_command_time("starting the shards on the workers")
                raise ShardError(i, f"could not start on worker {self.workers[i]} within {wait:g} s") from exc
            except Exception as exc:
                raise ShardError(i, f"could not start on worker {self.workers[i]}: {_text(exc)}") from exc
        self.n_shards = len(self.actors)

    def _hold_shared(self, shards):
        """[(shard i's recipe without its shared part, a future of that part, or None)]: the part all recipes
        share (the global feature space) goes to the first shard's worker once, as a task's argument, and the
        other workers fetch it from there worker to worker, once each for all their shards: a shard's start
        no longer carries it in its graph. Not Client.scatter, for the reason given in ``reduce``. Distributed's
        "Sending large graph" warning is silenced for this one send: it advises what is done here."""
        held, out = {}, []
        for arrays in shards:
            shared = getattr(arrays, "shared", None)
            if shared is None:
                out.append((arrays, None))
                continue
            if id(shared) not in held:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
                    held[id(shared)] = self.client.submit(_held, shared, workers=[self.workers[0]],
                                                          allow_other_workers=False, pure=False)
            out.append((arrays.without_shared(), held[id(shared)]))
        return out

    def run(self, function, calls):
        """function(*args) of call i as a task on the worker that shard i will live on, in order."""
        workers = self._live_workers()
        placed = [workers[i % len(workers)] for i in range(len(calls))]
        wait, limited = _start_wait(self.start_timeout)      # reading a part of a file, like a start
        deadline = time.monotonic() + wait
        futures = [self.client.submit(function, *args, workers=[worker], allow_other_workers=False, pure=False)
                   for args, worker in zip(calls, placed)]
        return _collect(futures, placed, deadline, wait, getattr(function, "__name__", "task"), limited)

    def map(self, method, *args):
        return self.map_each(method, [args] * len(self.actors))

    def map_each(self, method, args_per_shard):
        return self._call_each(method, args_per_shard, self.timeout)

    def _call_each(self, method, args_per_shard, seconds):
        deadline = time.monotonic() + seconds
        pending = []
        for i, (actor, args) in enumerate(zip(self.actors, args_per_shard, strict=True)):
            try:
                pending.append(actor.call(method, *args))
            except Exception as exc:          # the proxy knows its worker is gone
                raise ShardError(i, f"cannot send {method} to worker {self.workers[i]}: {_text(exc)}") from exc
        return _collect(pending, self.workers, deadline, seconds, method)

    def reduce(self, method, *args):
        """The shards' results added pairwise in shard order on the workers (tree_sum's order): w goes to the
        root's worker once and from there to each shard's worker, each level's sums move worker to worker, and only the root comes to the driver."""
        from .backends import tree_pairs
        deadline = time.monotonic() + self.timeout
        what = f"{method} (reduction tree)"
        try:
            # the round's arguments go to the root's worker as a task's argument, not by Client.scatter: a scatter
            # (broadcast or not) waits for its target workers with no bound, so one stuck worker hung the round;
            # a task's future never blocks the driver, and the leaves fetch the data worker to worker
            data = self.client.submit(_held, args, workers=[self.workers[0]], allow_other_workers=False, pure=False)
            nodes = [(self.client.submit(_actor_call, actor, method, data, workers=[worker],
                                         allow_other_workers=False, pure=False), worker)
                     for actor, worker in zip(self.actors, self.workers)]
            leaves = [future for future, _ in nodes]
            for level in tree_pairs(len(nodes)):
                nodes = [nodes[i] if j is None else
                         (self.client.submit(_combine, nodes[i][0], nodes[j][0], workers=[nodes[i][1]], pure=False),
                          nodes[i][1])
                         for i, j in level]
        except Exception as exc:
            raise self._unanswering(f"cannot send {what} to the workers: {_text(exc)}") from exc
        root, worker = nodes[0]
        try:
            return _collect([root], [worker], deadline, self.timeout, what)[0]
        except ShardError as exc:
            # the root's worker is not the culprit: name the first shard whose call failed or never finished
            raise _failed_leaf(leaves, self.workers, what, self.timeout, self._scheduler_workers()) or exc \
                from exc.__cause__

    def _scheduler_workers(self):
        """The scheduler's worker addresses now (None if the scheduler does not answer)."""
        try:
            return set(self.client.scheduler_info()["workers"])
        except Exception:                     # the scheduler itself is gone: no list to compare with
            return None

    def _unanswering(self, message):
        """A ShardError for the first shard whose worker left the cluster, else the first that does not answer
        a ping within PING_WAIT seconds (its worker is stuck), else for shard 0 with ``message``: a failed
        submission does not say which worker."""
        live = self._scheduler_workers()
        gone = None if live is None else _departed(self.workers, live, "the round")
        if gone is not None:
            return ShardError(gone.shard, f"{message}; {str(gone).partition(': ')[2]}")
        try:
            self._call_each("ping", [()] * len(self.actors), min(self.timeout, PING_WAIT))
        except ShardError as exc:
            return ShardError(exc.shard, f"{message}; {str(exc).partition(': ')[2]}")
        return ShardError(0, message)

    def close(self, wait: float | None = None):
        """Close the client made here and the LocalCluster, waiting at most ``wait`` seconds (default
        :data:`CLOSE_WAIT`, :data:`CLOSE_WAIT_PAST_LIMIT` when the command's time limit is used up): a cluster
        that has not closed by then (a worker stuck in a kernel, or still compiling) is abandoned, its processes
        killed."""
        if wait is None:
            left = command_time_left()
            wait = CLOSE_WAIT if left is None or left > 0 else CLOSE_WAIT_PAST_LIMIT
        self.actors = []
        client = self.client if self.own_client else None
        cluster, before = self.cluster, self._children_before
        self.client = None if self.own_client else self.client
        self.cluster = None
        if client is None and cluster is None:
            return
        finished, closed = threading.Event(), []

        def shut_down():
            try:
                if client is not None:
                    client.close(timeout=wait)
                if cluster is not None:
                    cluster.close(timeout=wait)
                closed.append(True)
            except Exception:                 # a timeout or a closed loop: abandoned below
                pass
            finally:
                finished.set()
        threading.Thread(target=shut_down, name="loglin-dask-close", daemon=True).start()
        if not (finished.wait(wait) and closed) and cluster is not None:
            _abandon(cluster, before)


def _abandon(cluster, children_before):
    """Kill the worker processes this LocalCluster started (this process's children that were not there before
    it) and keep distributed's exit handler from waiting on the cluster again."""
    cluster.shutdown_on_close = False
    for nanny in list(getattr(cluster, "workers", {}).values()):
        try:
            nanny.close_gracefully()      # a nanny that sees its worker die must not start another
        except Exception:                 # not a nanny (processes=False), or already gone
            pass
    for process in multiprocessing.active_children():
        if children_before is not None and process.pid not in children_before:
            process.kill()
    for process in multiprocessing.active_children():
        if children_before is not None and process.pid not in children_before:
            process.join(1.0)
