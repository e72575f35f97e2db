"""Primal objectives of arc-factored parsers in LIBLINEAR's scale (Collins et al. 2008, section 8).

    CRF (P-LL):  f(w) = 1/2 ||w||^2 + C sum_i c_i [log Z_w(x_i) - w . f(x_i, y_i)]
    M3N (P-MM):  f(w) = 1/2 ||w||^2 + C sum_i c_i max_y [e(y_i, y) - w . (f(x_i, y_i) - f(x_i, y))]

Z sums over projective trees (inside algorithm), e is the number of words with
a wrong head (per-arc Hamming loss, maximized by loss-augmented Eisner).
Collins et al.'s C' is 1/C; their objective is f / C. Same interface as
loglin.structured.objective.ChainObjective, with kind "tree".
"""
from __future__ import annotations

from ..structured.objective import StructuredObjective


class TreeObjective(StructuredObjective):
    """Regularized primal of a :class:`TreeProblem` at regularization C."""

    kind = "tree"
    structure = "parser"
