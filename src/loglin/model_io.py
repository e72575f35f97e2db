"""Models on disk: a versioned, safe container (no pickle).

A model file is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays) holding

* ``__meta__``: UTF-8 JSON with ``{"loglin_format": <name>, "format_version": <int>, ...}``;
* any number of plain numeric/string arrays.

Loading uses ``allow_pickle=False``, so a hostile file can at worst fail to
load; it never runs code. Every failure (truncated zip, bad JSON, missing
array, wrong format, newer version, unexpected dtype) becomes a
:class:`~loglin.errors.ModelFormatError` naming the file.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .errors import ModelFormatError
from .outputs import atomic_write

META_KEY = "__meta__"
MAX_META_BYTES = 64 * 1024 * 1024


def save_npz_model(path, meta: dict, arrays: dict) -> None:
    """Write ``meta`` (JSON-serializable; must name its format) and ``arrays``, atomically (a temporary
    file in the same directory renamed over ``path``: never a half-written model)."""
    if "loglin_format" not in meta or "format_version" not in meta:
        raise ValueError("meta must contain 'loglin_format' and 'format_version'")
    payload = {}
    for name, arr in arrays.items():
        a = np.asarray(arr)
        if a.dtype == object:
            a = a.astype(str)
        payload[name] = a
    payload[META_KEY] = np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8)
    with atomic_write(Path(path)) as fh:     # a file object keeps numpy from appending ".npz"
        np.savez_compressed(fh, **payload)


def load_npz_model(path, expected_format: str, max_version: int, required=()) -> tuple[dict, dict]:
    """Read a model file written by :func:`save_npz_model`, validating everything."""
    path = Path(path)
    if not path.is_file():
        raise ModelFormatError(f"{path}: no such model file")
    try:
        with np.load(path, allow_pickle=False) as npz:
            names = set(npz.files)
            if META_KEY not in names:
                raise ModelFormatError(f"{path}: not a loglin model (no metadata)")
            raw = npz[META_KEY]
            if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.size > MAX_META_BYTES:
                raise ModelFormatError(f"{path}: corrupted model metadata")
            meta = json.loads(raw.tobytes().decode("utf-8"))
            if not isinstance(meta, dict):
                raise ModelFormatError(f"{path}: corrupted model metadata")
            fmt = meta.get("loglin_format")
            if fmt != expected_format:
                raise ModelFormatError(f"{path}: expected a {expected_format!r} model, found {fmt!r}")
            version = meta.get("format_version")
            if not isinstance(version, int) or version < 1:
                raise ModelFormatError(f"{path}: invalid format version {version!r}")
            if version > max_version:
                raise ModelFormatError(f"{path}: model format version {version} is newer than this loglin "
                                       f"supports ({max_version}); upgrade loglin")
            missing = [r for r in required if r not in names]
            if missing:
                raise ModelFormatError(f"{path}: model file is missing arrays {missing}")
            arrays = {name: npz[name] for name in names if name != META_KEY}
            bad = [name for name, arr in arrays.items() if not isinstance(arr, np.ndarray)]
            if bad:     # a member that is not a .npy array comes back as raw bytes
                raise ModelFormatError(f"{path}: corrupted model file (members {bad} are not arrays)")
    except ModelFormatError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, AttributeError, UnicodeDecodeError,
            json.JSONDecodeError) as exc:
        raise ModelFormatError(f"{path}: truncated or corrupted model file ({exc.__class__.__name__}: {exc})") \
            from None
    for name, arr in arrays.items():
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            raise ModelFormatError(f"{path}: array {name!r} contains NaN or infinity")
    return meta, arrays


def model_format(path) -> str:
    """The ``loglin_format`` a model file declares (to pick the right loader)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            raw = npz[META_KEY] if META_KEY in npz.files else None
            ok = isinstance(raw, np.ndarray) and raw.dtype == np.uint8
            meta = json.loads(raw.tobytes().decode("utf-8")) if ok else {}
    except FileNotFoundError:
        raise ModelFormatError(f"{path}: no such model file") from None
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, UnicodeDecodeError) as exc:
        raise ModelFormatError(f"{path}: truncated or corrupted model file ({exc.__class__.__name__}: {exc})") \
            from None
    fmt = meta.get("loglin_format") if isinstance(meta, dict) else None
    if not isinstance(fmt, str):
        raise ModelFormatError(f"{path}: not a loglin model (no metadata)")
    return fmt


# format name -> "module:class" whose ``load(path)`` reads it (imported only for the format asked for)
MODEL_CLASSES = {"loglin-linear": "loglin.model:LinearModel", "loglin-tagger": "loglin.tagging.tagger:Tagger",
                 "loglin-chain": "loglin.structured.model:ChainModel",
                 "loglin-parser": "loglin.parsing.model:ParserModel"}


def load_model(path):
    """Any loglin model file: a LinearModel (Maxent / LR), a Tagger, a ChainModel (CRF / M3N) or a ParserModel.

    The file's declared format picks the class; every one is read through :func:`load_npz_model`.
    """
    import importlib
    fmt = model_format(path)
    if fmt not in MODEL_CLASSES:
        raise ModelFormatError(f"{path}: unknown model format {fmt!r}; this loglin reads "
                               f"{', '.join(MODEL_CLASSES)}")
    module, _, name = MODEL_CLASSES[fmt].partition(":")
    return getattr(importlib.import_module(module), name).load(path)
