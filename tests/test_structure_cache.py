"""The structure contract keeps Numba's on-disk cache: a second fresh process compiles no trainer pass."""
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from test_structured import random_chain_problem
from loglin.structured import passes
from loglin.structured.dual import PartDualState
p = random_chain_problem(n_sent=5, seed=0)
for loss in ("ll", "mm"):
    p.objective(1.0, loss).fun_grad(np.zeros(p.n_features))
    state = PartDualState(p, loss)
    state.online(1.0, np.arange(5), np.full(5, 0.5))
    state.batch_try(0.5, 1.0)
names = ("loss_and_expectation", "hinge_and_subgradient", "empirical_counts", "eg_online_pass",
         "eg_batch_proposal", "touch_bound")
print(json.dumps({n: [sum(getattr(passes, n).stats.cache_hits.values()),
                      sum(getattr(passes, n).stats.cache_misses.values())] for n in names}))
"""


def _run():
    tests = Path(__file__).parent
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(tests)], capture_output=True, text=True, check=True,
                         timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_process_loads_every_pass_from_the_cache():
    _run()                                   # compiles (and writes the cache) unless an earlier run did
    stats = _run()
    assert all(misses == 0 and hits > 0 for hits, misses in stats.values()), stats
