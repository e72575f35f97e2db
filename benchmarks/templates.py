"""Speed of the template compiler against per-token attribute strings (decision 0020).

    python benchmarks/templates.py [--repeats 5] [--bundled]

On CoNLL-2000 (../shared/data/conll2000, else the bundled slice) it times, in one
process and alternating, the two ways of turning sentences into the attribute
arrays of a ChainProblem with CRFsuite's chunking template:

* reference: ``chunk_attributes`` below, strings per token (the hand-written
  features loglin had before decision 0042), interned by ``_intern``, then the
  same for the test set with the training index;
* templates: ``CompiledTemplates(template_set("chunk")).fit`` / ``.transform``.

Medians of wall and CPU seconds; tokens per second. Run it under the benchmark lock.
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from loglin.data import read_conll2000, shared_data_dir
from loglin.tagging.datasets import bundled_conll2000_small
from loglin.tagging.templates import CompiledTemplates, template_set


def chunk_attributes(words, tags):
    """CRFsuite's chunking attributes of one sentence's tokens; window lists padded with None, each POS
    n-gram string built once per position."""
    n = len(words)
    W = [None, None, *words, None, None]            # W[t + 2 + k] is w[k] of token t
    P = [None, None, *tags, None, None]
    bi = [f"{P[i]}|{P[i + 1]}" if P[i] is not None and P[i + 1] is not None else None for i in range(n + 3)]
    tri = [f"{bi[i]}|{P[i + 2]}" if bi[i] is not None and P[i + 2] is not None else None for i in range(n + 2)]
    out = []
    for t in range(n):
        c = t + 2
        a = [f"w[{k}]={W[c + k]}" for k in (-2, -1, 0, 1, 2) if W[c + k] is not None]
        if t > 0:
            a.append(f"w[-1]|w[0]={W[c - 1]}|{W[c]}")
        if t < n - 1:
            a.append(f"w[0]|w[1]={W[c]}|{W[c + 1]}")
        a.extend(f"pos[{k}]={P[c + k]}" for k in (-2, -1, 0, 1, 2) if P[c + k] is not None)
        a.extend(f"pos[{k}]|pos[{k + 1}]={bi[c + k]}" for k in (-2, -1, 0, 1) if bi[c + k] is not None)
        a.extend(f"pos[{k}]|pos[{k + 1}]|pos[{k + 2}]={tri[c + k]}" for k in (-2, -1, 0) if tri[c + k] is not None)
        if t == 0:
            a.append("__BOS__")
        if t == n - 1:
            a.append("__EOS__")
        out.append(a)
    return out


def _intern(attribute_sequences, index, grow):
    """(seq_ptr, tok_ptr, tok_attr) of attribute names; ``grow`` numbers unseen names first seen, else drops them."""
    seq_ptr, tok_ptr, attr = [0], [0], []
    for tokens in attribute_sequences:
        for names in tokens:
            if grow:
                attr.extend(index.setdefault(name, len(index)) for name in names)
            else:
                attr.extend(k for k in map(index.get, names) if k is not None)
            tok_ptr.append(len(attr))
        seq_ptr.append(len(tok_ptr) - 1)
    return np.asarray(seq_ptr, dtype=np.int64), np.asarray(tok_ptr, dtype=np.int64), np.asarray(attr, dtype=np.int32)


def _corpus(bundled=False):
    root = None if bundled else shared_data_dir()
    if root is not None and (root / "conll2000" / "train.txt").is_file():
        return "CoNLL-2000", read_conll2000(root / "conll2000" / "train.txt"), read_conll2000(root / "conll2000" / "test.txt")
    train, test = bundled_conll2000_small()
    return "bundled CoNLL-2000 slice", read_conll2000(train), read_conll2000(test)


def _reference(train, test):
    index = {}
    _intern([chunk_attributes([t[0] for t in s], [t[1] for t in s]) for s in train], index, grow=True)
    fit = time.perf_counter(), time.process_time()
    _intern([chunk_attributes([t[0] for t in s], [t[1] for t in s]) for s in test], index, grow=False)
    return fit


def _templates(train, test):
    compiled = CompiledTemplates(template_set("chunk"))
    compiled.fit(train)
    fit = time.perf_counter(), time.process_time()
    compiled.transform(test)
    return fit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--bundled", action="store_true", help="the bundled slice even when the full corpus is there")
    args = parser.parse_args()
    name, train, test = _corpus(args.bundled)
    train_in = [[t[:2] for t in s] for s in train]
    test_in = [[t[:2] for t in s] for s in test]
    n_train, n_test = sum(map(len, train)), sum(map(len, test))
    runs = {"reference": [], "templates": []}
    for _ in range(args.repeats):
        for label, f in (("reference", _reference), ("templates", _templates)):
            w0, c0 = time.perf_counter(), time.process_time()
            w1, c1 = f(train_in, test_in)
            w2, c2 = time.perf_counter(), time.process_time()
            runs[label].append((w1 - w0, c1 - c0, w2 - w1, c2 - c1))
    print(f"{name}: {n_train} training tokens, {n_test} test tokens; medians of {args.repeats} alternating runs")
    for label, rows in runs.items():
        fw, fc, tw, tc = (statistics.median(col) for col in zip(*rows))
        print(f"{label:>10}: fit {fw:.3f} s wall / {fc:.3f} s CPU ({n_train / fw:,.0f} tokens/s); "
              f"encode test {tw:.3f} s wall / {tc:.3f} s CPU ({n_test / tw:,.0f} tokens/s)")
    ref, tpl = ([statistics.median(col) for col in zip(*runs[k])] for k in ("reference", "templates"))
    print(f"ratio reference / templates: fit {ref[0] / tpl[0]:.2f}x wall, {ref[1] / tpl[1]:.2f}x CPU; "
          f"encode {ref[2] / tpl[2]:.2f}x wall, {ref[3] / tpl[3]:.2f}x CPU")


if __name__ == "__main__":
    main()
