"""A/B of the dense all-pairs Maxent kernels (issue 7): generic map kernels vs the dense path.

    NUMBA_NUM_THREADS=1 python -m benchmarks.dense_ab [--full] [--repeats N] [--out DIR]

On an all-pairs problem (feature p*K + y = (predicate p, label y), MaxentProblem.dense_pairs)
the same MaxentObjective is built twice, dense_path=False, label_rows=False (every predicate through
map_label / map_feat) and dense_path=True, hot_first=False (w read as a P x K block of dense rows); both run
kernels.maxent.loss_and_expectation / hessian_vector. Per pass: fun_grad (with the Hessian cache,
what L-BFGS and TRON call) and hess_vec, process CPU time, A and B alternated, medians.
f, gradient and Hv are checked to agree before timing. Data: the bundled CoNLL-2000 slice
(POS and chunking); --full adds the full CoNLL2000-P.

A second table times the dense path with W's rows in their own order against the same rows ordered
by predicate frequency (hot_first, loglin.label_rows.AllPairsRows: the default once W passes a few MB),
on the slice's chunking problem and, with --full, CoNLL2000-P and CoNLL2000-C.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from . import common


def _time(fn, arg):
    c = time.process_time()
    fn(arg)
    return time.process_time() - c


def ab_layouts(problem, repeats, a, b, C=10.0, seed=0):
    """Time fun_grad and hess_vec of two MaxentObjective layouts of one problem, alternated.

    ``a`` and ``b`` are (name, MaxentObjective keyword options); f, gradient and Hv are checked to
    agree first. Returns the medians and minima per pass (ms) and the agreement."""
    from loglin.objective import MaxentObjective
    (name_a, opts_a), (name_b, opts_b) = a, b
    objs = {name_a: MaxentObjective(problem, C, **opts_a), name_b: MaxentObjective(problem, C, **opts_b)}
    rng = np.random.default_rng(seed)
    w = 0.05 * rng.standard_normal(problem.n_features)
    v = rng.standard_normal(problem.n_features)
    (fa, ga), (fb, gb) = objs[name_a].fun_grad(w), objs[name_b].fun_grad(w)
    for obj in objs.values():
        obj.accept()
    ha, hb = objs[name_a].hess_vec(v), objs[name_b].hess_vec(v)
    rel = lambda x, y: float(np.abs(x - y).max() / max(np.abs(x).max(), 1e-300))     # noqa: E731
    agree = {"f": abs(fa - fb) / abs(fa), "grad": rel(ga, gb), "hv": rel(ha, hb)}
    times = {f"{n} {p}": [] for n in objs for p in ("fun_grad", "hess_vec")}
    for i in range(repeats):
        for name in (list(objs) if i % 2 == 0 else list(objs)[::-1]):
            times[f"{name} fun_grad"].append(_time(objs[name].fun_grad, w))
            times[f"{name} hess_vec"].append(_time(objs[name].hess_vec, v))
    return {"agree_rel": agree, "median_ms": {k: 1e3 * statistics.median(t) for k, t in times.items()},
            "min_ms": {k: 1e3 * min(t) for k, t in times.items()}, "repeats": repeats,
            "n_contexts": problem.n_contexts, "n_labels": problem.n_labels, "n_predicates": problem.n_predicates,
            "binary": problem.binary, "objectives": objs}


def ab(problem, repeats, C=10.0, seed=0):
    r = ab_layouts(problem, repeats, ("generic", {"dense_path": False, "label_rows": False}),
                   ("dense", {"hot_first": False}), C, seed)
    assert r.pop("objectives")["dense"].dense_path, "the problem is not in the dense all-pairs layout"
    return r


def table_rows(res, name_a, name_b):
    """Markdown rows: per data set and pass, A ms, B ms (median (min)), B / A, max rel. diff."""
    lines = []
    for label, r in res.items():
        for pass_, key in (("fun_grad", "grad"), ("hess_vec", "hv")):
            a, b = r["median_ms"][f"{name_a} {pass_}"], r["median_ms"][f"{name_b} {pass_}"]
            am, bm = r["min_ms"][f"{name_a} {pass_}"], r["min_ms"][f"{name_b} {pass_}"]
            diff = max(r["agree_rel"][key], r["agree_rel"]["f"]) if key == "grad" else r["agree_rel"][key]
            lines.append(f"| {label} | {r['n_contexts']} × {r['n_labels']} | {pass_} | {a:.1f} ({am:.1f}) | "
                         f"{b:.1f} ({bm:.1f}) | {b / a:.2f}× | {diff:.1e} |")
    return lines


def report_head(title, result, problems, names):
    """Title, how timed, and the table header of an A/B report (columns: names[0], names[1])."""
    a, b = names
    return [f"# {title}", "",
            f"Process CPU time per pass, median (min) over the repeats, {result['threads']} Numba thread(s). "
            f"Load average before {result['loadavg_before']}, after {result['loadavg_after']}. {problems}, C = 10, "
            "random w.", "",
            f"| data | contexts × labels | pass | {a} ms | {b} ms | {b} / {a} | max rel. diff |", "|---|---|---|---|---|---|---|"]


def parse_args(doc, full_help, argv):
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--full", action="store_true", help=full_help)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", default=None)
    return ap.parse_args(argv)


def slice_cases(repeats):
    """(label, data set, data dir, repeats) of the bundled CoNLL-2000 slice, POS and chunking."""
    from loglin.tagging.datasets import bundled_conll2000_small
    slice_dir = bundled_conll2000_small()[0].parent
    return [("CoNLL-2000 slice, POS", "conll2000-pos", slice_dir, repeats),
            ("CoNLL-2000 slice, chunking", "conll2000-chunk", slice_dir, repeats)]


def main(argv=None):
    args = parse_args(__doc__, "also the full CoNLL2000-P (and -C for hot_first)", argv)
    from numba import get_num_threads
    from loglin.tagging.datasets import build_dataset
    load0 = common.loadavg()
    cases = slice_cases(args.repeats)
    if args.full:
        cases.append(("CoNLL2000-P (full)", "conll2000-pos", None, max(3, args.repeats // 4)))
    res = {}
    for label, name, data_dir, reps in cases:
        problem = build_dataset(name, data_dir=data_dir, all_pairs=True).problem
        res[label] = ab(problem, reps)
        print(label, res[label], file=sys.stderr, flush=True)
    hot_cases = slice_cases(args.repeats)[1:]
    if args.full:
        hot_cases += [("CoNLL2000-P (full)", "conll2000-pos", None, args.repeats),       # a ~20% effect under
                      ("CoNLL2000-C (full)", "conll2000-chunk", None, args.repeats)]     # load: all the repeats
    hot = {}
    for label, name, data_dir, reps in hot_cases:
        problem = build_dataset(name, data_dir=data_dir, all_pairs=True).problem
        r = ab_layouts(problem, reps, ("plain", {"hot_first": False}), ("hot", {"hot_first": True}))
        r.pop("objectives")
        hot[label] = r
        print(label, r, file=sys.stderr, flush=True)
    result = {"benchmark": "dense-ab", "results": res, "hot_first": hot, "threads": get_num_threads(),
              "loadavg_before": load0,
              "loadavg_after": common.loadavg(), "machine": common.machine()}
    lines = report_head("Maxent dense all-pairs kernels: generic map path vs dense path (A/B, alternating)", result,
                        "All-pairs problems (build_dataset(..., all_pairs=True))", ("generic", "dense"))
    lines += table_rows(res, "generic", "dense")
    lines += ["", "## W's rows in their own order vs ordered by predicate frequency (hot_first)", "",
              "| data | contexts × labels | pass | own order ms | hot-first ms | hot-first / own | max rel. diff |",
              "|---|---|---|---|---|---|---|"]
    lines += table_rows(hot, "plain", "hot")
    lines += ["", "How measured: benchmarks/dense_ab.py docstring.", ""]
    common.write("dense-ab", "\n".join(lines), result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
