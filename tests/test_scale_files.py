"""Shards read by the workers from the data file (loglin.scale.sources): the counting pass builds the
one-process global index (same order of features), and the shards' f and gradient sum to the
one-process problem's, for svmlight (Maxent, LR) and events files, 1/2/3 shards, in-process and Dask."""
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from loglin.binary import binary_problem
from loglin.data import read_events, read_svmlight
from loglin.data.svmlight import write_svmlight
from loglin.problem import problem_from_events, problem_from_matrix
from loglin.scale import sharded
from loglin.scale.file_ranges import shard_bytes
from loglin.scale.sources import FileSource, scan


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale_files")
    rng = np.random.default_rng(0)
    X = sp.random(240, 25, density=0.2, random_state=1, format="csr")
    X.data = np.round(rng.uniform(0.2, 2.0, X.nnz), 3)
    y = rng.integers(0, 3, X.shape[0])
    X = sp.vstack([X[40:80], X[40:]], format="csr")      # repeated contexts: merged within a shard, not across
    y = np.concatenate([y[40:80], y[40:]])
    write_svmlight(root / "multi.svm", X, np.array(["b", "a", "c"])[y])
    write_svmlight(root / "two.svm", X, np.where(y == 1, 1, -1))
    words = [f"w{i}" for i in range(40)]
    lines = []
    for i in range(300):
        k = rng.integers(1, 6)
        preds = [words[j] for j in rng.choice(len(words), k, replace=False)]
        if i % 7 == 0:
            preds.append(f"val={rng.uniform(0.5, 2):.3f}")       # a real-valued predicate
        if i % 11 == 0:
            preds.append(preds[0])                                # a repeated predicate: value 2
        lines.append(" ".join([str(rng.choice(["N", "V", "ADJ"]))] + preds))
    (root / "train.events").write_text("\n".join(lines) + "\n")
    return root


def _one_process(source):
    bias = source.bias if source.bias > 0 else None
    if source.format == "events":
        ev = read_events(source.path)
        if bias:
            ev.contexts = [list(c) + ["<bias>"] for c in ev.contexts]
            ev.values = None if ev.values is None else [list(v) + [bias] for v in ev.values]
        return problem_from_events(ev.labels, ev.contexts, ev.values, cutoff=source.cutoff, all_pairs=source.all_pairs)
    X, y = read_svmlight(source.path)
    if source.kind == "binary":
        return binary_problem(X, y, source.C, bias=source.bias, regularize_bias=source.regularize_bias)
    return problem_from_matrix(X, y, all_pairs=True, bias=bias, regularize_bias=source.regularize_bias)


SOURCES = {
    "svmlight-maxent": lambda root: FileSource(root / "multi.svm", "svmlight", bias=1.0, regularize_bias=False),
    "svmlight-lr": lambda root: FileSource(root / "two.svm", "svmlight", "binary", bias=1.0, C=0.7),
    "events-seen-pairs": lambda root: FileSource(root / "train.events", "events", "maxent", cutoff=3),
    "events-all-pairs-bias": lambda root: FileSource(root / "train.events", "events", "maxent", all_pairs=True,
                                                     bias=1.0),
}


def _same_index(data, full):
    glob = data.glob
    assert data.kind == ("binary" if hasattr(full, "X") else "maxent")
    assert np.array_equal(glob.labels, full.classes if hasattr(full, "X") else full.labels)
    assert glob.n_features == full.n_features and np.array_equal(glob.reg, full.reg)
    if data.kind == "maxent":
        assert glob.predicates == list(full.predicates)           # the order of features, too
        for name in ("map_ptr", "map_label", "map_feat"):
            assert np.array_equal(getattr(glob, name), getattr(full, name)), name


def _same_objective(data, full, C=2.0, backend="inprocess"):
    full_objective = full.objective(C) if data.kind == "maxent" else full.objective()
    rng = np.random.default_rng(5)
    w = 0.3 * rng.normal(size=full_objective.n)
    with sharded(data, C, backend=backend) as objective:
        f, g = full_objective.fun_grad(w)
        fs, gs = objective.fun_grad(w)
        assert fs == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(gs, g, rtol=0, atol=1e-12 * np.abs(g).max())
        return objective.n_shards


@pytest.mark.parametrize("name", sorted(SOURCES))
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_shards_read_from_the_file_make_the_one_process_problem(files, name, shards):
    source = SOURCES[name](files)
    full = _one_process(source)
    data = scan(source, "inprocess", shards)
    assert sum(data.rows) == (full.n_instances if data.kind == "binary" else int(full.total_count))
    _same_index(data, full)
    assert _same_objective(data, full) == shards


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_dask_workers_read_their_own_parts(files, client, name):
    source = SOURCES[name](files)
    full = _one_process(source)
    data = scan(source, client, 3)                 # three parts on two workers
    _same_index(data, full)
    assert _same_objective(data, full, backend=client) == 3


def test_parts_of_a_file_are_whole_lines_and_make_the_file(files, tmp_path):
    import gzip
    content = (files / "train.events").read_bytes()
    (tmp_path / "train.events.gz").write_bytes(gzip.compress(content))
    for path in (files / "train.events", tmp_path / "train.events.gz"):
        for n in (1, 2, 5, 400):
            parts = [shard_bytes(path, i, n) for i in range(n)]
            assert b"".join(parts) == content
            assert all(not p or p.endswith(b"\n") for p in parts)
    sentences = EN.read_bytes()
    for n in (2, 3, 50):
        parts = [shard_bytes(EN, i, n, sentences=True) for i in range(n)]
        assert b"".join(parts) == sentences
        assert all(not p or p.endswith(b"\n\n") for p in parts[:-1])     # whole sentences only


def test_more_parts_than_lines_leave_empty_shards_out(files, tmp_path):
    path = tmp_path / "tiny.svm"
    path.write_text("1 1:1 2:1\n2 2:1\n1 1:0.5\n")
    source = FileSource(path, "svmlight", "maxent")
    data = scan(source, "inprocess", 8)
    assert sum(r > 0 for r in data.rows) == 3
    assert _same_objective(data, _one_process(source)) == 3


def test_cli_workers_read_the_events_file_and_write_the_single_process_model(files, tmp_path):
    from loglin.cli import main
    from loglin.model import LinearModel
    common = ["train", str(files / "train.events"), "--format", "events", "--cutoff", "2", "--bias", "-C", "2",
              "--solver", "tron", "--tol", "1e-9", "--quiet"]
    assert main(common + ["-o", str(tmp_path / "one.npz")]) == 0
    assert main(common + ["-o", str(tmp_path / "two.npz"), "--workers", "2"]) == 0
    one, two = LinearModel.load(tmp_path / "one.npz"), LinearModel.load(tmp_path / "two.npz")
    assert np.array_equal(one.labels, two.labels) and list(one.predicates) == list(two.predicates)
    assert np.linalg.norm(two.w - one.w) <= 1e-8 * np.linalg.norm(one.w)


# ---------------------------------------------------------------- sentence shards (CoNLL)

EN = Path(__file__).parent / "data" / "parse_en.conllu"


@pytest.fixture(scope="module")
def chunk_file(tmp_path_factory):
    rng = np.random.default_rng(7)
    words = [("the", "DT"), ("dog", "NN"), ("runs", "VBZ"), ("fast", "RB"), ("in", "IN"), ("March", "NNP"),
             ("prices", "NNS"), ("rose", "VBD"), ("a", "DT"), ("cat", "NN"), ("sleeps", "VBZ")]
    chunk = {"DT": "B-NP", "NN": "I-NP", "NNS": "B-NP", "NNP": "B-NP", "VBZ": "B-VP", "VBD": "B-VP", "RB": "B-ADVP",
             "IN": "B-PP"}
    blocks = []
    for _ in range(40):
        tokens = [words[j] for j in rng.integers(0, len(words), rng.integers(2, 9))]
        blocks.append("".join(f"{w} {p} {chunk[p] if rng.random() < 0.9 else 'O'}\n" for w, p in tokens))
    path = tmp_path_factory.mktemp("chunks") / "train.txt"
    path.write_text("\n".join(blocks) + "\n")
    return path


def _one_process_sentences(source):
    from loglin.data.conll import read_conll2000, read_conllx
    if source.format == "conllx":
        from loglin.parsing.problem import build_tree_problem
        problem, space, _ = build_tree_problem(read_conllx(source.path), cutoff=source.cutoff)
        return problem, space
    from loglin.structured.crf_features import build_chain_problem
    need = 2 if source.task == "pos" else 3
    return build_chain_problem([[t[:need] for t in s] for s in read_conll2000(source.path)], source.task)


def _same_space(data, space):
    mine = data.glob.space
    if data.kind == "tree":
        for name in ("words", "tags", "ctags", "prefixes"):
            assert getattr(mine, name) == getattr(space, name), name
        assert np.array_equal(mine.keys, space.keys)
        return
    assert mine.attributes == space.attributes and np.array_equal(mine.labels, space.labels)
    for name in ("map_ptr", "map_label", "map_feat"):
        assert np.array_equal(getattr(mine, name), getattr(space, name)), name


def _sentence_source(name, chunk_file):
    if name == "tree":
        return FileSource(EN, "conllx", "tree", cutoff=2)
    return FileSource(chunk_file, "conll2000", "chain", task=name.split("-")[1])


@pytest.mark.parametrize("name", ["chain-chunk", "chain-pos", "tree"])
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_sentence_shards_read_from_the_file_make_the_one_process_problem(chunk_file, name, shards):
    source = _sentence_source(name, chunk_file)
    full, space = _one_process_sentences(source)
    data = scan(source, "inprocess", shards)
    assert sum(data.rows) == full.n_sentences
    _same_space(data, space)
    full_objective = full.objective(2.0)
    w = 0.3 * np.random.default_rng(shards).normal(size=full_objective.n)
    with sharded(data, 2.0) as objective:
        f, g = full_objective.fun_grad(w)
        fs, gs = objective.fun_grad(w)
        assert objective.n_shards == shards
        assert fs == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(gs, g, rtol=0, atol=1e-12 * np.abs(g).max())


@pytest.mark.parametrize("name", ["chain-chunk", "tree"])
def test_dask_workers_read_their_own_sentences(chunk_file, client, name):
    source = _sentence_source(name, chunk_file)
    full, space = _one_process_sentences(source)
    data = scan(source, client, 2)
    _same_space(data, space)
    full_objective = full.objective(2.0)
    w = 0.3 * np.random.default_rng(9).normal(size=full_objective.n)
    with sharded(data, 2.0, backend=client) as objective:
        f, g = full_objective.fun_grad(w)
        fs, gs = objective.fun_grad(w)
        assert fs == pytest.approx(f, rel=1e-12)
        np.testing.assert_allclose(gs, g, rtol=0, atol=1e-12 * np.abs(g).max())


# ---------------------------------------------------------------- the feature space goes once (decision 0055)

@pytest.fixture(scope="module")
def tree_file(tmp_path_factory):
    """Random projective trees over a large vocabulary: a feature space much larger than any sentence part."""
    rng = np.random.default_rng(11)
    blocks = []
    for _ in range(150):
        n = int(rng.integers(4, 12))
        heads, spans = [0] * (n + 1), [(1, n, 0)]
        while spans:                    # each span's root is chosen at random and its two sides hang below it
            lo, hi, head = spans.pop()
            if lo <= hi:
                root = int(rng.integers(lo, hi + 1))
                heads[root] = head
                spans += [(lo, root - 1, root), (root + 1, hi, root)]
        words, tags = rng.integers(0, 2000, n), rng.integers(0, 12, n)
        blocks.append("".join(f"{i}\tw{words[i - 1]}\t_\tC{tags[i - 1] % 4}\tT{tags[i - 1]}\t_\t{heads[i]}\tdep\t_\t_\n"
                              for i in range(1, n + 1)))
    path = tmp_path_factory.mktemp("trees") / "train.conllx"
    path.write_text("\n".join(blocks) + "\n")
    return path


def _pickled_size(obj):
    """Bytes of ``obj`` pickled with every Dask future as its key: what a task's graph carries itself."""
    import io
    import pickle
    from distributed import Future

    class ByKey(pickle.Pickler):
        def persistent_id(self, o):
            return o.key if isinstance(o, Future) else None
    out = io.BytesIO()
    ByKey(out, protocol=5).dump(obj)
    return len(out.getvalue())


def test_shards_start_without_carrying_the_feature_space(tree_file, client, monkeypatch):
    """Each shard's start task carries its recipe, not the global feature space: that goes to the workers once
    (one held task) and every shard reads it there; the iterates stay bitwise the in-process ones."""
    from loglin.scale.dask_backend import ShardActor, _held
    from loglin.solvers.base import minimize
    data = scan(FileSource(tree_file, "conllx", "tree"), client, 3)          # three shards on two workers
    space = _pickled_size(data.glob)
    submitted = []
    submit = client.submit

    def recording_submit(function, *args, **kwargs):
        submitted.append((function, _pickled_size(args)))
        return submit(function, *args, **kwargs)
    monkeypatch.setattr(client, "submit", recording_submit)
    runs = []
    for backend in ("inprocess", client):
        with sharded(data, 2.0, backend=backend) as objective:
            runs.append(minimize(objective, "lbfgs", tol=1e-10, max_iter=4, warn=False))
    monkeypatch.undo()
    starts = [size for function, size in submitted if function is ShardActor]
    held = [size for function, size in submitted if function is _held]
    assert space > 500_000
    assert len(starts) == 3 and max(starts) < space / 100
    assert len(held) == 1 and held[0] >= space
    local, dask = runs
    assert local.iterations == dask.iterations == 4
    assert [r["objective"] for r in local.trace.records] == [r["objective"] for r in dask.trace.records]
    assert np.array_equal(local.w, dask.w)
