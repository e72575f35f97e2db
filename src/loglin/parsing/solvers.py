"""Solvers for parser objectives (kind "tree"): EG on the duals and the paper's baselines (Collins et al. 2008).

* ``eg`` / ``eg-batch``: part-based online / batch EG (Figures 1-3) with
  the section 7 learning rates - the loops of loglin.structured.eg run on a
  :class:`~loglin.parsing.dual.TreeDualState`;
* ``sgd``: loglin.structured.sgd on the CRF primal (section 7.1.3);
* ``cutting-plane``: 1-slack cutting-plane structural SVM on the M3N primal (section 8 baseline),
  loss-augmented Eisner as separation oracle.
``lbfgs`` serves the CRF primal directly (it accepts kind "tree").
"""
from __future__ import annotations

from ..errors import InvalidInputError
from ..structured.cutting_plane import one_slack_cutting_plane
from ..structured.eg import check_state, eg_batch, eg_online
from ..structured.sgd import structured_sgd
from .dual import TreeDualState
from .objective import TreeObjective


def _state(objective, state):
    if not isinstance(objective, TreeObjective):
        raise InvalidInputError("the tree solvers train TreeObjective parsers (CRF / M3N)")
    return TreeDualState(objective.problem, objective.loss) if state is None else check_state(objective, state)


def tree_eg(objective, w, rng, state=None, **options):
    return eg_online(objective, w, rng, _state(objective, state), **options)


def tree_eg_batch(objective, w, rng, state=None, **options):
    return eg_batch(objective, w, rng, _state(objective, state), **options)


def tree_sgd(objective, w, rng, eta0="auto", validation=None):
    """loglin.structured.sgd on the parser's CRF primal."""
    return structured_sgd(objective, w, rng, eta0, validation)


def tree_cutting_plane(objective, w, rng, epsilon=1e-6):
    """Same algorithm as loglin.structured.cutting_plane, with loss-augmented Eisner as the oracle."""
    return one_slack_cutting_plane(objective, w, epsilon)


tree_eg.forwards_options_to = eg_online          # the option check (loglin.solvers.options) reads these
tree_eg_batch.forwards_options_to = eg_batch
