"""Trained chain models (CRF or M3N): tagging, saving and loading.

    model = loglin.tagging.estimator.train_chain_model(train_sentences, "chunk", model="crf", C=1.0)
    model.tag(sentences)            # -> list of label lists
    model.save("chunker.npz"); ChainModel.load("chunker.npz")

Training is :class:`loglin.Tagger`'s (``train_chain_model`` is one call of it). Solvers: any of the
solver table (:mod:`loglin.solvers`) that serves chain models: "lbfgs" and "sgd" (CRF only) on the
primal; "eg" (online, randomized order) and "eg-batch" on the dual (CRF and M3N); "cutting-plane"
(M3N only).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidInputError, ModelFormatError
from ..kernels.maxent import _blocks
from ..model_io import label_map_is_valid, load_npz_model, save_npz_model
from .chain import chain_data
from .crf_features import TASKS, ChainFeatureSpace
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
        return self.decode(self.space.encode(sentences))

    def predict_ids_from_attributes(self, attribute_sequences) -> list[np.ndarray]:
        """Viterbi label ids of sentences given as their tokens' attribute names (as CRFsuite's
        Tagger.tag takes them), for attributes made outside loglin with the model's template."""
        if len(attribute_sequences) == 0:
            return []
        for i, tokens in enumerate(attribute_sequences):
            if len(tokens) == 0:
                raise InvalidInputError(f"sentence {i} has no tokens")
        return self.decode(self.space.encode_attributes(attribute_sequences))

    def decode(self, encoded, constraints=None) -> list[np.ndarray]:
        """Viterbi label ids of every sentence of ``encoded`` = (seq_ptr, tok_ptr, tok_attr) in this space;
        ``constraints`` as :meth:`tag` takes them (constrained Viterbi, :mod:`loglin.structured.constrained`)."""
        seq_ptr, tok_ptr, tok_attr = encoded
        s, out = self.space, np.empty(int(seq_ptr[-1]), dtype=np.int32)
        if constraints is None:
            data = chain_data(seq_ptr, tok_ptr, tok_attr, s.map_ptr, s.map_label, s.map_feat, s.n_state, s.n_labels)
            decode_all(data, self.w, _blocks(len(seq_ptr) - 1), out)
        else:
            from .constrained import allowed_labels, constrained_viterbi
            allowed = allowed_labels(constraints, np.diff(seq_ptr), s.labels)
            constrained_viterbi(seq_ptr, tok_ptr, tok_attr, np.empty(0), s.map_ptr, s.map_label, s.map_feat, self.w,
                                s.n_state, s.n_labels, allowed, out)
        return [out[seq_ptr[i]:seq_ptr[i + 1]] for i in range(len(seq_ptr) - 1)]

    def decode_labels(self, encoded, constraints=None) -> list[list[str]]:
        """:meth:`decode` as label names."""
        names = np.asarray([str(x) for x in self.space.labels], dtype=object)
        return [names[ids].tolist() for ids in self.decode(encoded, constraints)]

    def tag(self, sentences, constraints=None) -> list[list[str]]:
        """Best label sequence of each sentence (tokens as tuples whose first columns are the inputs).

        ``constraints``: per sentence None or a list with, per token, None (free), a label (fixed) or a
        set of labels (allowed); the rest is decoded consistently with them
        (:mod:`loglin.structured.constrained`)."""
        for i, s in enumerate(sentences):
            if len(s) == 0:
                raise InvalidInputError(f"sentence {i} is empty")
        return self.decode_labels(self.space.encode(sentences), constraints) if len(sentences) else []

    def tag_n_best(self, sentences, n: int = 3, *, constraints=None, iob_constraint: bool = False) -> list:
        """Per sentence the n best label sequences as [(labels, score), ...], best first (exact k-best Viterbi,
        :mod:`loglin.structured.nbest`); fewer when the sentence has fewer labellings. CRF: the score is
        log P(labels | sentence); M3N: the raw score w . f. ``constraints`` as in :meth:`tag`;
        ``iob_constraint`` allows I-X only after B-X / I-X (the Maxent tagger's rule)."""
        from .nbest import check_n
        n = check_n(n)
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
        if not (task in TASKS and K >= 1 and w.ndim == 1 and len(w) == n_state + K * K
                and label_map_is_valid(map_ptr, map_label, map_feat, len(attributes), K, n_state)):
            raise ModelFormatError(f"{path}: inconsistent chain model arrays")
        space = ChainFeatureSpace(task=task, attributes=attributes, labels=labels, map_ptr=map_ptr,
                                  map_label=map_label, map_feat=map_feat, n_state=n_state)
        return cls(space=space, w=w, model=str(meta.get("model", "crf")), C=float(meta.get("C", 1.0)),
                   solver=str(meta.get("solver", "")))
