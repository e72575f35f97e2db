"""``loglin.Tagger``: POS taggers, chunkers and NER taggers as scikit-learn style estimators.

    tagger = loglin.Tagger(model="crf", features="ner", C=10.0).fit(X, y, X_dev=X_dev, y_dev=y_dev)
    tagger.predict(X_test)              # list of label lists
    tagger.score(X_test, y_test)        # chunk F1 (IOB labels) or token accuracy, as a fraction
    tagger.save("ner.npz"); loglin.Tagger.load("ner.npz")

X is a list of sentences, each a list of tokens: a word, a tuple of columns
(word, pos, ...) or a dict with "word" (and "pos"); y the label sequences.

``model="crf"`` / ``"m3n"``: a linear-chain CRF or max-margin chain over the
attributes of a template set (``features``: a preset "pos", "chunk", "ner", a
template file, a :class:`~loglin.tagging.templates.TemplateSet` or a list of
template strings). ``model="maxent"``: Ratnaparkhi's Maxent tagger with
beam search; ``features`` "pos" (tokens: words) or "chunk" (tokens: (word,
pos)) are OpenNLP's context generators (:class:`MaxentTaggerModel`), any other
value (the "ner" preset, a template file or set) gives the template Maxent
tagger: the templates' attributes plus the previous one and two labels
(:mod:`loglin.tagging.template_maxent`). A sentence's sample weight multiplies
its tokens' events.

C is LIBLINEAR's scale (the papers' sigma^2; CRFsuite's c2 = 1/(2C)) and
defaults to 10 as for every loglin tagger (docs/decisions/0010).
"""
from __future__ import annotations

import re
import time

import numpy as np

from ..errors import DataContentError, InvalidInputError, ModelFormatError
from ..estimators import _BaseEstimator, _check_sample_weight, _plain, fitted_model
from ..params import (check_training_params, deprecated_fit_options, sequence_estimator_params,
                      sequence_train_keywords, store_params)
from ..sequence_labels import (checked_label_type, constraints_as_strings, labels_as_strings,
                               sequences_from_strings)
from ..model_io import label_map_is_valid, load_npz_model, model_format, save_npz_model
from ..training import DEFAULT_MAX_ITER, DEFAULT_TOL
from .templates import PRESETS, CompiledTemplates, TemplateSet, template_set

FORMAT, VERSION = "loglin-sequence-tagger", 1
MODELS = ("crf", "m3n", "maxent")
MAXENT_FEATURES = ("pos", "chunk")
_IOB = re.compile(r"O|[BI]-\S+")
_IOBES = re.compile(r"O|[BIESLU]-\S+")


def check_sequences(X, y, what: str):
    """(X, y as lists of str, the labels' type: str, int or bool); one error naming the first mismatch."""
    if y is None:
        raise ValueError(f"{what}: y is required")
    X, y = list(X), list(y)
    if len(X) != len(y):
        raise ValueError(f"{what}: {len(X)} sentences in X but {len(y)} label sequences in y")
    if not X:
        raise DataContentError(f"{what}: no sentences")
    for i, (xs, ys) in enumerate(zip(X, y)):
        if isinstance(xs, (str, dict)) or isinstance(ys, str):
            raise ValueError(f"{what}: sentence {i} must be a list of tokens with a list of labels")
        if len(xs) != len(ys):
            raise ValueError(f"{what}: sentence {i} has {len(xs)} tokens but {len(ys)} labels")
        if len(xs) == 0:
            raise ValueError(f"{what}: sentence {i} is empty")
    return (X, *labels_as_strings(y, what))


def is_iob(labels) -> bool:
    """True when every label is O, B-X or I-X and some are not O (chunks, entities)."""
    labels = [str(x) for x in labels]
    return all(_IOB.fullmatch(x) for x in labels) and any(x != "O" for x in labels)


def is_chunk_labels(labels) -> bool:
    """IOB labels, or IOBES (BIOES, BILOU) ones that conlleval reads as IOB2: the score is chunk F1."""
    labels = [str(x) for x in labels]
    if is_iob(labels):
        return True
    from .conlleval import is_iobes
    return all(_IOBES.fullmatch(x) for x in labels) and any(x != "O" for x in labels) and is_iobes([labels])


def sequence_score(y_true, y_pred, kind: str) -> float:
    """``kind`` "f1": conlleval's chunk F1 as a fraction; "accuracy": token accuracy."""
    if kind == "f1":
        from .conlleval import conlleval
        return conlleval([list(map(str, s)) for s in y_true], [list(map(str, s)) for s in y_pred])["f1"] / 100.0
    hits = sum(str(a) == str(b) for ts, ps in zip(y_true, y_pred) for a, b in zip(ts, ps))
    return hits / max(sum(len(s) for s in y_true), 1)


def chunk_f1(y_true, y_pred) -> float:
    """conlleval's F1 of label sequences, as a fraction (for ``sklearn.metrics.make_scorer``)."""
    return sequence_score(y_true, y_pred, "f1")


def token_accuracy(y_true, y_pred) -> float:
    """Share of tokens labelled right (for ``sklearn.metrics.make_scorer``)."""
    return sequence_score(y_true, y_pred, "accuracy")


class Tagger(_BaseEstimator):
    """A sequence labeller (POS, chunks, named entities): CRF, M3N or Maxent, with configurable templates.

    Parameters
    ----------
    model : "crf" (default), "m3n" or "maxent"
    features : preset "pos" (default), "chunk", "ner"; a template file; a TemplateSet; a list of templates
    C : float or None, default None: the model kind's default (loglin.training.default_C: 10 for the CRF
        and the Maxent tagger, 0.1 for M3N chains, whose EG dual does not close its gap at 10;
        docs/decisions/0025). LIBLINEAR's scale (the papers' sigma^2)
    penalty, l1_ratio : "l2" (default), "l1" or "elasticnet" and its L1 share (CRF only for L1)
    solver : "auto" (loglin's default for the model) or a solver serving it
    tol, gap_tol, max_iter, time_limit, clock : stopping (relative gradient norm; dual solvers: relative duality
        gap, None: the model kind's default); the defaults are loglin.training's (docs/decisions/0010)
    warm_start : start from the previous fit's weights when the feature space and labels are the same
    initial_weights : starting weights (e.g. of a model file to resume from); a warm start replaces them
    random_state, verbose : seed of randomized solvers; > 0 shows progress
    callback, checkpoint : :func:`loglin.training.train`'s per-iteration callback and solver-state checkpoint
    all_pairs : a weight for every (attribute, label) pair, not only pairs seen in training
        (None: False for chain models, the task's default for maxent)
    beam, cutoff, rare_threshold, tag_dictionary, iob_constraint : the Maxent tagger's options
        (:meth:`MaxentTaggerModel.train`), unused by chain models
    solver_options : dict of extra keyword arguments of the solver
    backend, client, n_workers : evaluate the CRF / Maxent objective over sentence (context) shards, as
        :class:`loglin.MaxentClassifier`'s (L-BFGS when solver is "auto"; the same model to rounding)

    Attributes
    ----------
    classes_ (labels), coef_ (weights), n_iter_, objective_, trace_ (:class:`loglin.trace.Trace`; with a
    dev set its ``metric`` is the dev score per iteration, a fraction as :meth:`score`; model="maxent":
    in percent with greedy decoding, as :meth:`MaxentTaggerModel.train` records it), score_kind_ ("f1" for IOB or IOBES labels, else
    "accuracy"), templates_ (the compiled templates of a chain model), model_ (ChainModel or
    MaxentTaggerModel).
    """

    def __init__(self, model="crf", features="pos", C=None, *, penalty="l2", l1_ratio=None, solver="auto",
                 tol=DEFAULT_TOL, gap_tol=None, max_iter=DEFAULT_MAX_ITER["chain"], time_limit=None, clock="wall",
                 warm_start=False, initial_weights=None, random_state=0, verbose=0, callback=None, checkpoint=None,
                 all_pairs=None, beam=3, cutoff=None, rare_threshold=None, tag_dictionary=False,
                 iob_constraint=None, solver_options=None, backend=None, client=None, n_workers=None):
        store_params(self, locals())

    # ------------------------------------------------------------------ parameters
    def _check_params(self):
        if self.model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {self.model!r}")
        check_training_params(self, C_may_be_none=True)

    def _C(self) -> float:
        """C, or the model kind's default when None."""
        if self.C is not None:
            return float(self.C)
        from ..training import default_C
        return default_C("tagger", "ll") if self.model == "maxent" else default_C("chain", "ll" if self.model == "crf" else "mm")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, X_dev=None, y_dev=None, **train_options):
        """Fit on sentences X and label sequences y; returns self.

        ``sample_weight``: one non-negative weight per sentence (the multiplier of its loss: 2 is the
        sentence twice). ``X_dev, y_dev``: held-out sentences scored (:attr:`score_kind_`) after every
        iteration into ``trace_``; with ``solver="sgd"`` also the validation error (1 - score) that picks
        eta0. ``train_options``: deprecated (a DeprecationWarning); training settings are constructor
        parameters (``gap_tol``, ``callback``, ``solver_options``, ...). Data with a single label trains a CRF /
        M3N that gives it to every token (w = 0, no solver run); a Maxent tagger needs two labels.
        """
        train_options = deprecated_fit_options(self, train_options)
        self._check_params()
        X, y, label_type = check_sequences(X, y, "fit")
        if (X_dev is None) != (y_dev is None):
            raise ValueError("fit: pass both X_dev and y_dev, or neither")
        if X_dev is not None:
            X_dev, y_dev, _ = check_sequences(X_dev, y_dev, "fit (dev set)")
        weight = _check_sample_weight(sample_weight, len(X))
        labels = sorted({label for ys in y for label in ys})
        if len(labels) < 2 and self.model == "maxent":
            raise DataContentError(f"need at least two labels to train a Maxent tagger, got {labels} (a CRF or M3N "
                                   "tagger gives the one label to every token)")
        self.score_kind_ = "f1" if is_chunk_labels(labels) else "accuracy"
        if self.model == "maxent" and _opennlp_generator(self.features):
            self._fit_maxent(X, y, weight, X_dev, y_dev, train_options)
        elif self.model == "maxent":
            self._fit_template_maxent(X, y, labels, weight, X_dev, y_dev, train_options)
        else:
            self._fit_chain(X, y, labels, weight, X_dev, y_dev, train_options)
        self._set_label_type(label_type)
        return self

    def _set_label_type(self, label_type: str) -> None:
        """The fitted or loaded labels (strings inside) given back in the user's type."""
        self.label_type_ = label_type
        self.classes_ = sequences_from_strings([list(map(str, self.classes_))], label_type)[0]

    def _fit_chain(self, X, y, labels, weight, X_dev, y_dev, train_options):
        from ..solvers import canonical
        from ..structured.crf_features import chain_problem, chain_space
        from ..structured.model import ChainModel
        from ..training import train
        start = time.perf_counter()
        compiled = CompiledTemplates(template_set(self.features))
        encoded = compiled.fit(X)
        lookup = {label: k for k, label in enumerate(labels)}
        gold = np.fromiter((lookup[label] for ys in y for label in ys), dtype=np.int32, count=int(encoded[0][-1]))
        classes = np.asarray(labels)
        if len(classes) == 1:
            space = chain_space("templates", encoded, gold, compiled.attribute_names(), classes,
                                all_pairs=bool(self.all_pairs))
            model, result = _one_label_model(space, self)
            self._set_result(model, compiled, [str(c) for c in classes], result, time.perf_counter() - start)
            return
        problem, space = chain_problem("templates", encoded, gold, compiled.attribute_names(), classes,
                                       all_pairs=bool(self.all_pairs), weight=weight)
        extract_seconds = time.perf_counter() - start
        keywords = sequence_train_keywords(self, train_options)
        previous = getattr(self, "model_", None)
        if (self.warm_start and getattr(self, "templates_", None) is not None and previous is not None
                and len(previous.w) == space.n_features and np.array_equal(previous.labels, classes)
                and _same_compiled(self.templates_, compiled) and np.array_equal(previous.space.map_ptr, space.map_ptr)
                and np.array_equal(previous.space.map_label, space.map_label)):
            keywords["w0"] = previous.w
        evaluate = None
        if X_dev is not None:
            dev = compiled.transform(X_dev)
            kind = self.score_kind_

            def evaluate(w):
                return sequence_score(y_dev, ChainModel(space=space, w=w).decode_labels(dev), kind)
            if self.solver != "auto" and canonical(self.solver) == "sgd":
                keywords.setdefault("validation", lambda w: 1.0 - evaluate(w))     # the paper's eta0 rule
        loss = "ll" if self.model == "crf" else "mm"
        model, result = train(problem, self._C(), self.solver, loss=loss, space=space, evaluate=evaluate, **keywords)
        model.model = self.model
        self._set_result(model, compiled, [str(c) for c in classes], result, extract_seconds)

    def _fit_maxent(self, X, y, weight, X_dev, y_dev, train_options):
        from ..training import DEFAULT_SOLVERS
        from .tagger import MaxentTaggerModel
        task = self.features
        sentences = _maxent_sentences(X, y, task)
        dev = None if X_dev is None else _maxent_sentences(X_dev, y_dev, task)
        keywords = sequence_train_keywords(self, train_options)
        previous = getattr(self, "model_", None)
        if self.warm_start and previous is not None and type(previous).__name__ == "MaxentTaggerModel":
            keywords["w0"] = previous.w
        solver = DEFAULT_SOLVERS["tagger"] if self.solver == "auto" else self.solver
        if self.solver == "auto" and "backend" in keywords:
            solver = "lbfgs"        # a sharded objective has no dual state for eg-acc
        model = MaxentTaggerModel.train(sentences, task, C=self._C(), solver=solver, cutoff=self.cutoff,
                                        rare_threshold=self.rare_threshold, beam=int(self.beam),
                                        tag_dictionary=bool(self.tag_dictionary), iob_constraint=self.iob_constraint,
                                        all_pairs=self.all_pairs, evaluate=dev,
                                        sample_weight=None if np.all(weight == 1.0) else weight, **keywords)
        self._set_result(model, None, list(model.labels), model.result, model.info.get("extract_seconds", 0.0))

    def _fit_template_maxent(self, X, y, labels, weight, X_dev, y_dev, train_options):
        """Ratnaparkhi's tagger over the template attributes plus the previous one and two labels (events per
        token, each weighted by its sentence's weight), decoded by beam search (:mod:`.template_maxent`)."""
        from ..training import DEFAULT_SOLVERS, train
        from .template_maxent import TemplateHistoryFeatures, TemplateMaxentModel
        start = time.perf_counter()
        lookup = {label: k for k, label in enumerate(labels)}
        gold = np.fromiter((lookup[label] for ys in y for label in ys), dtype=np.int32)
        token_weight = np.repeat(weight, [len(ys) for ys in y])
        features, problem = TemplateHistoryFeatures.fit(
            CompiledTemplates(template_set(self.features)), X, gold, labels,
            None if np.all(token_weight == 1.0) else token_weight, all_pairs=bool(self.all_pairs))
        extract_seconds = time.perf_counter() - start
        iob = is_iob(labels) if self.iob_constraint is None else bool(self.iob_constraint)
        model = TemplateMaxentModel(features, np.zeros(problem.n_features), problem.map_ptr, problem.map_label,
                                    problem.map_feat, beam=int(self.beam), iob_constraint=iob)
        keywords = sequence_train_keywords(self, train_options)
        previous = getattr(self, "model_", None)
        if (self.warm_start and isinstance(previous, TemplateMaxentModel) and len(previous.w) == problem.n_features
                and _same_compiled(previous.features.compiled, features.compiled)
                and all(np.array_equal(a, b) for a, b in zip(previous.features.history_keys, features.history_keys))
                and np.array_equal(previous.map_ptr, model.map_ptr) and np.array_equal(previous.map_label,
                                                                                     model.map_label)):
            keywords["w0"] = previous.w
        evaluate = None
        if X_dev is not None:
            kind = self.score_kind_

            def evaluate(w):
                model.w = w
                return sequence_score(y_dev, model.tag(X_dev), kind)
        solver = DEFAULT_SOLVERS["tagger"] if self.solver == "auto" else self.solver
        _, result = train(problem, self._C(), solver, evaluate=evaluate, **keywords)
        model.w, model.result = result.w, result
        self._set_result(model, features.compiled, list(features.labels), result, extract_seconds)

    def _set_result(self, model, templates, classes, result, extract_seconds):
        """The fitted attributes: the trained ``model`` with its ``templates`` (None for OpenNLP's features),
        ``classes`` and the training ``result``."""
        self.templates_ = templates
        self.model_ = model
        self.classes_ = classes
        self.coef_ = model.w
        self.n_iter_ = int(result.iterations)
        self.objective_ = float(result.f)
        self.trace_ = result.trace
        self.result_ = result
        self.extract_seconds_ = float(extract_seconds)

    # ------------------------------------------------------------------ prediction
    def _fitted(self):
        return fitted_model(self)

    def predict(self, X, constraints=None, **decoding):
        """The label sequence of every sentence, labels in the type fit was given (str, int or bool)."""
        kind = getattr(self, "label_type_", "str")
        return sequences_from_strings(self._predict_strings(X, constraints_as_strings(constraints, kind), **decoding),
                                      kind)

    def _predict_strings(self, X, constraints=None, **decoding):
        """The label sequence of every sentence (lists of str). ``decoding``: the Maxent tagger's
        ``beam``, ``tag_dictionary``, ``iob_constraint`` overrides.

        ``constraints`` (chain models): per sentence None or a list with, per token, None (free), a label (fixed
        there) or a set of labels (allowed there); the other tokens are decoded consistently (constrained
        Viterbi, :mod:`loglin.structured.constrained`)."""
        model = self._fitted()
        X = list(X)
        if self.templates_ is None or self.model == "maxent":
            if constraints is not None:
                raise ValueError("constraints need a chain model (model='crf' or 'm3n'); the Maxent tagger's "
                                 "beam search does not take fixed labels")
            if self.templates_ is not None:                     # the template Maxent tagger
                return model.tag(X, **decoding)
            return model.tag(_maxent_inputs(X, model.task), **decoding) if X else []
        if not X:
            return []
        return model.decode_labels(self.templates_.transform(X), constraints)

    def predict_n_best(self, X, n=3, constraints=None, **decoding):
        """Per sentence the n best label sequences as [(labels, score), ...], labels in the type fit was given
        (see :meth:`_predict_n_best_strings`)."""
        kind = getattr(self, "label_type_", "str")
        nbest = self._predict_n_best_strings(X, n, constraints_as_strings(constraints, kind), **decoding)
        if kind == "str":
            return nbest
        return [[(sequences_from_strings([labels], kind)[0], score) for labels, score in sent] for sent in nbest]

    def _predict_n_best_strings(self, X, n=3, constraints=None, **decoding):
        """Per sentence the n best label sequences as [(labels, score), ...], best first (fewer when a sentence
        has fewer). CRF: exact k-best Viterbi, score log P(labels | sentence); M3N: the same search, score
        w . f; Maxent: the beam's final hypotheses (a beam of at least n), score the sum of the tokens'
        log P(label | context). ``constraints`` as in :meth:`predict` (chain models); ``decoding``:
        ``iob_constraint`` (all models: I-X only after B-X / I-X; off for chain models unless given) and the
        Maxent tagger's ``tag_dictionary``."""
        from ..structured.nbest import check_n
        model, n = self._fitted(), check_n(n)
        X = list(X)
        if not X:
            return []
        if self.templates_ is None or self.model == "maxent":
            if constraints is not None:
                raise ValueError("constraints need a chain model (model='crf' or 'm3n'); the Maxent tagger's "
                                 "beam search does not take fixed labels")
            decoding.pop("beam", None)                  # the beam is max(n, the model's)
            if self.templates_ is not None:
                return model.tag_n_best(X, n, **decoding)
            return model.tag_n_best(_maxent_inputs(X, model.task), n, **decoding)
        unknown = set(decoding) - {"iob_constraint", "beam", "tag_dictionary"}
        if unknown:
            raise TypeError(f"predict_n_best got unexpected keyword arguments {sorted(unknown)}")
        return model._n_best(*self.templates_.transform(X), n, constraints,
                             bool(decoding.get("iob_constraint") or False))

    def predict_marginals(self, X):
        """P(label | sentence) at every token (forward-backward; chain models): per sentence an (n, K) array,
        columns in the order of ``classes_``. For an M3N these are its scores' marginals taken as a CRF."""
        model = self._fitted()
        if self.templates_ is None or self.model == "maxent":
            raise ValueError("predict_marginals needs a chain model (model='crf' or 'm3n')")
        from ..crfsuite.features import marginals
        X = list(X)
        if not X:
            return []
        seq_ptr, tok_ptr, tok_attr = self.templates_.transform(X)
        s = model.space
        mu = marginals(model.w, s.n_state, s.n_labels, s.map_ptr, s.map_label, s.map_feat, seq_ptr, tok_ptr,
                       tok_attr, None)
        return [mu[seq_ptr[i]:seq_ptr[i + 1]] for i in range(len(seq_ptr) - 1)]

    def score(self, X, y, sample_weight=None):
        """``score_kind_`` of predict(X) against y: conlleval's chunk F1 (as a fraction) when the labels are
        IOB chunks or entities, else token accuracy; ``sample_weight`` (per sentence) weighs tokens for
        accuracy only."""
        self._fitted()
        X, y, _ = check_sequences(X, y, "score")
        guess = self._predict_strings(X)
        if self.score_kind_ == "f1" or sample_weight is None:
            return sequence_score(y, guess, self.score_kind_)
        weight = _check_sample_weight(sample_weight, len(X))
        hits = sum(wi * sum(a == b for a, b in zip(ts, ps)) for wi, ts, ps in zip(weight, y, guess))
        return float(hits / max(sum(wi * len(ts) for wi, ts in zip(weight, y)), 1e-300))

    # ------------------------------------------------------------------ files (arrays and JSON, never code)
    def save(self, path) -> None:
        """Write the fitted tagger. Template models (chain or Maxent): loglin's "loglin-sequence-tagger" file with
        the template set as text and its vocabularies; OpenNLP's generators: the MaxentTaggerModel file (`loglin
        tag` reads both)."""
        model = self._fitted()
        label_type = getattr(self, "label_type_", "str")
        if self.templates_ is None:
            model.info["label_type"] = label_type
            model.save(path)
            return
        maxent = self.model == "maxent"
        t_meta, t_arrays = (model.features if maxent else self.templates_).state()
        maps = model if maxent else model.space        # the attribute -> (label, weight) map
        own = {"beam": model.beam, "iob_constraint": model.iob_constraint} if maxent else {"n_state": int(maps.n_state)}
        meta = {"loglin_format": FORMAT, "format_version": VERSION, "params": {k: v for k, v in self.get_params().items()
                                                                               if _plain(v)},
                "model": self.model, "templates": t_meta, "score_kind": self.score_kind_, "objective": self.objective_,
                "n_iter": self.n_iter_, "C": self._C(), "label_type": label_type, **own}
        arrays = {"w": model.w, "labels": np.asarray(list(map(str, self.classes_)), dtype=str), "map_ptr": maps.map_ptr,
                  "map_label": maps.map_label, "map_feat": maps.map_feat, **t_arrays}
        save_npz_model(path, meta, arrays)

    @classmethod
    def load(cls, path) -> "Tagger":
        """A fitted Tagger from :meth:`save`'s file (or any MaxentTaggerModel file); arrays are checked."""
        from ..structured.crf_features import ChainFeatureSpace
        from ..structured.model import ChainModel
        if model_format(path) == "loglin-tagger":
            from .tagger import MaxentTaggerModel
            model = MaxentTaggerModel.load(path)
            info = model.info
            tagger = cls(model="maxent", features=model.task, C=float(info.get("C", 10.0)),
                         solver=str(info.get("solver", "auto")), beam=model.beam,
                         tag_dictionary=model.tag_dictionary, iob_constraint=model.iob_constraint)
            tagger.templates_, tagger.model_, tagger.classes_, tagger.coef_ = None, model, list(model.labels), model.w
            tagger.score_kind_ = "f1" if model.task == "chunk" else "accuracy"
            tagger.n_iter_, tagger.objective_ = int(info.get("iterations", 0)), float(info.get("objective", np.nan))
            tagger._set_label_type(checked_label_type(info.get("label_type"), path))
            return tagger
        meta, a = load_npz_model(path, FORMAT, VERSION, required=("w", "labels", "map_ptr", "map_label", "map_feat",
                                                                   "template_keys", "template_offsets"))
        from .template_maxent import TemplateHistoryFeatures, TemplateMaxentModel
        try:
            kind, params = str(meta["model"]), dict(meta.get("params", {}))
            labels = a["labels"].astype(str)
            map_ptr, map_label = a["map_ptr"].astype(np.int64), a["map_label"].astype(np.int32)
            map_feat, w = a["map_feat"].astype(np.int64), a["w"].astype(np.float64)
            K = len(labels)
            if kind == "maxent":
                features = TemplateHistoryFeatures.from_state(meta["templates"], a, labels.tolist(), str(path))
                compiled, n_inputs, n_weights = features.compiled, features.n_predicates, len(w)
                model = TemplateMaxentModel(features, w, map_ptr, map_label, map_feat, beam=int(meta.get("beam", 3)),
                                            iob_constraint=bool(meta.get("iob_constraint", False)))
                own_ok = model.beam >= 1
            else:
                compiled = CompiledTemplates.from_state(meta["templates"], a, str(path))
                n_weights = int(meta["n_state"])
                n_inputs, own_ok = compiled.n_attributes, kind in ("crf", "m3n") and len(w) == n_weights + K * K
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ModelFormatError):
                raise
            raise ModelFormatError(f"{path}: invalid tagger model ({exc.__class__.__name__}: {exc})") from None
        if not (own_ok and K >= (2 if kind == "maxent" else 1) and w.ndim == 1
                and label_map_is_valid(map_ptr, map_label, map_feat, n_inputs, K, n_weights)):
            raise ModelFormatError(f"{path}: inconsistent tagger model arrays")
        valid = set(cls._get_param_names())
        params = {k: v for k, v in params.items() if k in valid}
        params["model"] = kind
        features_name = params.get("features")
        if not (isinstance(features_name, str) and features_name in PRESETS
                and not (kind == "maxent" and _opennlp_generator(features_name))):
            params["features"] = compiled.templates       # a file or a list: the saved set itself
        tagger = cls(**params)
        if kind != "maxent":
            space = ChainFeatureSpace(task="templates", attributes=compiled.attribute_names(), labels=labels,
                                      map_ptr=map_ptr, map_label=map_label, map_feat=map_feat, n_state=n_weights)
            model = ChainModel(space=space, w=w, model=kind, C=float(meta.get("C", 1.0)))
        tagger.templates_, tagger.model_, tagger.classes_, tagger.coef_ = compiled, model, labels.tolist(), w
        tagger.score_kind_ = str(meta.get("score_kind", "accuracy"))
        tagger.n_iter_, tagger.objective_ = int(meta.get("n_iter", 0)), float(meta.get("objective", np.nan))
        tagger._set_label_type(checked_label_type(meta.get("label_type"), path))
        return tagger


def train_chain_model(train_sentences, task="chunk", model="crf", solver=None, C=None, *,
                      validation_sentences=None, return_result=False, **options):
    """A CRF (``model="crf"``) or M3N (``"m3n"``) chain tagger of the task's preset features:
    ``Tagger(model, features=task, ...).fit`` in one call, returned as a :class:`ChainModel` (and the
    driver's Result with ``return_result``).

    ``task`` "chunk" (tokens ``(word, pos, chunk)``, CoNLL-2000) or "pos" (tokens ``(word, tag)``). C is in
    LIBLINEAR scale (CRFsuite's c2 = 1/(2C), Collins et al.'s C' = 1/C); ``solver``, ``C`` and the stopping
    rule default to loglin.training's values for chain models. ``options``: the Tagger's parameters (``tol``,
    ``max_iter``, ``random_state``, ...) and further keywords of :func:`loglin.training.train` (solver
    options). ``validation_sentences`` (labelled): the Tagger's dev set (its score in the trace; SGD picks
    eta0 by it)."""
    from ..solvers import check
    from ..structured.crf_features import check_sentences, gold_column
    from ..structured.model import MODELS as CHAIN_MODELS
    from ..training import default_solver
    if model not in CHAIN_MODELS:
        raise InvalidInputError(f"model must be one of {CHAIN_MODELS}, got {model!r}")
    loss = "ll" if model == "crf" else "mm"
    solver = default_solver("chain", loss) if solver is None else solver
    check(solver, "chain", loss)
    check_sentences(train_sentences, task)
    tagger = Tagger(model=model, features=task, C=C, solver=solver,
                    **sequence_estimator_params(Tagger, options))
    column = gold_column(task)
    X, y = _columns_and_labels(train_sentences, column)
    dev = {} if validation_sentences is None else dict(zip(("X_dev", "y_dev"),
                                                           _columns_and_labels(validation_sentences, column)))
    trained = tagger.fit(X, y, **dev).model_
    trained.space.task = task                # a ChainModel file: encoded by crf_features' attribute names
    return (trained, tagger.result_) if return_result else trained


def _one_label_model(space, tagger):
    """(ChainModel, Result) of training data with a single label: P(y | x) = 1 for every weight vector (the one
    label sequence is the only one), so the loss is 0 and the regularized optimum w = 0, reached without a
    solver; every token gets the label (as sklearn-crfsuite's CRF, and the parser's one-DEPREL labeller:
    docs/decisions/0061, 0063)."""
    from ..solvers.base import Result
    from ..structured.model import ChainModel
    from ..trace import Trace
    from ..training import default_solver
    loss = "ll" if tagger.model == "crf" else "mm"
    solver = default_solver("chain", loss) if tagger.solver == "auto" else str(tagger.solver)
    w = np.zeros(space.n_features)
    model = ChainModel(space=space, w=w, model=tagger.model, C=tagger._C(), solver=solver)
    return model, Result(w=w, f=0.0, grad_norm=0.0, iterations=0, train_seconds=0.0, converged=True,
                         stop_reason="one label: nothing to learn", trace=Trace(solver=solver), solver=solver)


def _columns_and_labels(sentences, column):
    return [[tuple(t[:column]) for t in s] for s in sentences], [[str(t[column]) for t in s] for s in sentences]


def _opennlp_generator(features) -> bool:
    """model='maxent' with features "pos" / "chunk": OpenNLP's context generators (MaxentTaggerModel); any
    other features are templates (the template Maxent tagger)."""
    return isinstance(features, str) and features in MAXENT_FEATURES


def _same_compiled(a: CompiledTemplates, b: CompiledTemplates) -> bool:
    """The same attribute ids: same templates, vocabularies and keys."""
    return (a.templates == b.templates and a.vocab == b.vocab and np.array_equal(a.offsets, b.offsets)
            and all(np.array_equal(x, y) for x, y in zip(a.keys, b.keys)))


def _maxent_inputs(X, task):
    """Sentences as MaxentTaggerModel.tag takes them: POS words, chunking (word, pos) pairs."""
    from .templates import token_columns
    out = []
    for sentence in X:
        cols = [token_columns(t) for t in sentence]
        out.append([c[0] for c in cols] if task == "pos" else [tuple(c[:2]) for c in cols])
    return out


def _maxent_sentences(X, y, task):
    """Labelled sentences as MaxentTaggerModel.train takes them."""
    return [[(w, label) if task == "pos" else (*w, label) for w, label in zip(xs, ys)]
            for xs, ys in zip(_maxent_inputs(X, task), y)]


__all__ = ["Tagger", "TemplateSet", "chunk_f1", "token_accuracy", "sequence_score", "is_iob", "train_chain_model"]
