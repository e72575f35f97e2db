"""Token features as python-crfsuite reads them, flattened to attribute names and values.

A sentence (CRFsuite's *xseq*) is a list of items, one per token. An item is

* a dict ``{name: value}``: a string value gives the indicator attribute
  ``"name:value"`` (weight 1), a number or bool gives the attribute ``name``
  with that weight (True = 1, False = 0), and a nested dict, list or set gives
  its own attributes prefixed with ``"name:"``;
* a list (or set / tuple) of strings: each string an attribute of weight 1.

This is python-crfsuite's convention (``to_item``), so the attribute names, and
hence ``state_features_``, are the ones sklearn-crfsuite shows. An attribute
given twice in one item counts twice, as in CRFsuite.
"""
from __future__ import annotations

import numbers

import numpy as np

SEPARATOR = ":"


def _key(key) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bytes):
        return key.decode("utf-8")
    return str(key)


def flatten_item(item, names: list, values: list, prefix: str = "") -> None:
    """Append the (name, value) attributes of one token's item to ``names`` / ``values``."""
    if isinstance(item, dict):
        for key, value in item.items():
            name = prefix + _key(key)
            if isinstance(value, str):
                names.append(name + SEPARATOR + value)
                values.append(1.0)
            elif isinstance(value, (numbers.Real, np.bool_)):       # bool is a Real: True 1, False 0
                names.append(name)
                values.append(float(value))
            elif isinstance(value, (dict, list, set, tuple, frozenset)):
                flatten_item(value, names, values, name + SEPARATOR)
            elif isinstance(value, bytes):
                names.append(name + SEPARATOR + value.decode("utf-8"))
                values.append(1.0)
            else:
                raise TypeError(f"feature {name!r} has a value of type {type(value).__name__}; "
                                "use a string, a number, a bool, a dict or a list of strings")
    elif isinstance(item, (list, set, tuple, frozenset)):
        for key in item:
            names.append(prefix + _key(key))
            values.append(1.0)
    elif isinstance(item, str):
        raise TypeError(f"a token's features must be a dict or a list of strings, got the string {item!r}")
    else:
        raise TypeError(f"a token's features must be a dict or a list of strings, got {type(item).__name__}")


def encode_sequences(X, index: dict, grow: bool):
    """CSR arrays (seq_ptr, tok_ptr, tok_attr, tok_val) of sentences of items.

    ``grow``: unseen attribute names are added to ``index`` (training); otherwise
    they are dropped (prediction). ``tok_val`` is None when every value is 1.
    """
    seq_ptr = np.zeros(len(X) + 1, dtype=np.int64)
    tok_ptr = [0]
    attr, val = [], []
    get = index.get
    for s, xseq in enumerate(X):
        if isinstance(xseq, (str, dict)):
            raise TypeError(f"sentence {s} must be a list of tokens' features, got {type(xseq).__name__}")
        for item in xseq:
            names, values = [], []
            flatten_item(item, names, values)
            for name, value in zip(names, values):
                k = get(name)
                if k is None:
                    if not grow:
                        continue
                    k = index[name] = len(index)
                attr.append(k)
                val.append(value)
            tok_ptr.append(len(attr))
        seq_ptr[s + 1] = len(tok_ptr) - 1
    tok_val = np.asarray(val, dtype=np.float64)
    if np.all(tok_val == 1.0):
        tok_val = None
    elif not np.all(np.isfinite(tok_val)):
        raise ValueError("feature values contain NaN or infinity")
    return seq_ptr, np.asarray(tok_ptr, dtype=np.int64), np.asarray(attr, dtype=np.int32), tok_val


def drop_zero_values(tok_ptr, tok_attr, tok_val):
    """The same tokens without their zero-valued attributes (False flags), which add nothing to any score.

    Returns (tok_ptr, tok_attr, tok_val), ``tok_val`` None when every remaining value is 1.
    """
    if tok_val is None:
        return tok_ptr, tok_attr, tok_val
    keep = tok_val != 0.0
    kept_before = np.concatenate(([0], np.cumsum(keep)))
    tok_attr, tok_val = tok_attr[keep], tok_val[keep]
    return kept_before[tok_ptr], tok_attr, (None if np.all(tok_val == 1.0) else tok_val)
