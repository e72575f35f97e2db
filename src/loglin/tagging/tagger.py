"""A trained Maxent tagger or chunker: train, tag, evaluate, save, load.

Ratnaparkhi (1996)'s model as Huang et al. (2010) train it: predicate x
label features from OpenNLP's context generators (:mod:`loglin.features`),
a Gaussian prior with sigma^2 = C (``--sigma2 10`` in the papers), any
registered solver, beam-search decoding.

Sentence formats (lists of tokens):

* training and evaluation, POS: ``(word, tag)``; chunking: ``(word, pos, chunk)``;
* tagging, POS: ``word`` (or a tuple whose first field is the word);
  chunking: ``(word, pos)``.
"""
from __future__ import annotations

import time

import numpy as np

from ..errors import DataContentError, InvalidInputError, ModelFormatError
from ..limits import MAX_BEAM
from ..features.extract import SPECIALS, FeatureExtractor
from ..model_io import label_map_is_valid, load_npz_model, save_npz_model
from ..training import DEFAULT_SOLVERS, DEFAULT_TOL as TRAINING_TOL
from .beam import DecodeInput, beam_decode
from .conlleval import conlleval

FORMAT = "loglin-tagger"
FORMAT_VERSION = 1
DEFAULT_SOLVER = DEFAULT_SOLVERS["tagger"]       # the choice and its measurements: docs/decisions/0010
DEFAULT_C = 10.0
DEFAULT_BEAM = 3
TASKS = ("pos", "chunk")
# Predicate cut-off and feature set per task, chosen on held-out data (docs/decisions/0008):
# chunking all pairs, cut-off 1; POS seen pairs, cut-off 1 (--cutoff 5 gives the papers' Table 3 setting).
TASK_DEFAULTS = {"pos": {"cutoff": 1, "all_pairs": False}, "chunk": {"cutoff": 1, "all_pairs": True}}
DEFAULT_TOL = TRAINING_TOL


def _split(sentences, task, with_labels):
    """(words, input tags or None, labels or None) from token tuples."""
    n_in = 1 if task == "pos" else 2
    need = n_in + (1 if with_labels else 0)
    words, tags, labels = [], [] if task == "chunk" else None, [] if with_labels else None
    for k, sentence in enumerate(sentences):
        if len(sentence) == 0:
            raise InvalidInputError(f"sentence {k} is empty")
        if task == "pos" and not with_labels and all(isinstance(t, str) for t in sentence):
            words.append(list(sentence))
            continue
        if any(isinstance(t, str) or len(t) < need for t in sentence):
            raise InvalidInputError(f"sentence {k}: every token needs {need} fields for {task} "
                                    f"{'training/evaluation' if with_labels else 'tagging'}")
        words.append([str(t[0]) for t in sentence])
        if tags is not None:
            tags.append([str(t[1]) for t in sentence])
        if labels is not None:
            labels.append([str(t[need - 1]) for t in sentence])
    return words, tags, labels


def starts_chunks_with_i(label_sentences) -> bool:
    """True when some I-X follows neither B-X nor I-X (IOB1 tags, where I-X starts a chunk)."""
    for labels in label_sentences:
        previous = "O"
        for label in labels:
            if label.startswith("I-") and previous not in ("B" + label[1:], label):
                return True
            previous = label
    return False


class MaxentTaggerModel:
    """Weights + feature index + decoding options."""

    def __init__(self, extractor: FeatureExtractor, w, map_ptr, map_label, map_feat, *,
                 beam: int = DEFAULT_BEAM, tag_dictionary: bool = False, iob_constraint: bool | None = None,
                 info: dict | None = None):
        self.extractor = extractor
        self.w = np.asarray(w, dtype=np.float64)
        self.map_ptr, self.map_label, self.map_feat = map_ptr, map_label, map_feat
        self.beam = int(beam)
        if not 1 <= self.beam <= MAX_BEAM:     # checked here, so that no model is written that cannot decode
            raise InvalidInputError(f"beam size must be from 1 to {MAX_BEAM}, got {beam}")
        self.tag_dictionary = bool(tag_dictionary)
        # OpenNLP's chunker allows I-X only after B-X / I-X
        self.iob_constraint = extractor.task == "chunk" if iob_constraint is None else bool(iob_constraint)
        self.info = dict(info or {})

    @property
    def task(self) -> str:
        return self.extractor.task

    @property
    def labels(self) -> list:
        return list(self.extractor.labels)

    # ------------------------------------------------------------ training
    @classmethod
    def train(cls, sentences, task: str = "pos", *, C: float = DEFAULT_C, solver: str = DEFAULT_SOLVER,
              cutoff: int | None = None, rare_threshold: int | None = None, beam: int = DEFAULT_BEAM,
              tag_dictionary: bool = False, iob_constraint: bool | None = None, all_pairs: bool | None = None,
              tol: float = DEFAULT_TOL,
              max_iter: int = 1000, time_limit=None, random_state=0, progress: bool = False, evaluate=None,
              w0=None, sample_weight=None, **solver_options) -> "MaxentTaggerModel":
        """Train on gold sentences. ``C`` = sigma^2 of the papers (10).

        ``cutoff`` / ``rare_threshold``: see :class:`~loglin.features.FeatureExtractor`
        (rare_threshold None: spelling predicates for every word, as OpenNLP). ``all_pairs``:
        a weight for every (predicate, label) pair, not only those seen in
        training (OpenNLP, the papers). ``cutoff`` and ``all_pairs`` default
        per task to :data:`TASK_DEFAULTS`. ``evaluate``:
        optional held-out gold sentences, scored (greedy decoding) after every
        iteration into the trace of ``tagger.result``. ``w0``: starting weights, used when their length is
        the new problem's (a warm start on the same feature space). ``sample_weight``: one non-negative weight
        per sentence, multiplying its tokens' events (2 is the sentence twice; 0 leaves it out).
        """
        from ..training import train
        if task not in TASKS:
            raise InvalidInputError(f"task must be 'pos' or 'chunk', got {task!r}")
        cutoff = TASK_DEFAULTS[task]["cutoff"] if cutoff is None else cutoff
        all_pairs = TASK_DEFAULTS[task]["all_pairs"] if all_pairs is None else bool(all_pairs)
        if not np.isfinite(C) or C <= 0:
            raise InvalidInputError(f"C must be positive and finite, got {C}")
        words, tags, labels = _split(sentences, task, with_labels=True)
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (len(words),) or not np.all(sample_weight >= 0):
                raise InvalidInputError(f"sample_weight must hold one non-negative weight per sentence "
                                        f"({len(words)})")
            kept = np.flatnonzero(sample_weight > 0)         # a zero weight: as if the sentence were absent
            words, labels = [words[i] for i in kept], [labels[i] for i in kept]
            tags = None if tags is None else [tags[i] for i in kept]
            sample_weight = None if np.all(sample_weight[kept] == 1.0) else sample_weight[kept]
        if not words:
            raise DataContentError("no training sentences")
        t0 = time.perf_counter()
        extractor = FeatureExtractor(task, cutoff=cutoff, rare_threshold=rare_threshold)
        problem, fit_stats = extractor.fit(words, labels, tags, all_pairs=all_pairs, sentence_weight=sample_weight)
        t1 = time.perf_counter()
        hook = None
        if evaluate is not None:
            probe = cls(extractor, np.zeros(problem.n_features), problem.map_ptr, problem.map_label,
                        problem.map_feat, beam=1)
            held_out = list(evaluate)

            def hook(w):
                probe.w = w
                return probe.evaluate(held_out)["f1" if task == "chunk" else "accuracy"]
        if w0 is not None and len(w0) != problem.n_features:
            w0 = None
        _, result = train(problem, C, solver, w0=w0, tol=tol, max_iter=max_iter, time_limit=time_limit,
                          random_state=random_state, progress=progress, evaluate=hook, **solver_options)
        info = {"solver": solver, "C": float(C), "tol": tol, "iterations": result.iterations,
                "converged": bool(result.converged), "objective": float(result.f),
                "train_seconds": result.train_seconds, "extract_seconds": t1 - t0,
                "contexts": problem.n_contexts, "features": problem.n_features,
                "predicates": problem.n_predicates, "train_tokens": fit_stats["tokens"], "cutoff": cutoff,
                "all_pairs": bool(all_pairs)}
        if iob_constraint is None:       # IOB1 data starts chunks with I-X: the constraint would forbid them
            iob_constraint = task == "chunk" and not starts_chunks_with_i(labels)
        tagger = cls(extractor, result.w, problem.map_ptr, problem.map_label, problem.map_feat,
                     beam=beam, tag_dictionary=tag_dictionary, iob_constraint=iob_constraint, info=info)
        tagger.result = result
        return tagger

    # ------------------------------------------------------------ tagging
    def _decode(self, words, tags, beam=None, tag_dictionary=None, iob_constraint=None):
        tokens = self.extractor.encode(words, tags)
        data = DecodeInput.build(self.extractor, tokens)
        flat = beam_decode(self.extractor, self.w, self.map_ptr, self.map_label, self.map_feat, data,
                           beam=self.beam if beam is None else beam,
                           tag_dictionary=self.tag_dictionary if tag_dictionary is None else tag_dictionary,
                           iob_constraint=self.iob_constraint if iob_constraint is None else iob_constraint)
        names = np.asarray(self.extractor.labels, dtype=object)[flat]
        out, at = [], 0
        for s in words:
            out.append(list(names[at:at + len(s)]))
            at += len(s)
        return out

    def tag_n_best(self, sentences, n: int = 3, *, tag_dictionary: bool | None = None,
                   iob_constraint: bool | None = None) -> list:
        """Per sentence the n best label sequences the beam search keeps (a beam of max(n, the model's)), as
        [(labels, log-probability), ...], best first (fewer when the sentence allows fewer)."""
        from ..structured.nbest import check_n, n_best_lists
        n = check_n(n)
        sentences = list(sentences)
        if not sentences:
            return []
        words, tags, _ = _split(sentences, self.task, with_labels=False)
        tokens = self.extractor.encode(words, tags)
        data = DecodeInput.build(self.extractor, tokens)
        _, labels, scores = beam_decode(
            self.extractor, self.w, self.map_ptr, self.map_label, self.map_feat, data, beam=max(n, self.beam),
            tag_dictionary=self.tag_dictionary if tag_dictionary is None else tag_dictionary,
            iob_constraint=self.iob_constraint if iob_constraint is None else iob_constraint, n_best=n)
        return n_best_lists(labels, scores, data.sent_ptr, self.extractor.labels)

    def tag(self, sentences, *, beam: int | None = None, tag_dictionary: bool | None = None,
            iob_constraint: bool | None = None) -> list:
        """Predicted label sequence of every sentence (POS: words; chunking: (word, pos) pairs)."""
        sentences = list(sentences)
        if not sentences:
            return []
        words, tags, _ = _split(sentences, self.task, with_labels=False)
        return self._decode(words, tags, beam, tag_dictionary, iob_constraint)

    def evaluate(self, sentences, *, beam: int | None = None, tag_dictionary: bool | None = None,
                 iob_constraint: bool | None = None) -> dict:
        """Scores on gold sentences, in percent, plus ``tokens_per_second`` of tagging.

        POS: ``accuracy`` and ``unknown_accuracy`` (words unseen in training);
        chunking: conlleval ``precision``, ``recall``, ``f1``, ``accuracy``.
        """
        words, tags, gold = _split(list(sentences), self.task, with_labels=True)
        if not words:
            raise DataContentError("no sentences to evaluate")
        # compile / load the kernels first, so the speed is that of tagging
        self._decode(words[:1], None if tags is None else tags[:1], beam, tag_dictionary, iob_constraint)
        t0 = time.perf_counter()
        guess = self._decode(words, tags, beam, tag_dictionary, iob_constraint)
        seconds = time.perf_counter() - t0
        n = sum(len(s) for s in words)
        out = {"tokens": n, "sentences": len(words), "seconds": seconds, "tokens_per_second": n / max(seconds, 1e-9)}
        if self.task == "pos":
            known = self.extractor.words.index
            hit = unk = unk_hit = 0
            for ws, gs, ps in zip(words, gold, guess):
                for w, g, p in zip(ws, gs, ps):
                    hit += g == p
                    if known.get(w, 0) < len(SPECIALS):
                        unk += 1
                        unk_hit += g == p
            out.update(accuracy=100.0 * hit / n, unknown_words=unk,
                       unknown_accuracy=100.0 * unk_hit / unk if unk else None)
        else:
            scores = conlleval(gold, guess)
            out.update({k: scores[k] for k in ("precision", "recall", "f1", "accuracy", "by_type")})
        return out

    # ------------------------------------------------------------ persistence
    def save(self, path) -> None:
        fx_meta, fx_arrays = self.extractor.state()
        meta = {"loglin_format": FORMAT, "format_version": FORMAT_VERSION, "task": self.task,
                "labels": fx_meta["labels"], "options": {"beam": self.beam, "tag_dictionary": self.tag_dictionary,
                                                      "iob_constraint": self.iob_constraint},
                "features": fx_meta, "info": _jsonable(self.info)}
        arrays = {"w": self.w, "map_ptr": self.map_ptr, "map_label": self.map_label, "map_feat": self.map_feat,
                  **fx_arrays}
        save_npz_model(path, meta, arrays)

    @classmethod
    def load(cls, path) -> "MaxentTaggerModel":
        """Read a model file; anything malformed raises ModelFormatError."""
        required = ("w", "map_ptr", "map_label", "map_feat", "feat_keys", "feat_group_ptr", "feat_rare",
                    "feat_dict_ptr", "feat_dict_label")
        try:
            meta, a = load_npz_model(path, FORMAT, FORMAT_VERSION, required=required)
            fx_meta = meta["features"]
            if fx_meta.get("task") not in TASKS or meta.get("task") != fx_meta["task"]:
                raise ModelFormatError(f"{path}: unknown task {meta.get('task')!r}")
            for name in required:
                if a[name].dtype.kind not in "iuf" or a[name].ndim != 1:
                    raise ModelFormatError(f"{path}: array {name!r} has the wrong type or shape")
            extractor = FeatureExtractor.from_state(fx_meta, a)
            options = meta.get("options", {})
            tagger = cls(extractor, a["w"].astype(np.float64), a["map_ptr"].astype(np.int64),
                         a["map_label"].astype(np.int32), a["map_feat"].astype(np.int64),
                         beam=int(options.get("beam", DEFAULT_BEAM)),
                         tag_dictionary=bool(options.get("tag_dictionary", False)),
                         iob_constraint=options.get("iob_constraint"), info=meta.get("info", {}))
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, InvalidInputError) as exc:
            raise ModelFormatError(f"{path}: corrupted tagger model ({exc.__class__.__name__}: {exc})") from None
        _check_model(path, tagger)
        return tagger


def _check_model(path, t: MaxentTaggerModel):
    P, K, n = t.extractor.n_predicates, t.extractor.n_labels, len(t.w)
    if not (t.beam >= 1 and label_map_is_valid(t.map_ptr, t.map_label, t.map_feat, P, K, n)):
        raise ModelFormatError(f"{path}: inconsistent tagger model arrays")


def _jsonable(info: dict) -> dict:
    out = {}
    for k, v in info.items():
        if isinstance(v, (bool, int, float, str)) or v is None:
            out[k] = v
        elif isinstance(v, np.generic):
            out[k] = v.item()
    return out
