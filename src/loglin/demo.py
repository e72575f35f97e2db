"""`loglin demo`: the main job on data shipped inside the package.

Trains a Maxent chunker (OpenNLP-style predicates, sigma^2 = 10 as in the
papers) on the bundled CoNLL-2000 slice with the default solver, reports
held-out chunk F1 and training time, and writes the convergence plot and trace.
Each ``compare`` solver (L-BFGS, the baseline the papers measure their methods
against) then trains on the same problem for half as long as the default took
(enough to see which is ahead, at a small cost to the demo's wall time), and its
curve joins the plot.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from .data import read_conll2000
from .plotting import plot_convergence

SIGMA2 = 10.0
COMPARE = ("lbfgs",)


def run_demo(out_dir: Path, solver: str | None = None, quiet: bool = False, compare=COMPARE) -> int:
    from .tagging.datasets import bundled_conll2000_small
    from .tagging.tagger import DEFAULT_SOLVER, MaxentTaggerModel
    solver = solver or DEFAULT_SOLVER
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    train_path, test_path = bundled_conll2000_small()
    train, test = read_conll2000(train_path), read_conll2000(test_path)
    print(f"loglin demo: Maxent chunker on the bundled CoNLL-2000 slice "
          f"({len(train)} training / {len(test)} held-out sentences), solver {solver}, --sigma2 {SIGMA2:g}")
    start = time.perf_counter()
    # OpenNLP's feature set (cut-off 5, seen pairs): a small model that trains in seconds
    tagger = MaxentTaggerModel.train(train, "chunk", C=SIGMA2, solver=solver, cutoff=5, all_pairs=False, max_iter=500,
                          evaluate=test,
                          progress=not quiet and sys.stderr.isatty())
    wall = time.perf_counter() - start
    scores = tagger.evaluate(test)
    trace = tagger.result.trace
    trace.save(out_dir / "trace.csv")
    info = tagger.info
    traces = {solver: trace}
    results = {solver: tagger.result}
    budget = max(1.0, info["train_seconds"] / 2)
    for other in dict.fromkeys(compare):
        if other == solver:
            continue
        # the same problem, the first half of the default's time: which decreases f faster
        run = MaxentTaggerModel.train(train, "chunk", C=SIGMA2, solver=other, cutoff=5, all_pairs=False,
                                      max_iter=500, time_limit=budget, warn=False)
        traces[other], results[other] = run.result.trace, run.result
        run.result.trace.save(out_dir / f"trace-{other}.csv")
    plot = plot_convergence({"CoNLL-2000 chunking (bundled slice)": (traces, None)},
                            out_dir / "convergence.png", metric_name="held-out chunk F1 (greedy)")
    tagger.save(out_dir / "chunker.npz")
    print(f"  contexts {info['contexts']:,}, features {info['features']:,}; "
          f"{info['iterations']} iterations, objective {info['objective']:.6g}")
    print(f"  training time {info['train_seconds']:.2f} s (feature extraction {info['extract_seconds']:.2f} s, "
          f"wall incl. compilation and evaluation {wall:.1f} s)")
    print(f"  held-out chunk F1 {scores['f1']:.2f} (precision {scores['precision']:.2f}, recall "
          f"{scores['recall']:.2f}, beam {tagger.beam}), {scores['tokens_per_second']:,.0f} tokens/s")
    f_best = min(r.f for r in results.values())
    for name, r in results.items():
        print(f"  {name}: objective {r.f:.6g}, (f - f*)/f* = {(r.f - f_best) / abs(f_best):.1e} (f*: the lowest "
              f"reached) after {r.iterations} iterations, {r.train_seconds:.2f} s")
    print(f"  wrote {plot}, {out_dir / 'trace.csv'}, {out_dir / 'chunker.npz'}")
    return 0
