"""Where the shards live and how one round reaches them: one small interface, three engines.

A backend holds one :class:`~loglin.scale.shards.ShardPart` per shard and answers

    backend.load(kind, shard_arrays, C, threads)    # build the shards where they will be evaluated
    backend.map("fun_grad", w, True)                 # -> [shard 0's result, shard 1's, ...]
    backend.map_each("attach", [args_0, args_1, ...])   # shard i gets its own arguments
    backend.close()

``map`` calls one method on every shard and returns the results in shard order (the driver sums
them in that order, so every backend gives the same sums for the same shards); ``map_each`` gives
each shard its own arguments (a seed per shard for the local solvers of loglin.scale.cocoa).

* :class:`InProcessBackend` - the shards in this process, one after the other: the reference;
* :class:`ThreadBackend` - the shards in this process, one thread each (the kernels release no
  lock they share, so shards run on all local cores);
* :class:`~loglin.scale.dask_backend.DaskBackend` - one Dask actor per shard on a cluster.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from ..errors import InvalidInputError, LoglinError
from .shards import ShardPart, warm_kernels

BACKENDS = ("inprocess", "threads", "dask")


class ShardError(LoglinError, RuntimeError):
    """A shard did not answer a round (its worker died, or it timed out, or it raised): names the shard."""

    def __init__(self, shard: int, message: str):
        self.shard = shard
        super().__init__(f"shard {shard}: {message}")


class SchedulerUnreachable(LoglinError, ConnectionError):
    """The Dask scheduler address given does not answer: raised before any work."""


class Backend:
    """The interface: ``load``, ``map`` (results in shard order), ``close``; a context manager."""

    name = "backend"
    n_shards = 0
    close_with_objective = False     # set by a caller that hands the backend over (the CLI)

    def default_shards(self) -> int:
        """The number of shards when none is asked for."""
        return 2

    def load(self, kind, shards, C, threads=1):
        raise NotImplementedError

    def map(self, method, *args):
        raise NotImplementedError

    def run(self, function, calls):
        """[function(*args) for args in calls], call i where shard i lives (a counting pass over files)."""
        return [function(*args) for args in calls]

    def map_each(self, method, args_per_shard):
        """``method(*args_per_shard[i])`` on shard i; the results in shard order."""
        raise NotImplementedError

    def reduce(self, method, *args):
        """The shards' results of ``method(*args)`` added pairwise in shard order (:func:`tree_sum`): one result.
        Backends with workers add on the workers and send only the root to the driver."""
        return tree_sum(self.map(method, *args))

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def add_parts(a, b):
    """a + b for two shard results: numbers, arrays, or tuples of them (f, g); new objects."""
    if isinstance(a, tuple):
        return tuple(add_parts(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def tree_pairs(n: int) -> list:
    """The fixed pairwise order of :func:`tree_sum` over n parts: per level, [(left, right), ...] of the
    positions in the level below (an odd last part goes up alone, as (left, None))."""
    levels = []
    while n > 1:
        levels.append([(i, i + 1 if i + 1 < n else None) for i in range(0, n, 2)])
        n = (n + 1) // 2
    return levels


def tree_sum(parts):
    """((p0 + p1) + (p2 + p3)) + ...: the reduction tree of Spark's treeAggregate, in shard order."""
    parts = list(parts)
    for level in tree_pairs(len(parts)):
        parts = [parts[i] if j is None else add_parts(parts[i], parts[j]) for i, j in level]
    return parts[0]


class InProcessBackend(Backend):
    """Every shard in this process, evaluated in shard order."""

    name = "inprocess"

    def __init__(self):
        self.parts = []

    def load(self, kind, shards, C, threads=1):
        self.parts = [ShardPart(kind, arrays, C, threads) for arrays in shards]
        self.n_shards = len(self.parts)

    def map(self, method, *args):
        return [getattr(part, method)(*args) for part in self.parts]

    def map_each(self, method, args_per_shard):
        return [getattr(part, method)(*args) for part, args in zip(self.parts, args_per_shard, strict=True)]


class ThreadBackend(InProcessBackend):
    """Every shard in this process, one thread per shard."""

    name = "threads"

    def __init__(self, max_workers=None):
        super().__init__()
        self.max_workers = max_workers
        self.pool = None

    def load(self, kind, shards, C, threads=1):
        shards = [arrays() if callable(arrays) else arrays for arrays in shards]    # recipes read their files
        super().load(kind, shards, C, threads)
        if shards:
            warm_kernels(kind, shards[0], C, threads)     # compile once before threads race to it
        self.pool = ThreadPoolExecutor(self.max_workers or self.n_shards, thread_name_prefix="loglin-shard")

    def map(self, method, *args):
        return self.map_each(method, [args] * self.n_shards)

    def map_each(self, method, args_per_shard):
        futures = [self.pool.submit(getattr(part, method), *args)
                   for part, args in zip(self.parts, args_per_shard, strict=True)]
        results = []
        for i, future in enumerate(futures):
            try:
                results.append(future.result())
            except LoglinError:
                raise
            except Exception as exc:
                raise ShardError(i, f"{method} failed: {type(exc).__name__}: {exc}") from exc
        return results

    def run(self, function, calls):
        with ThreadPoolExecutor(max(1, min(len(calls), self.max_workers or len(calls)))) as pool:
            return list(pool.map(lambda args: function(*args), calls))

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None


def make_backend(backend, **options) -> tuple[Backend, bool]:
    """(a Backend, whether the caller owns it and must close it) from a Backend, a name in
    :data:`BACKENDS`, or a ``distributed.Client`` (its cluster's workers hold the shards)."""
    if isinstance(backend, Backend):
        return backend, bool(backend.close_with_objective)
    if backend is None or backend == "inprocess":
        return InProcessBackend(), True
    if backend == "threads":
        return ThreadBackend(), True
    if backend == "dask":
        from .dask_backend import DaskBackend
        return DaskBackend(**options), True
    if type(backend).__name__ == "Client":
        from .dask_backend import DaskBackend
        return DaskBackend(client=backend, **options), True
    raise InvalidInputError(f"backend must be one of {BACKENDS}, a Backend or a distributed.Client, got {backend!r}")
