"""Solvers for parser objectives (kind "tree"): EG on the duals and the paper's baselines (Collins et al. 2008).

* ``tree-eg`` / ``tree-eg-batch``: part-based online / batch EG (Figures 1-3) with
  the section 7 learning rates - the loops of loglin.structured.eg run on a
  :class:`~loglin.parsing.dual.TreeDualState`;
* ``tree-sgd``: SGD on the CRF primal, eta0 / (1 + k/n), eta0 chosen by one pass per value (section 7.1.3);
* ``tree-cutting-plane``: 1-slack cutting-plane structural SVM on the M3N primal (section 8 baseline),
  loss-augmented Eisner as separation oracle.
``lbfgs`` serves the CRF primal directly (it accepts kind "tree").
"""
from __future__ import annotations

from ..errors import InvalidInputError
from ..solvers.base import register_solver
from ..structured.cutting_plane import one_slack_cutting_plane
from ..structured.eg import check_state, eg_batch, eg_online
from ..structured.sgd import structured_sgd
from .dual import TreeDualState
from .objective import TreeObjective

KINDS = ("tree",)


def _state(objective, state):
    if not isinstance(objective, TreeObjective):
        raise InvalidInputError("the tree solvers train TreeObjective parsers (CRF / M3N)")
    return TreeDualState(objective.problem, objective.loss) if state is None else check_state(objective, state)


@register_solver("tree-eg", kinds=KINDS, summary="online EG on the parser CRF / M3N dual (arc parts)",
                 paper="Collins et al. 2008, Figures 2-3, sections 7-8")
def tree_eg(objective, w, rng, state=None, **options):
    return eg_online(objective, w, rng, _state(objective, state), **options)


@register_solver("tree-eg-batch", kinds=KINDS, summary="batch EG on the parser CRF / M3N dual",
                 paper="Collins et al. 2008, Figure 1")
def tree_eg_batch(objective, w, rng, state=None, **options):
    return eg_batch(objective, w, rng, _state(objective, state), **options)


@register_solver("tree-sgd", kinds=KINDS, summary="SGD on the parser CRF primal, eta0/(1 + k/n)",
                 paper="Collins et al. 2008 sec. 7.1.3")
def tree_sgd(objective, w, rng, eta0="auto", validation=None):
    """loglin.structured.sgd on the parser's CRF primal."""
    return structured_sgd(objective, w, rng, eta0, validation)


@register_solver("tree-cutting-plane", kinds=KINDS, summary="1-slack cutting-plane structural SVM for parser M3N",
                 paper="Tsochantaridis et al. 2004; Joachims et al. 2009; baseline of Collins et al. 2008 sec. 8")
def tree_cutting_plane(objective, w, rng, epsilon=1e-6):
    """Same algorithm as loglin.structured.cutting_plane, with loss-augmented Eisner as the oracle."""
    return one_slack_cutting_plane(objective, w, epsilon)
