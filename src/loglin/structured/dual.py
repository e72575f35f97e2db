"""The duals D-LL (4) and D-MM (5) of structured models, over products of simplices, in part form.

Collins et al. (2008) minimize, over u_i in the simplex of labellings of x_i,

    Q_LL(u) = sum_i c_i sum_y u_iy log u_iy + 1/(2C') ||w(u)||^2          (4)
    Q_MM(u) = -sum_i c_i sum_y u_iy e(y_i, y) + 1/(2C') ||w(u)||^2          (5)
    w(u)    = sum_i c_i sum_y u_iy (f(x_i, y_i) - f(x_i, y))

(c_i = sentence weights, 1 by default). With C' = 1/C (our LIBLINEAR-scale C)
the primal optimum is w* = w(u*)/C' = C w(u*) and min f = -C min Q, so we
report the dual in the primal's scale, D(u) = -C Q(u) <= f(w) for every w.

u_i is never stored: it is p(s_i), the distribution with
log p_y(s_i) = sum_{r in y} s_ir - log Z(s_i) (Lemma 1), one variable per part
of the structure (loglin.structured.contract). The variables of all instances
live in one flat array, instance i's block at ``part_ptr[i]`` with the
structure's layout (chain: n_i K node parts then one K x K block of edge parts
shared by the positions, as the transition features are; tree: (n_i + 1)^2 arc
slots). What the objective needs of u_i are part marginals mu_i and one number
per instance, ``term_i``: sum_y u_iy log u_iy = sum_r mu_ir s_ir - log Z (LL)
or the expected Hamming loss sum_r mu_ir e_ir (MM).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import vector as vk
from ..kernels.maxent import _blocks
from . import passes


INIT_EPS = 0.01


class PartDualState:
    """s, marginals mu, per-instance terms and w(u) of any structured problem and loss ("ll" or "mm").

    Offers the dual value, primal recovery, online EG (Figures 2-3) and the batch EG try/commit
    (Figure 1) that loglin.structured.eg drives. ``init="gold"`` (default) starts every u_i close to
    the gold labelling (the problem's ``gold_part_scores``), so w(u) ~ 0; ``"uniform"`` starts from s = 0.
    ``store_marginals=False`` keeps s only (``mu`` is then empty): an online visit recomputes the marginals of
    the current s_i (one more forward-backward) instead of reading them, same iterates, half the part memory.
    """

    PARTS = ("s", "mu", "term")

    def __init__(self, problem, loss="ll", *, s=None, init="gold", eps=INIT_EPS, store_marginals=True):
        p = problem
        self.problem = problem
        self.loss = loss
        self.mm = loss == "mm"
        self.part_ptr = np.ascontiguousarray(p.part_ptr, dtype=np.int64)
        n_parts = int(self.part_ptr[-1])
        if s is not None:
            self.s = np.array(s, dtype=np.float64).ravel()
            if self.s.shape != (n_parts,):
                raise InvalidInputError(f"need {n_parts} part variables, got {self.s.shape}")
        elif init == "uniform":
            self.s = np.zeros(n_parts)
        elif init == "gold":
            self.s = np.asarray(p.gold_part_scores(eps), dtype=np.float64)
        else:
            raise InvalidInputError(f"init must be 'gold' or 'uniform', got {init!r}")
        self.mu = np.zeros(n_parts if store_marginals else 0)
        self.term = np.empty(p.n_sentences)
        self.bounds = _blocks(p.n_sentences)
        self.wu = np.zeros(p.n_features)
        self.refresh()

    @classmethod
    def from_primal(cls, problem, w, loss="ll"):
        """u_i = p(y | x_i; w): s_i = the part scores of w (a warm start from a primal point)."""
        part_ptr = np.ascontiguousarray(problem.part_ptr, dtype=np.int64)
        s = np.zeros(int(part_ptr[-1]))
        passes.all_part_scores(problem.data, np.ascontiguousarray(w, dtype=np.float64), part_ptr, s)
        return cls(problem, loss, s=s)

    def _parts(self):
        return [getattr(self, name) for name in self.PARTS]

    def marginals(self):
        """The part marginals of s: the stored ``mu``, or (``store_marginals=False``) a fresh array computed
        from s by one forward-backward per instance."""
        if len(self.mu) or not len(self.s):
            return self.mu
        mu = np.zeros(len(self.s))
        self.propose(0.0, 1.0, np.empty(len(self.s)), mu, np.empty(self.problem.n_sentences))
        return mu

    def refresh(self):
        """Recompute marginals, terms and w(u) from s (exact; removes drift of incremental updates)."""
        self.wu = self.problem.emp - self.propose(0.0, 1.0, *self._parts())

    def propose(self, eta, C, out_s, out_mu, out_term):
        """Batch EG proposal at rate eta into the out arrays; returns sum_i c_i E_{p(s_i')} f."""
        p = self.problem
        return passes.eg_batch_proposal(p.data, self.part_ptr, float(eta), float(C), self.mm, self.wu, self.bounds,
                                        p.weight, self.s, out_s, out_mu, out_term)

    def online(self, C, picks, rates, adapt=True, max_trial=30, floor=0.0):
        """EG updates of the instances ``picks`` in that order, rates not halved below ``floor``;
        (accepted, trials, dual change)."""
        p = self.problem
        if getattr(self, "_max_touch", None) is None:
            self._max_touch = int(passes.touch_bound(p.data))
        return passes.eg_online_pass(p.data, self.part_ptr, np.asarray(picks, dtype=np.int64), rates, adapt,
                                     max_trial, float(C), self.mm, self.wu, self._max_touch, p.weight, self.s,
                                     self.mu, self.term, float(floor))

    def try_online(self, C, picks, rates, adapt=True, max_trial=30, floor=0.0):
        """:meth:`online` on ``picks``, then the state put back as it was; returns what ``online`` returned.

        Saves w(u) and only the picked instances' blocks (what a pass can change), not a copy of the
        whole state: trying a rate on 10% of the sentences then holds ~10% of the part arrays extra."""
        picks = np.asarray(picks, dtype=np.int64)
        blocks = [slice(int(self.part_ptr[i]), int(self.part_ptr[i + 1])) for i in picks]
        kept = [a for a in (self.s, self.mu) if len(a)]            # mu is empty when not stored
        saved = [np.concatenate([a[b] for b in blocks]) if blocks else a[:0].copy() for a in kept]
        term, wu = self.term[picks], self.wu.copy()
        try:
            return self.online(C, picks, rates, adapt, max_trial, floor)
        finally:
            for a, values in zip(kept, saved):
                at = 0
                for b in blocks:
                    size = b.stop - b.start
                    a[b] = values[at:at + size]
                    at += size
            self.term[picks] = term
            self.wu[:] = wu

    # ------------------------------------------------------------ objective values
    def terms_total(self) -> float:
        total = float(vk.dot(self.problem.weight, self.term))     # Numba's: np.dot would wake BLAS threads
        return -total if self.mm else total

    def Q(self, C) -> float:
        """Collins' dual Q(u) with C' = 1/C (eq. 4 or 5)."""
        return self.terms_total() + 0.5 * C * float(vk.dot(self.wu, self.wu))

    def dual(self, C) -> float:
        """D(u) = -C Q(u), the lower bound on the primal f in LIBLINEAR scale."""
        return -C * self.Q(C)

    def primal_weights(self, C) -> np.ndarray:
        """w = w(u) / C' = C w(u)  (primal recovery, Figure 3's output)."""
        return C * self.wu

    # ------------------------------------------------------------ EG steps (used by loglin.structured.eg)
    @property
    def n_blocks(self):
        return self.problem.n_sentences

    def batch_try(self, eta, C):
        """Propose the batch step at rate eta into buffers; return Q of the proposal."""
        if getattr(self, "_buf", None) is None:
            self._buf = [np.empty_like(a) for a in self._parts()]
        self._wu_new = self.problem.emp - self.propose(eta, C, *self._buf)
        terms = float(vk.dot(self.problem.weight, self._buf[-1]))
        return (-terms if self.mm else terms) + 0.5 * C * float(vk.dot(self._wu_new, self._wu_new))

    def batch_commit(self):
        for k, name in enumerate(self.PARTS):
            current = getattr(self, name)
            setattr(self, name, self._buf[k])
            self._buf[k] = current
        self.wu = self._wu_new

    def copy(self):
        other = object.__new__(type(self))
        other.__dict__.update({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()
                               if k != "_buf"})
        return other


class ChainDualState(PartDualState):
    """The part dual state of a chain problem; ``s_node`` (tokens x K) and ``s_edge`` (sentences x K x K)
    give the variables in the shape of the parts (a start point, or views for tests)."""

    def __init__(self, problem, loss="ll", s_node=None, s_edge=None, init="gold", eps=INIT_EPS, *, s=None):
        if s is None and (s_node is not None or s_edge is not None):
            s = problem.gold_part_scores(eps) if init == "gold" else np.zeros(int(problem.part_ptr[-1]))
            node, edge = self._index(problem)
            if s_node is not None:
                s[node] = np.asarray(s_node, dtype=np.float64)
            s[edge] = 0.0 if s_edge is None else np.asarray(s_edge, dtype=np.float64)
        super().__init__(problem, loss, s=s, init=init, eps=eps)

    @staticmethod
    def _index(p):
        """Flat positions of the node parts (tokens x K) and edge parts (sentences x K x K)."""
        K = p.n_labels
        ptr = p.part_ptr
        sent_of = np.repeat(np.arange(p.n_sentences), np.diff(p.seq_ptr))
        first = ptr[sent_of] + (np.arange(p.n_tokens) - p.seq_ptr[sent_of]) * K
        node = first[:, None] + np.arange(K)
        edge = (ptr[:-1] + np.diff(p.seq_ptr) * K)[:, None, None] + np.arange(K * K).reshape(K, K)
        return node, edge

    @property
    def s_node(self):
        return self.s[self._index(self.problem)[0]]

    @property
    def s_edge(self):
        return self.s[self._index(self.problem)[1]]


def duality_gap(objective, state):
    """(f(C w(u)) - D(u), relative gap) for a structured objective and a dual state of the same loss."""
    w = state.primal_weights(objective.C)
    f = objective.fun(w)
    d = state.dual(objective.C)
    return f - d, (f - d) / abs(f) if f else f - d
