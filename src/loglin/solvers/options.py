"""One check of solver options (``-O KEY=VALUE`` and the estimators' ``solver_options``).

A solver declares its options in its signature (after ``objective, w, rng``): the
default (or annotation) gives the type, :data:`RANGES` the admissible values of the
names solvers share. A wrapper that forwards ``**options`` names the function it
forwards to in ``forwards_options_to``. Every bad value becomes one
:class:`~loglin.errors.InvalidInputError` naming the solver, the option and what it takes,
before any data is touched (never a TypeError or ZeroDivisionError deep in a solver).

    options = check_solver_options("tron", "maxent", {"cg_tol": "abc"})   # raises InvalidInputError
"""
from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

from ..errors import InvalidInputError

INT_CAP = 10 ** 7              # no option counts more steps than this (bounded loops, bounded memory)

# name -> (low, low_inclusive, high, high_inclusive) for numeric options; others: ("choices", ...) or a kind
RANGES = {
    "cg_tol": (0.0, False, 1.0, False), "precondition": (0.0, True, 1.0, True), "beta": (0.0, False, 1.0, False),
    "xi": (0.0, False, 1.0, False), "switch_gap": (0.0, False, 1.0, False), "memory": (1, True, 1000, True),
    "eps": (0.0, True, math.inf, False), "updates_per_step": (0, True, INT_CAP, True),
    "forcing": (0.0, True, 1.0, True), "radius": (0.0, False, math.inf, False),
}
CHOICES = {"order": ("random", "permutation", "blocks", "cyclic"), "subproblem": ("log-odds", "alg4")}
AUTO_OR_POSITIVE = {"eta", "eta0"}          # a positive rate, or "auto" (Collins et al. section 7)
# options whose default is None: their type
NONE_DEFAULT_TYPES = {"precondition": float, "cg_tol": float, "forcing": float, "radius": float, "gamma": float,
                      "kappa": float, "updates_per_step": int, "max_pairs": int}
CALLABLE = {"C_schedule"}
OBJECTS = {"state", "validation"}          # in-memory objects (warm starts): passed through unchecked
TRUE_TEXT, FALSE_TEXT = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def declared_options(function) -> dict:
    """{name: inspect.Parameter} of the options ``function`` takes, following ``forwards_options_to``;
    a key ``"**"`` is present when it takes options it does not declare."""
    params = list(inspect.signature(function).parameters.values())[3:]
    out = {q.name: q for q in params if q.kind is not q.VAR_KEYWORD}
    if any(q.kind is q.VAR_KEYWORD for q in params):
        target = getattr(function, "forwards_options_to", None)
        if target is None:
            out["**"] = None
        else:
            for name, q in declared_options(target).items():
                out.setdefault(name, q)
    return out


def _declared_type(name, q):
    if name in NONE_DEFAULT_TYPES:
        return NONE_DEFAULT_TYPES[name]
    annotation = q.annotation if q is not None else inspect.Parameter.empty
    if isinstance(annotation, str):
        for text, kind in (("bool", bool), ("int", int), ("float", float), ("str", str)):
            if annotation.split("|")[0].strip() == text:
                return kind
    elif annotation in (bool, int, float, str):
        return annotation
    default = q.default if q is not None else None
    for kind in (bool, int, float, str):
        if isinstance(default, kind):
            return kind
    return None


def _number(value, integral):
    """``value`` as an int / float if it is one (text included), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = int(value) if integral else float(value)
        except ValueError:
            return None
    if integral:
        return int(value) if isinstance(value, numbers.Integral) else None
    return float(value) if isinstance(value, numbers.Real) else None


def _check_one(solver, name, q, value):
    def refuse(what):
        raise InvalidInputError(f"solver {solver!r}: option {name} takes {what}, got {value!r}")
    if name in OBJECTS:
        return value
    if name in CALLABLE:
        if value is None or callable(value):
            return value
        refuse("a function of the epoch (Python only)")
    if name in CHOICES:
        if value not in CHOICES[name]:
            refuse("one of " + ", ".join(CHOICES[name]))
        return value
    if name in AUTO_OR_POSITIVE:
        if value == "auto" or (value is None and q is not None and q.default is None):
            return value
        x = _number(value, False)
        if x is None or not (math.isfinite(x) and x > 0):
            refuse("a positive number or 'auto'")
        return x
    default = q.default if q is not None else None
    if value is None and default is None:
        return None
    kind = _declared_type(name, q)
    if kind is bool:
        if isinstance(value, (bool, np.bool_, numbers.Integral)) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.lower() in TRUE_TEXT + FALSE_TEXT:
            return value.lower() in TRUE_TEXT
        refuse("true or false")
    if kind is str:
        if isinstance(value, str):
            return value
        refuse("a word")
    if kind is int:
        x = _number(value, True)
        low, _, high, _ = RANGES.get(name, (1, True, INT_CAP, True))
        if x is None or not low <= x <= high:
            refuse(f"an integer from {low} to {high}")
        return x
    if kind is float:
        x = _number(value, False)
        positive = not (isinstance(default, numbers.Real) and default == 0)
        low, low_in, high, high_in = RANGES.get(name, (0.0, not positive, math.inf, False))
        ok = (x is not None and math.isfinite(x) and (x >= low if low_in else x > low)
              and (x <= high if high_in else x < high))
        if not ok:
            lower = f"{'>=' if low_in else '>'} {low:g}"
            upper = "" if math.isinf(high) else f" and {'<=' if high_in else '<'} {high:g}"
            refuse(f"a finite number {lower}{upper}")
        return x
    return value                                # undeclared type: the solver checks it


def check_solver_options(solver: str, kinds, options) -> dict:
    """``options`` checked against solver ``solver``'s declared options for ``kinds`` (a kind or a tuple),
    values converted to the declared types (so that text from the command line works)."""
    from . import entry
    e = entry(solver)
    kinds = (kinds,) if isinstance(kinds, str) else tuple(kinds)
    if not any(kind in e.impl for kind in kinds):
        return dict(options)                    # the solver table's own check names the kinds it serves
    declared = {}
    for kind in kinds:
        if kind in e.impl:
            for name, q in declared_options(e.function(kind)).items():
                declared.setdefault(name, q)
    if not isinstance(options, dict):
        raise InvalidInputError(f"solver options must be a dict, got {type(options).__name__}")
    unknown = sorted(set(options) - set(declared)) if "**" not in declared else []
    if unknown:
        names = [n for n in declared if n not in OBJECTS and n != "**"]
        raise InvalidInputError(f"solver {solver!r} has no option {', '.join(unknown)}; its options: "
                                f"{', '.join(names) or 'none'}")
    return {name: _check_one(solver, name, declared.get(name), value) for name, value in options.items()}


__all__ = ["RANGES", "check_solver_options", "declared_options"]
