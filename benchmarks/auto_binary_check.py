"""Held-out check of the binary LR rule (loglin.training.auto_binary) on sets it was not fitted on.

    flock /tmp/loglin-bench.lock python -m benchmarks.auto_binary_check [--repeats 5]

Each set: our four binary solvers (newton where it runs, tron, cddual, eg-acc) traced from w = 0 as in
benchmarks/binary.py (clocks around each outer iteration, 1 thread), alternating, median CPU seconds to
(f - P*)/P* <= 1e-2 / 1e-4 / 1e-6 (P*: TRON to ||g|| <= 1e-12 ||g0||, lowered to any smaller f seen), and
what the rule picks at tol = each level. Sets: w8a-like (300 sparse binary features, 49,749 rows, ~3%
positive), covtype-like (54 features, 100,000 rows, 12 real values a row), a denser low-dimensional set
(200 features, 60,000 rows, 40 non-zeros a row), and the a9a test file at C = 4 and the a9a training file
at C = 0.5 and 32 (a9a itself at C = 4 is the fitted set).
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import scipy.sparse as sp

from benchmarks import common
from benchmarks.binary import run_ours

LEVELS = (1e-2, 1e-4, 1e-6)


def synthetic(rows, features, per_row, seed, positive=0.5, binary=True, skew=1.0):
    """Rows of ``per_row`` features drawn with Zipf-like frequencies (skew), values 1 or uniform in (0, 1],
    labels from a random linear model with noise, thresholded to the given share of positives."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, features + 1) ** skew
    p /= p.sum()
    cols = np.sort(np.array([rng.choice(features, per_row, replace=False, p=p) for _ in range(rows)]), axis=1)
    vals = np.ones(rows * per_row) if binary else rng.uniform(0.05, 1.0, rows * per_row)
    X = sp.csr_matrix((vals, cols.ravel(), np.arange(0, rows * per_row + 1, per_row)), shape=(rows, features))
    w = rng.normal(size=features) * (rng.random(features) < 0.3)
    z = X @ w + 0.5 * rng.normal(size=rows)
    y = np.where(z > np.quantile(z, 1.0 - positive), 1.0, -1.0)
    return X, y


def sets():
    from loglin.data import read_svmlight
    from loglin.experiments.datasets import require_shared
    out = {"w8a-like (C = 1)": (*synthetic(49749, 300, 12, 1, positive=0.03), 1.0),
           "covtype-like (C = 1)": (*synthetic(100000, 54, 12, 2, binary=False, skew=0.3), 1.0),
           "200 x 60,000, 40 a row (C = 1)": (*synthetic(60000, 200, 40, 3, skew=0.5), 1.0)}
    Xte, yte = read_svmlight(require_shared("a9a", "a9a.t"), n_features=123)
    out["a9a test file (C = 4)"] = (Xte, np.asarray(yte, dtype=np.float64), 4.0)
    Xtr, ytr = read_svmlight(require_shared("a9a", "a9a"), n_features=123)
    for C in (0.5, 32.0):
        out[f"a9a (C = {C:g})"] = (Xtr, np.asarray(ytr, dtype=np.float64), C)
    return out


def check(name, X, y, C, repeats):
    from loglin.binary import binary_problem
    from loglin.solvers.base import minimize
    from loglin.solvers.newton import MAX_FEATURES
    from loglin.training import auto_binary
    problem = binary_problem(X, y, C=C)
    obj = problem.objective()
    p_ref = minimize(obj, "tron", tol=1e-12, max_iter=300, warn=False).f
    solvers = (["newton"] if obj.n <= MAX_FEATURES else []) + ["tron", "cddual", "eg-acc"]
    for s in solvers:
        minimize(obj, s, max_iter=1, warn=False)                     # compile / warm up
    runs = {s: [] for s in solvers}
    for rep in range(repeats):
        for s in solvers[rep % len(solvers):] + solvers[:rep % len(solvers)]:
            runs[s].append(run_ours(obj, s, p_ref, rep, 1e-7)[0])
    p_star = min(p_ref, min(p[2] for rs in runs.values() for pts in rs for p in pts))
    times = {s: common.summarize_tool(runs[s], p_star, LEVELS, "trace")["cpu"] for s in solvers}
    row = {"set": name, "rows": X.shape[0], "features": X.shape[1], "nnz": int(X.nnz), "C": C,
           "picks": {common.level_key(e): auto_binary(problem, e) for e in LEVELS},
           "cpu": {s: {k: v["median"] for k, v in t.items()} for s, t in times.items()}}
    row["default_over_best"] = {}
    for e in LEVELS:
        k = common.level_key(e)
        vals = [v[k] for v in row["cpu"].values() if v[k] is not None]
        pick = row["cpu"][row["picks"][k]][k] if row["picks"][k] in row["cpu"] else None
        row["default_over_best"][k] = None if (pick is None or not vals) else pick / min(vals)
    return row


def render(rows):
    lines = ["| set | rule picks (1e-2 / 1e-4 / 1e-6) | " + " | ".join(("newton", "tron", "cddual", "eg-acc")) +
             " | default / best |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for s in ("newton", "tron", "cddual", "eg-acc"):
            t = r["cpu"].get(s)
            cells.append("—" if t is None else " / ".join(common.fmt_s(t[k]) for k in t))
        picks = " / ".join(r["picks"].values())
        ratio = " / ".join(common.fmt_ratio(v) for v in r["default_over_best"].values())
        lines.append(f"| {r['set']} ({r['rows']} x {r['features']}, {r['nnz']} nz) | {picks} | " +
                     " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def main():
    import numba
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    numba.set_num_threads(1)
    load0 = common.loadavg()
    rows = []
    for name, (X, y, C) in sets().items():
        if args.only and not any(o in name for o in args.only):
            continue
        rows.append(check(name, sp.csr_matrix(X), y, C, args.repeats))
        print(render(rows[-1:]), flush=True)
    print(f"\nload average before {load0}, after {common.loadavg()}; median CPU s of {args.repeats} alternating runs")
    print(render(rows))
    print(json.dumps(rows, default=float))


if __name__ == "__main__":
    main()
