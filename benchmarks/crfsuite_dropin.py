"""sklearn-crfsuite vs loglin.crfsuite: one tutorial-style script, only its import line differs.

    PYTHONPATH=src python -m benchmarks.crfsuite_dropin [--train-sentences N] [--runs 3] [--max-iterations 100]
        [--out benchmarks/results/crfsuite_dropin.json]

The script (``TUTORIAL``) is written the way sklearn-crfsuite's tutorial is: a
``word2features`` function (word identity, suffixes, shape flags, POS tags of a
+-1 window, BOS / EOS), ``CRF(algorithm='lbfgs', c1=..., c2=..., max_iterations=...,
all_possible_transitions=True)``, ``fit``, ``predict``, and ``metrics.flat_f1_score``
over the labels other than O. Data: CoNLL-2000 chunking (word, POS, chunk) from the
shared data, else the slice bundled with loglin. Fit time is measured in the
script (process CPU and wall); the tools run alternately, ``--runs`` times each, and
the medians are reported.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

TUTORIAL = '''
import time
{import_line}


def word2features(sent, i):
    word, postag = sent[i][0], sent[i][1]
    features = {{
        "bias": 1.0,
        "word.lower()": word.lower(),
        "word[-3:]": word[-3:],
        "word[-2:]": word[-2:],
        "word.isupper()": word.isupper(),
        "word.istitle()": word.istitle(),
        "word.isdigit()": word.isdigit(),
        "postag": postag,
        "postag[:2]": postag[:2],
    }}
    if i > 0:
        word1, postag1 = sent[i - 1][0], sent[i - 1][1]
        features.update({{"-1:word.lower()": word1.lower(), "-1:word.istitle()": word1.istitle(),
                          "-1:word.isupper()": word1.isupper(), "-1:postag": postag1, "-1:postag[:2]": postag1[:2]}})
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1, postag1 = sent[i + 1][0], sent[i + 1][1]
        features.update({{"+1:word.lower()": word1.lower(), "+1:word.istitle()": word1.istitle(),
                          "+1:word.isupper()": word1.isupper(), "+1:postag": postag1, "+1:postag[:2]": postag1[:2]}})
    else:
        features["EOS"] = True
    return features


def sent2features(sent):
    return [word2features(sent, i) for i in range(len(sent))]


def sent2labels(sent):
    return [label for token, postag, label in sent]


X_train = [sent2features(s) for s in train_sents]
y_train = [sent2labels(s) for s in train_sents]
X_test = [sent2features(s) for s in test_sents]
y_test = [sent2labels(s) for s in test_sents]

crf = CRF(algorithm="lbfgs", c1=c1, c2=c2, max_iterations=max_iterations, all_possible_transitions=True)
cpu0, wall0 = time.process_time(), time.perf_counter()
crf.fit(X_train, y_train)
fit_cpu, fit_wall = time.process_time() - cpu0, time.perf_counter() - wall0

labels = list(crf.classes_)
labels.remove("O")
y_pred = crf.predict(X_test)
f1 = metrics.flat_f1_score(y_test, y_pred, average="weighted", labels=labels)
'''

IMPORTS = {"sklearn-crfsuite": "from sklearn_crfsuite import CRF, metrics",
           "loglin.crfsuite": "from loglin.crfsuite import CRF, metrics"}


def run_tutorial(tool, train_sents, test_sents, *, c1=0.0, c2=1.0, max_iterations=100):
    """Run TUTORIAL with ``tool``'s import line; returns its namespace (crf, f1, fit_cpu, fit_wall, ...)."""
    namespace = {"train_sents": train_sents, "test_sents": test_sents, "c1": c1, "c2": c2,
                 "max_iterations": max_iterations}
    exec(TUTORIAL.format(import_line=IMPORTS[tool]), namespace)     # noqa: S102 (our own script text)
    return namespace


def conll2000():
    """(train, test) sentences of CoNLL-2000 chunking: the shared data if present, else the bundled slice."""
    from loglin.data import shared_data_dir
    from loglin.data.conll import read_conll2000
    from loglin.tagging.datasets import bundled_conll2000_small
    shared = shared_data_dir()
    if shared is not None and (shared / "conll2000" / "train.txt").is_file():
        train, test = shared / "conll2000" / "train.txt", shared / "conll2000" / "test.txt"
    else:
        train, test = bundled_conll2000_small()
    return read_conll2000(train), read_conll2000(test)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-sentences", type=int, default=None, help="first N training sentences")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-iterations", type=int, default=100)
    parser.add_argument("--c1", type=float, default=0.0)
    parser.add_argument("--c2", type=float, default=0.1)
    parser.add_argument("--out", default=None, help="also write the summary and every run as JSON here")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    train, test = conll2000()
    if args.train_sentences:
        train = train[:args.train_sentences]
    runs = {tool: [] for tool in IMPORTS}
    for _ in range(args.runs):
        for tool in IMPORTS:                    # alternating, so that load drifts hit both alike
            ns = run_tutorial(tool, train, test, c1=args.c1, c2=args.c2, max_iterations=args.max_iterations)
            runs[tool].append({"fit_cpu": ns["fit_cpu"], "fit_wall": ns["fit_wall"], "f1": ns["f1"]})
            print(tool, json.dumps(runs[tool][-1]), flush=True)
    summary = {"train_sentences": len(train), "test_sentences": len(test),
               "train_tokens": sum(map(len, train)), "c1": args.c1, "c2": args.c2,
               "max_iterations": args.max_iterations, "runs": args.runs}
    for tool, rs in runs.items():
        summary[tool] = {k: statistics.median(r[k] for r in rs) for k in ("fit_cpu", "fit_wall", "f1")}
    summary["load_average_before_after"] = [load_before[0], os.getloadavg()[0]]
    print(json.dumps(summary, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": summary, "runs": runs}, indent=1))
    return summary


if __name__ == "__main__":
    main()
