"""``CRF``: sklearn-crfsuite's estimator on loglin's chain CRF.

    from loglin.crfsuite import CRF          # instead of: from sklearn_crfsuite import CRF
    crf = CRF(algorithm="lbfgs", c1=0, c2=0.1, max_iterations=100, all_possible_transitions=True)
    crf.fit(X_train, y_train)                # X: sentences of per-token feature dicts (see .items)
    crf.predict(X_test)

Every sklearn-crfsuite parameter is accepted under its own name; the ones loglin
does not honour give a :class:`CRFsuiteCompatibilityWarning` saying so. Scale:
CRFsuite minimizes -loglik + c1 ||w||_1 + c2 ||w||^2; loglin's train() minimizes
l1_ratio ||w||_1 + (1 - l1_ratio)/2 ||w||^2 + C sum loss, the same problem for
C = 1 / (c1 + 2 c2), l1_ratio = c1 / (c1 + 2 c2) (:func:`crfsuite_regularization`).
docs/decisions/0015-crfsuite-drop-in.md lists every parameter and where it differs.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from ..errors import ConvergenceWarning, ModelFormatError
from ..estimators import _BaseEstimator, not_fitted
from ..model_io import label_map_is_valid, load_npz_model, save_npz_model
from ..params import check_scale_out_params, scale_out_keywords, store_params, string_label_sequences
from ..penalty import from_crfsuite
from ..structured.crf_features import ChainFeatureSpace
from . import features as F
from .items import drop_zero_values, encode_sequences

FORMAT, VERSION = "loglin-crfsuite", 1
DEFAULT_C2 = 1.0                 # CRFsuite's default c2 (and c1 = 0)
DEFAULT_PERIOD, DEFAULT_DELTA = 10, 1e-5
DEFAULT_MAX_ITERATIONS = 1000    # CRFsuite's L-BFGS has no limit; loglin's chain default, and l2sgd's
NOT_AVAILABLE = {"ap": "averaged perceptron", "pa": "passive aggressive", "arow": "AROW"}
ALGORITHMS = {"lbfgs": "lbfgs", "l2sgd": "sgd"}
# parameters of CRFsuite algorithms or tools that loglin does not reproduce: name -> what to know
IGNORED = {
    "linesearch": "loglin's L-BFGS always uses its strong-Wolfe line search",
    "max_linesearch": "loglin's L-BFGS bounds its own line search",
    "calibration_eta": "loglin's sgd chooses eta0 itself (X_dev, if given, picks it by held-out error)",
    "calibration_rate": "see calibration_eta", "calibration_samples": "see calibration_eta",
    "calibration_candidates": "see calibration_eta", "calibration_max_trials": "see calibration_eta",
    "pa_type": "only for algorithm 'pa', which loglin does not have", "c": "only for algorithm 'pa'",
    "error_sensitive": "only for algorithm 'pa'", "averaging": "only for algorithm 'pa'",
    "variance": "only for algorithm 'arow'", "gamma": "only for algorithm 'arow'",
    "trainer_cls": "loglin trains in process, without a python-crfsuite Trainer",
}


class CRFsuiteCompatibilityWarning(UserWarning):
    """An sklearn-crfsuite parameter was given that loglin accepts but does not honour."""


def crfsuite_regularization(c1, c2):
    """(C, penalty, l1_ratio) of loglin's train() for CRFsuite's c1 ||w||_1 + c2 ||w||^2, None meaning
    CRFsuite's defaults (:func:`loglin.penalty.from_crfsuite`)."""
    return from_crfsuite(0.0 if c1 is None else c1, DEFAULT_C2 if c2 is None else c2)


def _check_sequences(X, y, what):
    if y is None:
        raise ValueError(f"{what}: y is required")
    X, y = list(X), list(y)
    if len(X) != len(y):
        raise ValueError(f"{what}: {len(X)} sentences in X but {len(y)} label sequences in y")
    for i, (xseq, yseq) in enumerate(zip(X, y)):
        if len(xseq) != len(yseq):
            raise ValueError(f"{what}: sentence {i} has {len(xseq)} tokens but {len(yseq)} labels")
    return X, string_label_sequences(y, what)


class TrainingLog:
    """``training_log_``: the trace of the run, with python-crfsuite's LogParser views.

    ``iterations``: one dict per recorded iteration with ``num``, ``loss``
    (objective in CRFsuite's scale), ``error_norm`` (its gradient norm), ``time``
    and ``scores`` (the dev-set token accuracy under "accuracy", when X_dev was given);
    ``trace``: the full :class:`loglin.trace.Trace` (loglin's scale).
    """

    def __init__(self, trace, C):
        self.trace = trace
        self.iterations = []
        for r in trace.records:
            scores = {} if "metric" not in r else {"accuracy": r["metric"]}
            self.iterations.append({"num": r.get("iteration"), "loss": r.get("objective", np.nan) / C,
                                    "error_norm": r.get("grad_norm", np.nan) / C, "time": r.get("seconds"),
                                    "scores": scores})

    @property
    def last_iteration(self):
        return self.iterations[-1] if self.iterations else {}


def _delta_test(period, delta, C):
    """CRFsuite's stopping test: (f(k - period) - f(k)) / f(k) <= delta, on the trace's records."""
    history = []

    def callback(record):
        k, f = record.get("iteration"), record.get("objective")
        if k is None or f is None:
            return False
        history.append((k, f))
        old = [g for (j, g) in history if j <= k - period]
        return bool(old) and f > 0 and (old[-1] - f) / f <= delta
    return callback


class CRF(_BaseEstimator):
    """A linear-chain CRF with sklearn-crfsuite's parameters, trained by loglin.

    Parameters are sklearn-crfsuite's (None: CRFsuite's default) plus
    ``solver_options`` (extra keyword arguments of loglin's solver), ``random_state``
    (seed of stochastic solvers), ``time_limit`` (seconds) and ``backend`` / ``client`` / ``n_workers``
    (L-BFGS / OWL-QN over sentence shards, as :class:`loglin.MaxentClassifier`'s). ``algorithm`` is
    'lbfgs' (default), 'l2sgd' (loglin's sgd) or any loglin solver for chain CRFs
    ('eg', 'eg-batch', 'sgd'); 'ap', 'pa' and 'arow' are not available.
    """

    def __init__(self, algorithm=None, min_freq=None, all_possible_states=None, all_possible_transitions=None,
                 c1=None, c2=None, max_iterations=None, num_memories=None, epsilon=None, period=None, delta=None,
                 linesearch=None, max_linesearch=None, calibration_eta=None, calibration_rate=None,
                 calibration_samples=None, calibration_candidates=None, calibration_max_trials=None,
                 pa_type=None, c=None, error_sensitive=None, averaging=None, variance=None, gamma=None,
                 verbose=False, model_filename=None, keep_tempfiles=False, trainer_cls=None,
                 solver_options=None, random_state=0, time_limit=None, backend=None, client=None, n_workers=None):
        store_params(self, locals())

    # ------------------------------------------------------------------ parameters
    def solver_name(self) -> str:
        """loglin's solver for ``algorithm`` (errors name what to use instead)."""
        from ..solvers import canonical, check
        name = "lbfgs" if self.algorithm is None else str(self.algorithm)
        if name in NOT_AVAILABLE:
            raise ValueError(f"algorithm {name!r} ({NOT_AVAILABLE[name]}) is not available in loglin: use "
                             "'lbfgs' (the CRF optimum, CRFsuite's default), 'l2sgd' (stochastic gradient) or "
                             "'eg' (exponentiated gradient on the dual); for a large-margin model like PA's, "
                             "loglin.tagging.estimator.train_chain_model(..., model='m3n') trains an M3N")
        name = ALGORITHMS.get(name, name)
        try:
            check(name, "chain", "ll")
        except Exception as exc:      # loglin's InvalidInputError: re-raised as scikit-learn's ValueError
            raise ValueError(f"algorithm {self.algorithm!r}: {exc}; sklearn-crfsuite's names: lbfgs, l2sgd") \
                from None
        return canonical(name)

    def _warn_ignored(self, solver):
        given = [name for name in IGNORED if getattr(self, name) is not None]
        for name in given:
            warnings.warn(f"CRF parameter {name}={getattr(self, name)!r} is ignored: {IGNORED[name]}",
                          CRFsuiteCompatibilityWarning, stacklevel=3)
        if self.num_memories is not None and solver not in ("lbfgs", "owlqn"):
            warnings.warn("num_memories is ignored: only the lbfgs algorithm uses it",
                          CRFsuiteCompatibilityWarning, stacklevel=3)
        if not self.all_possible_transitions and solver not in ("lbfgs", "owlqn"):
            warnings.warn(f"algorithm {self.algorithm!r} learns a weight for every label bigram, as "
                          "all_possible_transitions=True; only lbfgs keeps unseen bigrams at weight 0",
                          CRFsuiteCompatibilityWarning, stacklevel=3)

    def _number(self, name, default, low=0.0, integral=False):
        value = getattr(self, name)
        if value is None:
            return default
        kind = numbers.Integral if integral else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value) or value < low:
            raise ValueError(f"{name} must be a {'whole ' if integral else ''}number >= {low}, got {value!r}")
        return value

    # ------------------------------------------------------------------ training
    def fit(self, X, y, X_dev=None, y_dev=None):
        """Train on sentences X (lists of per-token feature dicts or lists of strings) and label lists y.

        ``X_dev, y_dev``: held-out sentences; their token accuracy is recorded
        at every iteration (``training_log_``), and 'l2sgd' picks its step size by it.
        Training data with a single label gives a model that predicts it everywhere, as sklearn-crfsuite's.
        """
        from ..solvers import entry
        from ..training import DEFAULT_TOL, train
        if (X_dev is None) != (y_dev is None):
            raise ValueError("Pass both X_dev and y_dev to use the holdout data")
        solver = self.solver_name()
        C, penalty, l1_ratio = crfsuite_regularization(self.c1, self.c2)
        extra = {}
        if penalty != "l2":
            extra = {"penalty": penalty, "l1_ratio": l1_ratio}
            if solver == "lbfgs":
                solver = "owlqn"            # CRFsuite's lbfgs with c1 > 0 is OWL-QN too
        min_freq = float(self._number("min_freq", 0.0))
        max_iter = int(self._number("max_iterations", DEFAULT_MAX_ITERATIONS, integral=True))
        tol = float(self._number("epsilon", DEFAULT_TOL))
        period = int(self._number("period", DEFAULT_PERIOD, low=1, integral=True))
        delta = float(self._number("delta", DEFAULT_DELTA))
        self._warn_ignored(solver)
        check_scale_out_params(self)
        options = dict(self.solver_options or {})
        if self.num_memories is not None and solver in ("lbfgs", "owlqn"):
            options["memory"] = int(self._number("num_memories", 6, low=1, integral=True))

        X, y = _check_sequences(X, y, "fit")
        keep = [i for i, xseq in enumerate(X) if len(xseq) > 0]   # empty sentences add nothing to the loss
        if not keep:
            raise ValueError("fit: no non-empty sentences")
        X, y = [X[i] for i in keep], [y[i] for i in keep]
        labels = list(dict.fromkeys(label for yseq in y for label in yseq))   # CRFsuite: order of appearance
        lookup = {label: k for k, label in enumerate(labels)}
        index = {}
        seq_ptr, tok_ptr, tok_attr, tok_val = encode_sequences(X, index, grow=True)
        gold = np.fromiter((lookup[label] for yseq in y for label in yseq), dtype=np.int32, count=int(seq_ptr[-1]))
        K = len(labels)
        attributes = list(index)
        map_ptr, map_label, map_feat, n_state = F.state_feature_map(
            tok_ptr, tok_attr, tok_val, gold, len(attributes), K, bool(self.all_possible_states), min_freq)
        tok_ptr, tok_attr, tok_val = drop_zero_values(tok_ptr, tok_attr, tok_val)   # after feature generation
        space = ChainFeatureSpace(task="crfsuite", attributes=attributes, labels=np.asarray(labels),
                                  map_ptr=map_ptr, map_label=map_label, map_feat=map_feat, n_state=n_state)
        if K == 1:          # one label: P(y | x) = 1 whatever w, so the optimum is w = 0 (nothing to learn)
            return self._fitted_constant(space, solver, C)
        problem = F.ChainProblem(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=tok_val,
                                 map_ptr=map_ptr, map_label=map_label, map_feat=map_feat, n_state=n_state,
                                 labels=np.asarray(labels), gold=gold, attributes=attributes)
        problem.pinned = n_state + F.pinned_transitions(seq_ptr, gold, K, bool(self.all_possible_transitions),
                                                        min_freq)
        evaluate = None
        if X_dev is not None:
            X_dev, y_dev = _check_sequences(X_dev, y_dev, "fit (dev set)")
            dev_ptr, *dev_tokens = encode_sequences(X_dev, index, grow=False)
            dev = (dev_ptr, *drop_zero_values(*dev_tokens))
            gold_dev = np.concatenate([np.asarray(s, dtype=object) for s in y_dev]) if y_dev else np.zeros(0)
            names = np.asarray(labels, dtype=object)

            def evaluate(w):
                pred = names[F.decode(w, n_state, K, map_ptr, map_label, map_feat, *dev)]
                return float(np.mean(pred == gold_dev)) if len(gold_dev) else 0.0
            if solver == "sgd":
                options.setdefault("validation", lambda w: 1.0 - evaluate(w))
                evaluate = None
        model, result = train(problem, C, solver, tol=tol, max_iter=max_iter, time_limit=self.time_limit,
                              random_state=self.random_state, progress=bool(self.verbose), evaluate=evaluate,
                              callback=None if entry(solver).dual else _delta_test(period, delta, C),
                              space=space, warn=False, **extra, **scale_out_keywords(self),
                              **options)
        if not result.converged and result.stop_reason != "callback":     # CRFsuite's delta test is a stop
            warnings.warn(result.advice or f"{solver} stopped: {result.stop_reason}", ConvergenceWarning,
                          stacklevel=2)
        self._set_model(space, model.w, C=C)
        self.n_iter_ = int(result.iterations)
        self.objective_ = float(result.f) / C
        self.trace_ = result.trace
        self.training_log_ = TrainingLog(result.trace, C)
        if self.model_filename:
            self.save(self.model_filename)
        return self

    def _fitted_constant(self, space, solver, C):
        """Training data with a single label, which sklearn-crfsuite trains too: the log-likelihood is 0 for
        every w (the one label sequence has probability 1), so the regularized optimum is w = 0, no solver
        runs, and the model gives that label to every token (marginals 1, no non-zero feature), as the
        parsers' arc labeller does with one DEPREL (docs/decisions/0061, 0063)."""
        from ..trace import Trace
        self._set_model(space, np.zeros(space.n_state + 1), C=C)
        self.n_iter_, self.objective_ = 0, 0.0
        self.trace_ = Trace(solver=solver)
        self.training_log_ = TrainingLog(self.trace_, C)
        if self.model_filename:
            self.save(self.model_filename)
        return self

    def _set_model(self, space, w, C=None):
        self.space_ = space
        self.model_w_ = np.asarray(w, dtype=np.float64)
        self.C_ = C
        self.__dict__.pop("_info", None)

    # ------------------------------------------------------------------ prediction
    def _fitted(self):
        if "model_w_" not in self.__dict__:
            if self.model_filename:                  # sklearn-crfsuite: model_filename names a model to use
                fitted = type(self).load(self.model_filename)
                self._set_model(fitted.space_, fitted.model_w_, C=fitted.C_)
            else:
                raise not_fitted(self)
        return self.space_, self.model_w_

    def _space_arrays(self):
        s = self.space_
        return s.n_state, s.n_labels, s.map_ptr, s.map_label, s.map_feat

    def _encode(self, X):
        seq_ptr, *tokens = encode_sequences(X, self.space_.attribute_index(), grow=False)
        return (seq_ptr, *drop_zero_values(*tokens))

    def _split(self, flat, seq_ptr):
        return [flat[seq_ptr[i]:seq_ptr[i + 1]] for i in range(len(seq_ptr) - 1)]

    def predict(self, X, constraints=None):
        """Label lists of the sentences X, as a 1-d object array (sklearn-crfsuite's type).

        ``constraints`` (loglin's addition): per sentence None or a list with, per token, None, a label
        (fixed there) or a set of labels (allowed there); the other tokens are decoded consistently."""
        space, w = self._fitted()
        X = list(X)
        out = np.empty(len(X), dtype=object)
        if X:
            seq_ptr, *rest = self._encode(X)
            names = np.asarray([str(x) for x in space.labels], dtype=object)
            if constraints is None:
                ids = F.decode(w, *self._space_arrays(), seq_ptr, *rest)
            else:
                from ..structured.constrained import allowed_labels, constrained_viterbi
                ids = np.empty(int(seq_ptr[-1]), dtype=np.int32)
                constrained_viterbi(seq_ptr, *rest[:2], rest[2] if rest[2] is not None else np.empty(0),
                                    space.map_ptr, space.map_label, space.map_feat, w, space.n_state,
                                    space.n_labels, allowed_labels(constraints, np.diff(seq_ptr), space.labels),
                                    ids)
            for i, part in enumerate(self._split(ids, seq_ptr)):
                out[i] = names[part].tolist()
        return out

    def predict_single(self, xseq, constraints=None):
        """The label list of one sentence (``constraints``: one sentence's, as in :meth:`predict`)."""
        return self.predict([xseq], None if constraints is None else [constraints])[0]

    def predict_n_best(self, X, n=3, constraints=None):
        """Per sentence the n best label lists as [(labels, log-probability), ...], best first (loglin's
        addition; exact k-best Viterbi as CRF++'s ``-n``); ``constraints`` as in :meth:`predict`."""
        from ..structured.nbest import chain_n_best, check_n, n_best_lists
        space, w = self._fitted()
        n = check_n(n)
        X = list(X)
        if not X:
            return []
        seq_ptr, tok_ptr, tok_attr, tok_val = self._encode(X)
        allowed = None
        if constraints is not None:
            from ..structured.constrained import allowed_labels
            allowed = allowed_labels(constraints, np.diff(seq_ptr), space.labels)
        labels, scores = chain_n_best(w, *self._space_arrays(), seq_ptr, tok_ptr, tok_attr, tok_val, n=n,
                                      allowed=allowed)
        return n_best_lists(labels, scores, seq_ptr, space.labels)

    def predict_n_best_single(self, xseq, n=3, constraints=None):
        return self.predict_n_best([xseq], n, None if constraints is None else [constraints])[0]

    def predict_marginals(self, X):
        """P(label) at every token: per sentence a list of {label: probability} dicts."""
        space, w = self._fitted()
        X = list(X)
        out = np.empty(len(X), dtype=object)
        if X:
            seq_ptr, *rest = self._encode(X)
            mu = F.marginals(w, *self._space_arrays(), seq_ptr, *rest)
            names = [str(x) for x in space.labels]
            for i, block in enumerate(self._split(mu, seq_ptr)):
                out[i] = [dict(zip(names, row.tolist())) for row in block]
        return out

    def predict_marginals_single(self, xseq):
        return self.predict_marginals([xseq])[0]

    def score(self, X, y):
        """Token accuracy of predict(X) against y (sklearn-crfsuite's score)."""
        from .metrics import flat_accuracy_score
        return flat_accuracy_score(y, self.predict(X))

    # ------------------------------------------------------------------ inspection
    @property
    def classes_(self):
        """Labels, in the order CRFsuite gives them (first appearance in training)."""
        return [str(x) for x in self._fitted()[0].labels]

    def _weights(self):
        info = self.__dict__.get("_info")
        if info is None:
            space, w = self._fitted()
            names = self.classes_
            state = {}
            attr_of = np.repeat(np.arange(len(space.attributes)), np.diff(space.map_ptr))
            for a, y, f in zip(attr_of.tolist(), space.map_label.tolist(), space.map_feat.tolist()):
                if w[f] != 0.0:
                    state[(space.attributes[a], names[y])] = float(w[f])
            K = len(names)
            Tr = w[space.n_state:].reshape(K, K)
            trans = {(names[a], names[b]): float(Tr[a, b]) for a in range(K) for b in range(K) if Tr[a, b] != 0.0}
            info = self.__dict__["_info"] = (state, trans)
        return info

    @property
    def state_features_(self):
        """{(attribute, label): weight} of the non-zero state weights (as CRFsuite's model keeps them)."""
        return dict(self._weights()[0])

    @property
    def transition_features_(self):
        """{(label_from, label_to): weight} of the non-zero transition weights."""
        return dict(self._weights()[1])

    @property
    def attributes_(self):
        """Attributes with at least one non-zero state weight (CRFsuite's model drops the others)."""
        return list(dict.fromkeys(a for a, _ in self._weights()[0]))

    @property
    def num_attributes_(self):
        return len(self.attributes_)

    @property
    def size_(self):
        """Bytes of the model's arrays and attribute names (CRFsuite: of its model file)."""
        space, w = self._fitted()
        names = sum(len(a.encode("utf-8")) for a in space.attributes)
        return int(w.nbytes + space.map_ptr.nbytes + space.map_label.nbytes + space.map_feat.nbytes + names)

    def weights_from(self, state_features, transition_features):
        """loglin's weight vector from sklearn-crfsuite's dicts (e.g. another CRF's state_features_).

        Every (attribute, label) pair with a non-zero weight must be a state feature of this model.
        """
        space, _ = self._fitted()
        names = {label: k for k, label in enumerate(self.classes_)}
        index = space.attribute_index()
        K = len(names)
        w = np.zeros(space.n_features)
        for (attr, label), value in state_features.items():
            a, y = index.get(attr), names.get(label)
            hit = [] if a is None or y is None else \
                [j for j in range(space.map_ptr[a], space.map_ptr[a + 1]) if space.map_label[j] == y]
            if not hit:
                if value != 0:
                    raise ValueError(f"state feature {(attr, label)!r} is not in this model")
                continue
            w[space.map_feat[hit[0]]] = value
        for (a, b), value in transition_features.items():
            w[space.n_state + names[a] * K + names[b]] = value
        return w

    def objective(self, X, y, w=None):
        """CRFsuite's objective -loglik(X, y) + c1 ||w||_1 + c2 ||w||^2 at the model's weights (or ``w``)."""
        from ..structured.objective import ChainObjective
        space, w_model = self._fitted()
        w = w_model if w is None else np.asarray(w, dtype=np.float64)
        X, y = _check_sequences(X, y, "objective")
        seq_ptr, tok_ptr, tok_attr, tok_val = self._encode(X)
        names = {label: k for k, label in enumerate(self.classes_)}
        try:
            gold = np.array([names[label] for yseq in y for label in yseq], dtype=np.int32)
        except KeyError as exc:
            raise ValueError(f"label {exc.args[0]!r} is not among the model's labels") from None
        c1 = 0.0 if self.c1 is None else float(self.c1)
        c2 = DEFAULT_C2 if self.c2 is None else float(self.c2)
        loss = 0.0                              # one label: -log P(y | x) = -log 1 (see _fitted_constant)
        if space.n_labels > 1:
            problem = F.ChainProblem(seq_ptr=seq_ptr, tok_ptr=tok_ptr, tok_attr=tok_attr, tok_val=tok_val,
                                     map_ptr=space.map_ptr, map_label=space.map_label, map_feat=space.map_feat,
                                     n_state=space.n_state, labels=space.labels, gold=gold)
            loss = ChainObjective(problem, 1.0).data_loss(w)
        return float(loss + c1 * np.abs(w).sum() + c2 * (w @ w))

    # ------------------------------------------------------------------ files and pickling
    def save(self, path):
        """Write the fitted model and parameters to ``path`` (loglin's .npz model format, no pickle)."""
        space, w = self._fitted()
        params = {k: v for k, v in self.get_params().items()
                  if v is None or isinstance(v, (bool, int, float, str))}
        meta = {"loglin_format": FORMAT, "format_version": VERSION, "n_state": int(space.n_state),
                "C": self.C_, "params": params}
        save_npz_model(path, meta, {"w": w, "labels": np.asarray(self.classes_, dtype=str),
                                    "attributes": np.asarray(space.attributes, dtype=str),
                                    "map_ptr": space.map_ptr, "map_label": space.map_label,
                                    "map_feat": space.map_feat})

    @classmethod
    def load(cls, path) -> "CRF":
        """A fitted CRF from a file written by :meth:`save` (every array checked; nothing executed)."""
        meta, a = load_npz_model(path, FORMAT, VERSION,
                                 required=("w", "labels", "attributes", "map_ptr", "map_label", "map_feat"))
        try:
            n_state = int(meta["n_state"])
            labels, attributes = a["labels"].astype(str), a["attributes"].astype(str).tolist()
            map_ptr, map_label = a["map_ptr"].astype(np.int64), a["map_label"].astype(np.int32)
            map_feat, w = a["map_feat"].astype(np.int64), a["w"].astype(np.float64)
            params = dict(meta.get("params", {}))
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"{path}: invalid CRF model ({exc})") from None
        K = len(labels)
        if not (K >= 1 and len(set(labels.tolist())) == K and w.ndim == 1 and len(w) == n_state + K * K
                and label_map_is_valid(map_ptr, map_label, map_feat, len(attributes), K, n_state)):
            raise ModelFormatError(f"{path}: inconsistent CRF model arrays")
        valid = set(cls._get_param_names())
        crf = cls(**{k: v for k, v in params.items() if k in valid and k != "model_filename"})
        space = ChainFeatureSpace(task="crfsuite", attributes=attributes, labels=labels, map_ptr=map_ptr,
                                  map_label=map_label, map_feat=map_feat, n_state=n_state)
        C = meta.get("C")
        crf._set_model(space, w, C=float(C) if isinstance(C, (int, float)) else None)
        return crf

    def __getstate__(self):
        state = dict(super().__getstate__())          # scikit-learn adds its version here
        state.pop("_info", None)
        space = state.get("space_")
        if space is not None and "_index" in space.__dict__:       # the attribute index is rebuilt on use
            space = ChainFeatureSpace(**{k: getattr(space, k) for k in
                                         ("task", "attributes", "labels", "map_ptr", "map_label", "map_feat",
                                          "n_state")})
            state["space_"] = space
        return state
