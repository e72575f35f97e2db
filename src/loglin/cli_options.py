"""The training options shared by `loglin train`, `loglin tag train` and `loglin parse train`.

One argparse parent parser: every option has one meaning, one help text and one
default; the defaults that depend on the model kind (solver, C, max-iter) are
declared in :mod:`loglin.training` and stated in ``--help``. Also the scale-out options of the train
commands and the parsing of `loglin reproduce`'s option values.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from pathlib import Path

import numpy as np

from .errors import LoglinError
from .limits import MAX_BEAM
from .defaults import (DEFAULT_C, DEFAULT_GAP_TOL, DEFAULT_MAX_ITER, DEFAULT_MM_C, DEFAULT_MM_GAP_TOL,
                       DEFAULT_SOLVERS, DEFAULT_TOL, default_C)


# the one rule of every command for input without data, stated in the --help of train / predict / evaluate / run
EMPTY_INPUT_RULE = ("Empty input (no line, or blank and comment lines only): training and evaluating name the file "
                    "in an error (exit 2; there is no score of zero items); predict, tag run and parse run write no "
                    "prediction and exit 0 (predict --proba: its header line; parse run echoes the input's lines).")

AUTO_HELP = {**DEFAULT_SOLVERS, "maxent": "eg-acc or tron by the problem's shape",
             "binary": "tron, cddual or eg-acc by the problem's shape"}


def _per_kind(table) -> str:
    return ", ".join(f"{kind} {value:g}" if isinstance(value, float) else f"{kind} {value}"
                     for kind, value in table.items())


def c_value(text):
    """-C's value: a number, or 'auto' (cross-validated)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {text!r}") from None


def training_options() -> argparse.ArgumentParser:
    """The parent parser (``parents=[training_options()]``) of every train command."""
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("training (the same for train, tag train and parse train)")
    g.add_argument("-o", "--output", type=Path, required=True, help="where to write the model (.npz)")
    reg = g.add_mutually_exclusive_group()
    reg.add_argument("-C", dest="C", type=c_value, default=None,
                     help=f"regularization constant, LIBLINEAR scale (1/2||w||^2 + C*sum loss); default per model "
                          f"kind: {_per_kind(DEFAULT_C)} (M3N: {_per_kind(DEFAULT_MM_C)}); 'auto' (loglin train "
                          f"on svmlight data, loglin tag train): chosen by cross-validation (--cv folds) along "
                          f"C = 2^-6 ... 2^10")
    reg.add_argument("--sigma2", type=float, default=None,
                     help="Gaussian prior variance on the unnormalized log-likelihood; the same as -C S")
    g.add_argument("--penalty", choices=("l2", "l1", "elasticnet"), default="l2",
                   help="l2: 1/2||w||^2 + C*sum loss; l1: ||w||_1 + C*sum loss (LIBLINEAR -s 6's scale, sparse "
                        "models); elasticnet: R||w||_1 + (1-R)/2||w||^2 + C*sum loss with R = --l1-ratio "
                        "(scikit-learn's scale); an L1 term trains with owlqn by default; default %(default)s")
    g.add_argument("--l1-ratio", type=float, default=None, metavar="R",
                   help="the L1 share R in [0, 1] of --penalty elasticnet")
    g.add_argument("--solver", default=None,
                   help=f"solver name (`loglin solvers` lists them with the model kinds they serve), or auto "
                        f"(the default): per model kind {_per_kind(AUTO_HELP)}; owlqn / newglmnet (binary) with "
                        f"an L1 penalty")
    g.add_argument("--tol", type=float, default=DEFAULT_TOL,
                   help="stop when ||grad f(w)|| <= tol * ||grad f(0)|| (LIBLINEAR's relative rule); "
                        "default %(default)g")
    g.add_argument("--gap-tol", type=float, default=None,
                   help=f"stop when the relative duality gap <= this; default {DEFAULT_GAP_TOL:g} for the dual "
                        f"solvers (eg, eg-batch, cutting-plane) on chain and tree models (M3N: "
                        f"{_per_kind(DEFAULT_MM_GAP_TOL)}), else not used")
    g.add_argument("--max-iter", type=int, default=None,
                   help=f"maximum outer iterations (passes / epochs); default per model kind: "
                        f"{_per_kind(DEFAULT_MAX_ITER)}")
    g.add_argument("--time-limit", type=float, default=None, help="wall seconds for the whole command (reading, features, with --workers the "
                        "cluster's start, and training): training stops with its best model; a limit reached "
                        "before training writes no model (exit 124). With --clock cpu: the solver's CPU seconds")
    g.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="what --time-limit and the trace's seconds measure; default %(default)s")
    g.add_argument("--trace", type=Path, default=None,
                   help="write the per-iteration trace to FILE.csv or FILE.json (JSON lines while training)")
    g.add_argument("--seed", type=int, default=0, help="random seed (coordinate order, SGD, EG); default 0")
    g.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a solver option, repeatable; e.g. -O order=blocks for eg (a wrong name lists the "
                        "solver's options)")
    g.add_argument("--json", action="store_true", help="print one JSON object with the results")
    g.add_argument("--encoding", default=None, metavar="ENC",
                   help="text encoding of the input files (any loglin command takes it), e.g. latin-1 for the "
                        "CoNLL-2007 Basque treebank; default UTF-8")
    g.add_argument("--quiet", action="store_true", help="no progress bar and no summary text (--json still prints)")
    return p


def add_output(p) -> None:
    """-o/--output of the commands that write text (predict, dump, tag run, parse run)."""
    p.add_argument("-o", "--output", type=Path, default=None, help="output file (default: standard output)")


ENCODING_HELP = ("text encoding of the input files (default UTF-8; e.g. latin-1, cp1252, shift_jis, gb18030, utf-16); "
                 "predict, tag run and parse run write in it too, so that echoed words keep their bytes")


def document_encoding(subparsers) -> None:
    """List --encoding ENC in the help of every command of ``subparsers`` (an argparse subparsers action).
    :func:`split_encoding_option` takes it out of the command line before argparse reads it, so this is what
    `loglin COMMAND --help` shows of it."""
    for p in subparsers.choices.values():
        if p.add_help and "--encoding" not in p._option_string_actions:     # the train commands list it already
            p.add_argument("--encoding", metavar="ENC", default=None, help=ENCODING_HELP)


def add_nbest(p, what: str) -> None:
    """--nbest K of tag run and parse run (checked with the other numbers: NUMERIC_OPTIONS); ``what``: its help."""
    p.add_argument("--nbest", type=int, default=None, metavar="K", help=what)


MAX_COUNT = 10 ** 9
# option (argparse dest) -> (flag, integral, lowest, lowest allowed?, highest): every numeric option of every
# command, checked before any file is read
NUMERIC_OPTIONS = {
    "tol": ("--tol", False, 0.0, True, math.inf), "gap_tol": ("--gap-tol", False, 0.0, True, math.inf),
    "time_limit": ("--time-limit", False, 0.0, False, math.inf), "max_iter": ("--max-iter", True, 0, True, MAX_COUNT),
    "seed": ("--seed", True, 0, True, 2 ** 63 - 1), "cutoff": ("--cutoff", True, 0, True, MAX_COUNT),
    "bias": ("--bias", False, 0.0, True, math.inf), "beam": ("--beam", True, 1, True, MAX_BEAM),
    "rare_threshold": ("--rare-threshold", True, 0, True, MAX_COUNT),
    "l1_ratio": ("--l1-ratio", False, 0.0, True, 1.0), "cv": ("--cv", True, 2, True, MAX_COUNT),
    "nbest": ("--nbest", True, 1, True, MAX_BEAM),
}


def check_numbers(args) -> None:
    """Refuse a numeric option out of its range (``--tol nan``, ``--beam 0``, ``--cutoff -3``) with one line;
    then hand a wall-clock ``--time-limit`` to the command clock (reading and extraction check it)."""
    for dest, (flag, integral, low, low_ok, high) in NUMERIC_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None or isinstance(value, str):
            continue
        inside = math.isfinite(value) and (value >= low if low_ok else value > low) and value <= high
        if not inside:
            kind = "an integer" if integral else "a finite number"
            top = "" if math.isinf(high) else f" and <= {high}"
            shown = value if integral else format(value, "g")
            raise LoglinError(f"{flag} must be {kind} {'>=' if low_ok else '>'} {low:g}{top}, got {shown}")
    if getattr(args, "clock", "wall") == "wall":
        from .signals import limit_command
        limit_command(getattr(args, "time_limit", None))


def regularization(args, kind: str, loss: str = "ll") -> float:
    """C from -C / --sigma2, or the default of the kind and loss."""
    if args.C == "auto":
        raise LoglinError("-C auto (cross-validated C) is available in `loglin train` on svmlight data and in "
                          "`loglin tag train`; here give a number")
    C = args.sigma2 if args.sigma2 is not None else (args.C if args.C is not None else default_C(kind, loss))
    if not np.isfinite(C) or C <= 0:
        raise LoglinError(f"the regularization constant must be positive, got {C}")
    return float(C)


def max_iter(args, kind: str) -> int:
    return DEFAULT_MAX_ITER[kind] if args.max_iter is None else args.max_iter


def progress(args) -> bool:
    """A progress bar in a terminal, a line every few seconds in a log; none with --quiet / --json."""
    return not args.quiet and not args.json


def option_value(text):
    """A solver option's value from text: an int, else a float, else the string itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def solver_options(args, solver, kinds) -> dict:
    """-O KEY=VALUE pairs as keyword options of ``solver`` (numbers parsed), checked against the signatures
    of its implementations for ``kinds``."""
    from .solvers.options import check_solver_options
    options = {}
    for item in getattr(args, "option", None) or ():
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise LoglinError(f"-O/--option takes KEY=VALUE, got {item!r}")
        options[key.strip()] = option_value(text)
    return check_solver_options(solver, kinds, options) if options else options


def trace_writer(path):
    """Callback appending each trace record as a JSON line, so that a run cut off still leaves its trace."""
    if path is None:
        return None
    Path(path).write_text("")

    def write(record) -> bool:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(record, default=float) + "\n")
        return False
    return write


def chosen_solver(args, kind: str, loss: str = "ll", problem=None) -> str:
    """--solver, or the default for the model kind, loss and --penalty; checked (penalty, and that the solver
    serves them) before any data is read. ``kind``: a model kind of loglin.training ("tagger" included).
    A Maxent or binary LR model's default depends on the problem's shape: without ``problem`` it is "auto"; with -O
    options (which belong to one solver) it is the kind's fixed default, TRON."""
    from .penalty import check_penalty
    from .solvers import check
    from .training import default_solver
    rho = check_penalty(args.penalty, args.l1_ratio, loss)
    penalty = "l2" if rho == 0 else "l1" if rho == 1 else "elasticnet"
    if args.solver in (None, "auto"):
        fixed = bool(getattr(args, "option", None))         # -O options belong to the kind's fixed default
        if kind in ("maxent", "binary") and penalty == "l2" and loss == "ll" and problem is None and not fixed:
            return "auto"
        solver = default_solver(kind, loss, penalty, None if fixed else problem, getattr(args, "tol", None))
    else:
        solver = args.solver
    check(solver, "maxent" if kind == "tagger" else kind, loss, penalty)
    return solver


def training_keywords(args, kind: str, options: dict) -> dict:
    """The keyword arguments of :func:`loglin.training.train` that the shared options give; ``options``:
    the solver options from :func:`solver_options`, checked before any data was read."""
    resume = {} if getattr(args, "resume", None) is None else {"w0": resumed_weights(args.resume, kind)}
    if kind != "tagger":        # L-BFGS's pairs and TRON's radius, kept beside the model for --resume
        resume["checkpoint"] = resumed_solver_state(args.resume, resume.get("w0"))
    return {"tol": args.tol, "gap_tol": args.gap_tol, "max_iter": max_iter(args, kind),
            "time_limit": args.time_limit, "clock": args.clock, "random_state": args.seed,
            "progress": progress(args), "callback": trace_writer(args.trace), "penalty": args.penalty,
            "l1_ratio": args.l1_ratio, **resume, **options}


def resumed_solver_state(model_path, w):
    """The solver state written beside the model file ``model_path`` with these weights (an empty one when
    there is none, or it belongs to another model): the run continues as the stopped run would have."""
    from .solvers.checkpoint import SolverCheckpoint, checkpoint_path
    saved = None if model_path is None else SolverCheckpoint.load(checkpoint_path(model_path), w)
    return saved if saved is not None else SolverCheckpoint()


def keep_solver_state(output, keywords: dict, result, model) -> None:
    """After the model is written to ``output``: the solver state beside it unless the run converged."""
    from .solvers.checkpoint import keep_solver_state as keep
    keep(output, keywords.get("checkpoint"), bool(result.converged), model.w)


def resumed_weights(path, kind: str):
    """--resume MODEL: the weights of a model file written by an earlier run (e.g. the best model kept when a
    shard failed), the starting point of this one."""
    if kind == "tagger":
        raise LoglinError("--resume continues Maxent / LR, CRF chain and parser training, not the Maxent tagger")
    from .model_io import load_model
    return np.asarray(load_model(path).w, dtype=np.float64)


@contextlib.contextmanager
def keeping_best_model(output):
    """A training run whose shard fails (ShardError) writes the best model so far to ``output`` first, as
    Ctrl-C does, and then fails with the error naming the shard; --resume OUTPUT continues from it."""
    try:
        yield
    except LoglinError as exc:
        model, best = getattr(exc, "model", None), getattr(exc, "best", None)
        if model is not None:
            checkpoint = getattr(exc, "checkpoint", None)
            if checkpoint is not None and checkpoint.solver is not None:      # first: the model names it
                from .solvers.checkpoint import checkpoint_path
                checkpoint.save(checkpoint_path(output), model.w)
            model.save(output)                  # atomic: a temporary file renamed over the target
            print(f"loglin: warning: {exc}; kept the best model so far (objective {best.f:.8g} after "
                  f"{best.iterations} iterations) in {output}: continue with --resume {output}", file=sys.stderr)
        raise


def report(args, result: dict, text: str) -> None:
    """--json: one JSON object; else the text, unless --quiet (commands without these flags print the text). The
    text names labels read from the data: written as the run commands write (data._files.echo_output), not in the
    locale's encoding."""
    from .data._files import echo_output
    if getattr(args, "json", False):
        text = json.dumps(result, default=float)
    elif getattr(args, "quiet", False):
        return
    with echo_output(None) as out:
        out.write(text + "\n")


def add_scale_out_options(p, what: str, details: str = "") -> None:
    """--workers N / --scheduler ADDRESS / --resume MODEL on a train command; ``what``: the models and solvers they
    serve there; ``details``: the rest of --workers' help."""
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help=f"{what}: evaluate the objective on a local Dask cluster of N worker processes, one shard "
                        "each (the same model, to rounding; --time-limit counts the cluster's start)" + details)
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="as --workers, on the workers of the running Dask cluster at ADDRESS (e.g. tcp://host:8786)")
    p.add_argument("--resume", type=Path, default=None, metavar="MODEL", help=RESUME_HELP)


RESUME_HELP = ("start from the weights of MODEL (e.g. the best model kept when a worker died): the data is "
               "sharded again from the file and training resumes from that iterate")


def scale_out_backend(args, refusal: str | None = None, byte_ranges_of=None):
    """A Dask backend for --workers N (a LocalCluster) or --scheduler ADDRESS, closed with the training objective;
    None without them. ``refusal``: why this model / solver cannot be sharded (an error when scaling out);
    ``byte_ranges_of``: the file the workers will read in byte ranges (its encoding is checked first)."""
    workers, scheduler = getattr(args, "workers", None), getattr(args, "scheduler", None)
    if workers is None and scheduler is None:
        return None
    if workers is not None and scheduler is not None:
        raise LoglinError("give --workers or --scheduler, not both")
    if workers is not None and workers < 1:
        raise LoglinError(f"--workers must be at least 1, got {workers}")
    if refusal:
        raise LoglinError(refusal)
    if byte_ranges_of is not None:
        from .data._files import refuse_byte_range_encoding
        refuse_byte_range_encoding(byte_ranges_of)
    from .scale import DaskBackend
    backend = DaskBackend(n_workers=workers, address=scheduler)
    backend.close_with_objective = True
    return backend


def scaled_structured_solver(args, model: str, solver: str, command: str) -> tuple[str, str | None]:
    """(solver, refusal) for --workers / --scheduler on a chain, a parser or the Maxent tagger: L-BFGS unless
    --solver names a shardable one (a sharded objective has no dual state, so the default EG does not apply)."""
    from .scale import SHARDABLE_SOLVERS
    if getattr(args, "workers", None) is None and getattr(args, "scheduler", None) is None:
        return solver, None
    if model in ("crf", "maxent") and args.solver in (None, "auto") and solver not in SHARDABLE_SOLVERS:
        solver = "lbfgs"
    if model not in ("crf", "maxent") or solver not in SHARDABLE_SOLVERS:
        models = "--model crf or maxent" if command == "loglin tag train" else "--model crf"
        return solver, (f"`{command}` with --workers / --scheduler trains {models} with "
                        f"{' or '.join(s for s in SHARDABLE_SOLVERS if s != 'tron')}")
    return solver, None


# LIBLINEAR's `train` options that `loglin train` spells otherwise (argparse would say "unrecognized arguments")
LIBLINEAR_OPTIONS = {"-c": "-C C (the same scale)", "-B": "--bias B", "-v": "--cv K", "-q": "--quiet",
                     "-e": "--tol TOL (relative to the first gradient)",
                     "-s": "--model lr|maxent and --penalty l2|l1 (-s 0: the default)",
                     "-wi": "no class weights (in Python: class_weight=)",
                     "-n": "no thread count (NUMBA_NUM_THREADS=N)"}


def liblinear_option(argv) -> str | None:
    """The error line for a LIBLINEAR option given to `loglin train` (``argv``: after the command name), or None."""
    for item in argv:
        if item == "--":
            break
        name = "-wi" if item.startswith("-w") and item[2:].isdigit() else item
        if name in LIBLINEAR_OPTIONS:
            return (f"{item} is LIBLINEAR's train option; loglin train takes {LIBLINEAR_OPTIONS[name]} "
                    "(loglin train --help lists them)")
    return None


def split_encoding_option(argv):
    """(argv without ``--encoding ENC``, ENC or None): every command's text inputs are read in ENC."""
    from .data._files import check_encoding
    out, encoding, i = [], None, 0
    while i < len(argv):
        item = argv[i]
        if item == "--":
            out += argv[i:]
            break
        if item == "--encoding" or item.startswith("--encoding="):
            if "=" in item:
                encoding = item.partition("=")[2]
            elif i + 1 < len(argv):
                encoding, i = argv[i + 1], i + 1
            else:
                raise ValueError("--encoding needs a value (e.g. latin-1)")
            check_encoding(encoding)
        else:
            out.append(item)
        i += 1
    return out, encoding


def worker_data(args, C, backend):
    """--workers / --scheduler: a counting pass on the workers, each of which then reads its own part of the
    file (on a real cluster the path must name the same file on every worker)."""
    from .data._files import _ENCODING
    from .scale.sources import FileSource, scan
    if args.format == "events" and args.model == "lr":
        raise LoglinError("--model lr needs svmlight data; events train a Maxent model")
    kind = {"lr": "binary", "maxent": "maxent"}.get(args.model, "auto" if args.format == "svmlight" else "maxent")
    source = FileSource(args.data, args.format, kind, bias=args.bias if args.bias and args.bias > 0 else 0.0,
                        regularize_bias=not args.no_regularize_bias, cutoff=args.cutoff or 1,
                        all_pairs=bool(args.all_pairs), C=C, encoding=_ENCODING.get())
    data = scan(source, backend)
    return data, "lr" if data.kind == "binary" else "maxent"


def reference_spec(text):
    """'DATA=FILE,DATA=1.5' -> {DATA: 'FILE', DATA: 1.5}; a lone 'FILE' or '1.5' stands for every data set."""
    def value(v):
        try:
            return float(v)
        except ValueError:
            return v
    items = [t.strip() for t in text.split(",") if t.strip()]
    if len(items) == 1 and "=" not in items[0]:
        return value(items[0])
    spec = {}
    for item in items:
        data, sep, v = item.partition("=")
        if not sep or not data.strip() or not v.strip():
            raise LoglinError(f"--reference takes DATA=FILE or DATA=VALUE pairs, got {item!r}")
        spec[data.strip()] = value(v.strip())
    return spec


def time_limit_spec(text):
    """'300' -> (300, {}); '300,cd=900' -> (300, {'cd': 900}); 'cd=900' -> (None, {'cd': 900})."""
    default, per_solver = None, {}
    for item in (t.strip() for t in str(text).split(",") if t.strip()):
        name, sep, value = item.rpartition("=")
        try:
            seconds = float(value)
        except ValueError:
            raise LoglinError(f"--time-limit takes SECONDS or SOLVER=SECONDS, got {item!r}") from None
        if not seconds > 0:
            raise LoglinError(f"--time-limit must be positive, got {item!r}")
        if sep and not name.strip():
            raise LoglinError(f"--time-limit takes SECONDS or SOLVER=SECONDS, got {item!r}")
        if sep:
            per_solver[name.strip()] = seconds
        elif default is not None:
            raise LoglinError(f"--time-limit has two default budgets: {text!r}")
        else:
            default = seconds
    return default, per_solver


def experiment_options(args, experiment):
    """--datasets/--solvers/--time-limit as keyword arguments, refused by name if the experiment has no such knob."""
    import inspect
    options = {}
    if args.datasets:
        options["datasets"] = tuple(d.strip() for d in args.datasets.split(",") if d.strip())
    if args.solvers:
        options["solvers"] = tuple(s.strip() for s in args.solvers.split(",") if s.strip())
    if args.time_limit is not None:
        default, per_solver = time_limit_spec(args.time_limit)
        if default is not None:
            options["time_limit"] = default
        if per_solver:
            options["time_limits"] = per_solver
    if args.reference:
        options["reference"] = reference_spec(args.reference)
    accepted = inspect.signature(inspect.unwrap(experiment)).parameters
    for key in options:
        if key not in accepted:
            flag = "--time-limit SOLVER=SECONDS" if key == "time_limits" else f"--{key.replace('_', '-')}"
            raise LoglinError(f"{args.name} does not take {flag}")
    return options
