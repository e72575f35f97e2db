"""20 Newsgroups ("bydate") as tf-idf document vectors, built with our own tokenizer.

The shared data holds the raw posts (``20newsgroups/20news-bydate.tar.gz``:
11,314 train / 7,532 test, 20 groups). :func:`load_20newsgroups_tfidf` turns
them into the kind of matrix the LIBSVM document sets (news20, real-sim,
rcv1) are: rows of unit length of tf-idf weights.

* tokens: maximal runs of ASCII letters and digits containing at least one
  letter, at least 2 characters, lower-cased; the text is decoded as Latin-1
  and used whole (headers From/Subject included, as the bydate files are);
* vocabulary: tokens in at least ``min_df`` training documents (the test
  split never adds terms);
* weights: tf = raw count, idf = ln(N / df) + 1 on the training split
  (scikit-learn's ``smooth_idf=False`` convention), each row scaled to unit
  Euclidean length (empty rows stay zero).

Labels: the group index (alphabetical group names, :data:`GROUPS`), or ±1 by a
class split (:data:`SPLITS`); the default ``"comp+sci"`` puts the 5 comp.* and
4 sci.* groups (technical posts) against the other 11 (+1: 9 groups).
"""
from __future__ import annotations

import re
import tarfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import InvalidInputError
from .paths import require_shared

ARCHIVE = Path("20newsgroups") / "20news-bydate.tar.gz"
TOKEN = re.compile(r"[a-z0-9]*[a-z][a-z0-9]*")
GROUPS = ("alt.atheism", "comp.graphics", "comp.os.ms-windows.misc", "comp.sys.ibm.pc.hardware",
          "comp.sys.mac.hardware", "comp.windows.x", "misc.forsale", "rec.autos", "rec.motorcycles",
          "rec.sport.baseball", "rec.sport.hockey", "sci.crypt", "sci.electronics", "sci.med", "sci.space",
          "soc.religion.christian", "talk.politics.guns", "talk.politics.mideast", "talk.politics.misc",
          "talk.religion.misc")
SPLITS = {
    "comp+sci": lambda g: g.startswith(("comp.", "sci.")),      # 9 technical groups vs 11
    "comp": lambda g: g.startswith("comp."),                    # 5 vs 15
}


def tokenize(text: str) -> list[str]:
    return [t for t in TOKEN.findall(text.lower()) if len(t) >= 2]


def read_20newsgroups(path=None):
    """{"train": (texts, group ids), "test": (texts, group ids)} from the bydate tar.gz."""
    path = Path(path) if path is not None else _default_archive()
    split = {"train": ([], []), "test": ([], [])}
    index = {g: i for i, g in enumerate(GROUPS)}
    with tarfile.open(path, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = Path(member.name).parts
            if len(parts) < 3 or parts[-2] not in index:
                continue
            which = "train" if parts[-3].endswith("-train") else "test" if parts[-3].endswith("-test") else None
            if which is None:
                continue
            text = tar.extractfile(member).read().decode("latin-1")
            split[which][0].append(text)
            split[which][1].append(index[parts[-2]])
    for which, (texts, _) in split.items():
        if not texts:
            raise InvalidInputError(f"{path}: no {which} documents found (expected 20news-bydate-{which}/GROUP/ID)")
    return {k: (texts, np.asarray(ids, dtype=np.int64)) for k, (texts, ids) in split.items()}


def tfidf_matrices(train_texts, test_texts, min_df=2):
    """(X_train, X_test, vocabulary) as described in the module notes."""
    train_tokens = [tokenize(t) for t in train_texts]
    df: dict[str, int] = {}
    for toks in train_tokens:
        for t in set(toks):
            df[t] = df.get(t, 0) + 1
    vocab = sorted(t for t, c in df.items() if c >= min_df)
    column = {t: j for j, t in enumerate(vocab)}
    n_docs = len(train_texts)
    idf = np.log(n_docs / np.array([df[t] for t in vocab], dtype=np.float64)) + 1.0

    def matrix(token_lists):
        rows, cols = [], []
        for i, toks in enumerate(token_lists):
            ids = [column[t] for t in toks if t in column]
            rows.extend([i] * len(ids))
            cols.extend(ids)
        counts = sp.csr_matrix((np.ones(len(rows)), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
                               shape=(len(token_lists), len(vocab)))
        counts.sum_duplicates()
        X = sp.csr_matrix(counts.multiply(idf[None, :]))
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        X = sp.diags(np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)) @ X
        X = sp.csr_matrix(X)
        X.sort_indices()
        return X

    return matrix(train_tokens), matrix([tokenize(t) for t in test_texts]), vocab


@lru_cache(maxsize=4)
def _cached(path: str, min_df: int):
    data = read_20newsgroups(path)
    Xtr, Xte, vocab = tfidf_matrices(data["train"][0], data["test"][0], min_df=min_df)
    return Xtr, data["train"][1], Xte, data["test"][1], tuple(vocab)


def load_20newsgroups_tfidf(data_dir=None, split="comp+sci", min_df=2, multiclass=False):
    """(X_train, y_train, X_test, y_test): unit-length tf-idf rows (CSR float64) of the bydate split.

    ``y`` is +1 / -1 by ``split`` (a name in :data:`SPLITS`, or a function of the group name), or the
    group index 0..19 with ``multiclass=True``. ``data_dir`` is the shared data root (default
    :func:`loglin.data.paths.shared_data_dir`). The matrices are cached per process.
    """
    path = require_shared(ARCHIVE, data_dir=data_dir)
    Xtr, gtr, Xte, gte, _ = _cached(str(path), int(min_df))
    if multiclass:
        return Xtr.copy(), gtr.copy(), Xte.copy(), gte.copy()
    rule = SPLITS.get(split) if isinstance(split, str) else split
    if rule is None:
        raise InvalidInputError(f"unknown class split {split!r}; known: {', '.join(SPLITS)} (or pass a function)")
    positive = np.array([bool(rule(g)) for g in GROUPS])
    return Xtr.copy(), np.where(positive[gtr], 1, -1), Xte.copy(), np.where(positive[gte], 1, -1)


def _default_archive():
    return require_shared(ARCHIVE)
