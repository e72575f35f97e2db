"""ab: the time per outer iteration of solvers at two source trees, alternating (issue 18's A/B rule).

    flock /tmp/loglin-bench.lock python -m benchmarks.ab --base REV [--sets conll-pos,crf,parser] \
        [--solvers maxent=cddual,eg;chain=eg,lbfgs] [--repeats 5] [--iterations 3]

REV (a commit) is unpacked by ``git archive`` into a temporary folder; the other side is this checkout's
``src``. Each run is one process per (tree, set): it builds the problem, runs every listed solver once
untimed (compilation, first step), then ``--iterations`` outer iterations from w = 0 with seed 0 on
1 Numba thread, and reports CPU and wall seconds per iteration. The trees alternate A B / B A over
``--repeats`` runs; the report is the median per solver and the ratio new / base (> 1: slower). Sets:
those of :mod:`benchmarks.cores` and ``20newsgroups`` (full corpora from ../shared, ``--quick``: the slices) and ``parser``
(the Spanish CoNLL-2007 treebank, CRF parser), ``m3n`` (the chunking chain with the M3N loss).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOLVERS = {"maxent": "cddual,eg,sgd,lbfgs", "binary": "cddual,eg,sgd,lbfgs", "chain": "lbfgs,eg,sgd",
                   "m3n": "bcfw,eg", "parser": "lbfgs,eg"}


def _problem(name, quick):
    """(kind, objective) of a set."""
    from . import cores
    if name == "parser":
        from loglin.experiments.collins2008_parsing import _esp
        from loglin.parsing.problem import build_tree_problem
        return "parser", build_tree_problem(_esp(quick)[0])[0].objective(1.0)
    if name == "m3n":
        kind, problem, _, _ = cores.load("crf", quick)
        return "m3n", problem.objective(0.1, loss="mm")
    kind, _, make, _ = cores.load(name, quick)
    return kind, make()


def worker(name, solvers, iterations, quick):
    """One process: {solver: (wall s / it, CPU s / it)} on 1 thread."""
    import numba
    from . import cores
    numba.set_num_threads(1)
    kind, obj = _problem(name, quick)
    out = {}
    for solver in solvers:
        cores.run(obj, (solver, {}), 1, 1)                   # compile, first step
        wall, cpu, done = cores.run(obj, (solver, {}), 1, iterations)
        out[solver] = (wall / max(done, 1), cpu / max(done, 1))
    return out


def _unpack(rev):
    where = Path(tempfile.mkdtemp(prefix="loglin-ab-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "src"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where / "src"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True, help="the commit to compare this checkout's src with")
    ap.add_argument("--sets", default="conll-pos,crf,parser")
    ap.add_argument("--solvers", default="", help="KIND=S1,S2;KIND=... (kinds: maxent binary chain m3n parser)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker", nargs=3, metavar=("SET", "SOLVERS", "ITERATIONS"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        name, solvers, iterations = args.worker
        print(json.dumps(worker(name, solvers.split(","), int(iterations), args.quick)))
        return 0
    chosen = dict(DEFAULT_SOLVERS)
    for part in filter(None, args.solvers.split(";")):
        kind, names = part.split("=")
        chosen[kind] = names
    trees = {"base": _unpack(args.base), "new": ROOT / "src"}
    from . import cores
    for name in args.sets.split(","):
        kind = name if name in ("parser", "m3n") else cores.KIND[name]
        runs = {side: [] for side in trees}
        for rep in range(args.repeats):
            for side in (("base", "new") if rep % 2 == 0 else ("new", "base")):
                env = dict(os.environ, PYTHONPATH=f"{trees[side]}{os.pathsep}{ROOT}", NUMBA_NUM_THREADS="1")
                cmd = [sys.executable, "-m", "benchmarks.ab", "--base", args.base, "--worker", name, chosen[kind],
                       str(args.iterations)] + (["--quick"] if args.quick else [])
                done = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"ab: {side} {name} failed:\n{done.stderr[-2000:]}")
                runs[side].append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"\n{name} ({args.repeats} alternating runs, {args.iterations} iterations each, 1 thread, medians)")
        print("| solver | base CPU ms / it | new CPU ms / it | new / base (CPU) | base wall ms / it | new wall ms / it |")
        print("|---|---|---|---|---|---|")
        for solver in chosen[kind].split(","):
            med = {side: [statistics.median(r[solver][j] for r in runs[side]) * 1e3 for j in (0, 1)] for side in runs}
            print(f"| {solver} | {med['base'][1]:.1f} | {med['new'][1]:.1f} | {med['new'][1] / med['base'][1]:.3f}x "
                  f"| {med['base'][0]:.1f} | {med['new'][0]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
