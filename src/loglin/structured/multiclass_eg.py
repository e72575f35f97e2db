"""Exponentiated gradient for multi-class log-linear and max-margin models (Collins et al. 2008).

Solvers on the Maxent problems of the core (p(y|x) proportional to exp(w.f(x, y))):

* ``eg-ll``       online EG on D-LL (4), the paper's LLEG-Online: an alias of ``eg``
                  (loglin.solvers.eg, the same algorithm as Yu et al.'s Algorithm 8) with
                  Collins' defaults; random (Figure 2) or cyclic order, section 7 step
                  sizes, C annealing (section 7.1.1), warm starts (``state=EGState``);
* ``eg-batch``    batch EG on D-LL (Figure 1, LLEG-Batch);
* ``eg-mm``       online EG on D-MM (5) for the multi-class hinge (MMEG-Online);
* ``eg-mm-batch`` batch EG on D-MM (MMEG-Batch).

(``eg`` is the randomized online EG of Yu et al. 2011, Algorithm 8, on the merged-context dual; the
multi-class D-LL of Collins et al. is that dual before merging equal contexts.)

Scales: the core's primal is LIBLINEAR's 1/2 ||w||^2 + C sum loss; the paper's is
sum loss + C'/2 ||w||^2, so C' = 1/C, w = C w(u), and the dual is reported as
D(u) = -C Q(u) <= f(w) (see loglin.structured.multiclass). The LL solvers take the
core's MaxentObjective (``problem.objective(C)``); the MM solvers take a
``loglin.structured.multiclass.MaxMarginObjective(problem, C)``.
"""
from ..errors import InvalidInputError
from ..objective import MaxentObjective
from ..solvers.eg import eg
from . import eg as _eg
from .multiclass import MaxMarginObjective, multiclass_state, require_plain_regularizer


def _state(objective, state, loss, method):
    wanted = MaxentObjective if loss == "ll" else MaxMarginObjective
    if not isinstance(objective, wanted):
        other = "MaxMarginObjective(problem, C) with eg-mm / eg-mm-batch" if loss == "ll" else \
            "problem.objective(C) with eg-ll / eg-batch"
        raise InvalidInputError(f"{method} needs a {wanted.__name__}; for the other loss use {other}")
    require_plain_regularizer(objective, method)
    if state is None:
        return multiclass_state(objective.problem, loss)
    return _eg.check_state(objective, state)


EG_LL_DEFAULTS = {"eta": "auto", "max_trial": 30, "init_eps": 0.01}


def eg_ll(objective, w, rng, **options):
    """LLEG-Online is Algorithm 8 of Yu et al. (2011) on the same dual: loglin.solvers.eg.eg."""
    if not isinstance(objective, MaxentObjective):
        raise InvalidInputError("eg-ll needs a MaxentObjective (problem.objective(C)); for the max-margin "
                                "objective use eg-mm / eg-mm-batch")
    for key, value in EG_LL_DEFAULTS.items():
        options.setdefault(key, value)
    return eg(objective, w, rng, **options)


def eg_batch(objective, w, rng, state=None, **options):
    return _eg.eg_batch(objective, w, rng, _state(objective, state, "ll", "eg-batch"), **options)


def eg_mm(objective, w, rng, state=None, **options):
    return _eg.eg_online(objective, w, rng, _state(objective, state, "mm", "eg-mm"), **options)


def eg_mm_batch(objective, w, rng, state=None, **options):
    return _eg.eg_batch(objective, w, rng, _state(objective, state, "mm", "eg-mm-batch"), **options)


# the option check (loglin.solvers.options) reads where each wrapper's options go
eg_ll.forwards_options_to = eg
eg_batch.forwards_options_to = eg_mm_batch.forwards_options_to = _eg.eg_batch
eg_mm.forwards_options_to = _eg.eg_online
