"""A/B of the kernel optimizations kept in issue 7: the previous kernel body vs the current one,
compiled side by side (serial, 1 thread) and timed alternately in one process.

    benchmarks/run --only kernels-ab

* LR fun_grad (a9a): before = exp for the loss, another exp for the sigmoid, one chain of
  additions in the row dot product; after = kernels.logistic.loss_and_sigmoid (one exp per
  row) and row_dot with two partial sums.
* Maxent fun_grad (bundled CoNLL-2000 slice, POS): before = log-softmax then exp again per
  (context, label); after = kernels.maxent.softmax_inplace (one exp per (context, label)).
Both pairs are checked to give the same loss and gradient (to rounding) before timing.
"""
from __future__ import annotations

import statistics
import time

import numpy as np
from numba import njit

from . import common
from loglin.kernels import logistic as lk
from loglin.kernels import maxent as mk


@njit(cache=True)
def _dot_one_chain(i, w, indptr, indices, data):
    acc = 0.0
    for k in range(indptr[i], indptr[i + 1]):
        acc += data[k] * w[indices[k]]
    return acc


@njit(cache=True)
def lr_before(w, indptr, indices, data, y, cost):
    s = 0.0
    g = np.zeros(w.shape[0])
    for i in range(indptr.shape[0] - 1):
        yz = y[i] * _dot_one_chain(i, w, indptr, indices, data)
        s += cost[i] * lk.log1p_exp(-yz)
        coef = cost[i] * (lk.sigmoid(yz) - 1.0) * y[i]
        for k in range(indptr[i], indptr[i + 1]):
            g[indices[k]] += coef * data[k]
    return s, g


@njit(cache=True)
def lr_after(w, indptr, indices, data, y, cost):
    s = 0.0
    g = np.zeros(w.shape[0])
    for i in range(indptr.shape[0] - 1):
        yz = y[i] * lk.row_dot(i, w, indptr, indices, data)
        li, sg = lk.loss_and_sigmoid(yz)
        s += cost[i] * li
        coef = cost[i] * (sg - 1.0) * y[i]
        for k in range(indptr[i], indptr[i + 1]):
            g[indices[k]] += coef * data[k]
    return s, g


@njit(cache=True)
def me_before(w, n_labels, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, ctx_count, prob_out):
    acc = np.zeros(w.shape[0])
    loss = 0.0
    s = np.empty(n_labels)
    for x in range(ctx_ptr.shape[0] - 1):
        mk.context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, s)
        c = ctx_count[x]
        loss += c * mk.log_softmax_inplace(s)
        for y in range(n_labels):
            s[y] = np.exp(s[y])
        prob_out[x, :] = s
        for y in range(n_labels):
            s[y] *= c
        mk._scatter_context(x, s, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, acc)
    return loss, acc


@njit(cache=True)
def me_after(w, n_labels, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, ctx_count, prob_out):
    acc = np.zeros(w.shape[0])
    loss = 0.0
    s = np.empty(n_labels)
    for x in range(ctx_ptr.shape[0] - 1):
        mk.context_scores(x, w, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, s)
        c = ctx_count[x]
        loss += c * mk.softmax_inplace(s)
        prob_out[x, :] = s
        for y in range(n_labels):
            s[y] *= c
        mk._scatter_context(x, s, ctx_ptr, ctx_pred, ctx_val, map_ptr, map_label, map_feat, acc)
    return loss, acc


def ab(before, after, args, repeats):
    a, b = before(*args), after(*args)
    agree = (abs(a[0] - b[0]) / abs(a[0]), float(np.abs(a[1] - b[1]).max() / max(np.abs(a[1]).max(), 1e-300)))
    ta, tb = [], []
    for _ in range(repeats):
        c = time.process_time()
        before(*args)
        ta.append(time.process_time() - c)
        c = time.process_time()
        after(*args)
        tb.append(time.process_time() - c)
    return {"before_ms": {"min": 1e3 * min(ta), "median": 1e3 * statistics.median(ta)},
            "after_ms": {"min": 1e3 * min(tb), "median": 1e3 * statistics.median(tb)},
            "loss_rel_diff": agree[0], "grad_rel_max_diff": agree[1], "repeats": repeats}


def main(args):
    from loglin.binary import binary_problem
    from loglin.experiments.yu2011 import lr_data
    from loglin.tagging.datasets import build_dataset, bundled_conll2000_small
    load0 = common.loadavg()
    X, y, _, _ = lr_data("a9a", quick=args.quick)
    p = binary_problem(X.tocsr(), np.asarray(y, dtype=np.float64), C=4.0)
    w = np.random.default_rng(0).standard_normal(p.X.shape[1]) * 0.1
    res = {"LR fun_grad (a9a)": ab(lr_before, lr_after, (w, p.X.indptr, p.X.indices, p.X.data, p.y, p.cost),
                                   50 if args.quick else 300)}
    m = build_dataset("conll2000-pos", data_dir=bundled_conll2000_small()[0].parent).problem
    wm = np.random.default_rng(0).standard_normal(m.n_features) * 0.05
    P = np.empty((m.n_contexts, m.n_labels))
    res["Maxent fun_grad (CoNLL-2000 slice, POS)"] = ab(
        me_before, me_after, (wm, m.n_labels, m.ctx_ptr, m.ctx_pred, m._val_or_empty(), m.map_ptr, m.map_label,
                              m.map_feat, m.ctx_count, P), 5 if args.quick else 30)
    result = {"benchmark": "kernels-ab", "quick": args.quick, "results": res, "loadavg_before": load0,
              "loadavg_after": common.loadavg(), "machine": common.machine()}
    lines = ["# Kernel optimizations: before vs after (A/B in one process, alternating)", "",
             f"Serial kernels, process CPU time per call. Load average before {load0}, after {result['loadavg_after']}.",
             "", "| kernel | before ms (min / median) | after ms (min / median) | after / before (median) | "
             "loss rel. diff | gradient rel. max diff |", "|---|---|---|---|---|---|"]
    for name, r in res.items():
        lines.append(f"| {name} | {r['before_ms']['min']:.2f} / {r['before_ms']['median']:.2f} | "
                     f"{r['after_ms']['min']:.2f} / {r['after_ms']['median']:.2f} | "
                     f"{r['after_ms']['median'] / r['before_ms']['median']:.2f}× | {r['loss_rel_diff']:.1e} | "
                     f"{r['grad_rel_max_diff']:.1e} |")
    lines += ["", "How measured: benchmarks/kernels_ab.py docstring.", ""]
    common.write("kernels-ab", "\n".join(lines), result, args.out)
    return result
