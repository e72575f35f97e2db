"""Scale: the feature-scale warning, and training one objective over shards of the data.

* :func:`warn_if_badly_scaled` (:mod:`loglin.scale.feature_span`): one warning for data whose
  feature values span too many orders of magnitude;
* :func:`sharded` (:mod:`loglin.scale.sharded_objective`): the objective of a Maxent, LR, chain CRF or
  parser problem as the sum of per-shard loss parts, evaluated by a backend (in-process, threads,
  Dask actors), so that TRON (flat kinds), L-BFGS and OWL-QN run unchanged on it;
* the solvers whose passes run on the shards themselves: CoCoA+ (:mod:`loglin.scale.cocoa`, solver
  ``cocoa``; on chain / parser shards with EG as the local solver, :mod:`loglin.scale.cocoa_eg`) and
  iterative parameter mixing of SGD (:mod:`loglin.scale.mixing`, ``ipm-sgd``).

The sharding names are imported on first use, so that the problem modules can import the
feature-span warning from here without importing the objectives.
"""
from __future__ import annotations

from .feature_span import MAX_SPAN, column_scale_span, warn_if_badly_scaled

_LAZY = {"sharded": "sharded_objective", "ShardedObjective": "sharded_objective",
         "SHARDABLE_SOLVERS": "sharded_objective",
         "shard_bounds": "shards", "shard_arrays": "shards", "ShardPart": "shards",
         "InProcessBackend": "backends", "ThreadBackend": "backends", "make_backend": "backends",
         "DaskBackend": "dask_backend", "ShardError": "backends", "SchedulerUnreachable": "backends"}

__all__ = ["MAX_SPAN", "column_scale_span", "warn_if_badly_scaled", *_LAZY]


def __getattr__(name):
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
