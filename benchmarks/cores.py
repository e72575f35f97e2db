"""cores: every solver's time per outer iteration on 2 cores against 1 (issue 22, "both cores").

    benchmarks/run --only cores [--quick] [--repeats 3]      (NUMBA_NUM_THREADS unset or >= 2)

For each benchmark set (CoNLL2000-P / -C Maxent, a9a / news20 binary LR, CoNLL-2000 chunking chain CRF)
and each solver, the same number of outer iterations from w = 0 with the same seed is run with Numba on
1 thread and on N = max(2, --threads) threads, alternating, ``repeats`` times; medians of wall and CPU
seconds per iteration are reported with their ratio. An objective splits its passes into one block
per thread when it is built (kernels.maxent._blocks), so each thread count gets its own objective,
built after ``numba.set_num_threads``; "blocks" in the table is that split. The first step of every run
(set-up) is left out of the clocks. OMP_WAIT_POLICY=PASSIVE is loglin's default (docs/decisions/0007).

A solver whose iteration is a sum over the data (a gradient, a Hessian-vector product, an expectation
pass) should show a wall ratio well under 1 when the second core is free; the sequential dual and
coordinate methods (each update reads the previous one's result) stay at ~1. The machine is shared:
the load average is recorded before and after each set.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

from . import common

SETS = ("conll-pos", "conll-chunk", "a9a", "news20", "crf")
KIND = {"conll-pos": "maxent", "conll-chunk": "maxent", "a9a": "binary", "news20": "binary", "20newsgroups": "binary",
        "crf": "chain"}   # SETS and 20newsgroups (for benchmarks.ab)
SOLVERS = {"maxent": ("eg-acc", "eg", "lbfgs", "tron", "gis", "cd", "scgis", "cddual"),
           "binary": ("newton", "tron", "lbfgs", "cddual", "eg-acc"),
           "chain": ("lbfgs", "eg-batch", "eg")}
# an iteration of these is a sum over the data (batch passes); the others update one example or
# one coordinate at a time, each from the previous one's result
BATCH = {"lbfgs", "tron", "newton", "gis", "iis", "eg-batch"}
CALIBRATE_S = 1.5              # wall seconds of iterations per run (1 thread), at least one iteration
QUICK_CALIBRATE_S = 0.2
MAX_ITERATIONS = 40
MEMORY_ITERATIONS = 12         # the peak-memory run: past L-BFGS's history (m = 10) filling up
MEMORY_BUDGET_S = 8.0


def load(name, quick):
    """(kind, problem, make_objective, solver options maker)."""
    kind = KIND[name]
    if kind == "maxent":
        from .maxent import C, load as load_maxent, solver_spec
        problem = load_maxent(name, quick)
        return kind, problem, lambda: problem.objective(C), lambda s: solver_spec(s, problem)
    if kind == "binary":
        from loglin.binary import binary_problem
        from .binary import C_OF, load as load_binary
        X, y = load_binary(name, quick)
        problem = binary_problem(X, y, C=C_OF[name])
        return kind, problem, problem.objective, lambda s: (s, {})
    from loglin.experiments.collins2008 import conll_chunking
    from .crf import C as C_CRF
    problem = conll_chunking(quick)[2]
    return kind, problem, lambda: problem.objective(C_CRF), lambda s: (s, {})


def built_with(threads, make):
    """The objective built while Numba has ``threads`` threads (its passes get one block per thread)."""
    import numba
    numba.set_num_threads(threads)
    return make()


def blocks(obj):
    bounds = getattr(obj, "_bounds", None)
    return None if bounds is None else len(bounds) - 1


def run(obj, spec, threads, iterations, budget=None):
    """(wall s, CPU s, iterations done) of ``iterations`` outer iterations after an untimed first step
    (fewer if the solver ends, or once ``budget`` wall seconds are spent)."""
    import numba
    from loglin.solvers import resolve
    numba.set_num_threads(threads)
    name, opts = spec
    gen = resolve(name, obj)(obj, np.zeros(obj.n), np.random.default_rng(0), **opts)
    wall = cpu = 0.0
    done = 0
    try:
        step = next(gen)                          # set-up and the first iteration, off the clocks
        while done < iterations and not step.done and (budget is None or wall < budget):
            w0, c0 = common.now()
            step = next(gen)
            w1, c1 = common.now()
            wall += w1 - w0
            cpu += c1 - c0
            done += 1
    except StopIteration:
        pass
    finally:
        gen.close()
    return wall, cpu, done


def measure(name, quick, repeats, many):
    kind, problem, make, spec_of = load(name, quick)
    from loglin.training import default_solver
    from loglin.solvers.newton import MAX_FEATURES as NEWTON_MAX_FEATURES
    auto = default_solver(kind, problem=problem if kind in ("maxent", "binary") else None)
    objs = {1: built_with(1, make), many: built_with(many, make)}
    load0 = common.loadavg()
    rows = []
    for solver in SOLVERS[kind]:
        if solver == "newton" and problem.n_features > NEWTON_MAX_FEATURES:
            continue                              # it refuses to form a Hessian that large
        spec = spec_of(solver)
        t0 = time.time()
        run(objs[many], spec, many, 1)            # compile / load kernels for both objectives
        _, _, iterations = run(objs[1], spec, 1, MAX_ITERATIONS, QUICK_CALIBRATE_S if quick else CALIBRATE_S)
        iterations = max(1, iterations)
        with common.PeakMemory() as mem:          # 1 thread; the solver's state on top of the data
            run(objs[1], spec, 1, max(iterations, MEMORY_ITERATIONS), MEMORY_BUDGET_S)
        per_run = {1: [], many: []}
        for rep in range(repeats):
            for t in ((1, many) if rep % 2 == 0 else (many, 1)):
                w, c, done = run(objs[t], spec, t, iterations)
                per_run[t].append((w / max(done, 1), c / max(done, 1), done))
        med = {t: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for t, v in per_run.items()}
        rows.append({"solver": solver, "auto": solver == auto, "batch": solver in BATCH, "iterations": iterations,
                     "blocks": {str(t): blocks(o) for t, o in objs.items()},
                     "wall_per_iteration": {str(t): med[t][0] for t in med},
                     "cpu_per_iteration": {str(t): med[t][1] for t in med},
                     "wall_ratio": med[many][0] / med[1][0] if med[1][0] else None,
                     "cpu_ratio": med[many][1] / med[1][1] if med[1][1] else None, "peak_mb": mem.mb,
                     "runs": {str(t): v for t, v in per_run.items()}})
        print(f"  cores {name}: {solver} wall ratio {rows[-1]['wall_ratio']:.2f} ({time.time() - t0:.0f} s)", flush=True)
    return {"kind": kind, "auto": auto, "rows": rows, "loadavg_before": load0, "loadavg_after": common.loadavg()}


def main(args):
    import numba
    many = max(2, getattr(args, "threads", 1))
    if numba.config.NUMBA_NUM_THREADS < many:
        raise SystemExit(f"cores needs NUMBA_NUM_THREADS >= {many} (it is {numba.config.NUMBA_NUM_THREADS})")
    started = time.time()
    sets = {}
    for name in SETS:
        print(f"  cores: {name}", flush=True)
        sets[name] = measure(name, args.quick, args.repeats, many)
    numba.set_num_threads(1)
    result = {"benchmark": "cores", "threads": many, "quick": args.quick, "repeats": args.repeats, "sets": sets,
              "machine": common.machine(), "wall_seconds": time.time() - started}
    common.write("cores", render(result), result, args.out)
    return result


def _s(x):
    return "—" if x is None else (f"{1000 * x:.1f} ms" if x < 1 else f"{x:.2f} s")


def render(res):
    n = res["threads"]
    lines = [f"# cores: {n} cores vs 1 per solver, seconds per outer iteration{' (QUICK)' if res['quick'] else ''}", "",
             f"Median of {res['repeats']} alternating runs per thread count (same iterations, same seed, set-up step "
             f"off the clocks; Numba threads via numba.set_num_threads, OMP_WAIT_POLICY=PASSIVE). Wall ratio = "
             f"{n}-core wall / 1-core wall per iteration (< 1: the second core helps); CPU ratio likewise (> 1: "
             "the threads' extra work and waiting). The machine is a shared 2-core VM: a wall ratio near 1 for "
             "a batch solver can be the other jobs holding the second core; the load average is in each header. "
             f"Peak RSS Δ: the RSS high-water delta (benchmarks/common.py) of one more 1-thread run of at least "
             f"{MEMORY_ITERATIONS} iterations (or {MEMORY_BUDGET_S:.0f} s): the solver's state on top of the data.", ""]
    for name, s in res["sets"].items():
        lines += [f"## {name} ({s['kind']}; loglin auto = {s['auto']}; load average before {s['loadavg_before']}, "
                  f"after {s['loadavg_after']})", "",
                  f"| solver | iteration is a sum over the data | blocks (1 / {n} threads) | iterations per run | "
                  f"wall / it, 1 core | wall / it, {n} cores | wall ratio | CPU / it, 1 core | CPU / it, {n} cores | CPU ratio | "
                  "peak RSS Δ MB (1 core) |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in s["rows"]:
            b = r["blocks"]
            lines.append(f"| {r['solver']}{' (auto)' if r['auto'] else ''} | {'yes' if r['batch'] else 'no (sequential)'} | "
                         f"{b['1']} / {b[str(n)]} | {r['iterations']} | {_s(r['wall_per_iteration']['1'])} | "
                         f"{_s(r['wall_per_iteration'][str(n)])} | {common.fmt_ratio(r['wall_ratio'])} | "
                         f"{_s(r['cpu_per_iteration']['1'])} | {_s(r['cpu_per_iteration'][str(n)])} | "
                         f"{common.fmt_ratio(r['cpu_ratio'])} | {'—' if r.get('peak_mb') is None else format(r['peak_mb'], '.0f')} |")
        lines.append("")
    lines += ["How measured: benchmarks/cores.py docstring.", ""]
    return "\n".join(lines)
