"""Parameter checks and training keywords shared by every loglin estimator (scikit-learn style: the
checks run in ``fit``, before any work, and raise ValueError naming the parameter)."""
from __future__ import annotations

import numbers

import numpy as np


def store_params(estimator, arguments):
    """Keep each argument of the estimator's ``__init__`` (``locals()`` there) as the attribute of its name,
    unchanged: scikit-learn's rule that the constructor only stores its parameters and ``fit`` checks them."""
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


def check_number(estimator, name, low, strict, integral=False):
    """A ValueError unless the parameter ``name`` is a finite number (an integer) above ``low``
    (at ``low`` too unless ``strict``)."""
    value = getattr(estimator, name)
    kind = numbers.Integral if integral else numbers.Real
    if (isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value)
            or value < low or (strict and value == low)):
        raise ValueError(f"{name} must be a finite {'integer' if integral else 'number'} {'>' if strict else '>='} "
                         f"{low}, got {value!r}")


def check_training_params(estimator, integers=(), C_may_be_none=False):
    """The checks every loglin estimator makes of its training parameters, before any work:
    C, tol, max_iter, verbose, time_limit, solver and solver_options, plus the integer ``integers``
    (name, lowest value); ``C_may_be_none``: C=None stands for the model kind's default."""
    if not (C_may_be_none and estimator.C is None):
        check_number(estimator, "C", 0, True)
    check_number(estimator, "tol", 0, False)
    check_number(estimator, "max_iter", 0, False, integral=True)
    check_number(estimator, "verbose", 0, False, integral=True)
    for name, low in integers:
        check_number(estimator, name, low, False, integral=True)
    if estimator.time_limit is not None:
        check_number(estimator, "time_limit", 0, True)
    if not isinstance(estimator.solver, str):
        raise ValueError(f"solver must be a solver name, got {estimator.solver!r}")
    if estimator.solver_options is not None and not isinstance(estimator.solver_options, dict):
        raise ValueError(f"solver_options must be a dict or None, got {type(estimator.solver_options).__name__}")
    check_scale_out_params(estimator)


def check_scale_out_params(estimator):
    """backend / client / n_workers of an estimator that has them (a ValueError naming the clash)."""
    backend, client, n_workers = (getattr(estimator, name, None) for name in ("backend", "client", "n_workers"))
    if client is not None and backend is not None:
        raise ValueError("give backend or client, not both")
    if n_workers is not None:
        check_number(estimator, "n_workers", 1, False, integral=True)
        if client is not None or backend not in (None, "dask"):
            raise ValueError("n_workers starts a local Dask cluster: it goes with backend=None or 'dask' only")


def scale_out_keywords(estimator) -> dict:
    """train()'s ``backend=`` from an estimator's backend / client / n_workers (none: {}); a LocalCluster
    started here for n_workers is closed with the training objective."""
    backend, client, n_workers = (getattr(estimator, name, None) for name in ("backend", "client", "n_workers"))
    if client is not None:
        return {"backend": client}
    if n_workers is not None:
        from .scale import DaskBackend
        made = DaskBackend(n_workers=int(n_workers))
        made.close_with_objective = True
        return {"backend": made}
    return {} if backend is None else {"backend": backend}


def sequence_train_keywords(estimator, extra):
    """loglin.training.train's keywords from a sequence estimator's parameters (Tagger, Parser), then ``extra``."""
    return {"tol": float(estimator.tol), "gap_tol": estimator.gap_tol, "max_iter": int(estimator.max_iter),
            "time_limit": estimator.time_limit, "clock": estimator.clock, "random_state": seed(estimator.random_state),
            "progress": estimator.verbose > 0, "callback": estimator.callback, "w0": estimator.initial_weights,
            "checkpoint": estimator.checkpoint, "penalty": estimator.penalty, "l1_ratio": estimator.l1_ratio,
            **(estimator.solver_options or {}), **(scale_out_keywords(estimator) if "backend" not in extra else {}),
            **extra}


# train()'s keywords that a sequence estimator's constructor spells otherwise
_PARAM_OF_KEYWORD = {"w0": "initial_weights", "progress": "verbose"}


def sequence_estimator_params(estimator_class, keywords: dict) -> dict:
    """The constructor parameters of a sequence estimator (Tagger, Parser) that train()'s ``keywords`` describe
    (scikit-learn: settings in the constructor, data in fit): its own parameters as they are, ``w0`` as
    ``initial_weights``, ``progress`` as ``verbose``, any other keyword (a solver option) in ``solver_options``."""
    names = set(estimator_class._get_param_names())
    params, options = {}, {}
    for key, value in keywords.items():
        name = _PARAM_OF_KEYWORD.get(key, key)
        if name not in names:
            options[key] = value
        else:
            params[name] = int(bool(value)) if key == "progress" else value
    if options:
        params["solver_options"] = {**(params.get("solver_options") or {}), **options}
    return params


def deprecated_fit_options(estimator, options: dict) -> dict:
    """fit(**options) of a sequence estimator, kept for one release: a DeprecationWarning naming the
    constructor parameters that replace them; the options still apply to this fit."""
    if options:
        import warnings
        moved = sequence_estimator_params(type(estimator), options)
        warnings.warn(f"{type(estimator).__name__}.fit(**{sorted(options)}) is deprecated: give them to the "
                      f"constructor or set_params ({', '.join(sorted(moved))}); fit takes data only",
                      DeprecationWarning, stacklevel=3)
    return options


def seed(random_state):
    """An integer seed (or None) for the driver's ``np.random.default_rng``."""
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    return random_state


def string_label_sequences(y, what):
    """y's label sequences as lists of str; a ValueError naming the first label that is not a string (an int
    label would come back from predict as a str, so it is refused rather than silently converted)."""
    out = []
    for i, labels in enumerate(y):
        for j, label in enumerate(labels):
            if not isinstance(label, str):
                raise ValueError(f"{what}: labels must be strings; sentence {i}, token {j} has "
                                 f"{label!r} ({type(label).__name__})")
        out.append([str(label) for label in labels])
    return out
