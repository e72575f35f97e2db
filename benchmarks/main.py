"""benchmarks/run [--quick] [--only NAME ...] [--repeats 3] [--out DIR]: every comparison, then SUMMARY.md.

Comparisons (names for --only): a9a, news20, 20newsgroups (binary LR vs LIBLINEAR and scikit-learn),
conll-pos, conll-chunk (Maxent vs scikit-learn multinomial), crf (chain CRF and tagging vs
CRFsuite), costmodel (time per pass vs a streaming bound), jit (compile vs cached start-up),
cores (each solver's 2-core / 1-core time per iteration; only with --only).
The one-off A/B comparisons behind design choices are decision records in docs/decisions/.
Installs nothing; needs the bench extra (liblinear-official, scikit-learn, python-crfsuite).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import common

ALL = ("a9a", "news20", "20newsgroups", "conll-pos", "conll-chunk", "crf", "costmodel", "jit", "cores")
BINARY = ("a9a", "news20", "20newsgroups")
QUICK = ("a9a", "costmodel")          # the smoke test: small slices, < 60 s
MULTI_THREAD = ("conll-pos", "conll-chunk", "cores")     # the comparisons that take --threads above 1


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="benchmarks/run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke test: a9a slices only (a9a, costmodel), 1 repeat, < 60 s; with --only, small slices of those")
    ap.add_argument("--only", nargs="+", choices=ALL, default=None, help="run only these comparisons")
    ap.add_argument("--repeats", type=int, default=None, help="repeats per comparison (default 3; 1 with --quick)")
    ap.add_argument("--out", type=Path, default=common.RESULTS, help="output directory")
    ap.add_argument("--maxent-slice", action="store_true",
                    help="Maxent comparisons on the bundled CoNLL-2000 slice instead of the full corpus")
    ap.add_argument("--maxent-solvers", default=None,
                    help="loglin solvers raced in conll-pos/conll-chunk, comma-separated, options after colons "
                         "(default auto,eg-acc,eg:order=blocks,eg-lbfgs,lbfgs,cddual,tron; on the slice auto,eg-acc,eg-lbfgs,lbfgs; auto = the default solver for the problem)")
    ap.add_argument("--maxent-levels", default=None,
                    help="relative-difference levels of the Maxent tables, comma-separated (default 1e-2,1e-4,1e-6;"
                         " on the slice 1e-2,1e-4)")
    ap.add_argument("--maxent-limit", type=float, default=None,
                    help="CPU seconds per loglin run in conll-pos/conll-chunk (default 400 full, 90 slice)")
    ap.add_argument("--no-saga", action="store_true", help="leave scikit-learn saga out of the Maxent comparisons")
    ap.add_argument("--maxent-merge", type=Path, nargs="+", default=None,
                    help="conll-pos / conll-chunk JSON files of earlier runs of the same comparison (same tools): "
                         "their runs are counted as this run's first repeats, so a long run can be split into "
                         "locked slices of one repeat each (each slice: --repeats 1 --maxent-rotate k)")
    ap.add_argument("--maxent-rotate", type=int, default=0,
                    help="start the Maxent tools' rotation at this repeat (the k-th slice of a split run)")
    ap.add_argument("--threads", type=int, default=1,
                    help="cores for every tool (loglin's Numba passes, scikit-learn's BLAS; LIBLINEAR and saga stay "
                         "single-threaded): above 1, conll-pos / conll-chunk write <name>-<N>cores.md/.json; needs "
                         "NUMBA_NUM_THREADS unset or >= N")
    ap.add_argument("--crf-solvers", default=None, help="loglin chain solvers to race (default eg-annealed)")
    args = ap.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.threads < 1:
        ap.error("--threads must be at least 1")
    if args.threads > 1 and any(n not in MULTI_THREAD for n in (args.only or ALL)):
        ap.error(f"--threads above 1 needs --only among {', '.join(MULTI_THREAD)} (the other comparisons pin one thread)")
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        import liblinear.liblinearutil  # noqa: F401
        import pycrfsuite  # noqa: F401
        import scipy.optimize  # noqa: F401  (loads SciPy's OpenBLAS before we limit it)
        import sklearn.linear_model  # noqa: F401
        from threadpoolctl import threadpool_limits
    except ImportError as exc:
        raise SystemExit(f"benchmarks need the 'bench' extra ({exc}); run: pip install -e .[bench]")
    import numba
    if args.threads > numba.config.NUMBA_NUM_THREADS:
        raise SystemExit(f"--threads {args.threads} needs NUMBA_NUM_THREADS >= {args.threads} "
                         f"(it is {numba.config.NUMBA_NUM_THREADS})")
    names = args.only or (QUICK if args.quick else tuple(n for n in ALL if n != "cores"))
    started = time.time()
    # BLAS on --threads threads for every tool (LIBLINEAR and CRFsuite are single-threaded)
    with threadpool_limits(limits=args.threads, user_api="blas"):
        for name in names:
            t0 = time.time()
            print(f"== {name}", file=sys.stderr, flush=True)
            module = _module(name)
            module.main(args, name) if name in BINARY + ("conll-pos", "conll-chunk") else module.main(args)
            print(f"== {name}: {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    from . import summary
    summary.main(args)
    print(f"total {time.time() - started:.0f} s", file=sys.stderr)
    return 0


def _module(name):
    import importlib
    mod = {"a9a": "binary", "news20": "binary", "20newsgroups": "binary", "conll-pos": "maxent", "conll-chunk": "maxent"}.get(name, name)
    return importlib.import_module(f"benchmarks.{mod}")


if __name__ == "__main__":
    sys.exit(main())
