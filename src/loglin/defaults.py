"""The training defaults of every model kind (solver, C, tolerances, iterations), declared once.

:mod:`loglin.training` re-exports them. They live apart from it because the option parsers of the commands
(``--help`` included) state them, and ``loglin.training`` loads the solvers and their Numba kernels
(docs/decisions/0056).
"""
from __future__ import annotations

# The solver used when none is named, per model kind ("tagger": the Maxent tagger's problem);
# docs/decisions/0010-training-defaults.md gives the reasons and the measurements.
DEFAULT_SOLVERS = {"maxent": "tron", "binary": "tron", "chain": "lbfgs", "tree": "eg", "tagger": "eg-acc"}
DEFAULT_SOLVER = DEFAULT_SOLVERS["maxent"]
# max-margin (loss "mm") objectives are not differentiable: their defaults are dual solvers
# (chains and trees: block-coordinate pairwise Frank-Wolfe, whose gap closes where EG's stalls: docs/decisions/0040)
DEFAULT_MM_SOLVERS = {"maxent": "eg-mm", "chain": "bcfw", "tree": "bcfw"}
# bcfw's passes over the sentences per driver step: a pass costs about the driver's test of the iterate (one
# loss-augmented decoding pass), and the iteration caps count steps (docs/decisions/0040)
DEFAULT_BCFW_PASSES = 5
DEFAULT_L1_SOLVERS = {"binary": "newglmnet"}   # penalty "l1" / "elasticnet"; other kinds: owlqn
# ||grad f(w)|| <= tol ||grad f(0)|| (LIBLINEAR's 1e-3 is loose on NLP data: docs/decisions/0010)
DEFAULT_TOL = 1e-4
DEFAULT_GAP_TOL = 1e-4          # dual solvers on chain / tree problems: relative duality gap
# C (LIBLINEAR scale) and outer iterations when not given, per model kind: the papers' sigma^2 = 10 for
# taggers and chain models, 0.1 for parsers (Collins et al.'s C' = 10); a parser's iteration is an epoch of EG.
DEFAULT_C = {"maxent": 1.0, "binary": 1.0, "tagger": 10.0, "chain": 10.0, "tree": 0.1}
# M3N (loss "mm") chains: Collins et al.'s C' = 10 as for parsers; C = 10 leaves the hinge dual's quadratic
# term C/2 ||w(u)||^2 so steep that EG's gap stays ~1 for hundreds of epochs (docs/decisions/0025)
DEFAULT_MM_C = {"chain": 0.1}
# and their relative duality gap: EG closes the hinge dual's gap as O(1/epochs), not linearly as the CRF's
# (Collins et al. 2008, section 5.1, Table 1), so 1e-4 costs ~10x the epochs of 1e-3 (docs/decisions/0025)
DEFAULT_MM_GAP_TOL = {"chain": 1e-3}
# and online EG's order on them: each sentence once per epoch in a new random order, ~25-35% fewer epochs
# to the same gap than Collins' draws with replacement (docs/decisions/0031)
DEFAULT_MM_ORDER = "permutation"
DEFAULT_MAX_ITER = {"maxent": 1000, "binary": 1000, "tagger": 1000, "chain": 1000, "tree": 200}
LOSSES = ("ll", "mm")


def default_C(kind: str, loss: str = "ll") -> float:
    """The regularization constant used when none is given, for ``kind`` models with ``loss``."""
    if loss == "mm" and kind in DEFAULT_MM_C:
        return DEFAULT_MM_C[kind]
    return DEFAULT_C[kind]


def default_gap_tol(kind: str, loss: str = "ll") -> float:
    """The relative duality gap at which dual solvers of ``kind`` models with ``loss`` stop by default."""
    if loss == "mm" and kind in DEFAULT_MM_GAP_TOL:
        return DEFAULT_MM_GAP_TOL[kind]
    return DEFAULT_GAP_TOL
