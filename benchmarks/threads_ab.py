"""Both cores for the Maxent passes (issue 7): 1 vs 2 Numba threads, wall time per pass.

    python -m benchmarks.threads_ab [--full] [--repeats N] [--out DIR]

The passes split the contexts into one block per thread (kernels.maxent: prange over blocks, one
gradient accumulator per block, summed after). For each thread count the objective is built after
numba.set_num_threads (the blocks are fixed when it is built), then fun_grad (with the Hessian
cache) and hess_vec are timed, wall clock, the counts alternated, medians; results are checked to
agree. Data: the bundled CoNLL-2000 slice (POS, seen pairs); --full adds CoNLL2000-P (seen pairs, the
papers' features) and CoNLL2000-C (all pairs, the scikit-learn comparison's problem). Only
meaningful on an otherwise idle machine: the load average is printed with the table.
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

from . import common
from .dense_ab import parse_args

THREADS = (1, 2)


def _wall(fn, arg):
    t = time.perf_counter()
    fn(arg)
    return time.perf_counter() - t


def compare(problem, repeats, C=10.0, seed=0):
    import numba
    from loglin.objective import MaxentObjective
    objs = {}
    for t in THREADS:
        numba.set_num_threads(t)
        objs[t] = MaxentObjective(problem, C)
    rng = np.random.default_rng(seed)
    w, v = 0.05 * rng.standard_normal(problem.n_features), rng.standard_normal(problem.n_features)
    out = {}
    for t, obj in objs.items():
        numba.set_num_threads(t)
        out[t] = obj.fun_grad(w)
        obj.accept()
        out[t] += (obj.hess_vec(v),)
    (f1, g1, h1), (f2, g2, h2) = out[1], out[2]
    agree = max(abs(f1 - f2) / abs(f1), float(np.abs(g1 - g2).max() / np.abs(g1).max()),
                float(np.abs(h1 - h2).max() / np.abs(h1).max()))
    times = {f"{t} {p}": [] for t in THREADS for p in ("fun_grad", "hess_vec")}
    for i in range(repeats):
        for t in (THREADS if i % 2 == 0 else THREADS[::-1]):
            numba.set_num_threads(t)
            times[f"{t} fun_grad"].append(_wall(objs[t].fun_grad, w))
            times[f"{t} hess_vec"].append(_wall(objs[t].hess_vec, v))
    numba.set_num_threads(1)
    return {"median_ms": {k: 1e3 * statistics.median(x) for k, x in times.items()}, "agree_rel": agree,
            "repeats": repeats, "n_contexts": problem.n_contexts, "n_labels": problem.n_labels}


def main(argv=None):
    import numba
    args = parse_args(__doc__, "also CoNLL2000-P (seen pairs) and CoNLL2000-C (all pairs)", argv)
    if numba.config.NUMBA_NUM_THREADS < max(THREADS):
        print(f"needs {max(THREADS)} Numba threads (NUMBA_NUM_THREADS is {numba.config.NUMBA_NUM_THREADS})",
              file=sys.stderr)
        return 2
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    load0 = common.loadavg()
    cases = [("CoNLL-2000 slice, POS, seen pairs", "conll2000-pos", bundled_conll2000_small()[0].parent, False,
              args.repeats)]
    if args.full:
        cases += [("CoNLL2000-P, seen pairs", "conll2000-pos", None, False, args.repeats),
                  ("CoNLL2000-C, all pairs", "conll2000-chunk", None, True, args.repeats)]
    res = {}
    for label, name, data_dir, all_pairs, reps in cases:
        res[label] = compare(build_dataset(name, data_dir=data_dir, all_pairs=all_pairs).problem, reps)
        print(label, res[label], file=sys.stderr, flush=True)
    result = {"benchmark": "threads-ab", "results": res, "loadavg_before": load0, "loadavg_after": common.loadavg(),
              "machine": common.machine()}
    lines = ["# Maxent passes on both cores: 1 vs 2 Numba threads (wall time, alternating)", "",
             f"Wall time per pass, median over the repeats. Load average before {load0}, after "
             f"{result['loadavg_after']} ({common.machine().get('cpus')} CPUs): the 2-thread column is only "
             "meaningful when a second core is free.", "",
             "| data | contexts × labels | pass | 1 thread ms | 2 threads ms | speed-up | max rel. diff |",
             "|---|---|---|---|---|---|---|"]
    for label, r in res.items():
        for p in ("fun_grad", "hess_vec"):
            a, b = r["median_ms"][f"1 {p}"], r["median_ms"][f"2 {p}"]
            lines.append(f"| {label} | {r['n_contexts']} × {r['n_labels']} | {p} | {a:.1f} | {b:.1f} | {a / b:.2f}× "
                         f"| {r['agree_rel']:.1e} |")
    lines += ["", "How measured: benchmarks/threads_ab.py docstring.", ""]
    common.write("threads-ab", "\n".join(lines), result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
