"""SGD on the CRF primal of any structure, the baseline of Collins et al. (2008), section 7.1.3.

In the paper's scale, sum_i loss_i + C'/2 ||w||^2 with C' = 1/C, the step on a
randomly chosen sentence i is

    w <- w - eta d/dw ( -log p(y_i | x_i; w) + C'/(2n) ||w||^2 ),   eta = eta0 / (1 + k/n)

The driver and the choice of eta0 are loglin.solvers.sgd's (one for every kind); a structure
supplies its pass (passes.sgd_epoch). eta0 is chosen by one pass over all sentences per value;
those selection passes are not counted in the trace (the paper does not count them either) but
are reported as the counter ``selection_passes``.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidInputError
from ..solvers.sgd import choose_eta0 as _choose_eta0
from ..solvers.sgd import sgd_epochs
from . import passes
from .objective import StructuredObjective


class StructuredEpochs:
    """The compiled SGD pass of a structured (CRF) problem."""

    selection_fraction = 1.0

    def __init__(self, objective):
        self.objective = objective
        self.n = objective.problem.n_sentences

    def run(self, w, order, eta0, step0):
        p = self.objective.problem
        v = np.array(w, dtype=np.float64)
        scale, k = passes.sgd_epoch(p.data, v, 1.0, np.asarray(order, dtype=np.int64), float(eta0), int(step0),
                                    p.n_sentences, 1.0 / self.objective.C, p.weight)
        w[:] = scale * v
        return k


def choose_eta0(objective, w, rng, validation=None):
    """(eta0, passes spent) on a structured objective (section 7.1.3)."""
    return _choose_eta0(StructuredEpochs(objective), w, rng, validation)


def structured_sgd(objective, w, rng, eta0="auto", validation=None):
    """SGD epochs on the CRF primal of any structure (one driver step per pass)."""
    if not isinstance(objective, StructuredObjective) or objective.loss != "ll":
        structure = getattr(objective, "structure", "structured")
        raise InvalidInputError(f"sgd trains the CRF (log-linear) {structure} objective, not the max-margin one")
    return sgd_epochs(StructuredEpochs(objective), w, rng, eta0, validation)
