"""The ``loglin`` command line: train, predict, evaluate, info, solvers, demo, tag, reproduce.

Regularization scales, stated once for every command:
  -C C        LIBLINEAR's scale: minimize 1/2 ||w||^2 + C * sum_i loss_i.
  --sigma2 S  variance of a Gaussian prior on the (unnormalized) log-likelihood
              (OpenNLP/Stanford convention): identical to C = S. In the papers'
              normalized objective (Huang et al. eq. 3) it is sigma^2 = S * l, so
              their "sigma^2 = 10" on NLP data is --sigma2 10.
Reported objectives are in the -C scale.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from . import __version__
from .errors import LoglinError

SCALE_HELP = ("-C is LIBLINEAR's scale (1/2||w||^2 + C*sum loss); --sigma2 S is the Gaussian-prior variance "
              "on the unnormalized log-likelihood, identical to C = S (the papers' sigma^2 = 10 on NLP data "
              "is --sigma2 10, i.e. sigma^2 = 10*l in their normalized eq. 3).")

DATA_FORMATS = ("svmlight", "events", "conll2000-chunk", "conll2000-pos", "brown")


def _add_regularization(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("-C", dest="C", type=float, default=None, help="regularization constant (LIBLINEAR scale); default 1")
    g.add_argument("--sigma2", type=float, default=None, help="Gaussian prior variance; same as -C S")


def _add_solver_options(p, default_tol=1e-3):
    p.add_argument("--solver", default=None, help="solver name (see `loglin solvers`); default tron")
    _add_regularization(p)
    p.add_argument("--tol", type=float, default=default_tol,
                   help="stop when ||grad f(w)|| <= tol * ||grad f(0)|| (LIBLINEAR's relative rule); default %(default)g")
    p.add_argument("--max-iter", type=int, default=1000, help="maximum outer iterations; default %(default)s")
    p.add_argument("--time-limit", type=float, default=None, help="stop after this many training seconds")
    p.add_argument("--trace", type=Path, default=None, help="write the per-iteration trace to FILE.csv or FILE.json")
    p.add_argument("--seed", type=int, default=0, help="random seed (coordinate order, SGD, EG); default 0")
    p.add_argument("-O", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a solver option, repeatable; e.g. -O order=blocks for eg (a wrong name lists the "
                        "solver's options)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print one JSON object with the results")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loglin",
        description="Train log-linear models (Maxent, logistic regression) with IS, CD, dual CD, EG, TRON, "
                    "L-BFGS and SGD.\n\n" + SCALE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"loglin {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("train", help="train a model from a data file",
                       description="Train a Maxent (multinomial) or binary logistic regression model.\n\n"
                                   + SCALE_HELP + "\n\nWith --json prints {solver, objective (in the -C scale), "
                                   "grad_norm, iterations, train_seconds, converged, stop_reason, ...}.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", type=Path, help="training data file")
    p.add_argument("-o", "--output", type=Path, required=True, help="where to write the model (.npz)")
    p.add_argument("--format", choices=DATA_FORMATS, default="svmlight",
                   help="svmlight/LIBSVM, OpenNLP-style events ('label pred pred=0.5 ...'), or a tagging "
                        "corpus (CoNLL-2000 chunking/POS, Brown): default %(default)s")
    p.add_argument("--model", choices=("auto", "maxent", "lr"), default="auto",
                   help="maxent = multinomial Maxent; lr = binary logistic regression (two classes); "
                        "auto = lr for two classes, else maxent")
    p.add_argument("--bias", type=float, nargs="?", const=1.0, default=0.0,
                   help="append a constant feature of value B (default 1 when given without a value)")
    p.add_argument("--no-regularize-bias", action="store_true", help="leave the bias weight unregularized")
    p.add_argument("--cutoff", type=int, default=1, help="events: drop predicates seen in fewer events; default 1")
    p.add_argument("--all-pairs", action="store_true",
                   help="events: a feature for every (predicate, label) pair, not only pairs seen in training")
    _add_solver_options(p)

    p = sub.add_parser("predict", help="predict labels (or probabilities) for a data file")
    p.add_argument("model", type=Path)
    p.add_argument("data", type=Path)
    p.add_argument("-o", "--output", type=Path, default=None, help="output file (default: standard output)")
    p.add_argument("--proba", action="store_true", help="write class probabilities after each label")
    p.add_argument("--format", choices=("svmlight", "events"), default=None,
                   help="input format (default: the training format stored in the model)")

    p = sub.add_parser("evaluate", help="accuracy of a model on labelled data (chunk P/R/F1 for chunkers)")
    p.add_argument("model", type=Path)
    p.add_argument("data", type=Path)
    p.add_argument("--format", choices=("svmlight", "events"), default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object {n, accuracy (percent), ...}")

    p = sub.add_parser("info", help="describe a model file")
    p.add_argument("model", type=Path)
    p.add_argument("--json", action="store_true")

    sub.add_parser("solvers", help="list the solvers and the papers they come from")

    p = sub.add_parser("demo", help="train a Maxent chunker on the bundled CoNLL-2000 slice and plot convergence")
    p.add_argument("--out", type=Path, default=Path("loglin-demo"), help="output folder; default %(default)s")
    p.add_argument("--solver", default=None, help="solver (default: the default solver)")
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("reproduce", help="reproduce a figure or table of the papers",
                       description="Run one of the papers' experiments; writes PNG plots, CSV/JSON traces and "
                                   "a markdown summary into --out.")
    p.add_argument("name", nargs="?", help="experiment name; omit to list them")
    p.add_argument("--out", type=Path, default=None, help="output folder (default: runs/NAME)")
    p.add_argument("--quick", action="store_true", help="small slices, for a smoke test")
    p.add_argument("--datasets", default=None,
                   help="comma-separated data sets, for experiments that take several (e.g. conll2000-pos,conll2000-chunk)")
    p.add_argument("--solvers", default=None, help="comma-separated solvers, for experiments that compare several")
    p.add_argument("--time-limit", default=None, metavar="SECONDS[,SOLVER=SECONDS...]",
                   help="seconds (CPU) per method and data set, for experiments that race solvers; "
                        "SOLVER=SECONDS gives one method its own budget (huang2010-fig2: e.g. 300,cd=900,scgis=900)")
    p.add_argument("--reference", default=None, metavar="[DATA=]FILE|VALUE[,...]",
                   help="P* for yu2011-fig3: a value, or a huang2010-fig2 NAME-reference.json of the same problem "
                        "(checked), per data set as DATA=..., comma-separated")

    p = sub.add_parser("tag", help="POS tagging / chunking: `loglin tag train|evaluate ...` or `loglin tag MODEL INPUT`",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    p = sub.add_parser("parse", help="dependency parsing: `loglin parse train|evaluate ...` or `loglin parse MODEL INPUT`",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


# ---------------------------------------------------------------- commands


def _regularization(args) -> float:
    C = args.sigma2 if args.sigma2 is not None else (args.C if args.C is not None else 1.0)
    if not np.isfinite(C) or C <= 0:
        raise LoglinError(f"the regularization constant must be positive, got {C}")
    return float(C)


def _progress(args):
    return not args.quiet and sys.stderr.isatty()


def option_value(text):
    """A solver option's value from text: an int, else a float, else the string itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _solver_options(args, solver, kinds=("maxent", "binary")):
    """-O KEY=VALUE pairs as keyword options of ``solver`` (numbers parsed), checked against the signatures
    of its implementations for ``kinds``."""
    import inspect

    from .solvers import entry
    options = {}
    for item in getattr(args, "option", None) or ():
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise LoglinError(f"-O/--option takes KEY=VALUE, got {item!r}")
        options[key.strip()] = option_value(text)
    if options:
        e = entry(solver)
        params = [q for k in kinds if k in e.impl for q in list(inspect.signature(e.function(k)).parameters.values())[3:]]
        if params and not any(q.kind is q.VAR_KEYWORD for q in params):
            names = list(dict.fromkeys(q.name for q in params))
            unknown = sorted(set(options) - set(names))
            if unknown:
                raise LoglinError(f"solver {solver!r} has no option {', '.join(unknown)}; its options: "
                                  f"{', '.join(names) or 'none'}")
    return options


def cmd_train(args):
    from .training import DEFAULT_SOLVER, train
    if args.format in ("conll2000-chunk", "conll2000-pos", "brown"):
        return _train_tagger(args)
    C = _regularization(args)
    solver = args.solver or DEFAULT_SOLVER
    options = _solver_options(args, solver)
    problem, kind = _training_problem(args, C)
    model, result = train(problem, C, solver, tol=args.tol, max_iter=args.max_iter, time_limit=args.time_limit,
                          random_state=args.seed, progress=_progress(args), warn=False,
                          info={"data_format": args.format, "kind": kind}, **options)
    model.save(args.output)
    if args.trace:
        result.trace.save(args.trace)
    report = {"solver": solver, "model": kind, "C": C, "objective": result.f, "grad_norm": result.grad_norm,
              "iterations": result.iterations, "train_seconds": result.train_seconds,
              "converged": result.converged, "stop_reason": result.stop_reason, "model_file": str(args.output)}
    _report(args, report, f"trained {kind} with {solver}: objective {result.f:.8g}, "
                          f"{result.iterations} iterations, {result.train_seconds:.2f} s ({result.stop_reason})")
    if not result.converged:
        print(f"loglin: warning: stopped by {result.stop_reason} before reaching tol={args.tol:g}; "
              "raise --max-iter/--time-limit or try --solver tron", file=sys.stderr)
    return 0


def _training_problem(args, C):
    from .binary import binary_problem
    from .data import read_events, read_svmlight
    from .problem import problem_from_events, problem_from_matrix
    bias = args.bias if args.bias and args.bias > 0 else None
    if args.format == "events":
        ev = read_events(args.data)
        if args.model == "lr":
            raise LoglinError("--model lr needs svmlight data; events train a Maxent model")
        if bias:
            ev.contexts = [list(c) + ["<bias>"] for c in ev.contexts]
            if ev.values is not None:
                ev.values = [list(v) + [bias] for v in ev.values]
        return problem_from_events(ev.labels, ev.contexts, ev.values, cutoff=args.cutoff,
                                   all_pairs=args.all_pairs), "maxent"
    X, y = read_svmlight(args.data)
    n_classes = len(np.unique(y))
    kind = args.model if args.model != "auto" else ("lr" if n_classes == 2 else "maxent")
    if kind == "lr":
        return binary_problem(X, y, C, bias=bias or 0.0, regularize_bias=not args.no_regularize_bias), "lr"
    return problem_from_matrix(X, y, all_pairs=True, bias=bias,
                               regularize_bias=not args.no_regularize_bias), "maxent"


def _load_inputs(model, path, fmt):
    """Rows for prediction and the gold labels, in the model's input space."""
    from .data import read_events, read_svmlight
    fmt = fmt or model.info.get("data_format", "svmlight")
    if fmt == "events":
        ev = read_events(path)
        return (ev.contexts, ev.values), np.asarray(ev.labels)
    X, y = read_svmlight(path)
    n = model.n_inputs
    if X.shape[1] > n:            # features unseen in training carry no weight (as LIBLINEAR)
        X = X[:, :n]
    elif X.shape[1] < n:
        X.resize((X.shape[0], n))
    return X, y


def _load_model(path):
    from .model import LinearModel
    return LinearModel.load(path)


def _gold_as_model_labels(model, y):
    """Gold labels converted to the model's label dtype (svmlight ints vs stored strings)."""
    labels = model.labels
    try:
        return y.astype(labels.dtype)
    except (ValueError, TypeError):
        return y.astype(str)


def _tagger_model(args, command):
    """A tagger model given to predict/evaluate: hand over to `loglin tag`."""
    from .model_io import model_format
    if model_format(args.model) != "loglin-tagger":
        return None
    from .tagging.cli import tag_main
    argv = [command, str(args.model), str(args.data)]
    if command == "evaluate" and args.json:
        argv.append("--json")
    if command == "run" and args.output:
        argv += ["-o", str(args.output)]
    return tag_main(argv)


def cmd_predict(args):
    code = _tagger_model(args, "run")
    if code is not None:
        return code
    model = _load_model(args.model)
    X, _ = _load_inputs(model, args.data, args.format)
    pred = model.predict(X)
    lines = []
    if args.proba:
        proba = model.predict_proba(X)
        lines.append("labels " + " ".join(str(c) for c in model.labels))
        for p, row in zip(pred, proba):
            lines.append(f"{p} " + " ".join(f"{v:.6g}" for v in row))
    else:
        lines = [str(p) for p in pred]
    text = "\n".join(lines) + "\n"
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_evaluate(args):
    code = _tagger_model(args, "evaluate")
    if code is not None:
        return code
    model = _load_model(args.model)
    X, y = _load_inputs(model, args.data, args.format)
    start = time.perf_counter()
    pred = model.predict(X)
    seconds = time.perf_counter() - start
    gold = _gold_as_model_labels(model, y)
    acc = 100.0 * float(np.mean(pred == gold)) if len(gold) else float("nan")
    unseen = sorted(set(np.unique(gold).tolist()) - set(model.labels.tolist()))
    report = {"n": int(len(gold)), "accuracy": acc, "predict_seconds": seconds}
    if unseen:
        report["unseen_labels"] = [str(u) for u in unseen[:20]]
    _report(args, report, f"accuracy {acc:.2f}% on {len(gold)} instances"
            + (f" ({len(unseen)} gold labels never seen in training)" if unseen else ""))
    return 0


def cmd_info(args):
    from .model_io import model_format
    if model_format(args.model) == "loglin-tagger":
        from .tagging.tagger import Tagger
        tagger = Tagger.load(args.model)
        info = {"kind": "tagger", "task": tagger.task, "n_labels": len(tagger.labels),
                "labels": tagger.labels[:50], "beam": tagger.beam, **tagger.info}
        print(json.dumps(info, default=str) if args.json else "\n".join(f"{k}: {v}" for k, v in info.items()))
        return 0
    if model_format(args.model) == "loglin-parser":
        from .parsing.model import ParserModel
        parser = ParserModel.load(args.model)
        info = {"kind": "parser", "model": parser.model, "solver": parser.solver, "C": parser.C,
                "cutoff": parser.space.cutoff, "n_features": parser.space.n_features,
                "nonzero_weights": int(np.count_nonzero(parser.w)), **parser.info}
        print(json.dumps(info, default=str) if args.json else "\n".join(f"{k}: {v}" for k, v in info.items()))
        return 0
    model = _load_model(args.model)
    info = {"kind": model.kind, "labels": [str(c) for c in model.labels[:50]], "n_labels": len(model.labels),
            "n_inputs": model.n_inputs, "n_weights": int(model.w.size), "bias": model.bias,
            "nonzero_weights": int(np.count_nonzero(model.w)), **model.info}
    if args.json:
        print(json.dumps(info, default=str))
    else:
        for k, v in info.items():
            print(f"{k}: {v}")
    return 0


def cmd_solvers(args):
    from .training import available_solvers
    for name, info in available_solvers().items():
        print(f"{name:12s} [{', '.join(info.kinds)}] {info.summary}" + (f"  ({info.paper})" if info.paper else ""))
    return 0


def cmd_demo(args):
    from .demo import run_demo
    return run_demo(args.out, solver=args.solver, quiet=args.quiet)


def cmd_reproduce(args):
    from .experiments import REPRODUCE
    if not args.name:
        for name in sorted(REPRODUCE):
            print(name)
        return 0
    if args.name not in REPRODUCE:
        raise LoglinError(f"unknown experiment {args.name!r}; choose from {', '.join(sorted(REPRODUCE))}")
    experiment = REPRODUCE[args.name]
    options = _experiment_options(args, experiment)
    out = args.out or Path("runs") / args.name
    out.mkdir(parents=True, exist_ok=True)
    experiment(out, quick=args.quick, **options)
    print(f"wrote {out}")
    return 0


def _reference_spec(text):
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


def _time_limit_spec(text):
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


def _experiment_options(args, experiment):
    """--datasets/--solvers/--time-limit as keyword arguments, refused by name if the experiment has no such knob."""
    import inspect
    options = {}
    if args.datasets:
        options["datasets"] = tuple(d.strip() for d in args.datasets.split(",") if d.strip())
    if args.solvers:
        options["solvers"] = tuple(s.strip() for s in args.solvers.split(",") if s.strip())
    if args.time_limit is not None:
        default, per_solver = _time_limit_spec(args.time_limit)
        if default is not None:
            options["time_limit"] = default
        if per_solver:
            options["time_limits"] = per_solver
    if args.reference:
        options["reference"] = _reference_spec(args.reference)
    accepted = inspect.signature(inspect.unwrap(experiment)).parameters
    for key in options:
        if key not in accepted:
            flag = "--time-limit SOLVER=SECONDS" if key == "time_limits" else f"--{key.replace('_', '-')}"
            raise LoglinError(f"{args.name} does not take {flag}")
    return options


def _train_tagger(args):
    from .tagging.cli import tag_main
    if getattr(args, "option", None):
        raise LoglinError("-O/--option applies to svmlight and events data; tagging corpora train through "
                          "`loglin tag train`, which takes its own options")
    task = "chunk" if args.format == "conll2000-chunk" else "pos"
    fmt = "brown" if args.format == "brown" else "conll2000"
    argv = ["train", "--task", task, "--format", fmt, str(args.data), "-o", str(args.output),
            "--tol", str(args.tol), "--max-iter", str(args.max_iter)]
    if args.solver:
        argv += ["--solver", args.solver]
    if args.sigma2 is not None or args.C is not None:
        argv += ["-C", str(_regularization(args))]
    if args.json:
        argv.append("--json")
    return tag_main(argv)


def _report(args, report, text):
    if getattr(args, "json", False):
        print(json.dumps(report, default=float))
    else:
        print(text)


COMMANDS = {"train": cmd_train, "predict": cmd_predict, "evaluate": cmd_evaluate, "info": cmd_info,
            "solvers": cmd_solvers, "demo": cmd_demo, "reproduce": cmd_reproduce}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv and argv[0] == "tag":
        from .tagging.cli import tag_main
        return _guard(lambda: tag_main(argv[1:]))
    if argv and argv[0] == "parse":
        from .parsing.cli import parse_main
        return _guard(lambda: parse_main(argv[1:]))
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return _guard(lambda: COMMANDS[args.command](args))


def _guard(run) -> int:
    """Errors we raise on purpose become one line and exit code 2."""
    try:
        return int(run() or 0)
    except BrokenPipeError:         # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except (LoglinError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"loglin: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:       # argument validation inside solvers (unknown solver, bad C, ...)
        print(f"loglin: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
