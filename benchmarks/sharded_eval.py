"""Seconds per L-BFGS evaluation of the sharded objective (issue 19): one process vs 2 shards in-process,
on 2 threads and on a 2-worker Dask LocalCluster. Run alone:

    python -m benchmarks.sharded_eval a9a 30            # LR, 30 L-BFGS iterations
    python -m benchmarks.sharded_eval conll2000-pos 10  # Maxent on CoNLL2000-P
    python -m benchmarks.sharded_eval conll2000-chunk-crf 5   # chain CRF on CoNLL-2000 chunking, C = 10:
                                                              # one process and 2 Dask workers only

Prints one JSON object: per setting [seconds per fun_grad, evaluations, final objective], the
cluster's start-up and the actors' load seconds (docs/decisions/0018), and on the same cluster with 2 and
16 shards an alternating A/B of the driver's gather, the workers' reduction tree and (Maxent) the sparse
exchange (docs/decisions/0030).
"""
import json
import sys
import time
import warnings

import numpy as np

from loglin.scale import DaskBackend, sharded
from loglin.solvers.base import minimize


def problem_for(name):
    if name == "a9a":
        from loglin.binary import binary_problem
        from loglin.experiments.datasets import lr_data
        X, y, _, _ = lr_data("a9a")
        return binary_problem(X, y, 1.0), 1.0
    if name == "conll2000-chunk-crf":
        from loglin.data import read_conll2000
        from loglin.experiments.datasets import conll2000_files
        from loglin.structured.crf_features import build_chain_problem
        sentences = read_conll2000(conll2000_files()[0])
        return build_chain_problem(sentences, "chunk")[0], 10.0
    from loglin.tagging.datasets import build_dataset
    return build_dataset(name).problem, 1.0


def seconds_per_evaluation(objective, iterations):
    warnings.simplefilter("ignore")
    objective.fun_grad(np.zeros(objective.n), keep_cache=False)     # warm-up, not timed
    before = objective.n_grad
    started = time.perf_counter()
    result = minimize(objective, "lbfgs", max_iter=iterations, tol=1e-12, warn=False)
    evaluations = objective.n_grad - before
    return (time.perf_counter() - started) / evaluations, evaluations, result.f


def main(name="a9a", iterations=30):
    problem, C = problem_for(name)
    full = problem.objective() if name == "a9a" else problem.objective(C)
    out = {"data": name, "n": full.n, "one_process": seconds_per_evaluation(full, iterations)}
    for backend in () if name.endswith("-crf") else ("inprocess", "threads"):
        with sharded(problem, C, 2, backend) as objective:
            out[f"{backend}_2_shards"] = seconds_per_evaluation(objective, iterations)
    started = time.perf_counter()
    with DaskBackend(n_workers=2, timeout=600) as cluster:
        out["cluster_start_s"] = time.perf_counter() - started
        started = time.perf_counter()
        with sharded(problem, C, 2, cluster, sparse_share=0.0) as objective:
            out["dask_load_s"] = time.perf_counter() - started
            out["dask_2_workers"] = seconds_per_evaluation(objective, iterations)
        for shards in (2, 16):
            out.update(exchange_ab(problem, C, cluster, iterations, shards))
    print(json.dumps(out))


def exchange_ab(problem, C, cluster, iterations, shards, rounds=3):
    """Whole vectors gathered at the driver vs a reduction tree on the workers vs only the touched coordinates
    (Maxent), on the same ``shards`` shards, alternating: medians of the wall and driver CPU seconds per
    evaluation, and the share of w each shard reads."""
    from loglin.scale.sharded_objective import problem_kind
    maxent = problem_kind(problem) == "maxent"
    objectives = {"dense": sharded(problem, C, shards, cluster, sparse_share=0.0),
                  "tree": sharded(problem, C, shards, cluster, reduction="tree")}
    if maxent:
        objectives["sparse"] = sharded(problem, C, shards, cluster, sparse_share=1.0)
    samples = {name: [] for name in objectives}
    try:
        for _ in range(rounds):
            for name, objective in objectives.items():
                cpu = time.process_time()
                wall, evaluations, f = seconds_per_evaluation(objective, iterations)
                samples[name].append((wall, (time.process_time() - cpu) / evaluations, f))
    finally:
        for objective in objectives.values():
            objective.close()
    out = {}
    if maxent:
        shares = [len(t) / objectives["dense"].n for t in objectives["sparse"].touched]
        out[f"touched_share_{shards}_shards"] = [min(shares), max(shares)]
    for name, runs in samples.items():
        out[f"exchange_{name}_{shards}_shards"] = {"wall_s_per_eval": float(np.median([r[0] for r in runs])),
                                   "driver_cpu_s_per_eval": float(np.median([r[1] for r in runs])),
                                   "objective": runs[-1][2]}
    return out


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "a9a", int(sys.argv[2]) if len(sys.argv) > 2 else 30)
