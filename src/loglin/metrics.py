"""Classification scores people report: per-class precision / recall / F1, macro / micro / weighted
averages and the confusion matrix (NumPy only; scikit-learn's definitions, 0 where undefined)."""
from __future__ import annotations

import numpy as np


def classification_scores(gold, pred, labels=None) -> dict:
    """{"per_class": {label: {precision, recall, f1, support}}, "macro": {...}, "micro": {...},
    "weighted": {...}, "confusion": {"labels": [...], "matrix": rows = gold, columns = predicted}}."""
    gold, pred = np.asarray(gold).astype(str), np.asarray(pred).astype(str)
    if labels is None:
        labels = np.unique(np.concatenate([gold, pred]))
    labels = np.asarray(labels).astype(str)
    index = {c: i for i, c in enumerate(labels)}
    K = len(labels)
    confusion = np.zeros((K, K), dtype=np.int64)
    np.add.at(confusion, ([index[g] for g in gold], [index[p] for p in pred]), 1)
    tp = np.diag(confusion).astype(float)
    guessed, support = confusion.sum(axis=0).astype(float), confusion.sum(axis=1).astype(float)
    precision, recall = _ratio(tp, guessed), _ratio(tp, support)
    f1 = _ratio(2 * precision * recall, precision + recall)
    per_class = {str(c): {"precision": float(precision[i]), "recall": float(recall[i]), "f1": float(f1[i]),
                          "support": int(support[i])} for i, c in enumerate(labels)}
    micro_p = float(_ratio(tp.sum(), guessed.sum()))
    micro_r = float(_ratio(tp.sum(), support.sum()))
    weights = support / support.sum() if support.sum() else np.zeros(K)
    return {"per_class": per_class,
            "macro": {"precision": float(precision.mean()), "recall": float(recall.mean()), "f1": float(f1.mean())},
            "micro": {"precision": micro_p, "recall": micro_r, "f1": float(_ratio(2 * micro_p * micro_r,
                                                                                   micro_p + micro_r))},
            "weighted": {"precision": float(weights @ precision), "recall": float(weights @ recall),
                         "f1": float(weights @ f1)},
            "confusion": {"labels": labels.tolist(), "matrix": confusion.tolist()}}


def _ratio(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.divide(a, b, out=np.zeros(np.broadcast(a, b).shape), where=b > 0)


def scores_text(scores: dict, max_labels: int = 50) -> str:
    """A classification report: one line per class, then the averages (and the confusion matrix when small)."""
    width = max([len(c) for c in scores["per_class"]] + [len("weighted avg")])
    lines = [f"{'':{width}}  precision  recall      f1  support"]
    for c, s in list(scores["per_class"].items())[:max_labels]:
        lines.append(f"{c:>{width}}  {s['precision']:9.4f}  {s['recall']:6.4f}  {s['f1']:6.4f}  {s['support']:7d}")
    for avg in ("macro", "micro", "weighted"):
        s = scores[avg]
        lines.append(f"{avg + ' avg':>{width}}  {s['precision']:9.4f}  {s['recall']:6.4f}  {s['f1']:6.4f}")
    conf = scores["confusion"]
    if len(conf["labels"]) <= 12:
        lines.append("confusion (rows gold, columns predicted): " + " ".join(conf["labels"]))
        lines += ["  " + " ".join(f"{v:6d}" for v in row) for row in conf["matrix"]]
    return "\n".join(lines)
