"""The early phase of Huang et al. (2010), Figure 2: f(w) against CPU seconds for cd, scgis, gis, lbfgs.

    PYTHONPATH=src python -m benchmarks.early_phase conll2000-pos [seconds] [cd,scgis,gis,lbfgs]

Maxent on the papers' features, C = 10, w0 = 0, 1 Numba thread for every method, process CPU time
per outer iteration (f evaluated off the clock). Prints the best f reached by each CPU time and how
long CD and SCGIS stay below L-BFGS (decision record 0014). Not part of ``benchmarks/run``.
"""
from __future__ import annotations

import sys
import time

import numpy as np

GRID = (0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60, 90, 120)


def best_by(points, t):
    return min(f for c, f in points if c <= t)


def main(argv):
    import numba
    from loglin.solvers import resolve
    from loglin.tagging.datasets import build_dataset
    name = argv[0]
    limit = float(argv[1]) if len(argv) > 1 else 15.0
    solvers = (argv[2] if len(argv) > 2 else "cd,scgis,gis,lbfgs").split(",")
    numba.set_num_threads(1)
    obj = build_dataset(name).problem.objective(10.0)
    obj.fun_grad(np.zeros(obj.n))
    traces = {}
    for s in solvers:
        w = np.zeros(obj.n)
        gen = resolve(s, obj)(obj, w, np.random.default_rng(0))
        cpu, points = 0.0, [(0.0, obj.fun(w))]
        while cpu < limit:
            c0 = time.process_time()
            try:
                step = next(gen)
            except StopIteration:
                break
            cpu += time.process_time() - c0
            points.append((cpu, obj.fun(step.w)))
        traces[s] = points
    print("| CPU s | " + " | ".join(traces) + " |")
    print("|---" * (len(traces) + 1) + "|")
    for g in (g for g in GRID if g <= limit):
        print(f"| {g:g} | " + " | ".join(f"{best_by(traces[s], g):.6g}" for s in traces) + " |")
    if "lbfgs" in traces:
        grid = np.arange(1, int(limit * 10) + 1) / 10
        for s in (s for s in ("cd", "scgis") if s in traces):
            ahead = [g for g in grid if best_by(traces[s], g) < best_by(traces["lbfgs"], g)]
            print(f"{s} below lbfgs at {len(ahead)} of {len(grid)} times (0.1 s grid), last at "
                  f"{max(ahead) if ahead else '-'} s")


if __name__ == "__main__":
    main(sys.argv[1:])
