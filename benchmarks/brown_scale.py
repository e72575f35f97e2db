"""BROWN Maxent POS (Huang et al. 2010's setting, C = 10) on a 2-worker Dask LocalCluster whose per-worker
memory limit is below what one process needs for the whole problem (issue 19, item 7). One command:

    flock /tmp/loglin-bench.lock python -m benchmarks.brown_scale [--solver lbfgs] [--memory-limit 1.4GB]

Three fresh processes, so that each one's peak memory is its own:
1. ``reference``: builds the problem in one process (loglin.tagging.datasets.build_dataset), trains it,
   scores the test set, and writes the training events (kept predicates, gold history) to an events
   file, the input the workers read;
2. ``sharded``: a driver that never reads the file: a counting pass on the workers
   (loglin.scale.sources.scan), each worker building its shard from its half of the file, training on
   the memory-capped cluster;
3. ``evaluate``: the sharded model's weights put in the reference problem's feature order, test accuracy.

Prints and writes (--out, default /tmp/loglin-brown-scale) one JSON object: seconds per iteration, peak
memory per worker and of each process, bytes per round, test accuracies and their difference.
"""
import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

C = 10.0


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def reference(out: Path, solver: str, max_iter=None):
    from loglin.data.events import Events, write_events
    from loglin.tagging.datasets import build_dataset, load_corpora
    from loglin.training import train
    started = time.perf_counter()
    dataset = build_dataset("brown")
    build_seconds = time.perf_counter() - started
    built_mb = _peak_mb()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model, result = train(dataset.problem, C, solver, max_iter=max_iter)
    train_mb = _peak_mb()
    accuracy = dataset.evaluate(result.w)
    train_corpus = load_corpora("brown")[0]
    labels = [y for s in train_corpus.labels for y in s]
    if not (out / "brown-train.events").exists():        # the workers' input, written once
        names = dataset.extractor.event_predicates(train_corpus.words, train_corpus.labels)
        write_events(out / "brown-train.events", Events(labels, names))
    p = dataset.problem
    return {"features": p.n_features, "contexts_merged": p.n_contexts, "labels": p.n_labels,
            "events": len(labels), "build_seconds": build_seconds, "iterations": result.iterations,
            "train_seconds": result.train_seconds, "seconds_per_iteration": result.train_seconds / result.iterations,
            "objective": result.f, "converged": result.converged, "test_accuracy": accuracy,
            "peak_mb_after_build": built_mb, "peak_mb": train_mb,
            "events_file_mb": (out / "brown-train.events").stat().st_size / 2 ** 20}


def _worker_peak_mb():
    import resource as r
    return r.getrusage(r.RUSAGE_SELF).ru_maxrss / 1024


def sharded(out: Path, solver: str, workers: int, memory_limit: str, max_iter=None):
    from loglin.scale import DaskBackend
    from loglin.scale.sources import FileSource, scan
    from loglin.training import train
    started = time.perf_counter()
    backend = DaskBackend(n_workers=workers, memory_limit=memory_limit, timeout=1800)
    cluster_seconds = time.perf_counter() - started
    try:
        started = time.perf_counter()
        data = scan(FileSource(out / "brown-train.events", "events", "maxent"), backend)
        scan_seconds = time.perf_counter() - started
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, result = train(data, C, solver, backend=backend, max_iter=max_iter)
        worker_mb = backend.client.run(_worker_peak_mb)
        restarts = list(backend.client.scheduler_info()["workers"])
    finally:
        backend.close()
    model.save(out / "brown-sharded.npz")
    d = data.glob.n_features
    return {"features": d, "rows_per_shard": data.rows, "cluster_start_seconds": cluster_seconds,
            "scan_seconds": scan_seconds, "iterations": result.iterations, "train_seconds": result.train_seconds,
            "seconds_per_iteration": result.train_seconds / result.iterations, "objective": result.f,
            "converged": result.converged, "worker_peak_mb": sorted(worker_mb.values()),
            "workers_at_end": len(restarts), "driver_peak_mb": _peak_mb(),
            "bytes_per_shard_per_round": 16 * d, "memory_limit": memory_limit}


def evaluate(out: Path):
    from loglin.model import LinearModel
    from loglin.tagging.datasets import build_dataset
    dataset = build_dataset("brown")
    model = LinearModel.load(out / "brown-sharded.npz")
    p = dataset.problem
    assert list(model.labels) == list(p.labels)
    mine = {}
    for i, name in enumerate(model.predicates):
        for e in range(model.map_ptr[i], model.map_ptr[i + 1]):
            mine[(name, int(model.map_label[e]))] = int(model.map_feat[e])
    names = dataset.extractor.predicate_names()
    w = np.zeros(p.n_features)
    for q, name in enumerate(names):
        for e in range(p.map_ptr[q], p.map_ptr[q + 1]):
            w[p.map_feat[e]] = model.w[mine[(name, int(p.map_label[e]))]]
    return {"test_accuracy": dataset.evaluate(w), "same_feature_count": len(mine) == p.n_features}


def _step(step, out, args):
    command = [sys.executable, "-m", "benchmarks.brown_scale", "--step", step, "--out", str(out), "--solver",
               args.solver, "--workers", str(args.workers), "--memory-limit", args.memory_limit]
    command += [] if args.max_iter is None else ["--max-iter", str(args.max_iter)]
    started, cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:            # the step's own error (e.g. a worker over its memory cap), not only its code
        raise SystemExit(f"step {step} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    text = done.stdout.strip().splitlines()[-1]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {**json.loads(text), "process_wall_seconds": time.perf_counter() - started,
            "process_cpu_seconds": (after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solver", default="lbfgs")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1.4GB")
    parser.add_argument("--max-iter", type=int, default=None, help="default: to the default tolerance")
    parser.add_argument("--out", type=Path, default=Path("/tmp/loglin-brown-scale"))
    parser.add_argument("--step", choices=("reference", "sharded", "evaluate"), default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.step == "reference":
        print(json.dumps(reference(args.out, args.solver, args.max_iter)))
    elif args.step == "sharded":
        print(json.dumps(sharded(args.out, args.solver, args.workers, args.memory_limit, args.max_iter)))
    elif args.step == "evaluate":
        print(json.dumps(evaluate(args.out)))
    else:
        load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None
        report = {"solver": args.solver, "C": C, "max_iter": args.max_iter, "load_before": load}
        for step in ("reference", "sharded", "evaluate"):
            report[step] = _step(step, args.out, args)
            print(step, json.dumps(report[step]), flush=True)
        report["accuracy_difference_points"] = abs(report["evaluate"]["test_accuracy"]
                                                   - report["reference"]["test_accuracy"])
        report["load_after"] = Path("/proc/loadavg").read_text().split()[:3] if load else None
        (args.out / "brown-scale.json").write_text(json.dumps(report, indent=1))
        print(json.dumps(report))


if __name__ == "__main__":
    main()
