"""Trained chain models (CRF or M3N): tagging, saving and loading, and one training entry point.

    model = train_chain_model(train_sentences, "chunk", model="crf", solver="lbfgs", C=1.0)
    model.tag(sentences)            # -> list of label lists
    model.save("chunker.npz"); ChainModel.load("chunker.npz")

Solvers: any of the solver table (:mod:`loglin.solvers`) that serves chain models:
"lbfgs" and "sgd" (CRF only) on the primal; "eg" (online, randomized order) and
"eg-batch" on the dual (CRF and M3N); "cutting-plane" (M3N only).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInputError, ModelFormatError
from ..kernels.maxent import _blocks
from ..model_io import load_npz_model, save_npz_model
from .chain import chain_data
from .crf_features import TASKS, ChainFeatureSpace, build_chain_problem, check_sentences
from .passes import decode_all

FORMAT, VERSION = "loglin-chain", 1
MODELS = ("crf", "m3n")


@dataclass
class ChainModel:
    """Weights of a linear-chain model over a feature space (state features, then K x K transitions)."""

    space: ChainFeatureSpace
    w: np.ndarray
    model: str = "crf"
    C: float = 1.0
    solver: str = ""

    @property
    def labels(self):
        return self.space.labels

    def transitions(self) -> np.ndarray:
        K = self.space.n_labels
        return self.w[self.space.n_state:].reshape(K, K)

    def predict_ids(self, sentences) -> list[np.ndarray]:
        """Viterbi label ids of every sentence."""
        if len(sentences) == 0:
            return []
        return self._decode(*self.space.encode(sentences))

    def predict_ids_from_attributes(self, attribute_sequences) -> list[np.ndarray]:
        """Viterbi label ids of sentences given as their tokens' attribute names (as CRFsuite's
        Tagger.tag takes them), for attributes made outside loglin with the model's template."""
        if len(attribute_sequences) == 0:
            return []
        for i, tokens in enumerate(attribute_sequences):
            if len(tokens) == 0:
                raise InvalidInputError(f"sentence {i} has no tokens")
        return self._decode(*self.space.encode_attributes(attribute_sequences))

    def _decode(self, seq_ptr, tok_ptr, tok_attr):
        out = np.empty(int(seq_ptr[-1]), dtype=np.int32)
        data = chain_data(seq_ptr, tok_ptr, tok_attr, self.space.map_ptr, self.space.map_label, self.space.map_feat,
                          self.space.n_state, self.space.n_labels)
        decode_all(data, self.w, _blocks(len(seq_ptr) - 1), out)
        return [out[seq_ptr[i]:seq_ptr[i + 1]] for i in range(len(seq_ptr) - 1)]

    def tag(self, sentences, constraints=None) -> list[list[str]]:
        """Best label sequence of each sentence (tokens as tuples whose first columns are the inputs).

        ``constraints``: per sentence None or a list with, per token, None (free), a label (fixed) or a
        set of labels (allowed); the rest is decoded consistently with them
        (:mod:`loglin.structured.constrained`)."""
        for i, s in enumerate(sentences):
            if len(s) == 0:
                raise InvalidInputError(f"sentence {i} is empty")
        labels = self.space.labels
        if constraints is None:
            ids = self.predict_ids(sentences)
        else:
            ids = self._decode_constrained(*self.space.encode(sentences), constraints)
        return [[str(x) for x in labels[row]] for row in ids]

    def tag_n_best(self, sentences, n: int = 3, *, constraints=None, iob_constraint: bool = False) -> list:
        """Per sentence the n best label sequences as [(labels, score), ...], best first (exact k-best Viterbi,
        :mod:`loglin.structured.nbest`); fewer when the sentence has fewer labellings. CRF: the score is
        log P(labels | sentence); M3N: the raw score w . f. ``constraints`` as in :meth:`tag`;
        ``iob_constraint`` allows I-X only after B-X / I-X (the Maxent tagger's rule)."""
        for i, s in enumerate(sentences):
            if len(s) == 0:
                raise InvalidInputError(f"sentence {i} is empty")
        if len(sentences) == 0:
            return []
        return self._n_best(*self.space.encode(sentences), n, constraints, iob_constraint)

    def _n_best(self, seq_ptr, tok_ptr, tok_attr, n, constraints=None, iob_constraint=False, tok_val=None):
        from .nbest import chain_n_best, n_best_lists
        s = self.space
        allowed = None
        if constraints is not None:
            from .constrained import allowed_labels
            allowed = allowed_labels(constraints, np.diff(seq_ptr), s.labels)
        after = None
        if iob_constraint:
            from ..tagging.beam import iob_transitions
            after = iob_transitions([str(x) for x in s.labels])
        labels, scores = chain_n_best(self.w, s.n_state, s.n_labels, s.map_ptr, s.map_label, s.map_feat, seq_ptr,
                                      tok_ptr, tok_attr, tok_val, n=n, allowed=allowed, allowed_after=after,
                                      log_prob=self.model == "crf")
        return n_best_lists(labels, scores, seq_ptr, s.labels)

    def marginals(self, sentences) -> list[np.ndarray]:
        """P(label y at token t | sentence) of a CRF: per sentence an (n x K) array, columns in the order of
        ``labels`` (forward-backward; for an M3N model these are the marginals of its scores taken as a CRF)."""
        from .chain import forward_backward, unary_scores
        s = self.space
        seq_ptr, tok_ptr, tok_attr = s.encode(sentences)
        Tr, out = self.transitions(), []
        for i in range(len(seq_ptr) - 1):
            lo, hi = int(seq_ptr[i]), int(seq_ptr[i + 1])
            U = np.empty((hi - lo, s.n_labels))
            unary_scores(lo, hi, self.w, 1.0, tok_ptr, tok_attr, np.empty(0), s.map_ptr, s.map_label, s.map_feat, U)
            out.append(forward_backward(U, Tr)[1] if hi > lo else np.empty((0, s.n_labels)))
        return out

    def _decode_constrained(self, seq_ptr, tok_ptr, tok_attr, constraints, tok_val=None):
        from .constrained import allowed_labels, constrained_viterbi
        allowed = allowed_labels(constraints, np.diff(seq_ptr), self.space.labels)
        out = np.empty(int(seq_ptr[-1]), dtype=np.int32)
        s = self.space
        constrained_viterbi(seq_ptr, tok_ptr, tok_attr, np.empty(0) if tok_val is None else tok_val, s.map_ptr,
                            s.map_label, s.map_feat, self.w, s.n_state, s.n_labels, allowed, out)
        return [out[seq_ptr[i]:seq_ptr[i + 1]] for i in range(len(seq_ptr) - 1)]

    # ------------------------------------------------------------------ files
    def save(self, path) -> None:
        meta = {"loglin_format": FORMAT, "format_version": VERSION, "task": self.space.task, "model": self.model,
                "C": self.C, "solver": self.solver, "n_state": int(self.space.n_state)}
        arrays = {"w": self.w, "labels": np.asarray(self.space.labels, dtype=str),
                  "attributes": np.asarray(self.space.attributes, dtype=str), "map_ptr": self.space.map_ptr,
                  "map_label": self.space.map_label, "map_feat": self.space.map_feat}
        save_npz_model(path, meta, arrays)

    @classmethod
    def load(cls, path) -> "ChainModel":
        meta, a = load_npz_model(path, FORMAT, VERSION,
                                 required=("w", "labels", "attributes", "map_ptr", "map_label", "map_feat"))
        try:
            task, n_state = meta["task"], int(meta["n_state"])
            labels, attributes = a["labels"], a["attributes"].tolist()
            map_ptr = a["map_ptr"].astype(np.int64)
            map_label = a["map_label"].astype(np.int32)
            map_feat = a["map_feat"].astype(np.int64)
            w = a["w"].astype(np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFormatError(f"{path}: invalid chain model ({exc})") from None
        K = len(labels)
        ok = (task in TASKS and K >= 2 and w.ndim == 1 and len(w) == n_state + K * K
              and map_ptr.ndim == 1 and len(map_ptr) == len(attributes) + 1 and map_ptr[0] == 0
              and np.all(np.diff(map_ptr) >= 0) and map_ptr[-1] == len(map_label) == len(map_feat)
              and (len(map_label) == 0 or (map_label.min() >= 0 and map_label.max() < K))
              and (len(map_feat) == 0 or (map_feat.min() >= 0 and map_feat.max() < n_state)))
        if not ok:
            raise ModelFormatError(f"{path}: inconsistent chain model arrays")
        space = ChainFeatureSpace(task=task, attributes=attributes, labels=labels, map_ptr=map_ptr,
                                  map_label=map_label, map_feat=map_feat, n_state=n_state)
        return cls(space=space, w=w, model=str(meta.get("model", "crf")), C=float(meta.get("C", 1.0)),
                   solver=str(meta.get("solver", "")))


def train_chain_model(train_sentences, task="chunk", model="crf", solver=None, C=None, *,
                      validation_sentences=None, return_result=False, **options):
    """Train a CRF (``model="crf"``) or M3N (``"m3n"``) chain tagger; returns a :class:`ChainModel`.

    ``task`` is "chunk" (tokens ``(word, pos, chunk)``, CoNLL-2000) or "pos"
    (tokens ``(word, tag)``). C is in LIBLINEAR scale (CRFsuite's c2 = 1/(2C),
    Collins et al.'s C' = 1/C). ``solver``, ``C`` and ``max_iter`` default to loglin.training's
    values for chain models. Builds the problem and calls :func:`loglin.training.train`
    (its ``tol``, ``gap_tol``, ``time_limit``, ... apply; dual solvers stop at a relative
    duality gap, primal ones at a relative gradient norm).
    ``validation_sentences`` (labelled) lets SGD pick eta0 by validation error.
    """
    from ..solvers import canonical, check
    from ..training import default_solver, train
    if model not in MODELS:
        raise InvalidInputError(f"model must be one of {MODELS}, got {model!r}")
    loss = "ll" if model == "crf" else "mm"
    solver = default_solver("chain", loss) if solver is None else solver
    check(solver, "chain", loss)
    check_sentences(train_sentences, task)
    problem, space = build_chain_problem(train_sentences, task)
    if canonical(solver) == "sgd" and validation_sentences is not None and "validation" not in options:
        options["validation"] = _error_rate(space, validation_sentences)
    options.setdefault("random_state", 0)
    trained, result = train(problem, C, solver, loss=loss, space=space, **options)
    return (trained, result) if return_result else trained


def _error_rate(space, sentences):
    """validation(w) -> token error rate of a labelled sentence list."""
    from .crf_features import gold_column
    col = gold_column(space.task)
    gold = np.concatenate([[str(t[col]) for t in s] for s in sentences])

    def validation(w):
        pred = ChainModel(space=space, w=w).tag(sentences)
        return float(np.mean(gold != np.concatenate(pred)))
    return validation
