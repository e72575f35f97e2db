"""``loglin.Parser``: the arc-factored dependency parser (Collins et al. 2008, section 8) as an estimator.

    parser = loglin.Parser(model="crf", C=0.1).fit(X, y, X_dev=X_dev, y_dev=y_dev)
    parser.predict(X_test)          # one int array of heads per sentence (0 = root)
    parser.predict_labels(X_test)   # the DEPREL of each predicted arc (lists of str; needs labelled training data)
    parser.predict_n_best(X_test, 5)    # per sentence the 5 best trees [(heads, score), ...], best first
    parser.score(X_test, y_test)    # UAS as a fraction, punctuation included; scoring="las": LAS

X is a list of sentences, each a list of tokens (word, pos), (word, cpos, pos)
or a CoNLL-X / CoNLL-U row of 10 fields, or a :class:`loglin.data.conll.Sentence`
(then y may be None: the sentences' own heads). y: per sentence the head of
every word (1-based token ids, 0 = root). Non-projective training trees are
skipped (``n_skipped_``) by the parser, not by the arc labeller: when the training
sentences carry DEPREL labels (Sentence objects or CoNLL rows, some label other than
"_"), :meth:`Parser.fit` also trains :mod:`~loglin.parsing.labeller` on all their gold arcs.
:func:`train_parser` is the same fit as one call returning the model.
The defaults (C, solver, tol, max_iter) are :mod:`loglin.training`'s for tree models; with a dev set the
trace's ``metric`` is the dev UAS in percent, as :func:`~loglin.parsing.model.uas` reports it
(:meth:`Parser.score` alone is a fraction, scikit-learn's convention).
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ..data.conll import Sentence
from ..estimators import _BaseEstimator, _check_sample_weight, _plain, fitted_model
from ..params import (check_training_params, deprecated_fit_options, sequence_estimator_params,
                      sequence_train_keywords, store_params)
from ..errors import ConvergenceWarning, DataContentError, InvalidInputError, ModelFormatError
from ..training import DEFAULT_C, DEFAULT_MAX_ITER, DEFAULT_TOL
from .labeller import ArcLabeller, has_labels, one_label
from .model import MODELS, ParserModel, check_options, dev_uas_metric, training_info


def as_sentence(tokens, heads=None, where="sentence") -> Sentence:
    """A :class:`Sentence` from token tuples (heads -1 when not given)."""
    if isinstance(tokens, Sentence):
        if heads is None:
            return tokens
        forms, cpos, pos = tokens.forms, tokens.cpos, tokens.pos          # the given heads replace its own
        lemmas, feats, deprels = tokens.lemmas, tokens.feats, tokens.deprels
    else:
        if isinstance(tokens, (str, dict)) or len(tokens) == 0:
            raise ValueError(f"{where} must be a non-empty list of tokens")
        forms, cpos, pos, lemmas, feats, deprels = [], [], [], [], [], []
        for t in tokens:
            extra = ("_", "_", "_")                     # lemma, feats, deprel
            if isinstance(t, dict):
                extra = tuple(str(t.get(k, "_")) for k in ("lemma", "feats", "deprel"))
                t = (t["word"], t.get("cpos", t["pos"]), t["pos"])
            if isinstance(t, str) or len(t) not in (2, 3, 10):
                raise ValueError(f"{where}: a token must be (word, pos), (word, cpos, pos) or a CoNLL row of 10 "
                                 f"fields, got {t!r}")
            if len(t) == 10:
                extra = (str(t[2]), str(t[5]), str(t[7]))
                t = (t[1], t[3], t[4] if t[4] != "_" else t[3])
            elif len(t) == 2:
                t = (t[0], t[1], t[1])
            forms.append(str(t[0]))
            cpos.append(str(t[1]))
            pos.append(str(t[2]))
            lemmas.append(extra[0])
            feats.append(extra[1])
            deprels.append(extra[2])
    n = len(forms)
    if heads is None:
        heads = np.full(n, -1, dtype=np.int32)
    else:
        heads = np.asarray(heads)
        if heads.shape != (n,) or heads.dtype.kind not in "iu":
            raise ValueError(f"{where}: {n} words need {n} integer heads, got {heads.tolist()}")
        heads = heads.astype(np.int32)
    return Sentence(ids=np.arange(1, n + 1, dtype=np.int32), forms=list(forms), lemmas=list(lemmas), cpos=list(cpos),
                    pos=list(pos), feats=list(feats), heads=heads, deprels=list(deprels))


def _sentences(X, y, what):
    X = list(X)
    if not X:
        raise DataContentError(f"{what}: no sentences")
    if y is None:
        if not all(isinstance(s, Sentence) for s in X):
            raise ValueError(f"{what}: y (the heads) is required unless X holds loglin.data.conll.Sentence objects")
        return X
    y = list(y)
    if len(X) != len(y):
        raise ValueError(f"{what}: {len(X)} sentences in X but {len(y)} head arrays in y")
    return [as_sentence(s, h, f"{what}: sentence {i}") for i, (s, h) in enumerate(zip(X, y))]


class Parser(_BaseEstimator):
    """Arc-factored projective dependency parser (CRF or M3N), trained by any tree solver.

    Parameters: ``model`` "crf" / "m3n"; ``C`` (LIBLINEAR scale; default DEFAULT_C["tree"] = 0.1 = Collins et
    al.'s C' = 10);
    ``solver`` "auto" (CRF: EG; M3N: bcfw) or "eg", "eg-batch", "lbfgs", "sgd" (CRF), "bcfw", "cutting-plane" (M3N); ``tol``,
    ``gap_tol`` (None: the default), ``max_iter`` (epochs of EG; default DEFAULT_MAX_ITER["tree"]), ``time_limit``,
    ``clock``; ``cutoff`` (keep features seen on >= cutoff gold arcs); ``penalty``, ``l1_ratio``; ``warm_start``;
    ``initial_weights`` (starting weights; a warm start replaces them); ``random_state``; ``verbose``;
    ``callback``, ``checkpoint`` (train()'s); ``solver_options``.

    Attributes: ``model_`` (:class:`ParserModel`), ``coef_``, ``n_iter_``, ``objective_``, ``trace_``
    (dev UAS in percent per iteration as ``metric`` when a dev set is given), ``n_skipped_`` (non-projective trees),
    ``labels_`` (the DEPREL labels of the arc labeller, None when the training data had none). The labeller is a
    Maxent trained with the same ``C``, ``tol``, ``penalty``, ``l1_ratio`` and ``random_state`` by the automatic
    Maxent solver, after the parser and within what is left of ``time_limit`` (:func:`labeller_after_parser`).
    """

    def __init__(self, model="crf", C=DEFAULT_C["tree"], *, penalty="l2", l1_ratio=None, solver="auto",
                 tol=DEFAULT_TOL, gap_tol=None, max_iter=DEFAULT_MAX_ITER["tree"], time_limit=None, clock="wall",
                 cutoff=1, warm_start=False, initial_weights=None, random_state=0, verbose=0, callback=None,
                 checkpoint=None, solver_options=None):
        store_params(self, locals())

    def _check_params(self):
        if self.model not in MODELS:
            raise InvalidInputError(f"model must be one of {MODELS}, got {self.model!r}")
        check_training_params(self, integers=(("cutoff", 1),))
        check_options(self.model, self.solver)          # before the features are built

    def fit(self, X, y=None, sample_weight=None, X_dev=None, y_dev=None, **train_options):
        """Fit on sentences X with heads y; ``sample_weight``: one weight per sentence (its loss multiplier);
        ``X_dev, y_dev``: a held-out treebank whose UAS is traced; ``train_options``: deprecated (a
        DeprecationWarning); training settings are constructor parameters (``gap_tol``, ``callback``, ...)."""
        from ..training import train
        from .problem import build_tree_problem
        train_options = deprecated_fit_options(self, train_options)
        self._check_params()
        sentences = _sentences(X, y, "fit")
        weight = _check_sample_weight(sample_weight, len(sentences))
        dev = None if X_dev is None else _sentences(X_dev, y_dev, "fit (dev set)")
        start = time.perf_counter()
        problem, space, skipped = build_tree_problem(sentences, cutoff=int(self.cutoff), weight=weight)
        build_seconds = time.perf_counter() - start
        keywords = sequence_train_keywords(self, train_options)
        previous = getattr(self, "model_", None)
        if (self.warm_start and previous is not None and len(previous.w) == space.n_features
                and np.array_equal(previous.space.keys, space.keys)):
            keywords["w0"] = previous.w
        model, result = train(problem, float(self.C), self.solver, loss="ll" if self.model == "crf" else "mm",
                              space=space, evaluate=dev_uas_metric(dev, space),
                              info=training_info(problem.n_sentences, skipped, space, build_seconds), **keywords)
        model.labeller = labeller_after_parser(sentences, result, started=start, C=float(self.C),
                                               cutoff=int(self.cutoff), sample_weight=weight, tol=float(self.tol),
                                               penalty=self.penalty, l1_ratio=self.l1_ratio,
                                               random_state=keywords["random_state"], time_limit=self.time_limit,
                                               clock=self.clock)
        self.model_, self.coef_ = model, model.w
        self.n_iter_, self.objective_, self.trace_ = int(result.iterations), float(result.f), result.trace
        self.result_, self.n_skipped_ = result, skipped
        self.labels_ = None if model.labeller is None else model.labeller.labels
        return self

    def _fitted(self) -> ParserModel:
        return fitted_model(self)

    def predict(self, X, constraints=None):
        """The best projective tree of every sentence: an int array of heads (0 = root) per sentence.
        ``constraints``: per sentence None or, per word, None (free) or the head id it must keep; the best
        projective tree keeping them (InvalidInputError naming a sentence whose fixed heads no tree keeps)."""
        model = self._fitted()
        X = list(X)
        return model.parse([s if isinstance(s, Sentence) else as_sentence(s, None, f"sentence {i}")
                            for i, s in enumerate(X)], constraints)

    def predict_n_best(self, X, n=3):
        """Per sentence the n best projective trees as [(heads, score), ...], best first (fewer when a sentence
        has fewer trees): exact k-best Eisner; score log P(tree | sentence) for a CRF, w . f for an M3N. The
        first tree is :meth:`predict`'s; :meth:`predict_labels` labels any of them."""
        model = self._fitted()
        X = list(X)
        return model.parse_n_best([s if isinstance(s, Sentence) else as_sentence(s, None, f"sentence {i}")
                                   for i, s in enumerate(X)], n)

    def predict_labels(self, X, heads=None):
        """The DEPREL of every arc of the predicted trees (or of ``heads``, one array per sentence): a list of
        strings per sentence. A parser trained without labels refuses (InvalidInputError)."""
        model = self._fitted()
        if model.labeller is None:
            raise InvalidInputError("this parser has no arc labeller: its training data had no DEPREL labels")
        sentences = [s if isinstance(s, Sentence) else as_sentence(s, None, f"sentence {i}") for i, s in enumerate(X)]
        heads = model.parse(sentences) if heads is None else [np.asarray(h) for h in heads]
        if len(heads) != len(sentences) or any(len(h) != len(s) for h, s in zip(heads, sentences)):
            raise ValueError("predict_labels: one head per word of every sentence is required")
        if any(h.dtype.kind not in "iu" or np.any((h < 0) | (h > len(s))) for h, s in zip(heads, sentences)):
            raise ValueError("predict_labels: heads must be integers in [0, n] (0 = root)")
        return model.label(sentences, heads)

    def score(self, X, y=None, sample_weight=None, scoring="uas"):
        """UAS of predict(X) against y (punctuation included) as a fraction; ``sample_weight`` per sentence.
        ``scoring="las"``: the labeled attachment score, the gold labels being the DEPREL of the sentences
        (Sentence objects or CoNLL rows)."""
        if scoring not in ("uas", "las"):
            raise InvalidInputError(f"scoring must be 'uas' or 'las', got {scoring!r}")
        sentences = _sentences(X, y, "score")
        guess = self._fitted().parse(sentences)
        right_heads = [np.asarray(p) == s.heads for p, s in zip(guess, sentences)]
        if scoring == "las":
            labels = self.predict_labels(sentences, guess)
            right_heads = [ok & (np.asarray(lab, dtype=object) == np.asarray(s.deprels, dtype=object))
                           for ok, lab, s in zip(right_heads, labels, sentences)]
        weight = _check_sample_weight(sample_weight, len(sentences))
        right = sum(wi * int(np.sum(ok)) for wi, ok in zip(weight, right_heads))
        total = sum(wi * len(s) for wi, s in zip(weight, sentences))
        return float(right / total)

    def save(self, path) -> None:
        """Write the parser as a "loglin-parser" model file (`loglin parse` reads it), the estimator's
        parameters in its info."""
        model = self._fitted()
        model.info = {**model.info, "estimator": {"params": {k: v for k, v in self.get_params().items() if _plain(v)},
                                                  "n_iter": self.n_iter_, "objective": self.objective_}}
        model.save(path)

    @classmethod
    def load(cls, path) -> "Parser":
        """A fitted Parser from any parser model file."""
        model = ParserModel.load(path)
        meta = model.info.get("estimator", {})
        if not isinstance(meta, dict):
            raise ModelFormatError(f"{path}: invalid estimator metadata")
        valid = set(cls._get_param_names())
        params = {k: v for k, v in dict(meta.get("params", {})).items() if k in valid}
        params.setdefault("model", model.model)
        params.setdefault("C", model.C)
        parser = cls(**params)
        parser.model_, parser.coef_ = model, model.w
        parser.labels_ = None if model.labeller is None else model.labeller.labels
        parser.n_iter_ = int(meta.get("n_iter", model.info.get("iterations", 0)))
        parser.objective_ = float(meta.get("objective", np.nan))
        return parser


def labeller_after_parser(sentences, parser_result, *, started, C, cutoff=1, sample_weight=None, time_limit=None,
                          clock="wall", **train_options):
    """The arc labeller of a treebank with DEPREL labels, trained after the parser, or None (no labels, or no
    labeller worth keeping: a warning says why). ``sentences``: the treebank, or a function reading it (read
    only when the labeller is trained, under the same signal guard). ``time_limit`` bounds parser and labeller
    together: with the wall clock it counts from the command's start (:func:`loglin.signals.command_clock`),
    in a library call from ``started`` (the fit's start); with the CPU clock the labeller gets what the
    parser's solver left. When nothing is left, after a SIGINT / SIGTERM, or when the labeller stops before
    its first iteration (weights 0), the parser is kept without one; a labeller cut short later is its best
    iterate so far."""
    from contextlib import nullcontext

    from ..signals import StopOnSignal, command_clock, command_elapsed
    if not callable(sentences) and not has_labels(sentences):
        return None
    if getattr(parser_result, "signal", None):
        return _without_labeller(f"{parser_result.signal} stopped the parser's training")

    def time_left() -> bool:
        used = command_elapsed() if clock == "wall" else parser_result.train_seconds
        return time_limit is None or used < time_limit
    # a library call's wall limit counts from the fit's start, as a command's from the command's start
    with StopOnSignal() as stop, (nullcontext() if command_elapsed() else command_clock(started)):
        if not time_left():
            return _without_labeller(f"the time limit ({time_limit:g} s) was used up by the parser")
        if callable(sentences):
            sentences = sentences()
            if not has_labels(sentences):
                return None
        label = one_label(sentences)
        if label is not None:
            return ArcLabeller.constant(label, sum(len(s) for s in sentences))
        labeller, problem = ArcLabeller.training_problem(sentences, cutoff=cutoff, sample_weight=sample_weight)
        if stop.requested:                  # while reading or extracting features: no labeller
            return _without_labeller(f"{stop.name} arrived before the arc labeller's training")
        if not time_left():
            return _without_labeller(f"the time limit ({time_limit:g} s) ran out while the arc labeller's "
                                     "features were extracted")
        if time_limit is not None:
            left = time_limit if clock == "wall" else time_limit - parser_result.train_seconds
            train_options.update(time_limit=left, clock=clock)      # minimize counts the wall from the start
        labeller, result = labeller.train(problem, C, **train_options)
    if result.iterations == 0 and not result.converged:
        return _without_labeller(f"the arc labeller's training stopped before its first iteration "
                                 f"({result.stop_reason})")
    return labeller


def _without_labeller(why):
    warnings.warn(f"{why}: the parser is kept without an arc labeller (DEPREL is written as _ and no LAS is "
                  "reported)", ConvergenceWarning, stacklevel=3)
    return None


def train_parser(train_sentences, model="crf", solver="auto", C=DEFAULT_C["tree"], *, cutoff=1,
                 dev_sentences=None, return_result=False, **options):
    """``Parser(...).fit(train_sentences, X_dev=dev_sentences)`` in one call: the trained
    :class:`ParserModel` (and the driver's Result with ``return_result``). ``options``: the Parser's
    parameters (``tol``, ``max_iter``, ``random_state``, ...) and further keywords of :func:`loglin.training.train`
    (solver options), as :func:`loglin.params.sequence_estimator_params` reads them."""
    parser = Parser(model=model, C=C, solver="auto" if solver is None else solver, cutoff=cutoff,
                    **sequence_estimator_params(Parser, options))
    parser.fit(train_sentences, X_dev=dev_sentences)
    return (parser.model_, parser.result_) if return_result else parser.model_


__all__ = ["Parser", "as_sentence", "labeller_after_parser", "train_parser"]
