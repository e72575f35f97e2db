"""The papers' NLP data sets: Table 3 statistics of Huang et al. (2010) and the evaluation hook."""
import numpy as np
import pytest

from loglin.data import read_conll2000
from loglin.data.paths import shared_data_dir
from loglin.errors import InvalidInputError
from loglin.tagging.datasets import PAPER_STATS, brown_split, build_dataset, bundled_conll2000_small

DATA = shared_data_dir()
needs_data = pytest.mark.skipif(DATA is None or not (DATA / "conll2000").is_dir(), reason="shared data not found")


def test_bundled_slice_is_a_prefix_of_conll2000():
    train, test = bundled_conll2000_small()
    assert train.is_file() and test.is_file() and (train.parent / "README").is_file()
    size = sum(p.stat().st_size for p in train.parent.iterdir())
    assert size < 1.5e6
    tr, te = read_conll2000(train), read_conll2000(test)
    assert (len(tr), len(te)) == (2000, 500)
    if DATA is not None and (DATA / "conll2000").is_dir():
        assert tr == read_conll2000(DATA / "conll2000" / "train.txt")[:2000]
        assert te == read_conll2000(DATA / "conll2000" / "test.txt")[:500]


def test_unknown_name():
    with pytest.raises(InvalidInputError):
        build_dataset("penn")


@pytest.mark.slow
@needs_data
@pytest.mark.parametrize("name", ["conll2000-pos", "conll2000-chunk"])
def test_table3_statistics_are_reproduced(name):
    d = build_dataset(name)
    st = d.stats()
    assert (st["contexts"], st["labels"], st["features"], st["nnz"]) == PAPER_STATS[name]
    assert st["nnz_merged"] == d.problem.nnz() and st["merged_contexts"] == d.problem.n_contexts
    # the evaluation hook: all-zero weights predict one label everywhere
    score = d.evaluate(np.zeros(d.problem.n_features))
    assert 0.0 <= score <= 100.0
    if name == "conll2000-pos":
        gold = [t for s in d.test.labels for t in s]
        first = d.extractor.labels[0]
        assert score == pytest.approx(100 * np.mean([g == first for g in gold]))


@pytest.mark.slow
@pytest.mark.skipif(DATA is None or not (DATA / "brown").is_dir(), reason="shared data not found")
def test_brown_split_by_files_is_reproducible():
    train, test, info = brown_split(DATA / "brown", seed=0)
    assert (info["train_files"], info["test_files"]) == (400, 100)
    again, _, _ = brown_split(DATA / "brown", seed=0)
    assert again.words[:50] == train.words[:50]
    tags = {t for s in train.labels + test.labels for t in s}
    assert not any(part in ("tl", "hl", "fw", "nc") for t in tags for part in t.split("-"))
    assert train.n_tokens + test.n_tokens == 1_161_192
