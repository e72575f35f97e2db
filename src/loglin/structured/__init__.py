"""Structured (and multi-class) models trained on their duals: Collins et al. (2008).

* :mod:`.chain`        forward-backward (log space), Viterbi, loss-augmented Viterbi on one chain
* :mod:`.problem`      ChainProblem: sentences, attributes, state + transition features as arrays
* :mod:`.crf_features` CoNLL-2000 chunking / POS attributes (CRFsuite's chunking template)
* :mod:`.objective`    CRF (P-LL) and M3N (P-MM) primal objectives in LIBLINEAR scale
* :mod:`.dual`         D-LL / D-MM over products of simplices with part variables s_i
* :mod:`.multiclass`   the same duals on the core's MaxentProblem, and the multi-class hinge
* :mod:`.eg`           online (random / cyclic) and batch EG, step sizes, annealing, C path
* :mod:`.sgd`, :mod:`.cutting_plane`  the paper's baselines for chains
* :mod:`.model`        ChainModel (tag / save / load) and train_chain_model
"""
