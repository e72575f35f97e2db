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
import atexit
import contextlib
import gc
import json
import os
import signal
import sys
import time
import warnings
from pathlib import Path

# OpenBLAS's idle threads spin for 2^OPENBLAS_THREAD_TIMEOUT cycles (default 2^28, ~0.1 s of a core each) after
# the library loads, NumPy's copy and SciPy's, and after every threaded call; loglin's passes do not call BLAS
# (docs/decisions/0047), so a command lets them sleep at once. Read when NumPy loads OpenBLAS, hence before the
# import; the user's own setting wins (docs/decisions/0056).
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import numpy as np  # noqa: E402

from . import __version__
from .cli_options import (EMPTY_INPUT_RULE, add_output, add_scale_out_options, check_numbers, chosen_solver,
                          document_encoding, liblinear_option,
                          experiment_options, keep_solver_state, keeping_best_model, regularization, report,
                          scale_out_backend, solver_options, split_encoding_option, training_keywords,
                          training_options, worker_data)
from .errors import DataFormatError, LoglinError, TimeLimitBeforeTraining, about_file
from .outputs import check_writable
from .defaults import DEFAULT_C, DEFAULT_MAX_ITER

SCALE_HELP = ("-C is LIBLINEAR's scale (1/2||w||^2 + C*sum loss); --sigma2 S is the Gaussian-prior variance "
              "on the unnormalized log-likelihood, identical to C = S (the papers' sigma^2 = 10 on NLP data "
              "is --sigma2 10, i.e. sigma^2 = 10*l in their normalized eq. 3).")

TAGGING_FORMATS = ("conll2000-chunk", "conll2000-pos", "brown")      # trained as `loglin tag train --model maxent`
DATA_FORMATS = ("svmlight", "events") + TAGGING_FORMATS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loglin",
        description="Train log-linear models (Maxent, logistic regression, linear-chain CRF / M3N taggers, "
                    "dependency parsers) with IS, CD, dual CD, EG, Newton, TRON, L-BFGS, OWL-QN and SGD; "
                    "without --solver each picks the fast solver for the problem.\n\n" + SCALE_HELP + "\n\nEvery command takes --encoding ENC: the text "
                    "encoding of its input files (default UTF-8; e.g. latin-1), also that of what predict, tag run "
                    "and parse run write.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"loglin {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("train", help="train a model from a data file", parents=[training_options()],
                       description="Train a Maxent (multinomial) or binary logistic regression model, or a Maxent "
                                   "tagger from a tagging corpus (as `loglin tag train`).\n\n"
                                   + SCALE_HELP + "\n\nWith --json prints {solver, objective (in the -C scale), "
                                   "grad_norm, iterations, train_seconds, converged, stop_reason, ...}.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", type=Path, help="training data file")
    p.add_argument("--format", choices=DATA_FORMATS, default="svmlight",
                   help="svmlight/LIBSVM, OpenNLP-style events ('label pred pred=0.5 ...'), or a tagging "
                        "corpus (CoNLL-2000 chunking/POS, Brown): default %(default)s")
    p.add_argument("--model", choices=("auto", "maxent", "lr"), default="auto",
                   help="maxent = multinomial Maxent; lr = binary logistic regression (two classes); "
                        "auto = lr for two classes, else maxent")
    p.add_argument("--zero-based", action="store_true",
                   help="svmlight: feature indices start at 0 (default: at 1, as LIBSVM); the model remembers it "
                        "for predict and evaluate")
    p.add_argument("--bias", type=float, nargs="?", const=1.0, default=0.0,
                   help="append a constant feature of value B (default 1 when given without a value)")
    p.add_argument("--no-regularize-bias", action="store_true", help="leave the bias weight unregularized")
    p.add_argument("--cv", type=int, default=None, metavar="K",
                   help="K-fold cross-validation (stratified): of the given C, or of the path of -C auto "
                        "(default 5 folds there); prints the table, --json reports it")
    p.add_argument("--cv-plot", type=Path, default=None, metavar="FILE.png",
                   help="with --cv / -C auto: a plot of the cross-validated accuracy against C")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="with --cv / -C auto: run the folds in N worker processes (-1: one per core; default 1)")
    p.add_argument("--cutoff", type=int, default=None,
                   help="events and tagging corpora: drop predicates seen in fewer events; default 1")
    p.add_argument("--all-pairs", action="store_true",
                   help="events: a feature for every (predicate, label) pair, not only pairs seen in training "
                        "(tagging corpora: the task's default unless given)")
    add_scale_out_options(p, "Maxent / LR with tron or lbfgs",
                          "; each worker reads its own part of the data file (with --scheduler the path must name the "
                          "file on every worker); cocoa and ipm-sgd run their passes on the shards; tagging corpora: "
                          "the tagger's contexts, built here, cut into shards (as `loglin tag train --model maxent "
                          "--workers N`; default solver lbfgs)")

    p = sub.add_parser("predict", help="predict labels (or probabilities) for a data file",
                       description="Predict with any model kind. " + EMPTY_INPUT_RULE)
    p.add_argument("model", type=Path)
    p.add_argument("data", type=Path)
    add_output(p)
    p.add_argument("--proba", action="store_true", help="write class probabilities after each label")
    p.add_argument("--format", choices=("svmlight", "events"), default=None,
                   help="input format (default: the training format stored in the model)")

    p = sub.add_parser("evaluate", help="accuracy of a model on labelled data (chunk P/R/F1 for chunkers)",
                       description="Score any model kind on labelled data. " + EMPTY_INPUT_RULE)
    p.add_argument("model", type=Path)
    p.add_argument("data", type=Path)
    p.add_argument("--format", choices=("svmlight", "events"), default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object {n, accuracy (percent), ...}")

    p = sub.add_parser("info", help="describe a model file (any kind)")
    p.add_argument("model", type=Path)
    p.add_argument("--top", type=int, default=None, metavar="N",
                   help="also the N largest and N most negative weights per label (chain models: transitions)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("dump", help="every non-zero weight of a model file: label, feature, weight")
    p.add_argument("model", type=Path)
    add_output(p)
    p.add_argument("--json", action="store_true", help="JSON lines {label, feature, weight} instead of TSV")

    p = sub.add_parser("solvers", help="list the solvers, the model kinds they serve and their papers")
    p.add_argument("--json", action="store_true", help="print one JSON list of {name, kinds, summary, paper, ...}")

    p = sub.add_parser("demo", help="train a Maxent chunker on the bundled CoNLL-2000 slice and plot convergence")
    p.add_argument("--out", type=Path, default=Path("loglin-demo"), help="output folder; default %(default)s")
    p.add_argument("--solver", default=None, help="solver (default: the default solver)")
    p.add_argument("--compare", default=None, metavar="SOLVERS",
                   help="comma-separated solvers trained for as long as the first, on the same plot (e.g. cd,lbfgs: "
                        "Huang et al.'s CD against L-BFGS); '' for none; default lbfgs (loglin.demo.COMPARE)")
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

    p = sub.add_parser("tag", help="POS tagging, chunking, named entities: `loglin tag train|evaluate ...` or `loglin tag MODEL INPUT`",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)

    p = sub.add_parser("parse", help="dependency parsing: `loglin parse train|evaluate ...` or `loglin parse MODEL INPUT`",
                       add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    document_encoding(sub)
    return parser


# ---------------------------------------------------------------- commands


def cmd_train(args):
    check_writable(args.output, args.trace, getattr(args, "cv_plot", None))
    if args.format in TAGGING_FORMATS:     # --workers / --scheduler: `tag train --model maxent`'s sharded path
        return _train_tagger(args)
    backend = _scale_out_backend(args)     # before the data is read: an unreachable scheduler fails first
    try:
        return _train_flat(args, backend)
    except BaseException:
        if backend is not None:            # bad data, Ctrl-C before training: the cluster goes too
            backend.close()
        raise


def _train_flat(args, backend):
    """`loglin train` on svmlight or events data (Maxent or LR)."""
    from .training import train
    problem_kind = "binary" if args.model == "lr" else "maxent"
    searching = args.C == "auto"
    if (searching or args.cv) and args.format != "svmlight":
        raise LoglinError("-C auto and --cv need svmlight data")
    C = DEFAULT_C[problem_kind] if searching else regularization(args, problem_kind)
    kinds = ("maxent", "binary") if args.model == "auto" else (problem_kind,)
    options = solver_options(args, chosen_solver(args, problem_kind), kinds)   # before the data is read
    cv = None
    if searching or args.cv:
        with about_file(args.data):
            cv = _cross_validate(args, C, options)
        C = cv.best_C if searching else C
        if not args.json and not args.quiet:
            print(f"{args.cv or DEFAULT_FOLDS}-fold cross-validation:\n{cv.table()}")
        if args.cv_plot:
            cv.plot(args.cv_plot)
    with about_file(args.data):
        problem, kind = _training_problem(args, C) if backend is None else worker_data(args, C, backend)
    problem_kind = "binary" if kind == "lr" else "maxent"
    solver = chosen_solver(args, problem_kind, problem=problem) if backend is None or args.solver else None
    keywords = training_keywords(args, problem_kind, options)
    with keeping_best_model(args.output):
        model, result = train(problem, C, solver, warn=False, info={"data_format": args.format, "kind": kind,
                                                                 **({"zero_based": True} if args.zero_based else {})},
                              backend=backend, **keywords)
    solver = result.solver
    model.save(args.output)
    keep_solver_state(args.output, keywords, result, model)
    if args.trace:
        result.trace.save(args.trace)
    summary = {"solver": solver, "model": kind, "C": C, "objective": result.f, "grad_norm": result.grad_norm,
               "iterations": result.iterations, "train_seconds": result.train_seconds,
               "converged": result.converged, "stop_reason": result.stop_reason, "model_file": str(args.output),
               "nonzero_weights": int(np.count_nonzero(result.w))}
    if cv is not None:
        summary["cv"] = {"folds": args.cv or DEFAULT_FOLDS, "scoring": cv.scoring, "Cs": cv.Cs.tolist(),
                         "mean": cv.mean.tolist(), "best_C": cv.best_C}
    report(args, summary, f"trained {kind} with {solver}: objective {result.f:.8g}, {result.iterations} iterations, "
                          f"{result.train_seconds:.2f} s ({result.stop_reason})")
    if not result.converged:
        print(f"loglin: warning: {result.advice}", file=sys.stderr)
    return 0


DEFAULT_FOLDS = 5


def _cross_validate(args, C, options):
    """The cross-validated path of the model `loglin train` would fit: -C auto searches AUTO_CS, --cv alone
    scores the given C."""
    from .data import read_svmlight
    from .estimators import LogisticRegression, MaxentClassifier
    from .selection import AUTO_CS, DEFAULT_PATIENCE, cross_validation_path
    X, y = read_svmlight(args.data, zero_based=args.zero_based, multi_label=False)
    binary = args.model == "lr" or (args.model == "auto" and len(np.unique(y)) == 2)
    bias = args.bias if args.bias and args.bias > 0 else 0.0
    estimator = (LogisticRegression if binary else MaxentClassifier)(
        C=C, penalty=args.penalty, l1_ratio=args.l1_ratio, solver=args.solver or "auto", tol=args.tol,
        max_iter=args.max_iter or DEFAULT_MAX_ITER["binary" if binary else "maxent"], fit_intercept=bias > 0,
        intercept_scaling=bias or 1.0, regularize_intercept=not args.no_regularize_bias, random_state=args.seed,
        time_limit=args.time_limit if args.clock == "wall" else None,     # the command's: the folds count too
        solver_options=options or None)
    searching = args.C == "auto"
    return cross_validation_path(estimator, X, y, AUTO_CS if searching else [C], cv=args.cv or DEFAULT_FOLDS,
                                 random_state=args.seed, patience=DEFAULT_PATIENCE if searching else None,
                                 n_jobs=args.jobs)


def _scale_out_backend(args):
    """A Dask backend for --workers N (a LocalCluster) or --scheduler ADDRESS, closed when training ends; else None."""
    if args.workers is None and args.scheduler is None:
        return None
    from .scale import SHARDABLE_SOLVERS
    refusal = None
    if args.zero_based:
        refusal = "--workers / --scheduler read 1-based svmlight files only (not --zero-based)"
    elif (args.solver or "tron") not in SHARDABLE_SOLVERS:
        refusal = (f"--workers / --scheduler train Maxent and LR with {' or '.join(SHARDABLE_SOLVERS)} (chains and "
                   f"parsers: `loglin tag train --model crf`, `loglin parse train`)")
    return scale_out_backend(args, refusal, args.data if args.format in ("svmlight", "events") else None)


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
        return problem_from_events(ev.labels, ev.contexts, ev.values, cutoff=args.cutoff or 1,
                                   all_pairs=args.all_pairs), "maxent"
    X, y = read_svmlight(args.data, zero_based=args.zero_based, multi_label=False)
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
    n = model.n_inputs
    X, y = read_svmlight(path, zero_based=bool(model.info.get("zero_based", False)), drop_beyond=n)
    if X.shape[1] > n:            # features unseen in training carry no weight (as LIBLINEAR)
        X = X[:, :n]
    elif X.shape[1] < n:
        X.resize((X.shape[0], n))
    return X, y


def _load_model(path):
    from .model_io import load_model
    return load_model(path)


def _gold_as_model_labels(model, y):
    """Gold labels converted to the model's label dtype (svmlight ints vs stored strings)."""
    labels = model.labels
    try:
        return y.astype(labels.dtype)
    except (ValueError, TypeError):
        return y.astype(str)


def _family(model) -> str:
    """'linear', 'tagging' (Maxent tagger or chain CRF / M3N), 'parser' or 'crfsuite'."""
    from .model import LinearModel
    from .parsing.model import ParserModel
    if type(model).__module__.startswith("loglin.crfsuite"):     # without importing it (and scikit-learn)
        return "crfsuite"
    return "linear" if isinstance(model, LinearModel) else "parser" if isinstance(model, ParserModel) else "tagging"


def _decoding_model(path):
    """A model `predict` / `evaluate` can run on a file; a loglin.crfsuite model needs its Python features."""
    model = _load_model(path)
    if _family(model) == "crfsuite":
        raise LoglinError(f"{path} is a loglin.crfsuite model: its features are built in Python, so predict "
                          f"with loglin.crfsuite.CRF.load({str(path)!r}).predict(X); `loglin info` and "
                          f"`loglin dump` read it")
    return model


def _refuse_flat_options(args, family):
    """--proba and --format describe Maxent / LR data: given for a tagger or parser they would be ignored."""
    if family == "linear":
        return
    what = "a tagging model reads CoNLL columns or text" if family == "tagging" else "a parser reads CoNLL-X / CoNLL-U"
    if getattr(args, "proba", False):
        instead = ("the probabilities of its best taggings: `loglin tag run MODEL INPUT --nbest K`"
                   if family == "tagging" else "the scores of its best trees: `loglin parse run --nbest K`")
        raise LoglinError(f"--proba writes class probabilities of Maxent / LR models; {args.model} is a {family} "
                          f"model ({instead})")
    if args.format is not None:
        raise LoglinError(f"--format {args.format} reads Maxent / LR data; {what} ({args.model} is a {family} "
                          f"model): leave --format out")


def cmd_predict(args):
    check_writable(args.output)
    model = _decoding_model(args.model)
    family = _family(model)
    _refuse_flat_options(args, family)
    if family == "tagging":
        from .tagging.cli import run_model
        run_model(model, args.data, output=args.output)
        return 0
    if family == "parser":
        from .parsing.cli import run_model
        run_model(model, args.data, args.output)
        return 0
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
    from .data._files import echo_output
    with echo_output(args.output) as out:          # in the input's encoding, as tag run and parse run
        out.write("".join(line + "\n" for line in lines))    # empty input: no line (--proba: the header)
    return 0


def cmd_evaluate(args):
    model = _decoding_model(args.model)
    family = _family(model)
    _refuse_flat_options(args, family)
    if family != "linear":
        from .parsing.cli import evaluate_model as parser_scores
        from .tagging.cli import evaluate_model as tagging_scores
        with about_file(args.data):
            scores, text = (tagging_scores if family == "tagging" else parser_scores)(model, args.data)
        report(args, {"model": str(args.model), **scores}, text)
        return 0
    X, y = _load_inputs(model, args.data, args.format)
    if len(y) == 0:
        raise DataFormatError(args.data, None, "no instances to evaluate")
    start = time.perf_counter()
    pred = model.predict(X)
    seconds = time.perf_counter() - start
    gold = _gold_as_model_labels(model, y)
    acc = 100.0 * float(np.mean(pred == gold))
    unseen = sorted(set(np.unique(gold).tolist()) - set(model.labels.tolist()))
    from .metrics import classification_scores, scores_text
    scores = {"n": int(len(gold)), "accuracy": acc, "predict_seconds": seconds}
    if unseen:
        scores["unseen_labels"] = [str(u) for u in unseen[:20]]
    scores.update(classification_scores(gold, pred))
    report(args, scores, f"accuracy {acc:.2f}% on {len(gold)} instances"
            + (f" ({len(unseen)} gold labels never seen in training)" if unseen else "") + "\n" + scores_text(scores))
    return 0


def cmd_info(args):
    from .data._files import echo_output
    from .inspection import describe, top, top_text
    model = _load_model(args.model)
    info = describe(model)
    if args.top is not None and args.top < 1:
        raise LoglinError(f"--top must be a positive count, got {args.top}")
    if args.json:
        if args.top:
            info["top"] = top(model, args.top)
        text = json.dumps(info, default=str)
    else:
        text = "\n".join(f"{k}: {v}" for k, v in info.items())
        if args.top:
            text += f"\ntop {args.top} weights per label:\n{top_text(model, args.top)}"
    with echo_output(None) as out:      # labels and features read from UTF-8 (--encoding) text: not the locale's
        out.write(text + "\n")
    return 0


def cmd_dump(args):
    from .data._files import echo_output
    from .inspection import weights
    if args.output is not None:
        check_writable(args.output)
    rows = weights(_load_model(args.model))
    lines = (json.dumps({"label": a, "feature": f, "weight": v}) if args.json else f"{a}\t{f}\t{v!r}"
             for a, f, v in rows)
    with echo_output(args.output) as out:     # the same bytes on standard output and in -o FILE, whatever the locale
        out.writelines(line + "\n" for line in lines)
    return 0


def cmd_solvers(args):
    """The solver table: every solver, the model kinds it serves, its paper (aliases are not listed)."""
    from .solvers import listed
    from .training import AUTO_BINARY_CHOICES, AUTO_MAXENT_CHOICES, DEFAULT_SOLVERS
    defaults = {k: v for k, v in DEFAULT_SOLVERS.items() if k not in ("maxent", "binary")}

    def default_for(name):
        kinds = [k for k, v in defaults.items() if v == name]
        return (kinds + (["maxent (by the problem's shape)"] if name in AUTO_MAXENT_CHOICES else [])
                + (["binary (by the problem's shape)"] if name in AUTO_BINARY_CHOICES else []))
    rows = [{"name": name, "kinds": list(e.kinds), "losses": sorted({x for k in e.kinds for x in e.losses_for(k)}),
             "penalties": list(e.penalties), "summary": e.summary, "paper": e.paper, "needs": list(e.needs),
             "default_for": default_for(name)} for name, e in listed()]
    if args.json:
        print(json.dumps(rows))
        return 0
    for r in rows:
        default = f"  (default for {', '.join(r['default_for'])})" if r["default_for"] else ""
        print(f"{r['name']:14s}[{', '.join(r['kinds'])}]{default}\n{'':14s}{r['summary']}\n{'':14s}{r['paper']}")
    return 0


def cmd_demo(args):
    from .demo import COMPARE, run_demo
    compare = COMPARE if args.compare is None else tuple(s.strip() for s in args.compare.split(",") if s.strip())
    return run_demo(args.out, solver=args.solver, quiet=args.quiet, compare=compare)


def cmd_reproduce(args):
    from .experiments import REPRODUCE
    if not args.name:
        for name in sorted(REPRODUCE):
            print(name)
        return 0
    if args.name not in REPRODUCE:
        raise LoglinError(f"unknown experiment {args.name!r}; choose from {', '.join(sorted(REPRODUCE))}")
    experiment = REPRODUCE[args.name]
    options = experiment_options(args, experiment)
    out = args.out or Path("runs") / args.name
    out.mkdir(parents=True, exist_ok=True)
    experiment(out, quick=args.quick, **options)
    print(f"wrote {out}")
    return 0


def _train_tagger(args):
    """A tagging corpus given to `loglin train`: the same training as `loglin tag train`, on the same options."""
    from .tagging.cli import train_tagger
    from .tagging.tagger import DEFAULT_BEAM
    if args.model == "lr":
        raise LoglinError("--model lr needs svmlight data; tagging corpora train a Maxent tagger")
    defaults = {"rare_threshold": None, "beam": DEFAULT_BEAM, "tag_dictionary": False, "iob_constraint": None,
                "test": None, "split": None, "eta": "auto"}
    for name, value in defaults.items():
        setattr(args, name, value)
    args.model = "maxent"
    args.task = "chunk" if args.format == "conll2000-chunk" else "pos"
    args.train, args.format = args.data, "brown" if args.format == "brown" else "conll2000"
    args.all_pairs = True if args.all_pairs else None
    return train_tagger(args)


COMMANDS = {"train": cmd_train, "predict": cmd_predict, "evaluate": cmd_evaluate, "info": cmd_info, "dump": cmd_dump,
            "solvers": cmd_solvers, "demo": cmd_demo, "reproduce": cmd_reproduce}


def main(argv=None) -> int:
    started = time.perf_counter()               # --time-limit bounds the command from here
    if argv is None:                            # the command itself (not a call from Python): no scikit-learn
        import loglin
        loglin.SKLEARN_BASES = False
        gc.freeze()                             # the imported modules live as long as the process: not scanned
        atexit.register(gc.freeze)              # nor the rest at exit (docs/decisions/0047)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        argv, encoding = split_encoding_option(argv)
    except ValueError as exc:
        print(f"loglin: error: {exc}", file=sys.stderr)
        return 2
    parser = build_parser()
    if argv and argv[0] == "tag":
        from .tagging.cli import tag_main
        return _guard(lambda: tag_main(argv[1:]), encoding, started)
    if argv and argv[0] == "parse":
        from .parsing.cli import parse_main
        return _guard(lambda: parse_main(argv[1:]), encoding, started)
    foreign = liblinear_option(argv[1:]) if argv and argv[0] == "train" else None
    if foreign:                                 # before argparse: "unrecognized arguments: -c a9a" names no cure
        print(f"loglin: error: {foreign}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    return _guard(lambda: check_numbers(args) or COMMANDS[args.command](args), encoding,
                  started if args.command == "train" else None)


def _guard(run, encoding=None, started=None) -> int:
    """Errors we raise on purpose become one line and exit code 2; a run stopped by SIGINT / SIGTERM
    (its model kept) exits with 128 + the signal's number, as the shell reports a killed command.
    ``started``: the start of a training command, from which wall-clock time limits count."""
    from .signals import command_clock, exit_status, received, received_count
    mark = received_count()
    try:
        from .data._files import reading_encoding
        clock = command_clock(started) if started is not None else contextlib.nullcontext()
        with warnings.catch_warnings(), reading_encoding(encoding), clock:
            warnings.showwarning = _show_warning
            code = int(run() or 0)
        return code if received(mark) is None else exit_status(received(mark))
    except KeyboardInterrupt as exc:    # before or after training (during it, the signal only sets a flag)
        signum = received(mark) or signal.SIGINT
        print(f"\nloglin: interrupted by {signal.Signals(signum).name}" + (f": {exc}" if str(exc) else ""),
              file=sys.stderr)
        return exit_status(signum)
    except SystemError as exc:      # a second Ctrl-C that landed inside a compiled kernel
        if not isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            raise
        print("\nloglin: interrupted", file=sys.stderr)
        return exit_status(signal.SIGINT)
    except BrokenPipeError:         # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    except TimeLimitBeforeTraining as exc:
        print(f"loglin: error: {exc}", file=sys.stderr)
        return exc.EXIT_STATUS
    except (LoglinError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"loglin: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:       # argument validation inside solvers (unknown solver, bad C, ...)
        print(f"loglin: error: {exc}", file=sys.stderr)
        return 2


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (ConvergenceWarning, DataScaleWarning) as one line, without the source line."""
    print(f"loglin: warning: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
