"""The one objective protocol every solver is written against.

An objective is the regularized primal f(w) of one problem at one regularization C,
in LIBLINEAR's scale (1/2 ||w||^2 + C sum_i loss_i). What a solver may call:

* ``n`` - the number of weights; ``kind`` - the model kind it belongs to:
  "maxent", "binary", "chain", "chain2" (second-order chain), "node" (multi-class
  as a structure) or "tree" (the solver table picks the implementation by it);
* ``fun(w)`` - f(w);
* ``fun_grad(w, keep_cache=True)`` - (f(w), grad f(w)) (a subgradient for the
  max-margin losses); with ``keep_cache`` it may fill a *pending* cache for
  the second-order methods, which ``accept()`` then makes current;
* ``accept()`` - the step is taken: the pending cache becomes current;
* optional ``hess_vec(v)`` - H v at the accepted point (TRON's CG);
* optional ``hess_diag()`` - diag(H) at the accepted point (TRON's preconditioner);
* optional ``hessian(stride)`` - the dense Hessian at the accepted point (Newton on few features);
* optional ``dual_state()`` - a fresh dual state for the dual methods (EG);
* optional ``on_shards(method, *args)`` / ``each_shard(method, args_per_shard)`` - one round on the
  shards of a sharded objective (:class:`loglin.scale.ShardedObjective`), for the solvers whose
  passes run where the data lives (``cocoa``, ``ipm-sgd``);
* optional ``l1_certificate`` - a declaration, not a method: which Fenchel dual of its pure-L1 problem
  :class:`loglin.penalty.PenalizedObjective` can evaluate for the duality gap (one of
  :data:`L1_CERTIFICATES`; None or absent: none, the relative pseudo-gradient test decides alone).

The driver (:func:`loglin.solvers.base.minimize`) calls ``fun_grad`` at w = 0 and at
every recorded iterate; a solver calls what its ``needs`` in the solver table
(:data:`loglin.solvers.TABLE`) declare, checked once by :func:`loglin.solvers.resolve`.
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

REQUIRED = ("n", "kind", "fun", "fun_grad", "accept")
OPTIONAL = ("hess_vec", "hess_diag", "hessian", "dual_state", "on_shards", "each_shard")
# the pure-L1 duals an objective may declare (l1_certificate): "logistic", binary LR's from its problem's X,
# y and cost; "maxent", Maxent's from loss_and_expectation and its problem's observed events; "crf", the CRF's
# of loglin.structured.l1_dual from an inference pass of its own; "crf-fused", the same with the terms from
# fun_grad's pass (the objective's fun_grad_with_entropy gives its own f and gradient)
L1_CERTIFICATES = ("logistic", "maxent", "crf", "crf-fused")


@runtime_checkable
class Objective(Protocol):
    """See the module docstring; ``hess_vec``, ``hess_diag`` and ``dual_state`` are optional."""

    n: int
    kind: str

    def fun(self, w: np.ndarray) -> float: ...

    def fun_grad(self, w: np.ndarray, keep_cache: bool = True) -> tuple[float, np.ndarray]: ...

    def accept(self) -> None: ...


@runtime_checkable
class SecondOrderObjective(Objective, Protocol):
    """An objective with the Hessian products TRON uses."""

    def hess_vec(self, v: np.ndarray) -> np.ndarray: ...

    def hess_diag(self) -> np.ndarray: ...


@runtime_checkable
class DualObjective(Objective, Protocol):
    """An objective that can make the dual state of its own problem."""

    def dual_state(self) -> Any: ...


def objective_kind(objective) -> str:
    """The objective's model kind; objectives without one are flat Maxent objectives."""
    return getattr(objective, "kind", None) or "maxent"


def l1_certificate(objective) -> str | None:
    """The pure-L1 duality certificate ``objective`` declares (:data:`L1_CERTIFICATES`), or None."""
    declared = getattr(objective, "l1_certificate", None)
    if declared is not None and declared not in L1_CERTIFICATES:    # a misspelt one would silently certify nothing
        raise ValueError(f"{type(objective).__name__}.l1_certificate must be one of {L1_CERTIFICATES} or None, "
                         f"got {declared!r}")
    return declared


def offers(objective, name: str) -> bool:
    """Whether ``objective`` offers the protocol member ``name`` (an attribute for n / kind, else a method)."""
    if name == "kind":
        return True                 # defaulted by objective_kind
    value = getattr(objective, name, None)
    return value is not None if name == "n" else callable(value)


def missing(objective, needs) -> list[str]:
    """The protocol members among ``needs`` that ``objective`` does not offer."""
    return [name for name in needs if not offers(objective, name)]
