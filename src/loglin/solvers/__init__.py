"""The solver table: every solver by name, the model kinds it serves, and what it needs of an objective.

Like LIBLINEAR's ``-s`` table, one explicit list (no registration by import side
effect). A solver is a generator ``solver(objective, w0, rng, **options)`` of outer
iterations run by :func:`loglin.solvers.base.minimize`; an entry names one
implementation per model kind as a lazy ``"module:function"`` reference, so that
listing the table imports no solver module. ``--solver eg`` on a chain or tree
problem is EG on that structure; ``eg-batch`` is batch EG on any structure.

    resolve("eg", objective)        # -> the generator function for the objective's kind
    entry("tree-eg")                # -> the "eg" entry (old names are hidden aliases)
    for name, e in listed(): ...    # what `loglin solvers` prints
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator, Mapping

from ..errors import InvalidInputError
from ..penalty import PENALTIES
from .base import Result, Step, minimize
from .protocol import Objective, missing, objective_kind

KINDS = ("maxent", "binary", "chain", "chain2", "node", "tree")
# structures whose objectives the structure-generic solvers of loglin.structured train as they are
CONTRACT_STRUCTURES = ("chain", "chain2", "node", "tree")
LOSSES = ("ll", "mm")
FLAT = "loglin.solvers."


@dataclass(frozen=True)
class SolverEntry:
    """One row of the table: ``impl`` maps each served model kind to "module:function"."""

    name: str
    summary: str
    paper: str
    impl: Mapping[str, str]
    needs: tuple = ("fun_grad",)
    losses: tuple | Mapping = ("ll",)    # per kind if a mapping; "mm": the max-margin (hinge) objectives
    dual: bool = False               # reports a duality gap; on chain / tree problems it stops on gap_tol
    penalties: tuple = ("l2",)       # "l1" / "elasticnet": handles the L1 term of loglin.penalty
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def kinds(self) -> tuple:
        return tuple(k for k in KINDS if k in self.impl)

    def losses_for(self, kind: str) -> tuple:
        return tuple(self.losses.get(kind, ())) if isinstance(self.losses, Mapping) else tuple(self.losses)

    def function(self, kind: str) -> Callable[..., Iterator[Step]]:
        """The generator for ``kind`` (imported on first use)."""
        if kind not in self._cache:
            module, _, name = self.impl[kind].partition(":")
            self._cache[kind] = getattr(importlib.import_module(module), name)
        return self._cache[kind]

    @property
    def func(self):
        """The flat (Maxent / LR) implementation, else the first kind's: the old ``SOLVERS[name].func``."""
        return self.function(self.kinds[0])


def _flat(module, function, kinds=("maxent", "binary")):
    return {k: f"{FLAT}{module}:{function}" for k in kinds}


def _structures(reference):
    """One structure-generic implementation for every structure of the contract."""
    return {k: reference for k in CONTRACT_STRUCTURES}


STRUCTURED_EG = "loglin.structured.eg"
SCALE = "loglin.scale."
# shard-side solvers run their passes where the shards live (loglin.scale.ShardedObjective offers these)
SHARD_SIDE = ("fun_grad", "on_shards", "each_shard")
# mm on Maxent: eg-mm
STRUCTURED_MM = {"maxent": ("ll",), "binary": ("ll",), **{k: LOSSES for k in CONTRACT_STRUCTURES}}
YU = "Yu, Huang & Lin 2011"
HUANG = "Huang, Hsieh, Chang & Lin, JMLR 2010"
COLLINS = "Collins, Globerson, Koo, Carreras & Bartlett 2008 (JMLR)"

TABLE: dict[str, SolverEntry] = {e.name: e for e in (
    SolverEntry("tron", "trust-region Newton-CG (Lin, Weng & Keerthi 2008; -O precondition=0.01: diagonal PCG, "
                "Hsia et al. 2018)", "Huang et al. 2010 sec. 5; Yu et al. 2011 sec. 6", _flat("tron", "tron"),
                needs=("fun_grad", "accept", "hess_vec")),
    SolverEntry("lbfgs", "limited-memory BFGS with a strong-Wolfe line search",
                "Liu & Nocedal 1989; baseline in all three papers", _flat("lbfgs", "lbfgs", KINDS)),
    SolverEntry("newton", "Newton's method with the Hessian formed (sub-sampled in the first steps) and "
                "backtracking, for binary LR with few features (at most 2000)",
                "Nocedal & Wright 2006, ch. 3; Byrd, Chin, Neveitt & Nocedal 2011",
                _flat("newton", "newton", ("binary",)), needs=("fun_grad", "accept", "hessian")),
    SolverEntry("owlqn", "orthant-wise L-BFGS for L1 / elastic-net penalties (the default with --penalty l1)",
                "Andrew & Gao 2007", _flat("owlqn", "owlqn", KINDS), penalties=PENALTIES),
    SolverEntry("newglmnet", "Newton steps solved by coordinate descent with a working set, for L1 / elastic-net "
                "LR (LIBLINEAR -s 6's method; the default with --penalty l1 on binary LR)", "Yuan, Ho & Lin 2012",
                _flat("newglmnet", "newglmnet", ("binary",)), penalties=PENALTIES),
    SolverEntry("sgd", "stochastic gradient descent, eta = eta0/(1 + k/n)", "Collins et al. 2008 sec. 7.1.3",
                {**_flat("sgd", "sgd"), **_structures("loglin.structured.sgd:structured_sgd")}),
    SolverEntry("cd", "primal coordinate descent: one Newton step + line search with bound (38)", HUANG,
                _flat("primal_cd", "cd")),
    SolverEntry("cdd", "primal coordinate descent without the upper-bound test (38) (CDD, Figure 4)", HUANG,
                _flat("primal_cd", "cdd")),
    SolverEntry("gis", "generalized iterative scaling (Darroch & Ratcliff 1972): parallel, A_t^GIS", HUANG,
                _flat("iterative_scaling", "gis", ("maxent",))),
    SolverEntry("iis", "improved iterative scaling (Della Pietra et al. 1997): parallel, A_t^IIS", HUANG,
                _flat("iterative_scaling", "iis", ("maxent",))),
    SolverEntry("scgis", "sequential conditional GIS (Goodman 2002): sequential, A_t^SCGIS", HUANG,
                _flat("iterative_scaling", "scgis", ("maxent",))),
    SolverEntry("cddual", "dual coordinate descent with the modified Newton sub-solver (Algorithms 4-7)",
                f"{YU}, Algorithms 5 and 7", _flat("dual_cd", "cddual"), dual=True),
    SolverEntry("cddual-ls", "dual CD, one Newton step with line search per sub-problem (CDdual-ls)",
                f"{YU}, section 6.1", _flat("dual_cd", "cddual_ls", ("binary",)), dual=True),
    SolverEntry("bn", "dual CD, sub-problems by bisection then Newton (BN, Algorithm 9)", f"{YU}, section 6.3",
                _flat("dual_cd", "bn", ("binary",)), dual=True),
    SolverEntry("eg", "online exponentiated gradient on the dual: randomized order on LR / Maxent, part-based on "
                "CRF / M3N chains and parsers", f"{YU}, Algorithm 8; Collins et al. 2008, Figures 2-3, sections 7-8",
                {**_flat("eg", "eg"), **_structures(f"{STRUCTURED_EG}:structured_eg")},
                losses=STRUCTURED_MM, dual=True),
    SolverEntry("eg-batch", "batch EG on the dual (all examples per step): Maxent (LLEG-Batch), CRF / M3N chains "
                "and parsers", "Collins et al. 2008, Figure 1",
                {"maxent": "loglin.structured.multiclass_eg:eg_batch",
                 **_structures(f"{STRUCTURED_EG}:structured_eg_batch")},
                losses=STRUCTURED_MM, dual=True),
    SolverEntry("eg-ll", "eg with Collins et al.'s defaults: eta_ini chosen on 10% of the data, maxTrial 30, 1% of "
                "each block off the observed labels at the start", COLLINS + ", Figure 2, section 7",
                {"maxent": "loglin.structured.multiclass_eg:eg_ll"}, dual=True),
    SolverEntry("eg-mm", "online EG on the multi-class max-margin dual (MMEG-Online)", COLLINS + ", Figure 2",
                {"maxent": "loglin.structured.multiclass_eg:eg_mm"}, losses=("mm",), dual=True),
    SolverEntry("eg-mm-batch", "batch EG on the multi-class max-margin dual", COLLINS + ", Figure 1",
                {"maxent": "loglin.structured.multiclass_eg:eg_mm_batch"}, losses=("mm",), dual=True),
    SolverEntry("eg-acc", "accelerated EG: a few EG passes per proximal-point problem, Nesterov momentum outside",
                "Collins et al. 2008 (EG) inside Lin, Mairal & Harchaoui 2015 (Catalyst)",
                _flat("accelerated", "eg_acc")),
    SolverEntry("eg-lbfgs", "EG (order=blocks) until the relative duality gap is <= switch_gap (0.03), then L-BFGS",
                "Collins et al. 2008 (EG) + Liu & Nocedal 1989 (L-BFGS)", _flat("hybrid", "eg_lbfgs")),
    SolverEntry("cocoa", "CoCoA+ over shards: cddual (Maxent, LR) or part-based EG (CRF chains, parsers) passes "
                "on each shard's local subproblem, updates added (sigma' = K), stops on the global duality gap; "
                "one in-process shard without a backend",
                f"Ma, Smith, Jaggi et al. 2015 (CoCoA+); Smith et al. 2018; local solvers {YU} and {COLLINS}",
                {**{k: f"{SCALE}cocoa:cocoa" for k in ("maxent", "binary")},
                 **{k: f"{SCALE}cocoa_eg:cocoa_eg" for k in ("chain", "tree")}}, needs=SHARD_SIDE, dual=True),
    SolverEntry("ipm-sgd", "iterative parameter mixing: one SGD epoch per shard from the mixed w, averaged by "
                "shard size (a neighbourhood of the optimum, not the optimum); one shard without a backend",
                "McDonald, Hall & Mann 2010", {k: f"{SCALE}mixing:ipm_sgd" for k in ("maxent", "binary")},
                needs=SHARD_SIDE),
    SolverEntry("cutting-plane", "1-slack cutting-plane structural SVM for M3N chains and parsers",
                "Tsochantaridis et al. 2004; Joachims et al. 2009; baseline of Collins et al. 2008 sec. 8",
                _structures("loglin.structured.cutting_plane:structured_cutting_plane"), losses=("mm",), dual=True),
    SolverEntry("bcfw", "block-coordinate Frank-Wolfe on the M3N dual (loss-augmented argmax per sentence, "
                "optimal step; pairwise steps over stored labellings unless -O steps=frank-wolfe): the M3N default "
                "for chains and parsers", "Lacoste-Julien, Jaggi, Schmidt & Pletscher, ICML 2013, Algorithm 3; "
                "Osokin et al., ICML 2016", _structures("loglin.structured.bcfw:structured_bcfw"), losses=("mm",),
                dual=True),
    SolverEntry("eg-bcfw", "online EG for eg_epochs epochs (default 50), then bcfw from EG's dual point (M3N)",
                "Collins et al. 2008 (EG) + Lacoste-Julien et al. 2013 (BCFW)",
                _structures("loglin.structured.bcfw:eg_then_bcfw"), losses=("mm",), dual=True),
)}

# Old names, hidden from `loglin solvers`: scripts, experiments and saved model metadata keep working.
ALIASES = {"chain-eg": "eg", "tree-eg": "eg", "chain-eg-batch": "eg-batch", "tree-eg-batch": "eg-batch",
           "chain-sgd": "sgd", "tree-sgd": "sgd", "chain-cutting-plane": "cutting-plane",
           "tree-cutting-plane": "cutting-plane"}


def canonical(name: str) -> str:
    """The table name of ``name`` (an alias resolves to its new name); unknown names raise."""
    name = ALIASES.get(name, name)
    if name not in TABLE:
        raise InvalidInputError(f"unknown solver {name!r}; choose from {', '.join(TABLE)}")
    return name


def entry(name: str) -> SolverEntry:
    return TABLE[canonical(name)]


def serving(kind: str, loss: str | None = None, penalty: str | None = None) -> list[str]:
    """Names of the solvers that serve ``kind`` (and ``loss``, ``penalty``, if given), in table order."""
    return [n for n, e in TABLE.items() if kind in e.impl and (loss is None or loss in e.losses_for(kind))
            and (penalty is None or penalty in e.penalties)]


def listed() -> list[tuple[str, SolverEntry]]:
    """The table as `loglin solvers` shows it (aliases hidden)."""
    return list(TABLE.items())


def check(name: str, kind: str, loss: str = "ll", penalty: str = "l2") -> SolverEntry:
    """The entry of ``name`` if it serves ``kind`` models with ``loss`` and ``penalty``; else one error
    naming the choices."""
    e = entry(name)
    if kind not in e.impl:
        raise InvalidInputError(f"solver {name!r} does not serve {kind} models (it serves {', '.join(e.kinds)}); "
                                f"solvers for {kind} models: {', '.join(serving(kind))}")
    if loss not in e.losses_for(kind):
        what = "needs a differentiable objective" if loss == "mm" else "trains max-margin (mm) objectives only"
        raise InvalidInputError(f"solver {name!r} {what}: for {kind} models with loss {loss!r} use "
                                f"{', '.join(serving(kind, loss))}")
    if penalty not in e.penalties:
        raise InvalidInputError(f"solver {name!r} does not handle penalty {penalty!r}: for {kind} models with "
                                f"penalty {penalty!r} use {', '.join(serving(kind, loss, penalty))}")
    return e


def resolve(name, objective) -> Callable[..., Iterator[Step]]:
    """The generator of solver ``name`` for ``objective``'s kind, after one check of kind, loss and needs.

    A callable ``name`` is returned as it is (a generator written outside the table).
    """
    if callable(name):
        return name
    kind = objective_kind(objective)
    e = check(name, kind, getattr(objective, "loss", "ll"), getattr(objective, "penalty", "l2"))
    lacking = missing(objective, e.needs)
    if lacking:
        raise InvalidInputError(f"solver {name!r} needs {', '.join(lacking)} of the objective, which "
                                f"{type(objective).__name__} does not offer; solvers for {kind} models: "
                                f"{', '.join(serving(kind))}")
    return e.function(kind)


class _Table(dict):
    """``SOLVERS``: the old name -> entry mapping, aliases included (``SOLVERS[name].func``)."""

    def __missing__(self, name):
        e = TABLE[canonical(name)]
        kind = name.partition("-")[0]
        if kind in ("chain", "tree"):           # an old structure-prefixed name: that structure's implementation
            return replace(e, impl={kind: e.impl[kind]})
        return e

    def __contains__(self, name):
        return name in TABLE or name in ALIASES


SOLVERS = _Table(TABLE)

__all__ = ["ALIASES", "KINDS", "Objective", "Result", "SOLVERS", "SolverEntry", "Step", "TABLE", "canonical", "check",
           "entry", "listed", "minimize", "resolve", "serving"]
