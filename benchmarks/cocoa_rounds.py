"""Rounds and seconds of the shard-side solvers (issue 19, item 3): CoCoA+ rounds to a relative duality
gap for K = 1, 2, 3 shards, seconds per round in-process vs on a 2-worker Dask LocalCluster, and the
gap of iterative parameter mixing (SGD) to TRON's optimum. Run alone (it takes a few minutes):

    flock /tmp/loglin-bench.lock python -m benchmarks.cocoa_rounds a9a 3000
    flock /tmp/loglin-bench.lock python -m benchmarks.cocoa_rounds conll2000-pos 300    # Maxent

Prints one JSON object; docs/decisions/0022 has the numbers.
"""
import json
import sys
import time
import warnings

import numpy as np

from loglin.training import train

THRESHOLDS = (1e-2, 1e-4, 1e-6, 1e-8)


def problem_for(name):
    """LR (C = 1) on a9a / news20, else the Maxent problem of a tagging data set (C = 1)."""
    if name in ("a9a", "news20"):
        from loglin.binary import binary_problem
        from loglin.experiments.datasets import lr_data
        X, y, _, _ = lr_data(name)
        return binary_problem(X, y, 1.0)
    from loglin.tagging.datasets import build_dataset
    return build_dataset(name).problem


def rounds_to_gap(result):
    """{threshold: the first round whose relative duality gap is at most it (None: not reached)}."""
    records = result.trace.records[1:]
    return {f"{t:g}": next((r["iteration"] for r in records if r["duality_gap"] <= t * abs(r["objective"])), None)
            for t in THRESHOLDS}


def per_round(result):
    """(solver seconds per round, process CPU seconds per round) of a run with clock="cpu"."""
    last = result.trace.records[-1]
    return last["wall_seconds"] / result.iterations, last["seconds"] / result.iterations


def run(problem, solver, rounds, **options):
    return train(problem, None, solver, max_iter=rounds, random_state=0, warn=False, clock="cpu", **options)[1]


def main(name="a9a", rounds=3000):
    warnings.simplefilter("ignore")
    problem = problem_for(name)
    reference = train(problem, None, "tron", tol=1e-10, warn=False)[1]
    out = {"data": name, "rows": len(problem.y) if hasattr(problem, "y") else problem.n_contexts,
           "n": problem.n_features, "tron_f": reference.f,
           "cocoa": {}, "ipm": {}}
    for k in (1, 2, 3):
        result = run(problem, "cocoa", rounds, shards=k, gap_tol=1e-8)
        wall, cpu = per_round(result)
        out["cocoa"][f"K={k}"] = {"rounds_to_gap": rounds_to_gap(result), "rounds": result.iterations,
                                  "rel_f_error": (result.f - reference.f) / abs(reference.f),
                                  "wall_s_per_round": wall, "cpu_s_per_round": cpu}
    timing_rounds = 100
    inprocess = run(problem, "cocoa", timing_rounds, shards=2, gap_tol=0)
    from loglin.scale import DaskBackend
    started = time.perf_counter()
    with DaskBackend(n_workers=2, timeout=600) as cluster:
        out["cluster_start_s"] = time.perf_counter() - started
        dask = run(problem, "cocoa", timing_rounds, backend=cluster, shards=2, gap_tol=0)
        ipm_dask = run(problem, "ipm-sgd", 20, backend=cluster, shards=2, eta0=0.01)
    ipm_local = run(problem, "ipm-sgd", 20, shards=2, eta0=0.01)
    out["round_seconds_K2"] = {"inprocess": per_round(inprocess), "dask_2_workers": per_round(dask),
                               "same_iterates": bool(np.array_equal(inprocess.w, dask.w)),
                               "ipm_inprocess": per_round(ipm_local), "ipm_dask_2_workers": per_round(ipm_dask),
                               "ipm_same_iterates": bool(np.array_equal(ipm_local.w, ipm_dask.w))}
    for k in (1, 2, 3):
        for decay in (False, True):
            result = run(problem, "ipm-sgd", 50, shards=k, decay=decay, tol=0)
            f = np.array([r["objective"] for r in result.trace.records])
            gap = (f - reference.f) / abs(reference.f)
            out["ipm"][f"K={k}{' decay' if decay else ''}"] = {
                "eta0": result.trace.records[-1]["eta0"], "rel_gap_round_10": gap[10], "rel_gap_round_50": gap[50],
                "min_rel_gap": float(gap.min())}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "a9a", int(sys.argv[2]) if len(sys.argv) > 2 else 3000)
