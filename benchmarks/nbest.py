"""Cost of exact k-best Viterbi against Viterbi on the CoNLL-2000 chunking test set (decision 0037).

    python -m benchmarks.nbest [--model M.npz] [--repeats 5] [--ks 1,5,10]

Trains a first-order chain CRF (the chunking preset's attributes, C = 1, L-BFGS for a fixed number of
iterations; the decoding cost does not depend on how converged the weights are) unless ``--model`` names
a saved ChainModel, encodes the test set once, then times in one process, alternating, on the encoded
arrays: Viterbi of every sentence (ChainModel's decoder, loglin.structured.passes.decode_all) and
loglin.structured.nbest.chain_n_best for each k, with raw scores (M3N) and with log-probabilities (CRF:
one forward pass more). Medians of wall and CPU seconds and their ratio to Viterbi. Run it under the
benchmark lock with NUMBA_NUM_THREADS=1.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from loglin.data import read_conll2000, shared_data_dir
from loglin.kernels.maxent import _blocks
from loglin.structured.chain import chain_data
from loglin.structured.model import ChainModel, train_chain_model
from loglin.structured.nbest import chain_n_best
from loglin.structured.passes import decode_all


def _model(path, train_path, max_iter):
    if path is not None and Path(path).is_file():
        return ChainModel.load(path)
    model = train_chain_model(read_conll2000(train_path), "chunk", "crf", "lbfgs", C=1.0, max_iter=max_iter,
                              tol=1e-12)
    if path is not None:
        model.save(path)
    return model


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default=None)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ks", default="1,5,10")
    ap.add_argument("--max-iter", type=int, default=30)
    args = ap.parse_args(argv)
    if shared_data_dir() is None:
        raise SystemExit("CoNLL-2000 not found: set LOGLIN_DATA (see README)")
    root = shared_data_dir() / "conll2000"
    model = _model(args.model, root / "train.txt", args.max_iter)
    test = read_conll2000(root / "test.txt")
    s = model.space
    seq_ptr, tok_ptr, tok_attr = s.encode([[t[:2] for t in sent] for sent in test])
    n_tok = int(seq_ptr[-1])
    data = chain_data(seq_ptr, tok_ptr, tok_attr, s.map_ptr, s.map_label, s.map_feat, s.n_state, s.n_labels)
    blocks = _blocks(len(seq_ptr) - 1)
    out = np.empty(n_tok, dtype=np.int32)

    def viterbi():
        decode_all(data, model.w, blocks, out)

    def k_best(k, log_prob):
        return lambda: chain_n_best(model.w, s.n_state, s.n_labels, s.map_ptr, s.map_label, s.map_feat, seq_ptr,
                                    tok_ptr, tok_attr, n=k, log_prob=log_prob)

    ks = [int(k) for k in args.ks.split(",")]
    cases = {"viterbi": viterbi}
    for k in ks:
        cases[f"k={k} scores"] = k_best(k, False)
        cases[f"k={k} log-prob"] = k_best(k, True)
    for f in cases.values():            # compile outside the clock
        f()
    viterbi()
    labels, _ = chain_n_best(model.w, s.n_state, s.n_labels, s.map_ptr, s.map_label, s.map_feat, seq_ptr, tok_ptr,
                             tok_attr, n=1, log_prob=False)
    assert np.array_equal(labels[:, 0], out), "1-best differs from Viterbi"
    times = {name: ([], []) for name in cases}
    for _ in range(args.repeats):
        for name, f in cases.items():
            w0, c0 = time.perf_counter(), time.process_time()
            f()
            times[name][0].append(time.perf_counter() - w0)
            times[name][1].append(time.process_time() - c0)
    base_w, base_c = (statistics.median(v) for v in times["viterbi"])
    print(f"CoNLL-2000 test: {len(seq_ptr) - 1} sentences, {n_tok} tokens, K = {s.n_labels}; "
          f"medians of {args.repeats}")
    print("| decoder | wall s | CPU s | CPU / Viterbi | tokens/s (wall) |")
    print("|---|---|---|---|---|")
    for name, (wall, cpu) in times.items():
        mw, mc = statistics.median(wall), statistics.median(cpu)
        print(f"| {name} | {mw:.4f} | {mc:.4f} | {mc / base_c:.2f} | {n_tok / mw:,.0f} |")


if __name__ == "__main__":
    main()
