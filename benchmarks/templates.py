"""Speed of the template compiler against crf_features' hand-written chunk attributes (decision 0020).

    python benchmarks/templates.py [--repeats 5] [--bundled]

On CoNLL-2000 (../shared/data/conll2000, else the bundled slice) it times, in one
process and alternating, the two ways of turning sentences into the attribute
arrays of a ChainProblem with CRFsuite's chunking template:

* reference: ``chunk_attributes`` strings per token, interned by ``_encode``
  (what ``build_chain_problem`` does), then the same for the test set with the
  training index (what ``ChainModel.tag`` does);
* templates: ``CompiledTemplates(template_set("chunk")).fit`` / ``.transform``.

Medians of wall and CPU seconds; tokens per second. Run it under the benchmark lock.
"""
from __future__ import annotations

import argparse
import statistics
import time

from loglin.data import read_conll2000, shared_data_dir
from loglin.structured.crf_features import _encode, chunk_attributes
from loglin.tagging.datasets import bundled_conll2000_small
from loglin.tagging.templates import CompiledTemplates, template_set


def _corpus(bundled=False):
    root = None if bundled else shared_data_dir()
    if root is not None and (root / "conll2000" / "train.txt").is_file():
        return "CoNLL-2000", read_conll2000(root / "conll2000" / "train.txt"), read_conll2000(root / "conll2000" / "test.txt")
    train, test = bundled_conll2000_small()
    return "bundled CoNLL-2000 slice", read_conll2000(train), read_conll2000(test)


def _reference(train, test):
    index = {}
    _encode([chunk_attributes([t[0] for t in s], [t[1] for t in s]) for s in train], index, grow=True)
    fit = time.perf_counter(), time.process_time()
    _encode([chunk_attributes([t[0] for t in s], [t[1] for t in s]) for s in test], index)
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
