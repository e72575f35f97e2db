"""Solvers: each a generator of outer iterations, run by :func:`loglin.solvers.base.minimize`."""
from .base import SOLVERS, Result, Step, minimize, register_solver

__all__ = ["SOLVERS", "Result", "Step", "minimize", "register_solver"]
