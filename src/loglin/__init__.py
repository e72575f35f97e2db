"""loglin: log-linear models (Maxent, logistic regression, CRFs, M3N) with the optimizers of the literature."""
import os

# Numba's OpenMP threads spin between parallel passes by default; on a busy
# machine a 1 ms pass then costs 20-50 ms (measured in benchmarks/). Passive
# waiting keeps two-thread passes as cheap as one-thread ones. Must be set
# before the OpenMP runtime loads, i.e. before any kernel is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"
