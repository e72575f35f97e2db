"""The duals D-LL (4) and D-MM (5) of chain models, over products of simplices, in part form.

Collins et al. (2008) minimize, over u_i in the simplex of labellings of x_i,

    Q_LL(u) = sum_i c_i sum_y u_iy log u_iy + 1/(2C') ||w(u)||^2          (4)
    Q_MM(u) = -sum_i c_i sum_y u_iy e(y_i, y) + 1/(2C') ||w(u)||^2          (5)
    w(u)    = sum_i c_i sum_y u_iy (f(x_i, y_i) - f(x_i, y))

(c_i = sentence weights, 1 by default). With C' = 1/C (our LIBLINEAR-scale C)
the primal optimum is w* = w(u*)/C' = C w(u*) and min f = -C min Q, so we
report the dual in the primal's scale, D(u) = -C Q(u) <= f(w) for every w.

u_i is never stored: it is p(s_i), the distribution with
log p_y(s_i) = sum_{r in y} s_ir - log Z(s_i) (Lemma 1), with one s per node
part (t, y) and one K x K block per sentence for the edge parts (they share
the transition features, so EG keeps them position-independent). What the
objective needs of u_i are part marginals mu_i and one number per sentence,
``term_i``: sum_y u_iy log u_iy = sum_r mu_ir s_ir - log Z (LL) or the
expected Hamming loss sum_r mu_ir e_ir (MM).
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import chain as ck
from ..kernels.maxent import _blocks


INIT_EPS = 0.01


class PartDualState:
    """What every part-based dual state shares (Figure 3): the dual value, primal recovery, and the
    batch EG try/commit on the part arrays named in ``PARTS`` (s arrays, then marginals, then ``term``,
    the order of the ``propose`` outputs). Subclasses give ``propose`` and ``online``."""

    PARTS = ()

    def _parts(self):
        return [getattr(self, name) for name in self.PARTS]

    def refresh(self):
        """Recompute marginals, terms and w(u) from s (exact; removes drift of incremental updates)."""
        self.wu = self.problem.emp - self.propose(0.0, 1.0, *self._parts())

    # ------------------------------------------------------------ objective values
    def terms_total(self) -> float:
        total = float(self.problem.weight @ self.term)
        return -total if self.mm else total

    def Q(self, C) -> float:
        """Collins' dual Q(u) with C' = 1/C (eq. 4 or 5)."""
        return self.terms_total() + 0.5 * C * float(self.wu @ self.wu)

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
        terms = float(self.problem.weight @ self._buf[-1])
        return (-terms if self.mm else terms) + 0.5 * C * float(self._wu_new @ self._wu_new)

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
    """s, marginals mu, per-sentence terms and w(u) for one chain problem and loss ("ll" or "mm").

    ``init="gold"`` (default) starts every u_i close to the gold labelling (node potentials
    that give the gold label marginal 1 - eps), so w(u) ~ 0; ``"uniform"`` starts from s = 0.
    """

    PARTS = ("s_node", "s_edge", "mu_node", "mu_edge", "term")

    def __init__(self, problem, loss="ll", s_node=None, s_edge=None, init="gold", eps=INIT_EPS):
        p = problem
        K = p.n_labels
        self.problem = problem
        self.mm = loss == "mm"
        self.loss = loss
        if s_node is not None:
            self.s_node = np.array(s_node, dtype=np.float64)
        elif init == "uniform":
            self.s_node = np.zeros((p.n_tokens, K))
        elif init == "gold":       # token marginals 1 - eps on the gold labels: w(u) ~ 0 (where L-BFGS starts)
            self.s_node = np.zeros((p.n_tokens, K))
            self.s_node[np.arange(p.n_tokens), p.gold] = np.log((1.0 - eps) * (K - 1) / eps)
        else:
            raise InvalidInputError(f"init must be 'gold' or 'uniform', got {init!r}")
        self.s_edge = np.zeros((p.n_sentences, K, K)) if s_edge is None else np.array(s_edge, dtype=np.float64)
        self.mu_node = np.empty((p.n_tokens, K))
        self.mu_edge = np.empty((p.n_sentences, K, K))
        self.term = np.empty(p.n_sentences)
        self.bounds = _blocks(p.n_sentences)
        self.wu = np.zeros(p.n_features)
        self.refresh()

    @classmethod
    def from_primal(cls, problem, w, loss="ll"):
        """u_i = p(y | x_i; w): s_i = the part scores of w (a warm start from a primal point)."""
        p = problem
        K = p.n_labels
        s_node = np.empty((p.n_tokens, K))
        ck.unary_scores(0, p.n_tokens, np.asarray(w, dtype=np.float64), 1.0, p.tok_ptr, p.tok_attr,
                        p._val_or_empty(), p.map_ptr, p.map_label, p.map_feat, s_node)
        Tr = np.asarray(w[p.n_state:], dtype=np.float64).reshape(K, K)
        s_edge = np.broadcast_to(Tr, (p.n_sentences, K, K))
        return cls(problem, loss, s_node, s_edge)

    def propose(self, eta, C, out_s_node, out_s_edge, out_mu_node, out_mu_edge, out_term):
        """Batch EG proposal at rate eta into the out arrays; returns sum_i c_i E_{p(s_i')} f."""
        p = self.problem
        return ck.eg_batch_proposal(float(eta), float(C), self.mm, self.wu, p.n_state, self.bounds, p.max_len,
                                    *p.kernel_args(), p.gold, p.weight, self.s_node, self.s_edge, out_s_node,
                                    out_s_edge, out_mu_node, out_mu_edge, out_term)

    def online(self, C, picks, rates, adapt=True, max_trial=30):
        """EG updates of the sentences ``picks`` in that order; (accepted, trials, dual change)."""
        p = self.problem
        if getattr(self, "_max_touch", None) is None:
            self._max_touch = int(ck.touch_bound(p.seq_ptr, p.tok_ptr, p.tok_attr, p.map_ptr))
        return ck.eg_online_pass(np.asarray(picks, dtype=np.int64), rates, adapt, max_trial, float(C), self.mm,
                                 self.wu, p.n_state, p.max_len, self._max_touch, *p.kernel_args(), p.gold,
                                 p.weight, self.s_node, self.s_edge, self.mu_node, self.mu_edge, self.term)


def duality_gap(objective, state):
    """(f(C w(u)) - D(u), relative gap) for a ChainObjective and a ChainDualState of the same loss."""
    w = state.primal_weights(objective.C)
    f = objective.fun(w)
    d = state.dual(objective.C)
    return f - d, (f - d) / abs(f) if f else f - d
