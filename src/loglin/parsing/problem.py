"""Training data of an arc-factored dependency parser, as flat arrays (Collins et al. 2008, section 8).

A ``TreeProblem`` is n sentences x_i with gold trees y_i; f(x, y) = sum over
arcs (h, m) of y of f(x, h, m). Sentence i has n_i words (``sent_ptr``) and a
block of (n_i + 1)^2 arc slots at ``arc_off[i]`` (slot h (n_i + 1) + m is arc
(h, m)); ``feat_ptr`` / ``feat_idx`` list each slot's feature ids (binary
features, CSR). ``heads`` are the gold heads of all words, concatenated.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..csr import gather_rows
from ..data.conll import is_projective
from ..errors import DataContentError, InvalidInputError
from ..structured.problem import SentenceProblem


@dataclass
class TreeProblem(SentenceProblem):
    sent_ptr: np.ndarray       # (n + 1,) word offsets
    arc_off: np.ndarray        # (n + 1,) arc slot offsets
    feat_ptr: np.ndarray       # (slots + 1,)
    feat_idx: np.ndarray       # int32 feature ids
    heads: np.ndarray          # (N,) gold heads, int32 in [0, n_i]
    n_features: int
    weight: np.ndarray | None = None
    emp: np.ndarray = field(init=False, repr=False)
    reg: np.ndarray = field(init=False, repr=False)

    def _structure_data(self):
        from ..structured.tree import tree_data
        return tree_data(self.sent_ptr, self.arc_off, self.feat_ptr, self.feat_idx, self.heads)

    @property
    def n_sentences(self) -> int:
        return len(self.sent_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.sent_ptr[-1])

    @property
    def max_len(self) -> int:
        return int(np.diff(self.sent_ptr).max(initial=1)) or 1

    @property
    def part_ptr(self) -> np.ndarray:
        """Offsets of the sentences' part blocks: the (n_i + 1)^2 arc slots."""
        return self.arc_off

    def gold_part_scores(self, eps):
        """Arc variables putting nearly all mass on the gold trees: every wrong arc costs a factor eps / n^2,
        so the gold tree's probability is ~ 1 - eps (w(u) ~ 0, where L-BFGS starts)."""
        s = np.zeros(int(self.arc_off[-1]))
        for i in range(self.n_sentences):
            n = self.sent_ptr[i + 1] - self.sent_ptr[i]
            h = self.heads[self.sent_ptr[i]:self.sent_ptr[i + 1]]
            s[self.arc_off[i] + h * (n + 1) + np.arange(1, n + 1)] = np.log(n * n / eps + 1.0)
        return s

    def subset(self, sentences) -> "TreeProblem":
        """The same feature space restricted to some sentences."""
        idx = np.asarray(sentences, dtype=np.int64)
        sent_ptr, words = gather_rows(self.sent_ptr, idx)
        arc_off, slots = gather_rows(self.arc_off, idx)
        feat_ptr, take = gather_rows(self.feat_ptr, slots)
        heads = self.heads[words]
        return TreeProblem(sent_ptr, arc_off, feat_ptr, self.feat_idx[take], heads, self.n_features,
                           self.weight[idx])

    def _validate(self):
        n = self.n_sentences
        if n < 1:
            raise DataContentError("the training data has no sentences")
        lens = np.diff(self.sent_ptr)
        if np.any(lens < 1) or len(self.heads) != self.n_tokens:
            raise InvalidInputError("sentence offsets are inconsistent with the gold heads")
        if not np.array_equal(np.diff(self.arc_off), (lens + 1) ** 2) or self.feat_ptr[-1] != len(self.feat_idx):
            raise InvalidInputError("arc slot offsets are inconsistent")
        sent_of = np.repeat(np.arange(n), lens)
        if np.any(self.heads < 0) or np.any(self.heads > lens[sent_of]):
            raise InvalidInputError("gold head out of range")
        if len(self.feat_idx) and (self.feat_idx.min() < 0 or self.feat_idx.max() >= self.n_features):
            raise InvalidInputError("feature id out of range")
        self._check_weight()

    def objective(self, C: float, loss: str = "ll"):
        from .objective import TreeObjective
        return TreeObjective(self, C, loss=loss)


def check_tree(heads, where=""):
    """InvalidInputError unless heads (1-based, 0 = root) form a tree: every word reaches the root, no cycle."""
    heads = np.asarray(heads)
    n = len(heads)
    for m in range(1, n + 1):
        seen, h = 0, m
        while h != 0:
            h = int(heads[h - 1])
            seen += 1
            if seen > n:
                raise DataContentError(f"{where}the heads contain a cycle through word {m}")


def projective_trees(sentences) -> list:
    """Indices of the sentences whose gold tree is projective; checks that every gold tree is a tree.

    Non-projective trees cannot be produced by a projective parser; they are
    skipped for training (and counted), not projectivized.
    """
    keep = []
    for i, s in enumerate(sentences):
        check_tree(s.heads, f"sentence {i + 1}: ")
        if is_projective(s.heads):
            keep.append(i)
    if not keep:
        raise DataContentError("no projective training tree")
    return keep


def build_tree_problem(sentences, space=None, cutoff=1, weight=None):
    """(TreeProblem, ArcFeatureSpace, non-projective count) from CoNLL sentences (loglin.data.conll.Sentence);
    ``weight``: one loss multiplier per sentence of ``sentences``."""
    from .features import ArcFeatureSpace
    keep = projective_trees(sentences)
    kept = [sentences[i] for i in keep]
    if space is None:
        space = ArcFeatureSpace.fit(kept, cutoff=cutoff)
    sent_ptr, arc_off, feat_ptr, feat_idx = space.encode(kept)
    heads = np.concatenate([s.heads for s in kept]).astype(np.int32)
    problem = TreeProblem(sent_ptr, arc_off, feat_ptr, feat_idx, heads, space.n_features,
                          weight=None if weight is None else np.asarray(weight, dtype=np.float64)[keep])
    return problem, space, len(sentences) - len(keep)
