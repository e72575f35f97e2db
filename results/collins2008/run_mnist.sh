#!/bin/sh
# Full-size Collins et al. (2008) multi-class reproductions, one after another (run from the repo root):
#   nohup sh results/collins2008/run_mnist.sh > results/collins2008/run_mnist.log 2>&1 &
# CPU-time limits per method are inside the experiments (--time-limit, CPU seconds).
set -x
L="nice -n 5 env NUMBA_NUM_THREADS=1 .venv/bin/loglin reproduce"
R=results/collins2008
$L collins2008-mnist-baselines --time-limit 100 --out $R/mnist-baselines
$L collins2008-mnist-order --out $R/mnist-order
$L collins2008-mnist-path --out $R/mnist-path
$L collins2008-mnist-eg --out $R/mnist-eg
$L collins2008-mnist-anneal --out $R/mnist-anneal
$L collins2008-mnist-mm --time-limit 60 --out $R/mnist-mm
$L collins2008-news20-baselines --time-limit 60 --out $R/news20-baselines
