"""Train a model from a problem: the one entry the CLI, estimators, taggers, parsers and experiments share.

    model, result = train(problem, C, solver, tol=..., max_iter=...)

``problem`` is a flat :class:`~loglin.problem.MaxentProblem` or
:class:`~loglin.binary.BinaryProblem`, a :class:`~loglin.structured.problem.ChainProblem`
or a :class:`~loglin.parsing.problem.TreeProblem` (``loss="ll"``: CRF, ``"mm"``: M3N; a
MaxentProblem with ``loss="mm"`` is the multi-class max-margin model). The defaults of
every kind are declared once, in :mod:`loglin.defaults`, and re-exported here.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from .errors import (ConvergenceWarning,  # noqa: F401 (re-exported: loglin.training.ConvergenceWarning)
                     InvalidInputError, LoglinError)
from .penalty import check_penalty, penalized
from .solvers import TABLE, canonical, check, entry, serving
from .solvers.base import minimize
from .solvers.options import check_solver_options
from .solvers.checkpoint import RESUMABLE
from .defaults import (DEFAULT_BCFW_PASSES, DEFAULT_C, DEFAULT_GAP_TOL,  # noqa: F401 (re-exported)
                       DEFAULT_L1_SOLVERS, DEFAULT_MAX_ITER, DEFAULT_MM_C, DEFAULT_MM_GAP_TOL, DEFAULT_MM_ORDER,
                       DEFAULT_MM_SOLVERS, DEFAULT_SOLVER, DEFAULT_SOLVERS, DEFAULT_TOL, LOSSES, default_C,
                       default_gap_tol)

__all__ = ["ConvergenceWarning", "DEFAULT_C", "DEFAULT_MM_C", "DEFAULT_MM_GAP_TOL", "DEFAULT_SOLVERS", "DEFAULT_TOL",
           "DEFAULT_GAP_TOL", "DEFAULT_MAX_ITER", "auto_binary", "auto_maxent", "available_solvers", "default_C",
           "default_gap_tol", "default_solver", "problem_kind", "train"]


def problem_kind(problem) -> str:
    """'maxent', 'binary', 'chain' or 'tree' for a problem object."""
    from .binary import BinaryProblem
    from .problem import MaxentProblem
    if hasattr(problem, "recipes") and hasattr(problem, "glob"):     # loglin.scale.sources.ShardedData
        return problem.glob.kind
    if isinstance(problem, BinaryProblem):
        return "binary"
    if isinstance(problem, MaxentProblem):
        return "maxent"
    name = type(problem).__name__
    if name == "ChainProblem":
        return "chain"
    if name == "TreeProblem":
        return "tree"
    raise InvalidInputError(f"cannot train a {name}: give a MaxentProblem, BinaryProblem, ChainProblem or "
                            f"TreeProblem")


def default_solver(kind: str, loss: str = "ll", penalty: str = "l2", problem=None, tol: float | None = None) -> str:
    """The solver used when none is named ("auto"), for ``kind`` models with ``loss`` and ``penalty``;
    with the ``problem`` at hand, a Maxent or binary LR problem's solver is chosen by its shape
    (:func:`auto_maxent`, :func:`auto_binary`; a binary one also by the requested ``tol``)."""
    if penalty != "l2":
        return DEFAULT_L1_SOLVERS.get(kind, "owlqn")
    if loss == "mm":
        return DEFAULT_MM_SOLVERS[kind]
    if kind == "maxent" and problem is not None:
        return auto_maxent(problem)
    if kind == "binary" and problem is not None:
        return auto_binary(problem, tol)
    return DEFAULT_SOLVERS[kind]


AUTO_MAXENT_CHOICES = ("tron", "lbfgs", "eg-acc")     # what auto_maxent picks from
LOW_DIMENSIONAL = 0.05      # weights per (distinct) context below which TRON is the Maxent choice
SMALL_PASS = 100_000        # non-zeros x labels of a pass below which TRON is cheap and the most precise


def auto_maxent(problem) -> str:
    """eg-acc, unless the problem is small (a pass under SMALL_PASS: TRON, whose superlinear tail gives
    the most precise optimum at no cost), low-dimensional (weights < LOW_DIMENSIONAL x contexts: TRON,
    as LIBLINEAR) or has an unregularized weight, which the dual method cannot keep free (then L-BFGS
    when there are at least as many weights as contexts, else TRON). docs/decisions/0019 has the
    measurements."""
    weights_per_context = problem.n_features / max(problem.n_contexts, 1)
    if len(problem.ctx_pred) * problem.n_labels < SMALL_PASS or weights_per_context < LOW_DIMENSIONAL:
        return "tron"
    if problem.reg is not None and len(problem.reg) and float(np.min(problem.reg)) <= 0:
        return "lbfgs" if weights_per_context >= 1 else "tron"
    return "eg-acc"


AUTO_BINARY_CHOICES = ("newton", "tron", "cddual", "eg-acc")   # what auto_binary picks from
DUAL_CURVATURE = 16.0       # median C_i ||x_i||^2 above which eg-acc (its kappa > 0) is the binary choice
BINARY_LOW_DIMENSIONAL = 0.01   # features / instances below which a Newton method is the binary choice (a9a: 0.004)
NEWTON_FEATURES = 1000      # features up to which Newton forms the Hessian (n^2 doubles, O(n^3) to factor)
NEWTON_PAIRS = 12.0         # Hessian work per non-zero (pairs + n^3/30, / nnz) up to which it is cheap (0027)
LOOSE_TOL = 1e-2            # a requested tolerance at least this loose: dual CD's cheap first passes win (0027)


def auto_binary(problem, tol: float | None = None) -> str:
    """Binary LR (L2). Low-dimensional (features < BINARY_LOW_DIMENSIONAL x instances: few weights, many
    instances per weight, as on a9a; not MNIST 0-vs-rest at 0.013, where eg-acc was 3-4x faster): Newton
    with the Hessian formed when it is small and cheap (:func:`newton_is_cheap`: at most NEWTON_FEATURES
    features, building and factoring it at most NEWTON_PAIRS x a pass), else TRON. A small problem (a pass
    under SMALL_PASS non-zeros) or an unregularized weight (the dual cannot keep it free): TRON.
    Otherwise a dual method: dual CD (Yu et al. 2011) when the median sub-problem curvature C_i ||x_i||^2
    is at most DUAL_CURVATURE (news20) or, on wide data (features >= instances), the requested ``tol`` is
    at least LOOSE_TOL (its first passes are then the cheapest way to a rough optimum; not on MNIST
    0-vs-rest, tall, where eg-acc was 4x faster to 1e-2), else accelerated EG, whose proximal term then
    speeds up the passes (20 Newsgroups at C = 128). docs/decisions/0023 and 0027 have the measurements
    and the checks on other sets."""
    X = problem.X
    if problem.n_features < BINARY_LOW_DIMENSIONAL * problem.n_instances:
        return "newton" if newton_is_cheap(X) else "tron"
    if X.nnz < SMALL_PASS:
        return "tron"
    if problem.reg is not None and len(problem.reg) and float(np.min(problem.reg)) <= 0:
        return "tron"
    norms = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    active = problem.cost > 0
    if not np.any(active):
        return "tron"
    curvature = float(np.median(problem.cost[active] * norms[active]))
    wide = problem.n_features >= problem.n_instances       # rows nearly orthogonal: CD's coordinates barely interact
    if curvature <= DUAL_CURVATURE or (tol is not None and tol >= LOOSE_TOL and wide):
        return "cddual"
    return "eg-acc"


def newton_is_cheap(X) -> bool:
    """Whether the dense Hessian of X's LR problem is small, and building (non-zero pairs, each a scattered
    add) and factoring it (n^3 / 6 vectorized multiply-adds, each ~1/5 of a scattered add) cost at most
    NEWTON_PAIRS x the non-zeros of a pass."""
    n = X.shape[1]
    if n > NEWTON_FEATURES:
        return False
    lengths = np.diff(X.indptr).astype(np.float64)
    pairs = float(np.sum(lengths * (lengths + 1.0)) / 2.0)
    return pairs + n ** 3 / 30.0 <= NEWTON_PAIRS * X.nnz


def available_solvers(kind=None) -> dict:
    """{name: SolverEntry} of the solver table, optionally only those serving ``kind``."""
    return {name: TABLE[name] for name in (serving(kind) if kind else TABLE)}


def train(problem, C: float | None = None, solver: str | None = None, *, loss: str = "ll", space=None, w0=None,
          tol: float = DEFAULT_TOL, gap_tol: float | None = None, max_iter: int | None = None,
          time_limit=None, random_state=None, progress=False, evaluate=None, callback=None, clock: str = "wall",
          warn=True, info=None, penalty: str = "l2", l1_ratio: float | None = None, backend=None, shards=None,
          checkpoint=None, **options):
    """Fit ``problem`` and return (model, Result).

    ``C`` is LIBLINEAR's regularization constant (a BinaryProblem already has it
    inside its per-instance costs and ignores this argument). ``C``, ``solver`` and
    ``max_iter`` default to :data:`DEFAULT_C` (:data:`DEFAULT_MM_C` for M3N chains),
    :data:`DEFAULT_SOLVERS` and :data:`DEFAULT_MAX_ITER` of the problem's kind. Primal solvers stop at a
    relative gradient norm ``tol``; dual solvers on chain / tree problems stop at
    a relative duality gap ``gap_tol`` (default :data:`DEFAULT_GAP_TOL`, M3N chains
    :data:`DEFAULT_MM_GAP_TOL`; their primal is not smooth for M3N). ``space``: the feature space of a chain / tree
    problem, kept in the model so that it can decode new input. ``warn``: let
    :func:`~loglin.solvers.base.minimize` issue its :class:`ConvergenceWarning` when the run
    stopped before its optimality test held.

    Returns a :class:`~loglin.model.LinearModel` (maxent, binary), a
    :class:`~loglin.structured.model.ChainModel` (chain) or a
    :class:`~loglin.parsing.model.ParserModel` (tree).

    ``backend`` / ``shards``: evaluate the objective of a Maxent, LR, CRF chain or parser (loss "ll")
    problem as the sum of ``shards`` row (sentence) shards (default: one per Dask worker, else 2) on
    ``backend`` ("inprocess", "threads", "dask", a :class:`~loglin.scale.backends.Backend` or a
    ``distributed.Client``): the same model as one process, to rounding, with TRON (flat kinds),
    L-BFGS or OWL-QN (:func:`loglin.scale.sharded`); chain / tree default to L-BFGS there. The shard-side
    solvers ``cocoa`` (Maxent, LR; chain / tree with the CRF loss) and ``ipm-sgd`` (Maxent, LR) always run on
    shards: one in-process shard when neither is given; ``cocoa`` stops at a relative duality gap ``gap_tol``
    (default: ``tol``).

    ``checkpoint``: a :class:`~loglin.solvers.checkpoint.SolverCheckpoint` that L-BFGS and TRON fill with
    their state after every iteration; when it holds this solver's state, the run continues from it (its
    iterate replaces ``w0``) exactly as the stopped run would have. Other solvers leave it empty.
    """
    with _clock_from_cluster_start(backend, time_limit, clock):
        kind = problem_kind(problem)
        on_workers = hasattr(problem, "recipes")       # ShardedData (loglin.scale.sources): rows read by the workers
        on_shards = backend is not None or shards is not None or on_workers
        indexed = problem.glob if on_workers else problem      # what the model keeps to decode new input
        try:      # a cluster made for this call (the CLI's, n_workers=) must not outlive a refused call
            rho = check_penalty(penalty, l1_ratio, loss)
            penalty = "l2" if rho == 0.0 else penalty
            if solver in (None, "auto"):
                solver = default_solver(kind, loss, penalty, None if on_workers else problem, tol)
                if on_shards and solver == "newton":
                    solver = "tron"         # a sharded objective offers Hessian-vector products, not the Hessian
                if on_shards and solver in ("eg-acc", "eg"):
                    solver = "lbfgs"        # a sharded objective has no dual state; L-BFGS where TRON is poor (0019)
            C = default_C(kind, loss) if C is None else C
            max_iter = DEFAULT_MAX_ITER[kind] if max_iter is None else max_iter
            name = canonical(solver)
            if loss not in LOSSES:
                raise InvalidInputError(f"loss must be one of {LOSSES}, got {loss!r}")
            if kind != "binary" and (not np.isfinite(C) or C <= 0):
                raise InvalidInputError(f"C must be positive and finite, got {C}")
            check(name, kind, loss, "l1" if rho == 1.0 else "elasticnet" if rho > 0 else "l2")
            anneal = options.pop("anneal", None)    # train()'s own option for structured eg (below), not the solver's
            if anneal not in (None, True, False):
                raise InvalidInputError(f"anneal must be True or False, got {anneal!r}")
            options = check_solver_options(name, kind, options)
            if checkpoint is not None and name in RESUMABLE:
                if checkpoint.holds(name):
                    w0 = checkpoint.arrays["w"]
                options["checkpoint"] = checkpoint
            shard_side = "each_shard" in entry(name).needs          # cocoa, ipm-sgd: one in-process shard by default
            scaled = on_shards or shard_side
            if shard_side and not on_shards:
                shards = 1
            inner = (_sharded(problem, kind, C, loss, name, backend, shards) if scaled
                     else _objective(problem, kind, C, loss))
        except BaseException:
            _release(backend)
            raise
        objective = penalized(inner, penalty, l1_ratio)
        if rho > 0:
            info = {**(info or {}), "penalty": penalty, "l1_ratio": rho}
        structured = kind in ("chain", "tree")
        if structured and name == "eg" and (loss == "ll" if anneal is None else anneal):
            from .structured.eg import collins_annealing     # section 7.1.1: C' annealed from 10/C down to 1/C
            options["C_schedule"] = collins_annealing(C)
        if kind == "chain" and loss == "mm" and name == "eg" and "updates_per_step" not in options:
            options.setdefault("order", DEFAULT_MM_ORDER)
        if name in ("bcfw", "eg-bcfw"):
            options.setdefault("passes", DEFAULT_BCFW_PASSES)
        stop_on_gap = (structured or shard_side) and entry(name).dual      # cocoa: relative gap <= tol by default
        default_gap = tol if shard_side else default_gap_tol(kind, loss)
        try:
            result = minimize(objective, solver, w0, tol=0.0 if stop_on_gap else tol,
                              gap_tol=(default_gap if gap_tol is None else gap_tol) if stop_on_gap else gap_tol,
                              max_iter=max_iter, time_limit=time_limit, random_state=random_state, progress=progress,
                              evaluate=evaluate, callback=callback, clock=clock, warn=warn, **options)
        except LoglinError as exc:
            if scaled and getattr(exc, "best", None) is not None:     # a lost shard: the best model so far, to keep
                exc.model = _model(indexed, kind, objective, exc.best, solver, C, loss, space, info)
                exc.checkpoint = checkpoint
            raise
        finally:
            if scaled:
                objective.close()
        return _model(indexed, kind, objective, result, solver, C, loss, space, info), result


@contextmanager
def _clock_from_cluster_start(backend, time_limit, clock):
    """A wall-clock ``time_limit`` of a library call handed a cluster made for it (an estimator's n_workers=)
    counts from the cluster's start, as ``--time-limit`` counts from the command's, and bounds the shards' work
    too (0051); otherwise (no such cluster, or inside a command, whose clock rules) nothing changes."""
    from .signals import call_clock, in_command
    if not (isinstance(time_limit, (int, float)) and time_limit >= 0 and clock == "wall" and not in_command()
            and getattr(backend, "close_with_objective", False) and getattr(backend, "started", None) is not None):
        yield
        return
    with call_clock(time_limit, started=backend.started):      # its error names time_limit, not --time-limit
        yield


def _objective(problem, kind, C, loss):
    if kind == "binary":
        if loss != "ll":
            raise InvalidInputError("a BinaryProblem trains logistic regression (loss 'll')")
        return problem.objective()
    if kind == "maxent":
        if loss == "mm":
            from .structured.multiclass import MaxMarginObjective
            return MaxMarginObjective(problem, C)
        return problem.objective(C)
    return problem.objective(C, loss=loss)


def _sharded(problem, kind, C, loss, solver, backend, shards):
    from .scale import SHARDABLE_SOLVERS, sharded
    problem_text = None
    if loss != "ll":
        problem_text = "backend= / shards= train the log-loss models (Maxent, LR, CRF chains and parsers) only"
    elif solver not in SHARDABLE_SOLVERS:
        problem_text = f"backend= / shards= run the solvers {', '.join(SHARDABLE_SOLVERS)}, not {solver!r}"
    if problem_text:
        raise InvalidInputError(problem_text)
    return sharded(problem, C, shards, "inprocess" if backend is None else backend)


def _release(backend):
    """Close a backend handed over with the call (``close_with_objective``); others stay the caller's."""
    if getattr(backend, "close_with_objective", False):
        backend.close()


def _model(problem, kind, objective, result, solver, C, loss, space, info):
    from .model import LinearModel
    C = float(getattr(objective, "C", C))
    w = result.w.copy()
    if kind in ("maxent", "binary"):
        meta = {"solver": solver, "C": C, "objective": float(result.f), "iterations": result.iterations,
                "train_seconds": result.train_seconds, "converged": bool(result.converged), **(info or {})}
        if kind == "binary":
            return LinearModel.from_binary(problem, w, info=meta)
        n_inputs = problem.n_predicates - (1 if problem.bias > 0 else 0)
        return LinearModel.from_maxent(problem, w, n_inputs=n_inputs, bias=problem.bias, info=meta)
    model = "crf" if loss == "ll" else "m3n"
    if kind == "chain":
        from .structured.model import ChainModel
        return ChainModel(space=space, w=w, model=model, C=C, solver=solver)
    from .parsing.model import ParserModel
    meta = {"train_seconds": result.train_seconds, "iterations": result.iterations,
            "stop_reason": result.stop_reason, **(info or {})}
    last = result.trace.records[-1] if result.trace.records else {}
    if "effective_iterations" in last:
        meta["effective_iterations"] = last["effective_iterations"]
    return ParserModel(space=space, w=w, model=model, C=C, solver=solver, info=meta)
