"""What a trained model learned: its non-zero weights by label and feature name, for every model kind.

    for label, feature, value in weights(model): ...      # every non-zero weight (`loglin dump`)
    top(model, 10)      # per label the 10 largest and 10 most negative weights (`loglin info --top 10`)

Feature names: a Maxent model's predicate names (events, taggers) or its input columns ``x1, x2, ...``
(svmlight, 1-based as in the file) and ``<bias>``; a chain model's attributes, and its label
transitions as ``prev -> next``; a parser's features are hashed, so they are shown by id and key.
A binary LR model has one weight vector, reported under its positive class (a negative weight
favours the other class).
"""
from __future__ import annotations

import numpy as np

TRANSITIONS = "<transitions>"


def weights(model) -> list[tuple[str, str, float]]:
    """(label, feature name, weight) of every non-zero weight of ``model``."""
    from .model import LinearModel
    from .parsing.model import ParserModel
    from .structured.model import ChainModel
    from .tagging.tagger import MaxentTaggerModel
    if type(model).__module__.startswith("loglin.crfsuite"):    # sklearn-crfsuite's estimator: its chain model
        space, w = model._fitted()
        model = ChainModel(space=space, w=w, model="crf", C=model.C_ or 1.0, solver="")
    if type(model).__name__ == "Tagger" and getattr(model, "templates_", None) is not None:     # loglin.Tagger
        model = model.model_
    if isinstance(model, ChainModel):
        return _chain(model)
    if isinstance(model, ParserModel):
        keys = model.space.keys
        return [("arc", f"feature {i} (key {int(keys[i])})" if i < len(keys) else f"feature {i}", float(model.w[i]))
                for i in np.flatnonzero(model.w)]
    if isinstance(model, MaxentTaggerModel):
        x = model.extractor
        return _mapped(model.w, x.labels, model.map_ptr, model.map_label, model.map_feat, x.predicate_name)
    if type(model).__name__ == "TemplateMaxentModel":          # loglin.Tagger(model="maxent") over templates
        x = model.features
        return _mapped(model.w, x.labels, model.map_ptr, model.map_label, model.map_feat, x.predicate_name)
    if isinstance(model, LinearModel):
        def name(p):
            if p >= model.n_inputs:
                return "<bias>"
            given = model.predicates[p] if model.predicates is not None and p < len(model.predicates) else p
            return str(given) if isinstance(given, str) else f"x{int(given) + 1}"     # a column index
        if model.kind == "binary":
            positive = str(model.labels[1])
            return [(positive, name(j), float(model.w[j])) for j in np.flatnonzero(model.w)]
        return _mapped(model.w, model.labels, model.map_ptr, model.map_label, model.map_feat, name)
    raise TypeError(f"cannot list the weights of a {type(model).__name__}")


def _mapped(w, labels, map_ptr, map_label, map_feat, name):
    out = []
    for p in range(len(map_ptr) - 1):
        for k in range(map_ptr[p], map_ptr[p + 1]):
            t = map_feat[k] if map_feat is not None and len(map_feat) else k
            if w[t] != 0:
                out.append((str(labels[map_label[k]]), name(p), float(w[t])))
    return out


def _chain(model):
    s = model.space
    labels = [str(c) for c in s.labels]
    out = _mapped(model.w, labels, s.map_ptr, s.map_label, s.map_feat, lambda a: str(s.attributes[a]))
    K = len(labels)
    T = model.w[s.n_state:].reshape(K, K)
    out += [(TRANSITIONS, f"{labels[i]} -> {labels[j]}", float(T[i, j])) for i in range(K) for j in range(K)
            if T[i, j] != 0]
    return out


def top(model, n: int = 10) -> dict:
    """{label: {"positive": [(feature, w), ...], "negative": [...]}}: the n largest and n most negative
    weights per label (chain models: transitions under ``<transitions>``), and the totals."""
    by_label: dict[str, list] = {}
    listed = weights(model)
    for label, feature, value in listed:
        by_label.setdefault(label, []).append((feature, value))
    out = {}
    for label, items in by_label.items():
        items.sort(key=lambda fv: fv[1])
        out[label] = {"positive": [fv for fv in reversed(items[-n:]) if fv[1] > 0],
                      "negative": [fv for fv in items[:n] if fv[1] < 0]}
    return out


def top_text(model, n: int = 10) -> str:
    """:func:`top` as lines for a terminal."""
    lines = []
    for label, sides in top(model, n).items():
        lines.append(f"{label}:")
        for side in ("positive", "negative"):
            for feature, value in sides[side]:
                lines.append(f"  {value:+12.6f}  {feature}")
    return "\n".join(lines)


def describe(model) -> dict:
    """What `loglin info` shows of a model of any kind."""
    from .parsing.model import ParserModel
    from .structured.model import ChainModel
    from .tagging.tagger import MaxentTaggerModel
    if type(model).__module__.startswith("loglin.crfsuite"):
        space, w = model._fitted()
        return {"kind": "crfsuite", "n_labels": len(space.labels), "labels": [str(c) for c in space.labels[:50]],
                "n_attributes": len(space.attributes), "n_weights": int(w.size),
                "nonzero_weights": int(np.count_nonzero(w)), "C": model.C_}
    if type(model).__name__ == "Tagger":            # loglin.Tagger (chain model over its own templates)
        w = model.coef_
        return {"kind": "sequence-tagger", "model": model.model, "n_labels": len(model.classes_),
                "labels": model.classes_[:50], "templates": [t.line() for t in model.templates_.templates],
                "n_attributes": model.templates_.n_attributes, "n_weights": int(w.size),
                "nonzero_weights": int(np.count_nonzero(w))}
    if isinstance(model, MaxentTaggerModel):
        return {"kind": "tagger", "task": model.task, "n_labels": len(model.labels), "labels": model.labels[:50],
                "beam": model.beam, **model.info}
    if isinstance(model, ChainModel):
        return {"kind": "chain", "model": model.model, "task": model.space.task, "solver": model.solver,
                "C": model.C, "n_labels": len(model.labels), "labels": [str(c) for c in model.labels[:50]],
                "n_weights": int(model.w.size), "nonzero_weights": int(np.count_nonzero(model.w))}
    if isinstance(model, ParserModel):
        return {"kind": "parser", "model": model.model, "solver": model.solver, "C": model.C,
                "cutoff": model.space.cutoff, "n_features": model.space.n_features,
                "nonzero_weights": int(np.count_nonzero(model.w)), **model.info,
                **({} if model.labeller is None else {"deprels": model.labeller.labels[:50],
                                                      "labeller": model.labeller.info})}
    return {"kind": model.kind, "labels": [str(c) for c in model.labels[:50]], "n_labels": len(model.labels),
            "n_inputs": model.n_inputs, "n_weights": int(model.w.size), "bias": model.bias,
            "nonzero_weights": int(np.count_nonzero(model.w)), **model.info}
