"""A/B of the label-rows layout of the Maxent passes (issue 7): map path vs dense label rows.

    NUMBA_NUM_THREADS=1 python -m benchmarks.rows_ab [--full] [--repeats N] [--out DIR]

On the papers' seen-pairs problems the same MaxentObjective is built twice: label_rows=False
(every predicate through map_label) and the default (the predicates seen with >= K/4 labels as
dense rows of W_D, loglin.label_rows); both run kernels.maxent.loss_and_expectation /
hessian_vector. Per pass: fun_grad (with the Hessian cache, what L-BFGS, TRON and GIS's
expectation pass call) and hess_vec, process CPU time, A and B alternated, medians. f, gradient and Hv are checked to agree before timing. Data: the bundled CoNLL-2000 slice
(POS and chunking); --full adds the full CoNLL2000-P and CoNLL2000-C.
"""
from __future__ import annotations

import sys

from . import common
from .dense_ab import ab_layouts, parse_args, report_head, slice_cases, table_rows


def main(argv=None):
    args = parse_args(__doc__, "also the full CoNLL2000-P and CoNLL2000-C", argv)
    from numba import get_num_threads
    from loglin.tagging.datasets import build_dataset
    load0 = common.loadavg()
    cases = slice_cases(args.repeats)
    if args.full:
        cases += [("CoNLL2000-P (full)", "conll2000-pos", None, max(3, args.repeats // 2)),
                  ("CoNLL2000-C (full)", "conll2000-chunk", None, max(3, args.repeats // 2))]
    res = {}
    for label, name, data_dir, reps in cases:
        problem = build_dataset(name, data_dir=data_dir).problem
        r = ab_layouts(problem, reps, ("map", {"label_rows": False}), ("rows", {}))
        layout = r.pop("objectives")["rows"].rows
        r["dense_rows"], r["dense_entries"] = layout.n_rows, len(layout.feat)
        res[label] = r
        print(label, r, file=sys.stderr, flush=True)
    result = {"benchmark": "rows-ab", "results": res, "threads": get_num_threads(), "loadavg_before": load0,
              "loadavg_after": common.loadavg(), "machine": common.machine()}
    lines = report_head("Maxent label rows: map path vs dense rows for the predicates seen with >= K/4 labels (A/B)",
                        result, "The papers' seen-pairs problems (build_dataset(...))", ("map", "rows"))
    lines += table_rows(res, "map", "rows")
    lines += ["", "Dense rows: " + "; ".join(f"{k}: {r['dense_rows']:,} of {r['n_predicates']:,} predicates "
                                             f"({r['dense_entries']:,} map entries)" for k, r in res.items()),
              "", "How measured: benchmarks/rows_ab.py docstring.", ""]
    common.write("rows-ab", "\n".join(lines), result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
