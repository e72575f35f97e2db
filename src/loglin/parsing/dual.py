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

from ..structured.dual import INIT_EPS, PartDualState


class TreeDualState(PartDualState):
    """The part dual state of a TreeProblem: one variable per arc slot (``s_arc`` = ``s``).

    ``init="gold"`` puts nearly all mass of u_i on the gold tree (w(u) ~ 0, where
    L-BFGS starts); ``"uniform"`` starts from s = 0 (uniform over projective trees).
    """

    def __init__(self, problem, loss="ll", s_arc=None, init="gold", eps=INIT_EPS, *, s=None):
        super().__init__(problem, loss, s=s_arc if s is None else s, init=init, eps=eps)

    @property
    def s_arc(self):
        return self.s

    @property
    def mu_arc(self):
        return self.mu
