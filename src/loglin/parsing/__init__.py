"""Arc-factored dependency parsing trained as in Collins et al. (2008), section 8.

The tree structure itself (Eisner, inside-outside) is loglin.structured.tree; this
package keeps the parser's features, problem, I/O and UAS; the structured solvers
(loglin.structured) train its objectives.

* :mod:`.features`  McDonald et al. (2005)-style arc features, hashed then indexed with a cut-off
* :mod:`.problem`   TreeProblem: sentences, arc slots and their features as flat arrays
* :mod:`.objective` CRF (P-LL) and M3N (P-MM) primal objectives (kind "tree")
* :mod:`.dual`      D-LL / D-MM in arc-part form for EG
* :mod:`.model`     ParserModel (parse / evaluate / save / load), UAS
* :mod:`.estimator` loglin.Parser, and train_parser (one call of it)
* :mod:`.cli`       ``loglin parse train|evaluate|run``
"""
