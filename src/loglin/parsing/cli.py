"""``loglin parse``: train, evaluate and run arc-factored dependency parsers (Collins et al. 2008, section 8).

    loglin parse train TRAIN -o MODEL [--model crf|m3n] [--solver eg|eg-batch|lbfgs|sgd|cutting-plane]
                       [-C C | --sigma2 S] [--max-iter N] [--time-limit SEC] [--dev FILE] [--cutoff K]
    loglin parse evaluate MODEL TEST [--json]
    loglin parse MODEL INPUT [-o OUT]            (also: loglin parse run MODEL INPUT)

Files are CoNLL-X or CoNLL-U (detected from the lines themselves). The output
repeats the input line for line (comments, multiword tokens and empty nodes
of CoNLL-U included) with the HEAD column replaced by the prediction.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

from ..errors import InvalidInputError
from ..outputs import check_writable

SUBCOMMANDS = ("train", "evaluate", "run")
DEFAULT_C, DEFAULT_SOLVER, DEFAULT_MAX_ITER, DEFAULT_CUTOFF = 0.1, "eg", 25, 1
_TOKEN_ID = re.compile(r"\d+")


def _read(path):
    from ..data.conll import read_conllx
    if not Path(path).is_file():
        raise InvalidInputError(f"{path}: no such file")
    sentences = read_conllx(path)
    if not sentences:
        raise InvalidInputError(f"{path}: no sentences")
    return sentences


def conll_flavour(path) -> str:
    """'conllu' when the file has comments, multiword tokens or empty nodes, else 'conllx'."""
    from ..data._files import read_text_lines
    for line in read_text_lines(path):
        first = line.split("\t")[0].split()[0] if line.strip() else ""
        if line.startswith("#") or "-" in first or "." in first:
            return "conllu"
    return "conllx"


def write_with_heads(path, out, heads) -> None:
    """Echo the CoNLL file at ``path`` into ``out``, HEAD column replaced by ``heads`` (one array per sentence)."""
    from ..data._files import read_text_lines
    k, in_sentence = 0, False
    for line in read_text_lines(path):
        if not line.strip():
            k += in_sentence
            in_sentence = False
            out.write("\n")
            continue
        fields = line.rstrip("\r\n").split("\t") if "\t" in line else line.split()
        if not line.startswith("#") and _TOKEN_ID.fullmatch(fields[0].strip()):
            in_sentence = True
            fields[6] = str(int(heads[k][int(fields[0]) - 1]))
            line = "\t".join(fields)
        out.write(line.rstrip("\r\n") + "\n")


def _train(args):
    check_writable(args.output)
    from .model import train_parser
    C = args.sigma2 if args.sigma2 is not None else args.C
    if not np.isfinite(C) or C <= 0:
        raise InvalidInputError(f"the regularization constant must be positive, got {C}")
    train = _read(args.train)
    dev = _read(args.dev) if args.dev else None
    start = time.perf_counter()
    model = train_parser(train, model=args.model, solver=args.solver, C=C, cutoff=args.cutoff,
                         dev_sentences=dev, max_iter=args.max_iter, time_limit=args.time_limit,
                         random_state=args.seed, progress=not args.quiet and sys.stderr.isatty())
    seconds = time.perf_counter() - start
    model.save(args.output)
    info = model.info
    if not args.quiet:
        print(f"trained a {args.model.upper()} parser with {args.solver} (C = {C:g}) on {info['train_sentences']} "
              f"sentences ({info['non_projective_skipped']} non-projective trees skipped), "
              f"{info['n_features']} features, {info['iterations']} iterations, "
              f"training {info['train_seconds']:.1f} s, total {seconds:.1f} s -> {args.output}")
        if dev is not None:
            r = model.evaluate(dev)
            print(f"dev UAS {r['uas']:.2f}%  without punctuation {r['uas_no_punct']:.2f}%")
    return 0


def _evaluate(args):
    from .model import ParserModel
    model = ParserModel.load(args.model)
    result = model.evaluate(_read(args.test))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"UAS {result['uas']:.2f}%  without punctuation {result['uas_no_punct']:.2f}%  "
              f"({result['sentences']} sentences, {result['tokens']} tokens, "
              f"{result['sentences_per_second']:.0f} sentences/s)")
    return 0


def _run(args):
    check_writable(args.output)
    from ..data._files import open_text_for_write
    from .model import ParserModel
    model = ParserModel.load(args.model)
    heads = model.parse(_read(args.input))
    if args.output is None:
        write_with_heads(args.input, sys.stdout, heads)
    else:
        with open_text_for_write(args.output) as out:
            write_with_heads(args.input, out, heads)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="loglin parse", description="arc-factored dependency parsing "
                                     "(CRF / M3N trained by EG, L-BFGS, SGD or cutting planes)")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("train", help="train a parser on a CoNLL-X / CoNLL-U treebank")
    p.add_argument("train", type=Path)
    p.add_argument("-o", "--output", type=Path, required=True, help="model file to write")
    p.add_argument("--model", choices=("crf", "m3n"), default="crf")
    p.add_argument("--solver", choices=("eg", "eg-batch", "lbfgs", "sgd", "cutting-plane"), default=DEFAULT_SOLVER)
    p.add_argument("-C", "--C", dest="C", type=float, default=DEFAULT_C,
                   help="regularization constant, LIBLINEAR scale (Collins et al.'s C' = 1/C); default %(default)s")
    p.add_argument("--sigma2", type=float, default=None, help="same as -C")
    p.add_argument("--max-iter", type=int, default=DEFAULT_MAX_ITER, help="outer iterations; default %(default)s")
    p.add_argument("--time-limit", type=float, default=None, help="seconds of training")
    p.add_argument("--dev", type=Path, default=None, help="held-out treebank: UAS trace and final dev UAS")
    p.add_argument("--cutoff", type=int, default=DEFAULT_CUTOFF,
                   help="keep features seen on >= K gold arcs; default %(default)s")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    p = sub.add_parser("evaluate", help="unlabeled attachment score on a gold treebank")
    p.add_argument("model", type=Path)
    p.add_argument("test", type=Path)
    p.add_argument("--json", action="store_true")
    p = sub.add_parser("run", help="parse a CoNLL-X / CoNLL-U file (HEAD column replaced)")
    p.add_argument("model", type=Path)
    p.add_argument("input", type=Path)
    p.add_argument("-o", "--output", type=Path, default=None)
    return parser


def parse_main(argv) -> int:
    argv = list(argv)
    if argv and argv[0] not in SUBCOMMANDS and not argv[0].startswith("-"):
        argv = ["run"] + argv
    args = build_parser().parse_args(argv)
    if args.command is None:
        build_parser().print_help()
        return 0
    return {"train": _train, "evaluate": _evaluate, "run": _run}[args.command](args)
