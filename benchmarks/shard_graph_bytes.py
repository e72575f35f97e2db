"""Bytes the driver sends the Dask scheduler to start the shards of a training file (docs/decisions/0055).

    python -m benchmarks.shard_graph_bytes /work/shared/data/conll2007-esp/esp.train --shards 2 4
    python -m benchmarks.shard_graph_bytes --synthetic-trees 3000 --shards 2 4
    python -m benchmarks.shard_graph_bytes /work/shared/data/conll2000/train.txt --chunks --shards 2 4

For each number of shards: a LocalCluster with that many workers, the counting pass (``scan``), then the
shards' start (``DaskBackend.load``, through ``sharded``, timed). Every ``client.submit`` of the start is recorded
with the size of the graph it sends, as distributed measures it for its "Sending large graph" warning, and
the total is set against the pickled size of the global index (the feature space) the shards are built in.
"""
from __future__ import annotations

import argparse
import pickle
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np


def synthetic_treebank(path: Path, sentences: int, vocabulary: int = 20_000, seed: int = 0) -> Path:
    """A CoNLL-X file of random projective trees (each span's root chosen at random, its sides below it)."""
    rng = np.random.default_rng(seed)
    tags = [f"T{i}" for i in range(40)]
    blocks = []
    for _ in range(sentences):
        n = int(rng.integers(5, 25))
        heads = [0] * (n + 1)
        spans = [(1, n, 0)]
        while spans:
            lo, hi, head = spans.pop()
            if lo > hi:
                continue
            root = int(rng.integers(lo, hi + 1))
            heads[root] = head
            spans += [(lo, root - 1, root), (root + 1, hi, root)]
        words = rng.zipf(1.3, n) % vocabulary
        tag = rng.integers(0, len(tags), n)
        blocks.append("".join(f"{i}\tw{words[i - 1]}\t_\t{tags[tag[i - 1]][:2]}\t{tags[tag[i - 1]]}\t_\t{heads[i]}"
                              "\tdep\t_\t_\n" for i in range(1, n + 1)))
    path.write_text("\n".join(blocks) + "\n")
    return path


class _GraphSizes:
    """distributed.client's ``warnings`` module, recording the sizes of the "Sending large graph" warnings it
    gives (the threshold set to one byte: every graph) before any filter (loglin silences one of them)."""

    def __init__(self):
        self.sizes = []

    def warn(self, message, *args, **kwargs):
        from dask.utils import parse_bytes
        text = str(message)
        if "Sending large graph of size " in text:
            self.sizes.append(parse_bytes(text.split("of size ")[1].split(".\n")[0].replace(" ", "")))
        else:
            warnings.warn(message, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(warnings, name)


def graph_bytes(function, *args, **kwargs):
    """(the submit's result, the bytes of the graph it sent) with distributed's own measure."""
    import dask
    import distributed.client
    recorder, module = _GraphSizes(), distributed.client.warnings
    distributed.client.warnings = recorder
    try:
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1B"}):
            result = function(*args, **kwargs)
    finally:
        distributed.client.warnings = module
    return result, sum(recorder.sizes)


def measure(source, shards: int) -> dict:
    from loglin.scale import sharded
    from loglin.scale.dask_backend import DaskBackend
    from loglin.scale.sources import scan
    backend = DaskBackend(n_workers=shards)
    submitted = []
    submit = backend.client.submit

    def recording_submit(function, *args, **kwargs):
        future, size = graph_bytes(submit, function, *args, **kwargs)
        submitted.append((getattr(function, "__name__", str(function)), size))
        return future
    backend.client.submit = recording_submit
    try:
        data = scan(source, backend, shards)
        counting = list(submitted)
        del submitted[:]
        started = time.perf_counter()
        with sharded(data, 1.0, backend=backend):
            seconds = time.perf_counter() - started
    finally:
        backend.close()
    return {"shards": shards, "index_pickled": len(pickle.dumps(data.glob, protocol=5)),
            "counting": counting, "start": submitted, "start_seconds": seconds}


def main(argv=None):
    from dask.utils import format_bytes
    from loglin.scale.sources import FileSource
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", help="a CoNLL-X treebank, or with --chunks a CoNLL-2000 file")
    parser.add_argument("--chunks", action="store_true", help="the file is CoNLL-2000 chunking: a chain CRF")
    parser.add_argument("--synthetic-trees", type=int, default=0, help="random trees instead of a file")
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 4])
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file or synthetic_treebank(Path(tmp) / "trees.conllx", args.synthetic_trees)
        source = FileSource(path, "conll2000", "chain") if args.chunks else FileSource(path, "conllx", "tree")
        for n in args.shards:
            r = measure(source, n)
            print(f"{n} shards: index pickled {format_bytes(r['index_pickled'])}; the shards' start took "
                  f"{r['start_seconds']:.1f} s", flush=True)
            for phase in ("counting", "start"):
                graphs = r[phase]
                parts = ", ".join(f"{name} {format_bytes(size)}" for name, size in graphs)
                print(f"  {phase}: {format_bytes(sum(size for _, size in graphs))} in {len(graphs)} graphs "
                      f"({parts})", flush=True)


if __name__ == "__main__":
    main()
