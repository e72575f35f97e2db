"""Hooks for the tagging command line: ``loglin tag train --model crf|m3n --solver eg|eg-batch|lbfgs|sgd``.

The tagging CLI adds the options with :func:`add_chain_arguments` and, when
``args.model`` is "crf" or "m3n", calls :func:`train_from_args`; the returned
:class:`~loglin.structured.model.ChainModel` has ``tag`` and ``save``, and
:func:`load_chain_model` reads it back (``loglin tag`` can tell the file
apart by its format name "loglin-chain").
"""
from __future__ import annotations

from .model import MODELS, SOLVER_NAMES, ChainModel, train_chain_model

CHAIN_MODELS = MODELS


def add_chain_arguments(parser, *, add_model=True, add_solver=False):
    """Add --model (maxent|crf|m3n), --gap-tol, --eta (and optionally --solver) to an argparse parser."""
    if add_model:
        parser.add_argument("--model", choices=("maxent",) + MODELS, default="maxent",
                            help="maxent: per-token Maxent tagger; crf: linear-chain CRF; m3n: max-margin chain")
    if add_solver:
        parser.add_argument("--solver", default="lbfgs", help="for crf/m3n: " + ", ".join(sorted(SOLVER_NAMES)))
    parser.add_argument("--gap-tol", type=float, default=1e-4,
                        help="crf/m3n with eg, eg-batch, cutting-plane: stop at this relative duality gap")
    parser.add_argument("--eta", default="auto", help="crf/m3n with eg: initial learning rate (default: chosen on "
                        "10%% of the data, Collins et al. section 7)")
    return parser


def train_from_args(args, train_sentences, task, validation_sentences=None) -> ChainModel:
    """Train the chain model named by ``args.model`` with ``args.solver``, ``args.C``, ``args.max_iter``, ..."""
    options = {}
    solver = getattr(args, "solver", "lbfgs")
    if solver == "eg" and getattr(args, "eta", "auto") != "auto":
        options["eta"] = float(args.eta)
    kwargs = {}
    for name in ("tol", "max_iter", "time_limit", "random_state"):
        if getattr(args, name, None) is not None:
            kwargs[name] = getattr(args, name)
    return train_chain_model(train_sentences, task, model=args.model, solver=solver, C=float(getattr(args, "C", 1.0)),
                             gap_tol=float(getattr(args, "gap_tol", 1e-4)), progress=bool(getattr(args, "progress", False)),
                             validation_sentences=validation_sentences, **kwargs, **options)


def load_chain_model(path) -> ChainModel:
    return ChainModel.load(path)
