"""``loglin parse``: train, evaluate and run arc-factored dependency parsers (Collins et al. 2008, section 8).

    loglin parse train TRAIN -o MODEL [--model crf|m3n] [--solver eg|eg-batch|lbfgs|sgd|cutting-plane]
                       [--dev FILE] [--cutoff K] [the training options of `loglin train`: -C, --tol, ...]
    loglin parse evaluate MODEL TEST [--json]
    loglin parse MODEL INPUT [-o OUT] [--nbest K]   (also: loglin parse run MODEL INPUT)

Files are CoNLL-X or CoNLL-U (detected from the lines themselves). The output
repeats the input line for line (comments, multiword tokens and empty nodes
of CoNLL-U included) with the HEAD and DEPREL columns replaced by the prediction
(DEPREL "_" from a parser trained without labels: never the input's own) and "_" in the
syntax columns it does not predict (PHEAD, PDEPREL, DEPS).
With ``--nbest K`` every sentence is written once per tree of its K best (:func:`write_n_best`).
Training builds and fits a :class:`loglin.Parser`.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path


from ..data._files import WHITESPACE, fields, is_blank
from ..errors import InvalidInputError, about_file
from ..outputs import check_writable

SUBCOMMANDS = ("train", "evaluate", "run")
DEFAULT_CUTOFF = 1
_TOKEN_ID = re.compile(r"\d+")


def _read(path, heads_required=True, partial_heads=False, purpose="to train on"):
    """The sentences of ``path``; none is an error naming the file (``purpose``: "to evaluate", ...), or an
    empty list when ``purpose`` is None (text to parse: empty input, empty output)."""
    from ..data.conll import read_conllx
    if not Path(path).exists():
        raise InvalidInputError(f"{path}: no such file")
    sentences = read_conllx(path, heads_required=heads_required, partial_heads=partial_heads)
    if not sentences and purpose is not None:
        raise InvalidInputError(f"{path}: no sentences {purpose}")
    return sentences


def conll_flavour(path) -> str:
    """'conllu' when the file has comments, multiword tokens or empty nodes, else 'conllx'."""
    from ..data._files import read_text_lines
    for line in read_text_lines(path):
        first = (fields(line.split("\t")[0]) or [""])[0]
        if line.startswith("#") or "-" in first or "." in first:
            return "conllu"
    return "conllx"


def write_with_heads(path, out, heads, labels=None) -> None:
    """Echo the CoNLL file at ``path`` into ``out``, HEAD column replaced by ``heads`` (one array per sentence)
    and DEPREL by ``labels`` (one list per sentence; None: "_", so that no gold label sits beside a predicted head).
    The other syntax columns, which the parser does not predict, become "_" too: PHEAD / PDEPREL of CoNLL-X,
    DEPS of CoNLL-U (on words and empty nodes); CoNLL-U's MISC is kept."""
    from ..data._files import read_text_lines
    blank = (8,) if conll_flavour(path) == "conllu" else (8, 9)
    k, in_sentence = 0, False
    for line in read_text_lines(path):
        if is_blank(line):
            k += in_sentence
            in_sentence = False
            out.write("\n")
            continue
        columns = _columns(line)
        if _is_token(line, columns):
            in_sentence = True
            columns[6] = str(int(heads[k][int(columns[0]) - 1]))
            columns[7] = "_" if labels is None else labels[k][int(columns[0]) - 1]
            for column in blank:
                columns[column] = "_"
            line = "\t".join(columns)
        elif not line.startswith("#") and "." in columns[0] and len(columns) > 8:      # an empty node: its DEPS
            columns[8] = "_"
            line = "\t".join(columns)
        out.write(line.rstrip("\r\n") + "\n")


def write_n_best(path, out, n_best, labels=None) -> None:
    """Echo the CoNLL file at ``path`` into ``out`` with every sentence repeated once per tree of its n-best list
    (``n_best``: per sentence [(heads, score), ...], best first; ``labels``: per sentence one DEPREL list per
    tree, or None): a comment line ``# nbest R score S`` (R from 0), the sentence's lines as
    :func:`write_with_heads` writes them for that tree, a blank line. Lines outside sentences are written once.
    Each tree is a CoNLL-U sentence of its own (docs/decisions/0052): ``# sent_id = ID`` becomes ``ID-R`` (ids
    are unique in a CoNLL-U file) and the comments that start something (``# newdoc``, ``# newpar``,
    ``# global.columns``) come once, before rank 0's line, so that K trees do not open K documents."""
    import io
    from ..data._files import read_text_lines
    lines = read_text_lines(path)
    echoes = []                                 # per rank, write_with_heads' output line for line
    for r in range(max((len(trees) for trees in n_best), default=0)):
        heads = [trees[min(r, len(trees) - 1)][0] for trees in n_best]
        deprels = None if labels is None else [lab[min(r, len(lab) - 1)] for lab in labels]
        buffer = io.StringIO()
        write_with_heads(path, buffer, heads, deprels)
        echoes.append(buffer.getvalue().split("\n")[:-1])
        if len(echoes[-1]) != len(lines):
            raise InvalidInputError(f"{path}: cannot align the n-best output with the input lines")
    k, block = 0, []
    for j, line in enumerate(lines + [""]):
        if not is_blank(line):
            block.append(j)
            continue
        if not block:
            continue
        if any(_is_token(lines[i], _columns(lines[i])) for i in block):
            starts = [lines[i].rstrip("\r\n") for i in block if _STARTS_ONCE.match(lines[i])]
            for r, (_, score) in enumerate(n_best[k]):
                tree = [_SENT_ID.sub(rf"\g<0>-{r}", echoes[r][i]) for i in block if not _STARTS_ONCE.match(lines[i])]
                out.write("".join(line + "\n" for line in (starts if r == 0 else [])
                                  + [f"# nbest {r} score {score:.6g}"] + tree) + "\n")
            k += 1
        else:
            out.write("".join(lines[i].rstrip("\r\n") + "\n" for i in block) + "\n")
        block = []


# CoNLL-U comments that open a document or paragraph, or head a CoNLL-U Plus file: once per sentence, not per tree
_STARTS_ONCE = re.compile(r"#\s*(newdoc|newpar|global\.columns)\b")
_SENT_ID = re.compile(r"(?<=^#)\s*sent_id\s*=\s*\S.*?(?=\s*$)")


def _columns(line) -> list[str]:
    """A treebank line's columns: at tabs when it has one, else at ASCII whitespace (CoNLL-X written with spaces)."""
    return line.rstrip("\r\n").split("\t") if "\t" in line else fields(line)


def _is_token(line, columns) -> bool:
    """Whether ``line`` (split into ``columns``) is a token line: no comment, an integer ID first."""
    return not line.startswith("#") and bool(_TOKEN_ID.fullmatch(columns[0].strip(WHITESPACE)))


def _train(args):
    check_writable(args.output, args.trace)
    from ..cli_options import (chosen_solver, keep_solver_state, keeping_best_model, regularization, report,
                               scale_out_backend, scaled_structured_solver, solver_options, training_keywords)
    from ..params import sequence_estimator_params
    from .estimator import Parser
    from .model import check_options
    C = regularization(args, "tree")
    solver = chosen_solver(args, "tree", "mm" if args.model == "m3n" else "ll")
    solver, refusal = scaled_structured_solver(args, args.model, solver, "loglin parse train")
    check_options(args.model, solver)
    options = solver_options(args, solver, ("tree",))              # before the treebank is read
    backend = scale_out_backend(args, refusal, args.train)     # before reading: a bad scheduler fails first
    try:
        dev = _read(args.dev, purpose="to evaluate") if args.dev else None
        start = time.perf_counter()
        keywords = training_keywords(args, "tree", options)
        parser = None
        with about_file(args.train), keeping_best_model(args.output):
            if backend is None:
                parser = Parser(model=args.model, solver=solver, C=C, cutoff=args.cutoff,
                                **sequence_estimator_params(Parser, keywords))
                parser.fit(_read(args.train), X_dev=dev)
                model, result = parser.model_, parser.result_
            else:                # the workers read their own sentences from the file
                model, result = _train_on_workers(args, solver, C, dev, backend, keywords)
    finally:
        if backend is not None:        # also when the data fails before training
            backend.close()
    seconds = time.perf_counter() - start
    (model if parser is None else parser).save(args.output)
    keep_solver_state(args.output, keywords, result, model)
    if args.trace is not None:
        result.trace.save(args.trace)
    info = model.info
    summary = {"model_file": str(args.output), "model": args.model, "solver": solver, "C": C,
               "objective": result.f, "converged": bool(result.converged), "seconds": seconds, **info}
    text = (f"trained a {args.model.upper()} parser with {solver} (C = {C:g}) on {info['train_sentences']} "
            f"sentences ({info['non_projective_skipped']} non-projective trees skipped), "
            f"{info['n_features']} features, {info['iterations']} iterations, "
            f"training {info['train_seconds']:.1f} s, total {seconds:.1f} s -> {args.output}")
    if model.labeller is not None:
        summary["labeller"] = model.labeller.info
        text += "\n" + labeller_line(model.labeller.info)
    if dev is not None:
        r = model.evaluate(dev)
        summary["dev"] = {k: r[k] for k in SCORE_KEYS if k in r}
        text += "\ndev " + scores_line(r)
    report(args, summary, text)
    return 0


def _train_on_workers(args, solver, C, dev, backend, keywords):
    """A counting pass on the workers builds the feature space; each then builds its part's trees."""
    from ..data._files import _ENCODING
    from ..scale.sources import FileSource, scan
    from ..training import train
    from .estimator import labeller_after_parser
    from .model import dev_uas_metric, training_info
    if not Path(args.train).exists():
        raise InvalidInputError(f"{args.train}: no such file")
    start = time.perf_counter()
    data = scan(FileSource(args.train, "conllx", "tree", cutoff=args.cutoff, encoding=_ENCODING.get()), backend)
    space = data.glob.space
    keywords.setdefault("random_state", 0)
    info = training_info(sum(data.rows), data.glob.skipped, space, time.perf_counter() - start)
    model, result = train(data, C, solver, loss="ll", space=space, evaluate=dev_uas_metric(dev, space), info=info,
                          backend=backend, **keywords)
    # the arc labeller as the one-process path trains it (a Maxent over the gold arcs: cheap in this process)
    model.labeller = labeller_after_parser(lambda: _read(args.train), result, started=start, C=C, cutoff=args.cutoff,
                                           **{k: keywords[k] for k in LABELLER_KEYWORDS})
    return model, result


LABELLER_KEYWORDS = ("tol", "penalty", "l1_ratio", "random_state", "time_limit", "clock")


def _evaluate(args):
    from ..model_io import load_model
    from ..data._files import echo_output
    result, text = evaluate_model(load_model(args.model), args.test)
    with echo_output(None) as out:         # per-label lines: labels of the treebank, not in the locale's encoding
        out.write((json.dumps(result, indent=2) if args.json else text) + "\n")
    return 0


def evaluate_model(model, path) -> tuple[dict, str]:
    """(scores, one line of text) of a ParserModel on the gold treebank ``path``: UAS, and LAS, label accuracy
    and per-label scores when the parser labels arcs and the treebank has DEPREL labels."""
    with about_file(path):
        result = _parser_model(model).evaluate(_read(path, purpose="to evaluate"))
    return result, (f"{scores_line(result)}  ({result['sentences']} sentences, {result['tokens']} tokens, "
                    f"{result['sentences_per_second']:.0f} sentences/s)")


SCORE_KEYS = ("uas", "uas_no_punct", "las", "las_no_punct", "label_accuracy", "label_accuracy_no_punct")


def scores_line(r) -> str:
    """UAS, and LAS and label accuracy when the parser labels arcs, in percent; punctuation as in :func:`uas`."""
    text = f"UAS {r['uas']:.2f}%  without punctuation {r['uas_no_punct']:.2f}%"
    if "las" in r:
        text += (f"; LAS {r['las']:.2f}%  without punctuation {r['las_no_punct']:.2f}%; "
                 f"label accuracy {r['label_accuracy']:.2f}%")
    return text


def labeller_line(info) -> str:
    if info["n_labels"] == 1:
        return f"arc labeller: one DEPREL on all {info['train_arcs']} training arcs, given to every arc"
    return (f"arc labeller: {info['n_labels']} labels, {info['n_predicates']} predicates on {info['train_arcs']} "
            f"arcs, {info['solver']} {info['iterations']} iterations, training {info['train_seconds']:.1f} s")


def _run(args):
    check_writable(args.output)
    from ..model_io import load_model
    run_model(load_model(args.model), args.input, args.output, n_best=args.nbest, keep_heads=args.keep_heads)
    return 0


def run_model(model, path, output=None, n_best=None, keep_heads=False) -> None:
    """Parse the CoNLL file ``path``; write it with the predicted heads and labels to ``output`` or standard output.
    ``n_best``: write each sentence once per tree of its n best (see ``--nbest``). ``keep_heads``: the input's
    HEAD values are constraints (see ``--keep-heads``)."""
    from ..data._files import echo_output
    model = _parser_model(model)
    if n_best is not None:
        from ..structured.tree_nbest import check_n_trees
        n_best = check_n_trees(n_best)
    sentences = _read(path, heads_required=False, partial_heads=keep_heads, purpose=None)   # HEAD may be _
    if keep_heads and n_best is not None:
        raise InvalidInputError("--keep-heads decodes the best tree only; it does not combine with --nbest")
    if not sentences:                       # empty input, empty output: its comment lines only
        write, heads, labels = write_with_heads, [], []
    elif n_best is None:
        constraints = [s.heads for s in sentences] if keep_heads else None
        write, heads = write_with_heads, model.parse(sentences, constraints)
        labels = model.label(sentences, heads)
        if keep_heads:
            labels = _given_deprels_kept(sentences, labels)
    else:
        write, heads = write_n_best, model.parse_n_best(sentences, n_best)
        labels = model.label_n_best(sentences, heads)
    with echo_output(output) as out:
        write(path, out, heads, labels)


def _given_deprels_kept(sentences, labels):
    """--keep-heads: the DEPREL the input gives beside a given HEAD replaces the predicted one (a kept arc keeps
    its label); other words keep the prediction ("_" from a parser without labeller)."""
    out = []
    for k, s in enumerate(sentences):
        predicted = ["_"] * len(s) if labels is None else labels[k]
        out.append([d if h >= 0 and d != "_" else y for h, d, y in zip(s.heads, s.deprels, predicted)])
    return out


def _parser_model(model):
    from .model import ParserModel
    if not isinstance(model, ParserModel):
        raise InvalidInputError(f"not a parser model: a {type(model).__name__}")
    return model


def build_parser() -> argparse.ArgumentParser:
    from ..cli_options import add_nbest, add_output, document_encoding, training_options
    parser = argparse.ArgumentParser(prog="loglin parse", description="arc-factored dependency parsing "
                                     "(CRF / M3N trained by EG, L-BFGS, SGD or cutting planes)")
    sub = parser.add_subparsers(dest="command")
    text = "train a parser on a CoNLL-X / CoNLL-U treebank (and an arc labeller when it has DEPREL labels)"
    p = sub.add_parser("train", help=text, parents=[training_options()], description=text + (
        ". --time-limit bounds the whole command: the arc labeller, trained after the parser (also with --workers, "
        "in this process), gets the time the parser leaves. With none left, or after Ctrl-C / SIGTERM, the parser "
        "is saved without a labeller and a warning says so; a labeller cut short by the limit is its best so far."))
    p.add_argument("train", type=Path)
    p.add_argument("--model", choices=("crf", "m3n"), default="crf")
    p.add_argument("--dev", type=Path, default=None, help="held-out treebank: UAS trace and final dev UAS / LAS")
    p.add_argument("--cutoff", type=int, default=DEFAULT_CUTOFF,
                   help="keep features seen on >= K gold arcs; default %(default)s")
    from ..cli_options import add_scale_out_options
    add_scale_out_options(p, "--model crf with lbfgs (the default with --workers) or owlqn")
    from ..cli_options import EMPTY_INPUT_RULE
    text = ("attachment scores on a gold treebank: UAS, and LAS and label accuracy when the parser labels arcs "
            "(with and without punctuation)")
    p = sub.add_parser("evaluate", help=text, description=text + ". " + EMPTY_INPUT_RULE)
    p.add_argument("model", type=Path)
    p.add_argument("test", type=Path)
    p.add_argument("--json", action="store_true")
    text = ("parse a CoNLL-X / CoNLL-U file (HEAD and DEPREL columns replaced; DEPREL '_' from a parser trained "
            "without labels, e.g. a model file written before arc labelling; PHEAD, PDEPREL and DEPS '_')")
    p = sub.add_parser("run", help=text, description=text + ". " + EMPTY_INPUT_RULE)
    p.add_argument("model", type=Path)
    p.add_argument("input", type=Path)
    add_output(p)
    add_nbest(p, "write the K best projective trees of each sentence (exact k-best Eisner), best first: "
                 "each a comment line '# nbest RANK score SCORE' (RANK from 0; SCORE log P(tree | sentence) "
                 "for a CRF parser, w.f for an M3N parser), the sentence with that tree's HEAD and DEPREL, "
                 "a blank line; fewer when a sentence has fewer trees. Each tree is a CoNLL-U sentence of "
                 "its own: its comments (e.g. '# text') are repeated with it, '# sent_id = ID' becomes "
                 "'ID-RANK' (unique ids), and '# newdoc', '# newpar' and '# global.columns' lines are "
                 "written once, before the best tree")
    p.add_argument("--keep-heads", action="store_true",
                   help="keep the heads the input's HEAD column gives (any token; '_' = free) and parse the rest: "
                        "the best projective tree with those arcs (an error names a sentence none can keep); a "
                        "DEPREL given beside a given HEAD is kept too, the other words are labelled")
    document_encoding(sub)
    return parser


def parse_main(argv) -> int:
    argv = list(argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        argv = ["run"] + argv
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    from ..cli_options import check_numbers
    check_numbers(args)
    return {"train": _train, "evaluate": _evaluate, "run": _run}[args.command](args)
