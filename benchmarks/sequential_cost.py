"""CPU seconds per outer iteration of the sequential methods (cd, scgis) and gis against one fun_grad pass.

    PYTHONPATH=src python -m benchmarks.sequential_cost conll2000-pos [cd,scgis,gis] [iterations]

Maxent on the papers' features (pairs seen in training), C = 10, 1 Numba thread, process CPU time:
the median of 7 fun_grad calls, then each solver from w = 0; the median over iterations 2.. (the
first builds S_w and takes the largest steps) and its ratio to fun_grad (issue 22: CD <= 2.5x).
Decision record 0014. Not part of ``benchmarks/run``.
"""
from __future__ import annotations

import json
import statistics
import sys
import time

import numpy as np


def main(argv):
    import numba
    from loglin.solvers import resolve
    from loglin.tagging.datasets import build_dataset
    name = argv[0]
    solvers = (argv[1] if len(argv) > 1 else "cd,scgis,gis").split(",")
    iters = int(argv[2]) if len(argv) > 2 else 7
    numba.set_num_threads(1)
    p = build_dataset(name).problem
    obj = p.objective(10.0)
    w = np.zeros(obj.n) + 0.01
    obj.fun_grad(w)
    fg = []
    for _ in range(7):
        c0 = time.process_time()
        obj.fun_grad(w)
        fg.append(time.process_time() - c0)
    base = statistics.median(fg)
    print(json.dumps({"data": name, "contexts": p.n_contexts, "labels": p.n_labels, "features": obj.n,
                      "nnz": int(p.nnz()), "fun_grad_ms": round(1e3 * base, 1)}), flush=True)
    for s in solvers:
        w = np.zeros(obj.n)
        gen = resolve(s, obj)(obj, w, np.random.default_rng(0))
        times, fs = [], []
        for _ in range(iters):
            c0 = time.process_time()
            step = next(gen)
            times.append(time.process_time() - c0)
            fs.append(obj.fun(step.w))          # off the clock
        med = statistics.median(times[1:])
        print(json.dumps({"solver": s, "first_s": round(times[0], 3), "median_ms": round(1e3 * med, 1),
                          "ratio_to_fun_grad": round(med / base, 2), "f": fs}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
