"""Cost of exact k-best Eisner against Eisner on the CoNLL 2007 Spanish test set (decision 0045).

    python -m benchmarks.parse_nbest [--model M.npz] [--repeats 5] [--ks 1,5,10] [--sentences N]

Trains a CRF parser on esp.train (L-BFGS for a fixed number of iterations, C = 0.1; the decoding cost does
not depend on how converged the weights are) unless ``--model`` names a saved parser, encodes the test set
once, then times in one process, alternating, on the encoded arrays: Eisner on every sentence (what
ParserModel.parse runs, loglin.structured.passes.decode_all) and loglin.structured.tree_nbest.tree_n_best
for each k, with raw scores (M3N) and with log-probabilities (CRF: one inside pass more). Medians of wall
and CPU seconds and their ratio to Eisner. Run it under the benchmark lock with NUMBA_NUM_THREADS=1.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from loglin.data import shared_data_dir
from loglin.data.conll import read_conllx
from loglin.kernels.maxent import _blocks
from loglin.parsing.model import ParserModel
from loglin.structured.passes import decode_all
from loglin.structured.tree import tree_data
from loglin.structured.tree_nbest import tree_n_best


def _model(path, train_path, max_iter):
    if path is not None and Path(path).is_file():
        return ParserModel.load(path)
    from loglin.parsing.estimator import Parser
    parser = Parser(model="crf", solver="lbfgs", C=0.1, max_iter=max_iter, tol=1e-12).fit(read_conllx(train_path))
    if path is not None:
        parser.save(path)
    return parser.model_


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ks", default="1,5,10")
    ap.add_argument("--max-iter", type=int, default=3)
    ap.add_argument("--sentences", type=int, default=None, help="only the first N test sentences")
    args = ap.parse_args(argv)
    if shared_data_dir() is None:
        raise SystemExit("CoNLL 2007 Spanish not found: set LOGLIN_DATA (see README)")
    root = shared_data_dir() / "conll2007-esp"
    model = _model(args.model, root / "esp.train", args.max_iter)
    test = read_conllx(root / "esp.test")[:args.sentences]
    sent_ptr, arc_off, feat_ptr, feat_idx = model.space.encode(test)
    n_words = int(sent_ptr[-1])
    data = tree_data(sent_ptr, arc_off, feat_ptr, feat_idx)
    blocks = _blocks(len(test))
    out = np.empty(n_words, dtype=np.int32)

    def eisner():
        decode_all(data, model.w, blocks, out)

    def k_best(k, log_prob):
        return lambda: tree_n_best(model.w, sent_ptr, arc_off, feat_ptr, feat_idx, n=k, log_prob=log_prob)

    cases = {"eisner": eisner}
    for k in (int(k) for k in args.ks.split(",")):
        cases[f"k={k} scores"] = k_best(k, False)
        cases[f"k={k} log-prob"] = k_best(k, True)
    print("encoded; compiling", file=sys.stderr, flush=True)
    for f in cases.values():            # compile outside the clock
        f()
    for k in (1, 5):                    # the first tree of the k-best lists is Eisner's
        heads, _ = tree_n_best(model.w, sent_ptr, arc_off, feat_ptr, feat_idx, n=k, log_prob=False)
        assert np.array_equal(heads[:, 0], out), f"1-best of k = {k} differs from Eisner"
    times = {name: ([], []) for name in cases}
    for rep in range(args.repeats):
        print(f"repeat {rep}", file=sys.stderr, flush=True)
        for name, f in cases.items():
            w0, c0 = time.perf_counter(), time.process_time()
            f()
            times[name][0].append(time.perf_counter() - w0)
            times[name][1].append(time.process_time() - c0)
    base_w, base_c = (statistics.median(v) for v in times["eisner"])
    print(f"CoNLL 2007 Spanish test: {len(test)} sentences, {n_words} words (longest "
          f"{int(np.diff(sent_ptr).max())}), {model.space.n_features} features; medians of {args.repeats}")
    print("| decoder | wall s | CPU s | CPU / Eisner | words/s (CPU) |")
    print("|---|---|---|---|---|")
    for name, (wall, cpu) in times.items():
        mw, mc = statistics.median(wall), statistics.median(cpu)
        print(f"| {name} | {mw:.4f} | {mc:.4f} | {mc / base_c:.2f} | {n_words / mc:,.0f} |")


if __name__ == "__main__":
    main()
