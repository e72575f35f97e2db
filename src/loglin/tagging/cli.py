"""``loglin tag``: train, evaluate and run Maxent POS taggers and chunkers.

    loglin tag train --task pos|chunk|ner --format conll2000|brown|columns TRAIN -o MODEL
                     [--model maxent|crf|m3n] [--features PRESET|FILE] [options]
    loglin tag evaluate MODEL TEST [--format conll2000|brown|columns] [--json]
    loglin tag run MODEL INPUT [-o OUT] [--nbest K]   (also: loglin tag MODEL INPUT)

INPUT is either CoNLL columns (one token a line, word first; chunking needs
the POS tag second; blank line between sentences) or plain tokenized text,
one sentence a line (chunking: ``word/POS`` tokens). CoNLL input is written
back with the prediction appended as a last column; text as ``word/LABEL``;
line for line, blank lines and ``-DOCSTART-`` lines (with ``O`` appended) where
the input has them.

Training builds and fits a :class:`loglin.Tagger`. ``--task ner`` reads
CoNLL-2002/2003-style files (word, other columns, label last; ``-DOCSTART-``
lines skipped); CRF / M3N models use the task's template preset unless
``--features`` names another preset or a template file.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..cli_options import (EMPTY_INPUT_RULE, add_nbest, add_output, add_scale_out_options, check_numbers,
                           chosen_solver, document_encoding, keep_solver_state, keeping_best_model, regularization,
                           report, scale_out_backend, scaled_structured_solver, solver_options, training_keywords,
                           training_options)
from ..errors import DataContentError, InvalidInputError, about_file
from ..outputs import check_writable
from ..structured.model import MODELS as CHAIN_MODELS
from .files import (given_labels, need_columns, other_split, read_gold, read_input, refuse_foreign_corpus,
                    write_n_best, write_output)
from .tagger import DEFAULT_BEAM, TASK_DEFAULTS, MaxentTaggerModel

SUBCOMMANDS = ("train", "evaluate", "run")
SPLIT_HELP = "Brown folder: only the papers' fixed-seed 4/5 of the files (train) or the other 1/5 (test)"


def _rare(value: str):
    return None if value == "all" else int(value)


def add_tag_commands(subparsers) -> argparse.ArgumentParser:
    """Add ``tag`` with its ``train`` / ``evaluate`` / ``run`` subcommands to an argparse subparsers object."""
    tag = subparsers.add_parser("tag", help="POS tagging, chunking and NER: Maxent (Ratnaparkhi 1996; OpenNLP features), "
                                "CRF or M3N over feature templates",
                                description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = tag.add_subparsers(dest="tag_command", metavar="SUBCOMMAND")

    p = sub.add_parser("train", help="train a tagger or chunker", parents=[training_options()])
    p.add_argument("train", type=Path, help="training data (CoNLL-2000 file, or a Brown file/folder)")
    p.add_argument("--task", choices=("pos", "chunk", "ner"), default="pos",
                   help="default %(default)s; ner: CoNLL-2002/2003 columns, label last (crf / m3n models)")
    p.add_argument("--features", default=None, metavar="PRESET|FILE",
                   help="feature templates, a preset (pos, chunk, ner) or a template file; default the task's "
                        "preset. maxent: pos and chunk are OpenNLP's context generators, other templates give "
                        "the template Maxent tagger (their attributes plus the previous one and two labels)")
    p.add_argument("--format", choices=("conll2000", "brown", "columns"), default="conll2000",
                   help="training data format; default %(default)s")
    p.add_argument("--model", choices=("maxent",) + CHAIN_MODELS, default=None,
                   help="maxent: per-token Maxent tagger (model kind 'tagger'); crf: linear-chain CRF; m3n: "
                        "max-margin chain (model kind 'chain'); default maxent, crf for --task ner")
    p.add_argument("--cutoff", type=int, default=None,
                   help=f"predicate cut-off (OpenNLP: 5); default {TASK_DEFAULTS['pos']['cutoff']} for pos, "
                        f"{TASK_DEFAULTS['chunk']['cutoff']} for chunk (chosen on held-out training data)")
    p.add_argument("--rare-threshold", type=_rare, default=None,
                   help="words seen fewer times get spelling predicates; 'all' (default) as OpenNLP")
    p.add_argument("--beam", type=int, default=DEFAULT_BEAM, help="beam size stored in the model; default %(default)s")
    p.add_argument("--tag-dictionary", action="store_true", help="restrict known words to their training tags")
    p.add_argument("--iob-constraint", action=argparse.BooleanOptionalAction, default=None,
                   help="chunking: allow I-X only after B-X/I-X (default on for chunking, as OpenNLP, unless "
                        "the training tags are IOB1: I-X after O)")
    p.add_argument("--all-pairs", action=argparse.BooleanOptionalAction, default=None,
                   help="a weight for every (predicate, label) pair, not only pairs seen in training (OpenNLP); "
                        "default on for chunk, off for pos (chosen on held-out training data)")
    p.add_argument("--test", type=Path, default=None, help="evaluate on this gold file after training")
    p.add_argument("--cv", type=int, default=None, metavar="K",
                   help="with -C auto: K-fold cross-validation over the training sentences (default 5)")
    p.add_argument("--cv-plot", type=Path, default=None, metavar="FILE.png",
                   help="with -C auto: a plot of the cross-validated score against C")
    p.add_argument("--jobs", type=int, default=None, metavar="N",
                   help="with -C auto: run the folds in N worker processes (-1: one per core; default 1)")
    p.add_argument("--split", choices=("train", "test"), default=None,
                   help=SPLIT_HELP + "; --test reads the other part")
    p.add_argument("--eta", default="auto", help="crf/m3n with eg: initial learning rate (default: chosen on "
                   "10%% of the data, Collins et al. section 7); the same as -O eta=ETA")
    add_scale_out_options(p, "--model crf with lbfgs (the default) or owlqn")

    for name, helptext in (("evaluate", "score a model on gold data"), ("run", "tag a file")):
        p = sub.add_parser(name, help=helptext, description=helptext + ". " + EMPTY_INPUT_RULE)
        p.add_argument("model", type=Path)
        p.add_argument("input", type=Path)
        p.add_argument("--beam", type=int, default=None, help="override the model's beam size")
        p.add_argument("--tag-dictionary", action=argparse.BooleanOptionalAction, default=None,
                       help="override the model's tag-dictionary setting")
        p.add_argument("--iob-constraint", action=argparse.BooleanOptionalAction, default=None,
                       help="override the model's IOB-constraint setting (chunking)")
        if name == "evaluate":
            p.add_argument("--format", choices=("conll2000", "brown", "columns"), default="conll2000")
            p.add_argument("--split", choices=("train", "test"), default=None, help=SPLIT_HELP)
            p.add_argument("--json", action="store_true", help="print one JSON object")
        else:
            add_output(p)
            p.add_argument("--input-format", choices=("auto", "conll", "text"), default="auto",
                           help="auto (default): CoNLL columns when the file has a -DOCSTART- line, or lines of one "
                                "width with the model's labels in its label column (POS second, chunk third, NER "
                                "last; at 4+ columns two lines or more), or lines of one width with blank lines "
                                "between sentences; else text, one sentence a line")
            add_nbest(p, "write the K best taggings of each sentence, best first, each after a header "
                         "'# RANK VALUE' (CRF++'s -n output; RANK from 0): VALUE is the probability of the "
                         "tagging (CRF: P(labels | sentence), exact k-best Viterbi; Maxent: the product of "
                         "the tokens' P(label | context) over the beam's final hypotheses) or, for M3N "
                         "models, the score w.f; a blank line ends each tagging (text input: each "
                         "tagging is one line, a blank line ends the sentence's list)")
            p.add_argument("--keep-labels", action="store_true",
                           help="CoNLL input: a label already in the column after the inputs (not _ or ?) is kept "
                                "and the other tokens are decoded consistently with it (CRF / M3N models)")
    document_encoding(sub)
    return tag


def _parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="loglin")
    add_tag_commands(root.add_subparsers(dest="command"))
    return root


def tag_main(argv) -> int:
    """Entry point for ``loglin tag ...``; ``loglin tag MODEL INPUT`` means ``run``."""
    argv = list(argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        argv = ["run"] + argv
    args = _parser().parse_args(["tag"] + argv)
    if args.tag_command is None:
        _parser().parse_args(["tag", "--help"])
        return 0
    check_numbers(args)
    return {"train": _train, "evaluate": _evaluate, "run": _run}[args.tag_command](args)


def _train(args) -> int:
    return train_tagger(args)


def train_tagger(args) -> int:
    """Train the model that ``args`` (the tag train options, shared training options included) describe, as a
    :class:`loglin.Tagger`."""
    check_writable(args.output, args.trace, args.cv_plot)
    if args.model is None:
        args.model = "crf" if args.task == "ner" else "maxent"
    kind = "tagger" if args.model == "maxent" else "chain"
    features = getattr(args, "features", None)      # `loglin train` on a tagging corpus has no --features
    features = args.task if features is None else features
    # --model maxent: OpenNLP's context generators for the pos / chunk presets, else the templates' attributes
    templates = kind == "chain" or features not in ("pos", "chunk")
    if templates:
        from .templates import template_set
        template_set(features)                          # a bad template file fails before the data is read
    C = None if args.C == "auto" else regularization(args, kind, "mm" if args.model == "m3n" else "ll")
    solver = chosen_solver(args, kind, "mm" if args.model == "m3n" else "ll")
    args.solver, refusal = scaled_structured_solver(args, args.model, solver, "loglin tag train")
    options = solver_options(args, args.solver, ("maxent" if kind == "tagger" else "chain",))   # before reading
    args.test_sentences = _test_sentences(args)     # a --test file that cannot be scored fails before training
    if args.format != "brown":                      # read_gold's check, before --workers' cluster starts (whose
        refuse_foreign_corpus(args.train)           # workers read the file themselves)
    from_file = kind == "chain" and C is not None and args.format == "conll2000" and _task_preset(args, features)
    # before the data is read: an unreachable scheduler fails first
    backend = scale_out_backend(args, refusal, args.train if from_file else None)
    try:
        if from_file and backend is not None:
            with about_file(args.train):         # the workers read their own sentences from the file
                return _train_chain(args, C, None, options, features, backend)
        sentences = read_gold(args.train, args.format, args.task, args.split)
        if C is None:
            with about_file(args.train):
                C = _cross_validated_C(args, kind, sentences, options, features)
        if kind == "chain":
            with about_file(args.train):
                return _train_chain(args, C, sentences, options, features, backend)
        keywords = training_keywords(args, kind, options)
        if backend is not None:         # --workers: the Maxent tagger's contexts in shards
            keywords["backend"] = backend
        with about_file(args.train):
            estimator = _estimator(args, C, features, keywords).fit(*_inputs_and_labels(sentences))
    finally:
        if backend is not None:         # also when the data or the options fail before training
            backend.close()
    if templates:                                   # the template Maxent tagger: a loglin.Tagger file
        estimator.save(args.output)
        return _report_trained(args, estimator, estimator.result_, estimator.C, features, "over templates ")
    tagger = estimator.model_
    estimator.save(args.output)
    if args.trace is not None:
        tagger.result.trace.save(args.trace)    # replaces the partial JSON lines
    result = {"model": str(args.output), "task": args.task, **tagger.info}
    text = (f"trained {args.task} model: {tagger.info['features']:,} features, {tagger.info['iterations']} "
            f"iterations of {args.solver} in {tagger.info['train_seconds']:.1f} s -> {args.output}")
    if args.test is not None:
        scores = tagger.evaluate(args.test_sentences)
        scores.pop("by_type", None)
        result["test"] = scores
        text += "\n" + _score_text(args.task, scores)
    report(args, result, text)
    return 0


def _test_sentences(args):
    """The gold sentences of --test (None without it); an error naming the file if it has none."""
    if args.test is None:
        return None
    with about_file(args.test):
        sentences = read_gold(args.test, args.format, args.task, other_split(args.split))
        if not sentences:
            raise DataContentError("no sentences to evaluate")
    return sentences


def _task_preset(args, features) -> bool:
    """The features are the task's own preset (pos, chunk): crf_features' attributes, a ChainModel file."""
    return isinstance(features, str) and features == args.task and args.task in ("pos", "chunk")


def _estimator(args, C, features, keywords):
    """The loglin.Tagger these options and train()'s ``keywords`` (the shared training options) describe."""
    from ..params import sequence_estimator_params
    from .estimator import Tagger
    return Tagger(model=args.model, features=features, C=C, solver=args.solver, cutoff=args.cutoff,
                  rare_threshold=args.rare_threshold, beam=args.beam, tag_dictionary=args.tag_dictionary,
                  iob_constraint=args.iob_constraint, all_pairs=args.all_pairs,
                  **sequence_estimator_params(Tagger, keywords))


def _inputs_and_labels(sentences):
    """(X, y) of gold token tuples whose last column is the label."""
    return [[tuple(t[:-1]) for t in s] for s in sentences], [[t[-1] for t in s] for s in sentences]


def _cross_validated_C(args, kind, sentences, options, features) -> float:
    """-C auto: C of the best cross-validated score (chunk / NER F1, POS accuracy) along C = 2^-6 ... 2^10, each
    fold trained as this command would train the model, starting from its model at the previous C; --jobs: the
    folds in worker processes. Prints the path (--json: reported on stderr too)."""
    from ..selection import DEFAULT_PATIENCE, grouped_path
    keywords = {**training_keywords(args, kind, options), "progress": False, "callback": None}
    keywords.pop("w0", None)            # --resume is for the final fit, not the folds
    keywords.pop("checkpoint", None)
    measure = "accuracy" if args.task == "pos" else "f1"
    if kind == "chain":
        keywords.pop("eta", None)
    path = grouped_path(sentences, _FoldFit(args, features, keywords), _FoldScore(args.task, measure),
                        cv=args.cv or 5, random_state=args.seed, patience=DEFAULT_PATIENCE, scoring=measure,
                        warm_start=True, n_jobs=getattr(args, "jobs", None))
    print(f"{args.cv or 5}-fold cross-validation over C:\n{path.table()}", file=sys.stderr if args.json else sys.stdout)
    if args.cv_plot:
        path.plot(args.cv_plot)
    return path.best_C


class _FoldFit:
    """-C auto's fit of one fold at C (an object, so that --jobs can send it to a worker process): the command's
    Tagger, warm-started from the fold's model at the previous C."""

    def __init__(self, args, features, keywords):
        self.args, self.features, self.keywords = args, features, keywords

    def __call__(self, train, C, previous=None):
        estimator = previous if previous is not None else _estimator(self.args, C, self.features, self.keywords)
        estimator.set_params(C=C, warm_start=True)
        return estimator.fit(*_inputs_and_labels(train))


class _FoldScore:
    """-C auto's held-out score of a fold's model (chunk / NER F1 or POS accuracy)."""

    def __init__(self, task, measure):
        self.task, self.measure = task, measure

    def __call__(self, model, test):
        return _estimator_scores(model, test, self.task)[self.measure]


def _estimator_scores(estimator, gold_sentences, task) -> dict:
    if estimator.model == "maxent" and estimator.templates_ is None:       # OpenNLP's generators
        return estimator.model_.evaluate(gold_sentences)
    return _chain_scores(estimator, gold_sentences, task)


def _score_text(task, s):
    speed = f"{s['tokens_per_second']:,.0f} tokens/s"
    if task == "pos":
        unk = "" if s["unknown_accuracy"] is None else f", unknown words {s['unknown_accuracy']:.2f}%"
        return f"accuracy {s['accuracy']:.2f}% on {s['tokens']:,} tokens{unk} ({speed})"
    text = f"precision {s['precision']:.2f}%, recall {s['recall']:.2f}%, F1 {s['f1']:.2f} ({speed})"
    for kind, t in (s.get("by_type") or {}).items():       # conlleval's per-type lines
        text += (f"\n  {kind:>10}: precision {t['precision']:6.2f}%, recall {t['recall']:6.2f}%, "
                 f"F1 {t['f1']:6.2f}  ({t['gold']} gold, {t['guessed']} guessed)")
    return text


def _train_chain(args, C, sentences, checked, features, backend=None) -> int:
    """CRF / M3N chain models behind the same command; ``backend``: --workers' shards. The task's own preset
    (pos, chunk) is written as a ChainModel file (its attributes are crf_features'), other templates as the
    Tagger's file."""
    options = training_keywords(args, "chain", checked)
    if backend is not None:
        options["backend"] = backend
    if args.eta != "auto":
        options.setdefault("eta", args.eta)     # text: the option check converts and bounds it
    if sentences is None:                       # sharded from the file: a counting pass, then each worker's part
        from ..data._files import _ENCODING
        from ..scale.sources import FileSource, scan
        from ..training import train
        data = scan(FileSource(args.train, "conll2000", "chain", task=args.task, encoding=_ENCODING.get()), backend)
        options.setdefault("random_state", 0)
        with keeping_best_model(args.output):
            model, result = train(data, C, args.solver, loss="ll", space=data.glob.space, **options)
        model.save(args.output)
        keep_solver_state(args.output, options, result, model)
    else:
        with keeping_best_model(args.output):
            estimator = _estimator(args, C, features, options).fit(*_inputs_and_labels(sentences))
        result = estimator.result_
        if _task_preset(args, features):
            model = estimator.model_
            model.space.task = args.task
            model.save(args.output)
        else:
            model = estimator
            estimator.save(args.output)
        keep_solver_state(args.output, options, result, model.model_ if model is estimator else model)
    return _report_trained(args, model, result, C, features)


def _report_trained(args, model, result, C, features, how="") -> int:
    """The trace, the summary and the test scores of a trained chain or template tagger ``model``."""
    if args.trace is not None:
        result.trace.save(args.trace)
    summary = {"model": str(args.output), "task": args.task, "kind": args.model, "solver": args.solver, "C": C,
               "features": features if isinstance(features, str) else "templates",
               "iterations": result.iterations, "train_seconds": result.train_seconds,
               "converged": bool(result.converged), "stop_reason": result.stop_reason}
    text = f"trained {args.task} {args.model} {how}with {args.solver} -> {args.output}"
    if args.test is not None:
        scores = _chain_scores(model, args.test_sentences, args.task)
        summary["test"] = scores
        text += "\n" + _score_text(args.task, scores)
    report(args, summary, text)
    return 0


def _chain_scores(model, gold_sentences, task, **decoding) -> dict:
    """Scores of a chain model on gold sentences, in the same keys as MaxentTaggerModel.evaluate; ``decoding``:
    a template Maxent tagger's beam-search overrides."""
    from .conlleval import conlleval
    if not gold_sentences:
        raise DataContentError("no sentences to evaluate")
    inputs = [[tuple(t[:-1]) for t in s] for s in gold_sentences]
    gold = [[t[-1] for t in s] for s in gold_sentences]
    t0 = time.perf_counter()
    guess = model.predict(inputs, **decoding) if hasattr(model, "predict") else model.tag(inputs)
    seconds = time.perf_counter() - t0
    guess = [list(map(str, ps)) for ps in guess]           # a loglin.Tagger fitted on int or bool labels
    n = sum(len(s) for s in gold)
    out = {"tokens": n, "sentences": len(gold), "seconds": seconds, "tokens_per_second": n / max(seconds, 1e-9)}
    if task == "pos":
        hits = sum(g == p for gs, ps in zip(gold, guess) for g, p in zip(gs, ps))
        out.update(accuracy=100.0 * hits / n, unknown_accuracy=None)
    else:
        scores = conlleval(gold, guess)
        out.update({k: scores[k] for k in ("precision", "recall", "f1", "accuracy", "by_type")})
    return out


def _evaluate(args) -> int:
    from ..model_io import load_model
    scores, text = evaluate_model(load_model(args.model), args.input, args.format, args.split, beam=args.beam,
                                  tag_dictionary=args.tag_dictionary, iob_constraint=args.iob_constraint)
    report(args, {"model": str(args.model), **scores}, text)
    return 0


def evaluate_model(model, path, fmt="conll2000", split=None, **decoding) -> tuple[dict, str]:
    """(scores, one line of text) of a MaxentTaggerModel or ChainModel on the gold file ``path``."""
    from ..structured.model import ChainModel
    from .estimator import Tagger
    with about_file(path):
        if isinstance(_tagging_model(model), Tagger):
            task = _estimator_task(model)
            gold = read_gold(path, fmt, task, split)
            scores, labels = _chain_scores(model, gold, task, **_beam_options(model, decoding)), model.classes_
        elif isinstance(model, ChainModel):
            _beam_options(model, decoding)
            task = model.space.task
            gold = read_gold(path, fmt, task, split)
            scores, labels = _chain_scores(model, gold, task), model.labels
        else:
            task = model.task
            gold = read_gold(path, fmt, task, split)
            scores, labels = model.evaluate(gold, **decoding), model.labels
    # a label column the model never saw (another tag set, or the wrong column) would otherwise just score low
    unseen = sorted({str(t[-1]) for s in gold for t in s} - {str(label) for label in labels})
    text = _score_text(task, scores)
    if unseen:
        scores["unseen_labels"] = unseen[:20]
        text += (f"\n{len(unseen)} gold labels never seen in training: {', '.join(unseen[:5])}"
                 + (", ..." if len(unseen) > 5 else ""))
    return {"task": task, **scores}, text


def _run(args) -> int:
    check_writable(args.output)
    from ..model_io import load_model
    run_model(load_model(args.model), args.input, args.input_format, args.output, keep_labels=args.keep_labels,
              n_best=args.nbest, beam=args.beam, tag_dictionary=args.tag_dictionary,
              iob_constraint=args.iob_constraint)
    return 0


def run_model(model, path, input_format="auto", output=None, keep_labels=False, n_best=None, **decoding) -> None:
    """Tag the file ``path`` with a MaxentTaggerModel or ChainModel; write to ``output`` (a path) or standard output.
    ``keep_labels``: CoNLL input whose column after the inputs holds labels keeps them (chain models).
    ``n_best``: write that many best taggings per sentence (see ``--nbest``)."""
    if n_best is not None:
        from ..structured.nbest import check_n
        n_best = check_n(n_best)
    from ..structured.model import ChainModel
    from .estimator import Tagger
    if isinstance(_tagging_model(model), Tagger):
        given = _beam_options(model, decoding, n_best)
        if keep_labels and model.model not in CHAIN_MODELS:
            raise InvalidInputError(f"--keep-labels decodes chain models (--model crf / m3n); this tagger is a "
                                    f"{model.model} model, whose beam search does not take fixed labels")
        tokens, raw, fmt, plan = read_input(path, input_format, _estimator_task(model), model.classes_)
        constraints = None
        if keep_labels:
            need_columns(fmt, raw, 2, path)
            tokens = [[tuple(row[:-1]) for row in s] for s in raw]      # as in training: the label column last
            constraints = given_labels(raw, -1)
        t0 = time.perf_counter()
        if n_best is not None:
            predicted = model.predict_n_best(tokens, n_best, constraints=constraints,
                                             iob_constraint=decoding.get("iob_constraint"))
        else:
            predicted = model.predict(tokens, constraints=constraints, **given)
        probability = model.model != "m3n"
    elif isinstance(model, ChainModel):
        _beam_options(model, decoding, n_best)
        tokens, raw, fmt, plan = read_input(path, input_format, model.space.task, model.labels)
        constraints = None
        if keep_labels:
            given = 1 if model.space.task == "pos" else 2      # the column after the inputs
            need_columns(fmt, raw, given + 1, path)
            constraints = given_labels(raw, given)
        t0 = time.perf_counter()
        tokens = [[(t,) if isinstance(t, str) else tuple(t) for t in s] for s in tokens]
        if n_best is not None:
            predicted = model.tag_n_best(tokens, n_best, constraints=constraints,
                                         iob_constraint=bool(decoding.get("iob_constraint")))
        else:
            predicted = model.tag(tokens, constraints=constraints)
        probability = model.model != "m3n"
    else:
        if keep_labels:
            raise InvalidInputError("--keep-labels decodes chain models (--model crf / m3n); a Maxent tagger's "
                                    "beam search does not take fixed labels")
        tokens, raw, fmt, plan = read_input(path, input_format, model.task, model.labels)
        t0 = time.perf_counter()
        if n_best is not None:
            decoding.pop("beam", None)              # the beam is max(K, the model's)
            predicted = model.tag_n_best(tokens, n_best, **decoding)
        else:
            predicted = model.tag(tokens, **decoding)
        probability = True
    seconds = time.perf_counter() - t0
    from ..data._files import echo_output
    with echo_output(output) as out:        # line for line with the input (blank and -DOCSTART- lines too)
        if n_best is None:
            write_output(out, raw, predicted, fmt, plan)
        else:
            write_n_best(out, raw, predicted, fmt, probability, plan)
    if output is not None:
        n = sum(len(s) for s in tokens)
        print(f"tagged {n:,} tokens in {seconds:.2f} s -> {output}", file=sys.stderr)


BEAM_OPTIONS = {"beam": "--beam", "tag_dictionary": "--tag-dictionary", "iob_constraint": "--iob-constraint"}


def _beam_options(model, decoding, n_best=None) -> dict:
    """The decoding overrides given (None: not given) that ``model`` takes. A CRF / M3N decodes exactly (Viterbi):
    a beam option given for it would be ignored, so it is an error (--iob-constraint: with --nbest only)."""
    from ..structured.model import ChainModel
    given = {k: v for k, v in decoding.items() if v is not None}
    if isinstance(model, ChainModel) or getattr(model, "model", None) in CHAIN_MODELS:
        ignored = sorted(set(given) - ({"iob_constraint"} if n_best is not None else set()))
        if ignored:
            raise InvalidInputError(f"{BEAM_OPTIONS[ignored[0]]} sets the Maxent tagger's beam search; a "
                                    f"{getattr(model, 'model', 'chain')} model decodes exactly (Viterbi) "
                                    + ("(--iob-constraint applies to its --nbest lists)"
                                       if ignored[0] == "iob_constraint" else "without a beam"))
    return given


def _estimator_task(tagger) -> str:
    """How `loglin tag` reads files for a loglin.Tagger: its preset's task, else 'ner' (label last)."""
    return tagger.features if isinstance(tagger.features, str) and tagger.features in ("pos", "chunk") else "ner"


def _tagging_model(model):
    from ..structured.model import ChainModel
    from .estimator import Tagger
    if not isinstance(model, (MaxentTaggerModel, ChainModel, Tagger)):
        raise InvalidInputError(f"not a tagging model (Maxent tagger or chain CRF / M3N): a {type(model).__name__}")
    return model


__all__ = ["add_tag_commands", "evaluate_model", "run_model", "tag_main", "train_tagger"]
