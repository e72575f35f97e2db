"""The conditional Maxent problem of Huang et al. (2010), eqs. (1)-(3).

Storage (their Section 4.1 asks for both row and column access):

* contexts x are the distinct rows of a sparse context x predicate matrix
  ``phi_p(x)`` (identical contexts are merged and their counts added);
* a *predicate map* sends each predicate p to a list of (label y, feature t)
  pairs, so that

      f_t(x, y) = sum over {p : (y, t) in map[p]} of phi_p(x).

  With each feature appearing once in the map this is the usual
  predicate x label feature (OpenNLP/Ratnaparkhi); letting a feature appear
  under several (p, y) pairs expresses any non-negative real f_t(x, y) with no
  extra memory (build one predicate per distinct (t, y) pair).
* row form  (x, y) -> t  is  "context row of x, then map[p]";
  column form  t -> (x, y)  is  "occurrences of t in the map, then the
  predicate's column of phi".

Counts are kept unnormalized (sum of instance weights); the regularized
objective uses LIBLINEAR's scale  1/2 ||w||^2 + C * (-log-likelihood),
which equals the papers' normalized eq. (3) times C*N when sigma^2 = C*N.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Sequence

import numpy as np
import scipy.sparse as sp

from .csr import gather_rows, offsets
from .errors import DataContentError, InvalidInputError
from .scale import warn_if_badly_scaled

INDEX_LIMIT_32 = np.iinfo(np.int32).max


def index_dtype(n):
    """Smallest index dtype able to address ``n`` entries (int64 past 2**31)."""
    return np.int32 if n < INDEX_LIMIT_32 else np.int64


@dataclass
class MaxentProblem:
    """Training data of a Maxent model, in the arrays every solver reads.

    Attributes (X contexts, K labels, P predicates, n features):
        ctx_ptr, ctx_pred, ctx_val: CSR of phi (X x P); ``ctx_val`` is None
            for 0/1 data (the memory-lean case the papers' NLP sets are).
        col_ptr, col_ctx, col_val: the same matrix in CSC (column) form.
        map_ptr, map_label, map_feat: predicate map, CSR over predicates.
        map_pred: predicate of each map entry (for the column form).
        occ_ptr, occ_entry: column form of features: entries of the map
            where feature t occurs.
        ctx_count: c(x) = sum_y c(x, y), the weighted count of context x.
        obs_ptr, obs_label, obs_count: observed labels of each context and
            their weighted counts c(x, y).
        emp: sum_{x,y} c(x,y) f_t(x,y), i.e. N * Ptilde(f_t).
        reg: 1.0 where w_t is regularized, 0.0 for an unregularized bias.
    """

    ctx_ptr: np.ndarray
    ctx_pred: np.ndarray
    ctx_val: np.ndarray | None
    map_ptr: np.ndarray
    map_label: np.ndarray
    map_feat: np.ndarray
    ctx_count: np.ndarray
    obs_ptr: np.ndarray
    obs_label: np.ndarray
    obs_count: np.ndarray
    n_features: int
    labels: np.ndarray
    predicates: list | None = None
    reg: np.ndarray | None = None
    bias: float = 0.0            # value of the appended constant predicate (0 = none)
    # derived in __post_init__
    col_ptr: np.ndarray = field(init=False, repr=False)
    col_ctx: np.ndarray = field(init=False, repr=False)
    col_val: np.ndarray | None = field(init=False, repr=False)
    map_pred: np.ndarray = field(init=False, repr=False)
    occ_ptr: np.ndarray = field(init=False, repr=False)
    occ_entry: np.ndarray = field(init=False, repr=False)
    emp: np.ndarray = field(init=False, repr=False)
    _dense_pairs: bool = field(init=False, repr=False, default=False)
    _map_identity: bool = field(init=False, repr=False, default=False)

    def __post_init__(self):
        self._validate()
        X = self.context_matrix().tocsc()
        X.sort_indices()
        self.col_ptr = X.indptr.astype(np.int64)
        self.col_ctx = X.indices.astype(index_dtype(self.n_contexts))
        self.col_val = None if self.ctx_val is None else X.data.astype(np.float64)
        n_map = len(self.map_feat)
        self.map_pred = np.repeat(np.arange(self.n_predicates, dtype=index_dtype(self.n_predicates)),
                                  np.diff(self.map_ptr))
        order = np.argsort(self.map_feat, kind="stable")
        self.occ_entry = order.astype(index_dtype(n_map))
        self.occ_ptr = offsets(np.bincount(self.map_feat, minlength=self.n_features))
        if self.reg is None:
            self.reg = np.ones(self.n_features)
        self._map_identity = self.n_features == n_map and bool(np.array_equal(self.map_feat, np.arange(n_map)))
        self._dense_pairs = self._detect_dense_pairs()
        from .kernels.maxent import empirical_feature_counts
        self.emp = empirical_feature_counts(self.n_features, self.ctx_ptr, self.ctx_pred, self._val_or_empty(),
                                            self.map_ptr, self.map_label, self.map_feat,
                                            self.obs_ptr, self.obs_label, self.obs_count)

    # ------------------------------------------------------------------ sizes
    @property
    def n_contexts(self) -> int:
        return len(self.ctx_ptr) - 1

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    @property
    def n_predicates(self) -> int:
        return len(self.map_ptr) - 1

    @property
    def binary(self) -> bool:
        """True for 0/1 features (no value array is stored)."""
        return self.ctx_val is None

    @property
    def total_count(self) -> float:
        """N, the weighted number of training events."""
        return float(self.ctx_count.sum())

    @property
    def dense_pairs(self) -> bool:
        """True for the all-pairs layout: feature p*K + y is (predicate p, label y) for every p, y.

        Then w is a dense P x K block W (row p = the predicate's K weights) and
        the kernels can read W[p, :] contiguously instead of going through the map.
        """
        return self._dense_pairs

    def _detect_dense_pairs(self) -> bool:
        P, K, n_map = self.n_predicates, self.n_labels, len(self.map_feat)
        if n_map != P * K or self.n_features != n_map:
            return False
        if not np.array_equal(self.map_ptr, np.arange(P + 1, dtype=np.int64) * K):
            return False
        if not self._map_identity:
            return False
        return bool((self.map_label.reshape(P, K) == np.arange(K, dtype=self.map_label.dtype)).all())

    def nnz(self) -> int:
        """#nz of Huang et al. eq. (4): non-zeros f_t(x, y) over all (x, y)."""
        per_pred = np.diff(self.map_ptr)
        return int(per_pred[self.ctx_pred].sum())

    def _val_or_empty(self):
        return np.empty(0) if self.ctx_val is None else self.ctx_val

    def map_feat_or_empty(self) -> np.ndarray:
        """map_feat, or an empty array when it is the identity (feature j is map entry j, as for the
        papers' seen pairs): the score and gradient passes then read w[j] directly, one index array
        fewer per non-zero and contiguous w within a predicate (:func:`loglin.kernels.maxent.context_scores`)."""
        return np.empty(0, dtype=self.map_feat.dtype) if self._map_identity else self.map_feat

    def with_contexts_in_order(self, order) -> "MaxentProblem":
        """The same problem with context i of the result being context ``order[i]`` of this one (a permutation:
        e.g. a one-time shuffle, so that a solver can visit random contexts in memory order)."""
        order = np.asarray(order, dtype=np.int64)
        if order.shape != (self.n_contexts,) or not np.array_equal(np.sort(order), np.arange(self.n_contexts)):
            raise InvalidInputError("order must be a permutation of the contexts")
        ctx_ptr, entries = gather_rows(self.ctx_ptr, order)
        obs_ptr, obs = gather_rows(self.obs_ptr, order)
        return MaxentProblem(ctx_ptr=ctx_ptr, ctx_pred=self.ctx_pred[entries],
                             ctx_val=None if self.ctx_val is None else self.ctx_val[entries],
                             map_ptr=self.map_ptr, map_label=self.map_label, map_feat=self.map_feat,
                             ctx_count=self.ctx_count[order], obs_ptr=obs_ptr, obs_label=self.obs_label[obs],
                             obs_count=self.obs_count[obs], n_features=self.n_features, labels=self.labels,
                             predicates=self.predicates, reg=self.reg, bias=self.bias)

    def context_matrix(self) -> sp.csr_matrix:
        """phi as a SciPy CSR matrix (contexts x predicates)."""
        data = np.ones(len(self.ctx_pred)) if self.ctx_val is None else self.ctx_val
        return sp.csr_matrix((data, self.ctx_pred, self.ctx_ptr), shape=(self.n_contexts, self.n_predicates))

    def _validate(self):
        X, P = len(self.ctx_ptr) - 1, len(self.map_ptr) - 1
        if X < 1:
            raise InvalidInputError("the training data has no contexts")
        if len(self.labels) < 2:
            raise DataContentError(f"need at least two labels to train, got {len(self.labels)}")
        if self.ctx_val is not None:
            if not np.all(np.isfinite(self.ctx_val)):
                raise InvalidInputError("feature values contain NaN or infinity")
        for name in ("ctx_count", "obs_count"):
            arr = getattr(self, name)
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise InvalidInputError(f"{name} must be finite and non-negative")
        if len(self.ctx_pred) and (self.ctx_pred.min() < 0 or self.ctx_pred.max() >= P):
            raise InvalidInputError("predicate index out of range")
        if len(self.map_feat) and (self.map_feat.min() < 0 or self.map_feat.max() >= self.n_features):
            raise InvalidInputError("feature index out of range")
        if len(self.map_label) and (self.map_label.min() < 0 or self.map_label.max() >= len(self.labels)):
            raise InvalidInputError("label index out of range")
        if self.ctx_count.sum() <= 0:
            raise InvalidInputError("all instance weights are zero")

    def has_negative_features(self) -> bool:
        return self.ctx_val is not None and bool(np.any(self.ctx_val < 0))

    # ------------------------------------------------------------ objective
    def objective(self, C: float):
        """The primal objective in LIBLINEAR scale, as an object solvers use."""
        from .objective import MaxentObjective
        return MaxentObjective(self, C)


# ====================================================================== building


def _encode_labels(y, classes=None):
    y = np.asarray(y)
    if y.ndim != 1:
        raise InvalidInputError(f"labels must be one-dimensional, got shape {y.shape}")
    if classes is None:
        classes, codes = np.unique(y, return_inverse=True)
    else:
        classes = np.asarray(classes)
        lookup = {c: i for i, c in enumerate(classes.tolist())}
        try:
            codes = np.array([lookup[v] for v in y.tolist()], dtype=np.int64)
        except KeyError as exc:
            raise InvalidInputError(f"label {exc.args[0]!r} is not one of the known classes") from None
    return classes, codes.astype(np.int32)


def _check_weights(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise InvalidInputError(f"sample_weight has shape {w.shape}, expected ({n},)")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InvalidInputError("sample_weight must be finite and non-negative")
    return w


def _merge_contexts(X: sp.csr_matrix, codes, weight, n_labels):
    """Merge identical rows of X; return unique rows and c(x), c(x, y).

    Rows are hashed by their (index, value) bytes, so merging costs one pass.
    """
    X = X.tocsr()
    X.sum_duplicates()
    X.sort_indices()
    keys = {}
    row_of = np.empty(X.shape[0], dtype=np.int64)
    ind, ptr, dat = X.indices, X.indptr, X.data
    for i in range(X.shape[0]):
        a, b = ptr[i], ptr[i + 1]
        key = ind[a:b].tobytes() + dat[a:b].tobytes()
        row_of[i] = keys.setdefault(key, len(keys))
    n_unique = len(keys)
    first = np.full(n_unique, -1, dtype=np.int64)
    # first occurrence of each unique row keeps its sparsity pattern
    seen_order = np.unique(row_of, return_index=True)[1]
    first[row_of[seen_order]] = seen_order
    U = X[first]
    pair = row_of * n_labels + codes
    uniq_pairs, inv = np.unique(pair, return_inverse=True)
    pair_count = np.bincount(inv, weights=weight)
    obs_ctx = uniq_pairs // n_labels
    obs_label = (uniq_pairs % n_labels).astype(np.int32)
    obs_ptr = offsets(np.bincount(obs_ctx, minlength=n_unique))
    ctx_count = np.bincount(obs_ctx, weights=pair_count, minlength=n_unique)
    return U, ctx_count, obs_ptr, obs_label, pair_count


def _predicate_label_map(n_predicates, n_labels, seen=None, *, label_subset=None):
    """Build the predicate -> (label, feature) map.

    ``seen`` (a sparse P x K matrix) keeps only pairs with a non-zero entry
    (OpenNLP: pairs seen in training); None means all P*K pairs.
    ``label_subset`` restricts every predicate to those labels (binary LR as
    Maxent, Huang et al. section 5.2, uses label +1 only).
    """
    if seen is None:
        preds = np.repeat(np.arange(n_predicates), n_labels)
        labs = np.tile(np.arange(n_labels), n_predicates)
    else:
        seen = sp.coo_matrix(seen).tocsr()
        seen.sum_duplicates()
        seen.sort_indices()
        preds = np.repeat(np.arange(n_predicates), np.diff(seen.indptr))
        labs = seen.indices
    if label_subset is not None:
        keep = np.isin(labs, list(label_subset))
        preds, labs = preds[keep], labs[keep]
    map_ptr = offsets(np.bincount(preds, minlength=n_predicates))
    n_features = len(preds)
    return map_ptr, labs.astype(np.int32), np.arange(n_features, dtype=index_dtype(n_features)), n_features


def problem_from_matrix(X, y, *, sample_weight=None, class_weight=None, classes=None, all_pairs=True,
                        bias=None, regularize_bias=True, predicates=None, label_subset=None,
                        check_nonnegative=False) -> MaxentProblem:
    """Maxent problem with predicate x label features from an (instances x predicates) matrix.

    ``all_pairs=True`` gives every (predicate, label) pair a weight (the
    scikit-learn multinomial model, coef_ of shape K x P); False keeps only
    pairs seen in training (OpenNLP). ``bias`` > 0 appends a constant
    predicate of that value. Class weights multiply instance weights.
    """
    X = _as_float_csr(X)
    n = X.shape[0]
    if n == 0:
        raise DataContentError("the training data is empty")
    if len(y) != n:
        raise InvalidInputError(f"X has {n} rows but y has {len(y)} labels")
    classes, codes = _encode_labels(y, classes)
    weight = _check_weights(sample_weight, n)
    if class_weight is not None:
        weight = weight * class_weight_vector(class_weight, classes, codes, weight)[codes]
    if check_nonnegative and X.nnz and X.data.min() < 0:
        raise InvalidInputError("feature values must be non-negative for this method")
    n_pred = X.shape[1]
    if predicates is None:
        predicates = list(range(n_pred))
    if bias is not None and bias > 0:
        X = sp.hstack([X, np.full((n, 1), float(bias))], format="csr")
        n_pred += 1
        predicates = list(predicates) + ["<bias>"]
    warn_if_badly_scaled(X)
    K = len(classes)
    U, ctx_count, obs_ptr, obs_label, obs_count = _merge_contexts(X, codes, weight, K)
    seen = None
    if not all_pairs:
        onehot = sp.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, K))
        pattern = X.copy()
        pattern.data[:] = 1.0
        seen = (pattern.T @ onehot).tocsr()
    map_ptr, map_label, map_feat, n_features = _predicate_label_map(n_pred, K, seen, label_subset=label_subset)
    reg = np.ones(n_features)
    if bias is not None and bias > 0 and not regularize_bias:
        a, b = map_ptr[n_pred - 1], map_ptr[n_pred]
        reg[map_feat[a:b]] = 0.0
    binary = U.nnz == 0 or bool(np.all(U.data == 1.0))
    return MaxentProblem(
        ctx_ptr=U.indptr.astype(np.int64), ctx_pred=U.indices.astype(index_dtype(n_pred)),
        ctx_val=None if binary else U.data.astype(np.float64),
        map_ptr=map_ptr, map_label=map_label, map_feat=map_feat,
        ctx_count=ctx_count, obs_ptr=obs_ptr, obs_label=obs_label, obs_count=obs_count,
        n_features=n_features, labels=classes, predicates=predicates, reg=reg,
        bias=float(bias) if bias is not None and bias > 0 else 0.0)


def problem_from_events(labels: Sequence[Hashable], contexts: Sequence[Sequence], values=None, *,
                        cutoff: int = 1, all_pairs: bool = False, sample_weight=None,
                        predicates: Sequence | None = None, classes=None) -> MaxentProblem:
    """Maxent problem from events (label, [predicate names]) - the OpenNLP way.

    ``values[i][j]`` is the value of predicate ``contexts[i][j]`` (default 1).
    Predicates seen in fewer than ``cutoff`` events are dropped; with a fixed
    ``predicates`` vocabulary, unknown names are dropped instead.
    """
    n = len(contexts)
    if n == 0:
        raise DataContentError("the training data is empty")
    if len(labels) != n:
        raise InvalidInputError(f"{n} contexts but {len(labels)} labels")
    if predicates is None:
        counts = {}
        for ctx in contexts:
            for p in dict.fromkeys(ctx):      # first-seen order (a set's order changes with the hash seed)
                counts[p] = counts.get(p, 0) + 1
        predicates = [p for p, c in counts.items() if c >= cutoff]
    vocab = {p: i for i, p in enumerate(predicates)}
    X = events_to_matrix(contexts, values, vocab)
    return problem_from_matrix(X, np.asarray(labels), sample_weight=sample_weight, classes=classes,
                               all_pairs=all_pairs, predicates=list(predicates))


def events_to_matrix(contexts, values, vocab) -> sp.csr_matrix:
    """Rows of predicate values for raw contexts; unknown predicates are skipped."""
    indptr = np.zeros(len(contexts) + 1, dtype=np.int64)
    idx, dat = [], []
    for i, ctx in enumerate(contexts):
        vals = values[i] if values is not None else None
        for j, p in enumerate(ctx):
            k = vocab.get(p)
            if k is not None:
                idx.append(k)
                dat.append(1.0 if vals is None else float(vals[j]))
        indptr[i + 1] = len(idx)
    X = sp.csr_matrix((np.asarray(dat, dtype=np.float64), np.asarray(idx, dtype=np.int64), indptr),
                      shape=(len(contexts), len(vocab)))
    X.sum_duplicates()
    if X.nnz and not np.all(np.isfinite(X.data)):
        raise InvalidInputError("predicate values contain NaN or infinity")
    return X


def class_weight_vector(class_weight, classes, codes, weight=None):
    """Per-class multipliers from a dict, 'balanced', or None.

    "balanced" divides by each class's total sample weight (as scikit-learn's
    ``compute_class_weight``), so integer weights still equal repeated rows.
    """
    K = len(classes)
    if class_weight is None:
        return np.ones(K)
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise InvalidInputError(f"class_weight must be a dict or 'balanced', got {class_weight!r}")
        totals = np.bincount(codes, weights=weight, minlength=K).astype(float)
        return totals.sum() / (K * np.maximum(totals, np.finfo(float).tiny))
    out = np.ones(K)
    lookup = {c: i for i, c in enumerate(classes.tolist())}
    for c, v in class_weight.items():
        if c not in lookup:
            raise InvalidInputError(f"class_weight names unknown class {c!r}")
        out[lookup[c]] = float(v)
    return out


def _as_float_csr(X) -> sp.csr_matrix:
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InvalidInputError(f"X must be two-dimensional, got shape {X.shape}")
        X = sp.csr_matrix(X)
    if X.nnz and not np.all(np.isfinite(X.data)):
        raise InvalidInputError("X contains NaN or infinity")
    if X.nnz and (not X.has_canonical_format or not np.all(X.data)):
        X = X.copy()                 # tidy a copy: X may share the caller's (possibly read-only) arrays
        X.sum_duplicates()
        X.eliminate_zeros()
    return X
