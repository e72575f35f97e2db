"""Structured (and multi-class) models trained on their duals: Collins et al. (2008).

* :mod:`.contract`     the structure contract: what a structure supplies (inference on one instance)
* :mod:`.chain`        linear chain: forward-backward (scaled space in :mod:`.chain_messages`, log space
                       as fallback), Viterbi, Hamming loss; ChainData
* :mod:`.constrained`  chain decoding with given (fixed or allowed) labels
* :mod:`.tree`         projective tree: Eisner, inside-outside, loss-augmented Eisner; TreeData
* :mod:`.chain2`       second-order chain (label trigrams): pair-state forward-backward and Viterbi
* :mod:`.node`         multi-class classification (one node, K labels) as a structure
* :mod:`.passes`       the trainer passes written once against the contract (loss, decode, SGD, EG)
* :mod:`.problem`      ChainProblem: sentences, attributes, state + transition features as arrays
* :mod:`.crf_features` ChainFeatureSpace: the chunk / POS template presets, attributes numbered first seen
* :mod:`.objective`    CRF (P-LL) and M3N (P-MM) primal objectives in LIBLINEAR scale, any structure
* :mod:`.dual`         D-LL / D-MM over products of simplices with part variables s_i, any structure
* :mod:`.multiclass`   the same duals on the core's MaxentProblem, and the multi-class hinge
* :mod:`.eg`           online (random / cyclic) and batch EG, step sizes, annealing, C path
* :mod:`.sgd`, :mod:`.cutting_plane`  the paper's baselines (any structure)
* :mod:`.model`        ChainModel (tag / save / load) and train_chain_model
"""
