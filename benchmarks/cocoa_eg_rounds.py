"""CoCoA+ with the EG local solver on a chain CRF (issue 19): rounds to a relative duality gap for K = 1..4
sentence shards against L-BFGS's optimum, CoNLL-2000 chunking (first N training sentences, C = 1). Counts only
(clock="cpu", every round recorded); a few minutes at N = 300:

    python -m benchmarks.cocoa_eg_rounds 300 400          # N sentences, round cap

Prints one JSON object; docs/decisions/0038 has the numbers.
"""
import json
import sys
import warnings

import numpy as np

from benchmarks.cocoa_rounds import rounds_to_gap
from loglin.training import train


def main(sentences=300, rounds=400):
    from loglin.data.conll import read_conll2000
    from loglin.experiments.datasets import conll2000_files
    from loglin.structured.crf_features import build_chain_problem
    warnings.simplefilter("ignore")
    problem, _ = build_chain_problem(read_conll2000(conll2000_files()[0])[:sentences], "chunk")
    reference = train(problem, 1.0, "lbfgs", tol=1e-11, max_iter=5000)[1]
    out = {"sentences": sentences, "features": problem.n_features, "lbfgs_iterations": reference.iterations,
           "lbfgs_f": reference.f, "cocoa": {}}
    for k in (1, 2, 3, 4):
        result = train(problem, 1.0, "cocoa", shards=k, gap_tol=1e-9, max_iter=rounds, random_state=0, clock="cpu",
                       warn=False)[1]
        dual = np.array([r["dual_objective"] for r in result.trace.records[1:]])
        out["cocoa"][f"K={k}"] = {"rounds_to_gap": rounds_to_gap(result), "rounds": result.iterations,
                                  "relative_f_error": (result.f - reference.f) / abs(reference.f),
                                  "dual_never_falls": bool(np.all(np.diff(dual) >= -1e-12 * abs(reference.f)))}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
