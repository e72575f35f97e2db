"""The duals D-LL and D-MM of arc-factored parsers in part form (Collins et al. 2008, Figure 3, Lemma 1).

As for chains (loglin.structured.dual), u_i is never stored: it is the tree
distribution p(s_i) with log p_y(s_i) = sum_{(h,m) in y} s_i[h, m] - log Z(s_i),
one variable per arc. Inside-outside gives the arc marginals mu_i and

    term_i = sum_r mu_ir s_ir - log Z(s_i)    (LL: sum_y u log u)
    term_i = sum_r mu_ir e_ir                 (MM: expected Hamming loss)
    w(u)   = sum_i c_i (f(x_i, y_i) - sum_r mu_ir f(x_i, r)),   primal w = C w(u).

The interface (online, batch_try/commit, refresh, Q, dual, primal_weights,
copy) is the one loglin.structured.eg drives, so the same EG loops, step
size rules and C path serve parsers.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..kernels import dependency as dk
from ..kernels.maxent import _blocks
from ..structured.dual import PartDualState

INIT_EPS = 0.01


class TreeDualState(PartDualState):
    """s (one value per arc slot), mu, per-sentence terms and w(u) for a TreeProblem and loss ("ll" / "mm").

    ``init="gold"`` puts nearly all mass of u_i on the gold tree (w(u) ~ 0, where
    L-BFGS starts); ``"uniform"`` starts from s = 0 (uniform over projective trees).
    """

    PARTS = ("s_arc", "mu_arc", "term")

    def __init__(self, problem, loss="ll", s_arc=None, init="gold", eps=INIT_EPS):
        p = problem
        self.problem = problem
        self.loss = loss
        self.mm = loss == "mm"
        n_slots = int(p.arc_off[-1])
        if s_arc is not None:
            self.s_arc = np.array(s_arc, dtype=np.float64)
        elif init in ("gold", "uniform"):
            self.s_arc = np.zeros(n_slots)
            if init == "gold":
                for i in range(p.n_sentences):
                    n = p.sent_ptr[i + 1] - p.sent_ptr[i]
                    h = p.heads[p.sent_ptr[i]:p.sent_ptr[i + 1]]
                    # every wrong arc costs a factor eps / n^2: gold tree marginal ~ 1 - eps
                    self.s_arc[p.arc_off[i] + h * (n + 1) + np.arange(1, n + 1)] = np.log(n * n / eps + 1.0)
        else:
            raise InvalidInputError(f"init must be 'gold' or 'uniform', got {init!r}")
        self.mu_arc = np.empty(n_slots)
        self.term = np.empty(p.n_sentences)
        self.bounds = _blocks(p.n_sentences)
        self.wu = np.zeros(p.n_features)
        self.refresh()

    @classmethod
    def from_primal(cls, problem, w, loss="ll"):
        """u_i = p(y | x_i; w): s_i = the arc scores of w."""
        p = problem
        s = np.zeros(int(p.arc_off[-1]))
        L = p.max_len + 1
        S = np.empty((L, L))
        w = np.asarray(w, dtype=np.float64)
        for i in range(p.n_sentences):
            n = dk.arc_scores(w, 1.0, i, *_args(p), S)
            s[p.arc_off[i]:p.arc_off[i + 1]] = S[:n + 1, :n + 1].ravel()
        return cls(problem, loss, s)

    def propose(self, eta, C, out_s, out_mu, out_term):
        p = self.problem
        return dk.eg_batch_proposal(float(eta), float(C), self.mm, self.wu, self.bounds, p.max_len,
                                    *p.kernel_args(), p.heads, p.weight, self.s_arc, out_s, out_mu, out_term)

    def online(self, C, picks, rates, adapt=True, max_trial=30):
        p = self.problem
        if getattr(self, "_max_touch", None) is None:
            self._max_touch = int(dk.touch_bound(p.sent_ptr, p.arc_off, p.feat_ptr)) + 1
        return dk.eg_online_pass(np.asarray(picks, dtype=np.int64), rates, adapt, max_trial, float(C), self.mm,
                                 self.wu, p.max_len, self._max_touch, *p.kernel_args(), p.heads, p.weight,
                                 self.s_arc, self.mu_arc, self.term)


def _args(p):
    return p.arc_off, p.sent_ptr, p.feat_ptr, p.feat_idx
