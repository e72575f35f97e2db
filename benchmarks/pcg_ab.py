"""A/B of TRON's preconditioner (issue 7): plain CG vs CG preconditioned by M = (1 - a) I + a diag(H).

    NUMBA_NUM_THREADS=1 python -m benchmarks.pcg_ab [--full] [--seconds S] [--out DIR]

Hsia, Chiang & Lin (2018) precondition TRON's CG by the Hessian's diagonal mixed with the identity
(a = 0.01, LIBLINEAR's choice); a = 0 is the CG of Lin et al. (2008), loglin's default and what the
papers' experiments use, a = 1 the pure diagonal. Each variant runs from w = 0 for a CPU-time limit
(one thread, the driver's trace, f outside the clock); the table gives CPU seconds to relative
differences (f - f*)/f*, f* the lowest f any variant reached, with outer and CG iteration counts.
Data: a9a (C = 4) and the bundled CoNLL-2000 slice (seen pairs, C = 10); --full adds CoNLL2000-P
(seen pairs) and CoNLL2000-C (all pairs, the scikit-learn comparison's problem), C = 10.
"""
from __future__ import annotations

import argparse
import sys

from . import common

VARIANTS = (("plain CG", 0.0), ("PCG a=0.01", 0.01), ("PCG a=1", 1.0))
LEVELS = (1e-2, 1e-4, 1e-6)


def cases(full):
    """(label, objective factory, CPU-s factor of --seconds)."""
    from loglin.binary import binary_problem
    from loglin.data import read_svmlight
    from loglin.data.paths import shared_data_dir
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small

    def a9a():
        X, y = read_svmlight(shared / "a9a" / "a9a")[:2]
        return binary_problem(X, y, C=4.0).objective()

    def conll(name, data_dir=None, all_pairs=False):
        return lambda: build_dataset(name, data_dir=data_dir, all_pairs=all_pairs).problem.objective(10.0)
    shared = shared_data_dir()
    out = [("a9a, C = 4", a9a, 0.1)] if shared is not None and (shared / "a9a" / "a9a").is_file() else []
    out += [("CoNLL-2000 slice, chunking, seen pairs", conll("conll2000-chunk", bundled_conll2000_small()[0].parent),
             0.1)]
    if full:
        out += [("CoNLL2000-P, seen pairs", conll("conll2000-pos"), 1.0),
                ("CoNLL2000-C, all pairs", conll("conll2000-chunk", all_pairs=True), 1.0)]
    return out


def race(objective, seconds):
    from loglin.solvers import minimize
    minimize(objective, "tron", max_iter=2)                       # compile outside the clock
    runs = {}
    for name, mix in VARIANTS:
        r = minimize(objective, "tron", tol=0.0, max_iter=100_000, time_limit=seconds, clock="cpu",
                     precondition=mix)
        runs[name] = {"points": [(rec["seconds"], rec["objective"]) for rec in r.trace],
                      "iterations": r.iterations, "cg_iterations": int(sum(r.trace.column("cg_iterations", 0)))}
    f_star = min(min(f for _, f in run["points"]) for run in runs.values())
    for run in runs.values():
        run["to"] = {common.level_key(eps): next((t for t, f in run["points"] if common.rel_diff(f, f_star) <= eps),
                                                 None) for eps in LEVELS}
    return runs, f_star


def render(result):
    """The markdown table of a result (also re-renders a saved pcg-ab.json)."""
    keys = [common.level_key(eps) for eps in LEVELS]
    lines = ["# TRON: plain CG vs diagonally preconditioned CG (A/B)", "",
             "Process CPU seconds to (f - f*)/f*, one Numba thread. f* is the lowest f of the three runs, so the "
             "run that set it reaches every level at its last point: read the table as how soon each variant came "
             f"within a level of the best of the three. Load average before {result['loadavg_before']}, after "
             f"{result['loadavg_after']}.", "",
             "| data | CG | " + " | ".join(f"to {k}" for k in keys) + " | final (f-f*)/f* | outer its | CG its | limit s |",
             "|---|---|" + "---|" * (len(keys) + 4)]
    for label, r in result["results"].items():
        for name, run in r["runs"].items():
            final = common.rel_diff(run["points"][-1][1], r["f_star"])
            lines.append(f"| {label} | {name} | " + " | ".join(common.fmt_s(run["to"][k]) for k in keys) +
                         f" | {final:.1e} | {run['iterations']} | {run['cg_iterations']} | {r['seconds']:g} |")
    return lines + ["", "How measured: benchmarks/pcg_ab.py docstring. 'not reached' = not within the limit.", ""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help="also the full CoNLL2000-P and CoNLL2000-C")
    ap.add_argument("--seconds", type=float, default=150.0, help="CPU-s limit per run on the full sets (a tenth "
                    "on a9a and the slice)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    load0 = common.loadavg()
    res = {}
    for label, build, factor in cases(args.full):
        runs, f_star = race(build(), args.seconds * factor)
        res[label] = {"f_star": f_star, "seconds": args.seconds * factor, "runs": runs}
        print(label, {k: (r["to"], r["iterations"], r["cg_iterations"]) for k, r in runs.items()}, file=sys.stderr,
              flush=True)
    result = {"benchmark": "pcg-ab", "results": res, "loadavg_before": load0, "loadavg_after": common.loadavg(),
              "machine": common.machine()}
    lines = render(result)
    common.write("pcg-ab", "\n".join(lines), result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
