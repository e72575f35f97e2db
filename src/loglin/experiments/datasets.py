"""The data sets of the reproductions, as the papers' experiments use them.

Every loader finds its files under the shared data directory (``LOGLIN_DATA`` or ``../shared/data``,
see :mod:`loglin.data.paths`) or an explicit ``data_dir``, and raises
:class:`loglin.errors.DataUnavailable` naming the missing path when they are not there.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..data.paths import require_shared

NLP_NAMES = ("conll2000-pos", "conll2000-chunk", "brown")


# ====================================================================== document (binary) data


def normalize_rows(X):
    """Rows scaled to unit Euclidean length (empty rows left as they are)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.diags(1.0 / norms) @ X


def lr_data(name, quick=False, data_dir=None, seed=0):
    """(X_train, y_train, X_test, y_test), y in {-1, +1}, as Yu et al. (2011) section 6.1 is reproduced.

    a9a: the LIBSVM train / test files (quick: the first 3000 / 2000 rows); news20: :func:`document_data`
    (unit rows, classes 1-10 -> +1, a random 4/5 trains); 20newsgroups: our tf-idf of the bydate split,
    comp.* + sci.* -> +1 (:func:`loglin.data.newsgroups.load_20newsgroups_tfidf`).
    """
    from ..data import read_svmlight
    if name == "a9a":
        Xtr, ytr = read_svmlight(require_shared("a9a", "a9a", data_dir=data_dir), n_features=123)
        Xte, yte = read_svmlight(require_shared("a9a", "a9a.t", data_dir=data_dir), n_features=123)
        if quick:
            Xtr, ytr, Xte, yte = Xtr[:3000], ytr[:3000], Xte[:2000], yte[:2000]
        return Xtr, np.asarray(ytr), Xte, np.asarray(yte)
    if name == "news20":
        return document_data("news20", quick, data_dir, seed)
    if name == "20newsgroups":
        from ..data.newsgroups import load_20newsgroups_tfidf
        Xtr, ytr, Xte, yte = load_20newsgroups_tfidf(require_shared(data_dir=data_dir), split="comp+sci")
        if quick:
            Xtr, ytr, Xte, yte = Xtr[:3000], ytr[:3000], Xte[:2000], yte[:2000]
        return Xtr, ytr, Xte, yte
    raise ValueError(f"unknown LR data set {name!r} (a9a, news20, 20newsgroups)")


def document_data(name, quick=False, data_dir=None, seed=0):
    """(X_train, y_train, X_test, y_test) with y in {-1, +1} and unit-length rows (Huang et al. 2010, 5.2).

    a9a: the LIBSVM train / test files (quick: the first 2000 / 1000 rows); news20: classes 1-10 -> +1,
    11-20 -> -1, a random 4/5 of the instances (seed) train, the rest test; 20newsgroups: the split and
    quick slice of :func:`lr_data`.
    """
    from ..data import read_svmlight
    if name == "a9a":
        Xtr, ytr = read_svmlight(require_shared("a9a", "a9a", data_dir=data_dir), n_features=123)
        Xte, yte = read_svmlight(require_shared("a9a", "a9a.t", data_dir=data_dir), n_features=123)
        if quick:
            Xtr, ytr, Xte, yte = Xtr[:2000], ytr[:2000], Xte[:1000], yte[:1000]
    elif name == "news20":
        X, y = read_svmlight(require_shared("news20", "news20.bz2", data_dir=data_dir))
        y = np.where(y <= 10, 1, -1)
        order = np.random.default_rng(seed).permutation(X.shape[0])
        if quick:
            order = order[:3000]
        cut = int(0.8 * len(order))
        Xtr, ytr, Xte, yte = X[order[:cut]], y[order[:cut]], X[order[cut:]], y[order[cut:]]
    elif name == "20newsgroups":
        Xtr, ytr, Xte, yte = lr_data(name, quick, data_dir)
    else:
        raise ValueError(f"unknown document data set {name!r} (a9a, news20, 20newsgroups)")
    return normalize_rows(Xtr), np.asarray(ytr), normalize_rows(Xte), np.asarray(yte)


# ====================================================================== NLP (tagging) data


def nlp_names(quick):
    """The 0/1-featured NLP data sets of Huang et al. (2010) Figure 2 and Yu et al. (2011) Figure 3."""
    return ("conll2000-pos",) if quick else NLP_NAMES


def nlp_dataset(name, quick=False, data_dir=None):
    """A :class:`loglin.tagging.datasets` data set (problem, evaluator, metric); ``quick``: built from the
    bundled CoNLL-2000 slice (so BROWN has no quick form)."""
    from ..tagging.datasets import build_dataset, bundled_conll2000_small
    if quick:
        if name == "brown":
            raise ValueError("quick mode uses the bundled CoNLL-2000 slice only")
        data_dir = bundled_conll2000_small()[0].parent
    return build_dataset(name, data_dir=data_dir)


def head_contexts(problem, k):
    """The same features (so the same w and tagger) trained on the first k contexts only."""
    from ..problem import MaxentProblem
    k = min(k, problem.n_contexts)
    a, o = problem.ctx_ptr[k], problem.obs_ptr[k]
    return MaxentProblem(ctx_ptr=problem.ctx_ptr[:k + 1], ctx_pred=problem.ctx_pred[:a],
                         ctx_val=None if problem.ctx_val is None else problem.ctx_val[:a],
                         map_ptr=problem.map_ptr, map_label=problem.map_label, map_feat=problem.map_feat,
                         ctx_count=problem.ctx_count[:k], obs_ptr=problem.obs_ptr[:k + 1],
                         obs_label=problem.obs_label[:o], obs_count=problem.obs_count[:o],
                         n_features=problem.n_features, labels=problem.labels, predicates=problem.predicates,
                         reg=problem.reg)


# ====================================================================== multi-class and structured data


def mnist_dir(data_dir=None) -> Path:
    return require_shared("mnist", data_dir=data_dir)


def news20_multiclass_file(data_dir=None) -> Path:
    return require_shared("news20", "news20.bz2", data_dir=data_dir)


def conll2000_files(data_dir=None) -> tuple[Path, Path]:
    return (require_shared("conll2000", "train.txt", data_dir=data_dir),
            require_shared("conll2000", "test.txt", data_dir=data_dir))


def conll2007_spanish_files(data_dir=None) -> tuple[Path, Path]:
    return (require_shared("conll2007-esp", "esp.train", data_dir=data_dir),
            require_shared("conll2007-esp", "esp.test", data_dir=data_dir))
