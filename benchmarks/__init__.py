"""Benchmarks against LIBLINEAR, scikit-learn and SciPy (not part of the installed package)."""
