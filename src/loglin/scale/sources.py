"""Shards read by the workers from the data file: a counting pass, a global index, then each worker's shard.

    data = scan(FileSource("train.svm", "svmlight", "maxent"), backend, shards=2)   # counts only
    model, result = train(data, C, backend=backend)                                  # shards built on the workers

1. Counting pass: worker i reads its part of the file (:func:`~loglin.scale.file_ranges.shard_bytes`)
   and returns counts (labels, largest feature index, predicate -> number of events, seen pairs).
2. The driver merges the counts in shard order, applies the cut-off to the global counts and builds
   the global index exactly as the one-process problem builders do (predicates in first-seen order,
   labels sorted), without ever holding a row.
3. Each worker reads its part again and builds its shard against the global index (a
   :class:`ShardRecipe` sent to it), so every shard reads the one weight vector.

The file path goes to the workers: on a real cluster it must name the same file on every worker
(a shared file system), and workers read it themselves.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..csr import offsets
from ..data._files import refuse_byte_range_encoding
from ..errors import DataContentError, InvalidInputError
from .file_ranges import shard_bytes

FORMATS = {"svmlight": ("maxent", "binary", "auto"), "events": ("maxent",), "conll2000": ("chain",),
           "conllx": ("tree",)}
SENTENCES = ("conll2000", "conllx")       # one sentence per blank-line separated block


@dataclass(frozen=True)
class FileSource:
    """A training file and how the one-process build would read it (the CLI's options)."""

    path: str
    format: str                 # "svmlight" | "events"
    kind: str = "auto"          # "maxent", "binary" (LR) or "auto" (svmlight: LR for two classes)
    bias: float = 0.0
    regularize_bias: bool = True
    cutoff: int = 1
    all_pairs: bool = False     # events; svmlight Maxent always has every (predicate, label) pair
    C: float = 1.0              # LR: the costs C_i of the instances
    encoding: str = "utf-8"
    task: str = "chunk"         # conll2000 chains: "chunk" (word, POS, chunk) or "pos" (word, tag)

    def __post_init__(self):
        if self.format not in FORMATS or self.kind not in FORMATS[self.format]:
            raise InvalidInputError(f"cannot shard {self.format!r} data for a {self.kind!r} model")
        object.__setattr__(self, "path", str(Path(self.path).resolve()))
        if not Path(self.path).is_file():
            raise FileNotFoundError(f"no such data file: {self.path}")
        refuse_byte_range_encoding(self.path, self.encoding)

    def part(self, index, n) -> bytes:
        return shard_bytes(self.path, index, n, sentences=self.format in SENTENCES)


# ---------------------------------------------------------------- the counting pass (on a worker)

def count_shard(source: FileSource, index: int, n: int) -> dict:
    """What the driver needs from shard ``index`` of ``n`` to build the global index."""
    if source.format == "svmlight":
        from ..data.svmlight import parse_svmlight
        X, labels, _ = parse_svmlight(source.part(index, n), source.path)
        return {"rows": X.shape[0], "n_seen": X.shape[1], "labels": list(dict.fromkeys(labels))}
    from ..problem import _as_float_csr, events_to_matrix
    counts, pairs, labels, rows = {}, set(), set(), 0
    for events in _event_batches(source, index, n):
        rows += len(events)
        labels.update(events.labels)
        for ctx in events.contexts:
            for p in dict.fromkeys(ctx):
                counts[p] = counts.get(p, 0) + 1
        if not source.all_pairs:        # (predicate, label) pairs with a non-zero value, as the one-process map
            local = {p: i for i, p in enumerate(dict.fromkeys(p for ctx in events.contexts for p in ctx))}
            X = _as_float_csr(events_to_matrix(events.contexts, events.values, local)).tocoo()
            names = list(local)
            pairs.update(zip([names[c] for c in X.col.tolist()], [events.labels[r] for r in X.row.tolist()]))
    return {"rows": rows, "counts": counts, "labels": sorted(labels), "pairs": pairs}


BATCH = 20_000      # events parsed at a time: a worker never holds its whole part as Python strings


def _event_batches(source, index, n):
    """The events of part ``index`` of ``n``, ``BATCH`` lines at a time."""
    from ..data._files import decode_lines
    from ..data.events import events_from_lines
    data = source.part(index, n)
    start = 0
    while start < len(data):
        end = start
        for _ in range(BATCH):                  # the end of the batch's last line
            end = data.find(b"\n", end) + 1
            if end == 0:
                end = len(data)
                break
        lines = decode_lines(data[start:end], source.path, source.encoding)
        start = end
        events = events_from_lines(lines, source.path)
        if source.bias > 0:             # as `loglin train --bias` on events: a "<bias>" predicate in every event
            events.contexts = [list(c) + ["<bias>"] for c in events.contexts]
            if events.values is not None:
                events.values = [list(v) + [source.bias] for v in events.values]
        yield events


# ---------------------------------------------------------------- the global index (on the driver)

@dataclass
class GlobalIndex:
    """What every shard must agree on, and what the model keeps: no rows."""

    kind: str                   # "maxent" or "binary"
    labels: np.ndarray          # classes, sorted (binary: the +1 class second)
    label_values: dict          # label as written in the file -> its class (svmlight texts are parsed once)
    n_inputs: int               # svmlight columns (without the bias)
    predicates: list | None = None
    map_ptr: np.ndarray | None = None
    map_label: np.ndarray | None = None
    map_feat: np.ndarray | None = None
    n_features: int = 0
    reg: np.ndarray | None = None
    bias: float = 0.0

    @property
    def n_predicates(self) -> int:
        return len(self.map_ptr) - 1

    @property
    def classes(self):
        return self.labels


@dataclass
class StructuredIndex:
    """The global feature space of a chain or tree model (a ChainFeatureSpace / ArcFeatureSpace)."""

    kind: str
    space: object
    skipped: int = 0            # tree: non-projective training trees left out

    @property
    def n_features(self) -> int:
        return self.space.n_features

    @property
    def reg(self) -> np.ndarray:
        return np.ones(self.n_features)


def merge_counts(source: FileSource, counts: list[dict]) -> GlobalIndex:
    """The global index from the shards' counts, merged in shard order (so first-seen order is the file's)."""
    if sum(c["rows"] for c in counts) == 0:
        raise DataContentError("the training data is empty")
    if source.format == "svmlight":
        return _svmlight_index(source, counts)
    return _events_index(source, counts)


def _svmlight_index(source, counts):
    from ..data.svmlight import labels_to_array
    from ..problem import _predicate_label_map
    texts = list(dict.fromkeys(t for c in counts for t in c["labels"]))
    values = labels_to_array(source.path, texts, None, multi_label=False)   # as the one-process read
    label_values = dict(zip(texts, values.tolist()))
    classes = np.unique(values)
    kind = source.kind if source.kind != "auto" else ("binary" if len(classes) == 2 else "maxent")
    n_inputs = max(c["n_seen"] for c in counts)
    bias = float(source.bias) if source.bias > 0 else 0.0
    if kind == "binary":
        if len(classes) != 2:
            raise DataContentError(f"binary logistic regression needs exactly two classes, got {len(classes)}: "
                                   f"{classes[:5].tolist()}")
        n = n_inputs + (bias > 0)
        reg = np.ones(n)
        if bias > 0 and not source.regularize_bias:
            reg[-1] = 0.0
        return GlobalIndex("binary", classes, label_values, n_inputs, n_features=n, reg=reg, bias=bias)
    n_pred = n_inputs + (bias > 0)
    predicates = list(range(n_inputs)) + (["<bias>"] if bias > 0 else [])
    map_ptr, map_label, map_feat, n_features = _predicate_label_map(n_pred, len(classes))
    reg = np.ones(n_features)
    if bias > 0 and not source.regularize_bias:
        reg[map_feat[map_ptr[n_pred - 1]:map_ptr[n_pred]]] = 0.0
    return GlobalIndex("maxent", classes, label_values, n_inputs, predicates, map_ptr, map_label, map_feat,
                       n_features, reg, bias)


def _events_index(source, counts):
    from ..problem import _predicate_label_map
    total = {}
    for c in counts:
        for p, k in c["counts"].items():
            total[p] = total.get(p, 0) + k
    predicates = [p for p, k in total.items() if k >= source.cutoff]
    classes = np.unique(np.asarray(sorted({t for c in counts for t in c["labels"]})))
    seen = None
    if not source.all_pairs:
        vocab = {p: i for i, p in enumerate(predicates)}
        code = {t: i for i, t in enumerate(classes.tolist())}
        pairs = {(vocab[p], code[t]) for c in counts for p, t in c["pairs"] if p in vocab}
        rows, cols = (np.array(x, dtype=np.int64) for x in zip(*pairs)) if pairs else (np.zeros(0, np.int64),) * 2
        seen = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(predicates), len(classes)))
    map_ptr, map_label, map_feat, n_features = _predicate_label_map(len(predicates), len(classes), seen)
    return GlobalIndex("maxent", classes, {t: t for t in classes.tolist()}, len(predicates), predicates, map_ptr,
                       map_label, map_feat, n_features, np.ones(n_features), 0.0)


# ---------------------------------------------------------------- a shard (on a worker)

@dataclass
class ShardRecipe:
    """Shard ``index`` of ``n`` of ``source``, to be built where it will live: calling it reads the
    worker's part of the file and returns the shard's arrays (:func:`~loglin.scale.shards.shard_arrays`).

    The global index is ``shared``, the same object in every shard's recipe and by far its largest part: a
    backend with workers sends it once (``without_shared`` is the rest) and calls the recipe with it
    (docs/decisions/0055)."""

    source: FileSource
    index: int
    n: int
    glob: GlobalIndex | StructuredIndex | None = field(repr=False)

    @property
    def shared(self):
        return self.glob

    def without_shared(self) -> ShardRecipe:
        return replace(self, glob=None)

    def __call__(self, shared=None) -> dict:
        from .shards import _slice, row_pointer
        glob = self.glob if shared is None else shared
        problem = build_shard_problem(self.source, self.index, self.n, glob)
        return _slice(glob.kind, problem, 0, len(row_pointer(problem)) - 1)


def build_shard_problem(source, index, n, glob):
    """The problem of shard ``index`` of ``n``'s rows in the global index (its own contexts merged)."""
    if source.format in SENTENCES:
        from .sentence_sources import build_chain_part, build_tree_part
        return (build_chain_part if glob.kind == "chain" else build_tree_part)(source, index, n, glob.space)
    if source.format == "svmlight":
        from ..binary import binary_problem
        from ..data.svmlight import parse_svmlight
        from ..problem import problem_from_matrix
        X, texts, _ = parse_svmlight(source.part(index, n), source.path, n_features=glob.n_inputs)
        y = np.array([glob.label_values[t] for t in texts], dtype=glob.labels.dtype)
        if glob.kind == "binary":
            return binary_problem(X, y, source.C, bias=glob.bias, regularize_bias=source.regularize_bias,
                                  classes=glob.labels)
        return problem_from_matrix(X, y, classes=glob.labels, all_pairs=True, bias=glob.bias or None,
                                   regularize_bias=source.regularize_bias, predicates=list(range(glob.n_inputs)))
    from ..problem import events_to_matrix
    vocab = {p: i for i, p in enumerate(glob.predicates)}
    blocks, labels = [], []
    for events in _event_batches(source, index, n):
        blocks.append(events_to_matrix(events.contexts, events.values, vocab))
        labels.extend(events.labels)
    X = sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, len(vocab)))
    return maxent_rows(X, np.asarray(labels), glob)


def maxent_rows(X, y, glob):
    """A MaxentProblem of rows X with labels y in the global map of ``glob`` (identical rows merged)."""
    from ..problem import MaxentProblem, _as_float_csr, _encode_labels, _merge_contexts, index_dtype
    X = _as_float_csr(X)
    _, codes = _encode_labels(y, glob.labels)
    U, ctx_count, obs_ptr, obs_label, obs_count = _merge_contexts(X, codes, np.ones(X.shape[0]), len(glob.labels))
    binary = U.nnz == 0 or bool(np.all(U.data == 1.0))      # per shard: x * 1.0 is x, so sums do not change
    return MaxentProblem(ctx_ptr=U.indptr.astype(np.int64), ctx_pred=U.indices.astype(index_dtype(X.shape[1])),
                         ctx_val=None if binary else U.data.astype(np.float64), map_ptr=glob.map_ptr,
                         map_label=glob.map_label, map_feat=glob.map_feat, ctx_count=ctx_count, obs_ptr=obs_ptr,
                         obs_label=obs_label, obs_count=obs_count, n_features=glob.n_features, labels=glob.labels,
                         predicates=glob.predicates, reg=np.zeros(glob.n_features))


# ---------------------------------------------------------------- the driver's view

@dataclass
class ShardedData:
    """A training set that lives on the workers: the global index, the rows per shard, and the recipes."""

    source: FileSource
    glob: GlobalIndex
    rows: list
    n: int

    @property
    def kind(self) -> str:
        return self.glob.kind

    @property
    def total_count(self) -> float:
        return float(sum(self.rows))

    def recipes(self) -> list:
        """One recipe per non-empty shard, in file order."""
        return [ShardRecipe(self.source, i, self.n, self.glob) for i in range(self.n) if self.rows[i] > 0]

    def row_bounds(self) -> np.ndarray:
        return offsets([r for r in self.rows if r > 0])


def scan(source: FileSource, backend="inprocess", shards: int | None = None) -> ShardedData:
    """The counting pass of ``source`` cut into ``shards`` parts (default: one per worker of ``backend``)
    on ``backend`` (a name, a Backend or a ``distributed.Client``), and the global index."""
    from .backends import Backend, make_backend
    made, owned = make_backend(backend)
    try:
        n = made.default_shards() if shards is None else int(shards)
        if n < 1:
            raise InvalidInputError(f"shards must be at least 1, got {shards!r}")
        calls = [(source, i, n) for i in range(n)]
        if source.format == "conll2000":
            from .sentence_sources import chain_index, count_chain
            counts = made.run(count_chain, calls)
            glob = StructuredIndex("chain", chain_index(source, counts))
        elif source.format == "conllx":
            from .sentence_sources import count_tree_keys, count_tree_vocabularies, tree_space, tree_vocabularies
            counts = made.run(count_tree_vocabularies, calls)
            vocabularies = tree_vocabularies(counts)
            keys = made.run(count_tree_keys, [(*call, vocabularies) for call in calls])
            glob = StructuredIndex("tree", tree_space(source, vocabularies, keys), sum(c["skipped"] for c in counts))
        else:
            counts = made.run(count_shard, calls)
            glob = merge_counts(source, counts)
    finally:
        if owned and not isinstance(backend, Backend):      # made here for the pass alone
            made.close()
    return ShardedData(source, glob, [c["rows"] for c in counts], n)
