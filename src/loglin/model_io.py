"""Models on disk: a versioned, safe container (no pickle).

A model file is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays) holding

* ``__meta__``: UTF-8 JSON with ``{"loglin_format": <name>, "format_version": <int>, ...}``;
* any number of plain numeric/string arrays.

Loading reads every ``.npy`` member itself (object arrays are refused, never
unpickled) and checks each header against the member's size and the file's size
before allocating, so a hostile file can at worst fail to load; it never runs
code nor exhausts memory. Every failure (truncated zip, bad JSON, missing
array, wrong format, newer version, unexpected dtype) becomes a
:class:`~loglin.errors.ModelFormatError` naming the file.
"""
from __future__ import annotations

import json
import math
import zipfile
import zlib
from pathlib import Path

import numpy as np

from .errors import ModelFormatError
from .limits import MAX_ARRAY_BYTES_PER_FILE_BYTE
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
    # the .npz layout of np.savez_compressed, at deflate level 1: models of millions of weights are
    # written in a fraction of the time, a few percent larger (the command's time limit ends before this)
    with atomic_write(Path(path)) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, array in payload.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _read_array(path, archive, info, budget):
    """One ``.npy`` member, its header checked before anything is allocated: the declared shape must fit the
    member's own size, and the member must fit the budget that the file size gives."""
    name = info.filename
    if not name.endswith(".npy"):
        raise ModelFormatError(f"{path}: corrupted model file (member {name!r} is not an array)")
    if info.file_size > budget:
        raise ModelFormatError(f"{path}: corrupted model file (member {name!r} declares {info.file_size:,} bytes, "
                               f"more than a file of this size can hold)")
    with archive.open(info) as stream:
        version = np.lib.format.read_magic(stream)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ModelFormatError(f"{path}: corrupted model file (member {name!r} has .npy version {version})")
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(stream, max_header_size=10000)
        if dtype.hasobject:      # never unpickled: a model holds numbers and strings only
            raise ModelFormatError(f"{path}: not a loglin model (member {name!r} holds Python objects)")
        count = math.prod(shape)
        nbytes = count * dtype.itemsize
        if nbytes != info.file_size - stream.tell():
            raise ModelFormatError(f"{path}: corrupted model file (member {name!r} declares shape {shape}, "
                                   f"which does not match its {info.file_size:,} bytes)")
        data = stream.read(nbytes)
        trailing = stream.read(1)         # reaching the end makes zipfile check the member's CRC
    if len(data) != nbytes or trailing:
        raise ModelFormatError(f"{path}: truncated model file (member {name!r})")
    array = np.frombuffer(data, dtype=dtype, count=count)
    if fortran:
        return array.reshape(shape[::-1]).T.copy()
    return array.reshape(shape).copy()


def _read_members(path, only=None) -> dict:
    """{name: array} of the model archive at ``path`` (``only``: just these names), with every read bounded by the
    file size and every failure a :class:`ModelFormatError` (never zlib.error, MemoryError or a pickle)."""
    path = Path(path)
    if not path.exists():
        raise ModelFormatError(f"{path}: no such model file")
    if not path.is_file():
        raise ModelFormatError(f"{path}: not a model file (a directory or a device)")
    budget = max(path.stat().st_size, 1024) * MAX_ARRAY_BYTES_PER_FILE_BYTE
    try:
        if not zipfile.is_zipfile(path):
            raise ModelFormatError(f"{path}: not a loglin model, or a truncated or corrupted one (a model file is "
                                   f"an .npz zip archive)")
        with zipfile.ZipFile(path) as archive:
            members = {}
            for info in archive.infolist():
                name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                if only is None or name in only:
                    members[name] = _read_array(path, archive, info, budget)
            return members
    except ModelFormatError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError, NotImplementedError,
            RuntimeError, SyntaxError, TypeError, OverflowError) as exc:
        raise ModelFormatError(f"{path}: truncated or corrupted model file ({exc.__class__.__name__}: {exc})") \
            from None


def _meta(path, members) -> dict:
    raw = members.get(META_KEY)
    if raw is None:
        raise ModelFormatError(f"{path}: not a loglin model (no metadata)")
    if raw.dtype != np.uint8 or raw.size > MAX_META_BYTES:
        raise ModelFormatError(f"{path}: corrupted model metadata")
    try:
        meta = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ModelFormatError(f"{path}: corrupted model metadata") from None
    if not isinstance(meta, dict):
        raise ModelFormatError(f"{path}: corrupted model metadata")
    return meta


def load_npz_model(path, expected_format: str, max_version: int, required=()) -> tuple[dict, dict]:
    """Read a model file written by :func:`save_npz_model`, validating everything."""
    path = Path(path)
    arrays = _read_members(path)
    meta = _meta(path, arrays)
    del arrays[META_KEY]
    fmt = meta.get("loglin_format")
    if fmt != expected_format:
        raise ModelFormatError(f"{path}: expected a {expected_format!r} model, found {fmt!r}")
    version = meta.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ModelFormatError(f"{path}: invalid format version {version!r}")
    if version > max_version:
        raise ModelFormatError(f"{path}: model format version {version} is newer than this loglin "
                               f"supports ({max_version}); upgrade loglin")
    missing = [r for r in required if r not in arrays]
    if missing:
        raise ModelFormatError(f"{path}: model file is missing arrays {missing}")
    for name, arr in arrays.items():
        if arr.dtype.kind in "fc" and not np.all(np.isfinite(arr)):
            raise ModelFormatError(f"{path}: array {name!r} contains NaN or infinity")
    return meta, arrays


def strictly_increasing(a) -> bool:
    """Whether ``a`` is sorted without repeats, by comparing neighbours (``np.diff`` wraps on unsigned ints)."""
    a = np.asarray(a)
    return bool(np.all(a[1:] > a[:-1]))


def label_map_is_valid(map_ptr, map_label, map_feat, n_inputs: int, n_labels: int, n_weights: int) -> bool:
    """Whether an input -> (label, weight) map read from a file is what the compiled kernels index unchecked:
    CSR offsets over ``n_inputs`` rows, labels below ``n_labels``, weight indices below ``n_weights``."""
    return bool(map_ptr.ndim == 1 and len(map_ptr) == n_inputs + 1 and map_ptr[0] == 0
                and np.all(np.diff(map_ptr) >= 0) and map_ptr[-1] == len(map_label) == len(map_feat)
                and (len(map_label) == 0 or (map_label.min() >= 0 and map_label.max() < n_labels))
                and (len(map_feat) == 0 or (map_feat.min() >= 0 and map_feat.max() < n_weights)))


def model_format(path) -> str:
    """The ``loglin_format`` a model file declares (to pick the right loader)."""
    fmt = _meta(path, _read_members(path, only=(META_KEY,))).get("loglin_format")
    if not isinstance(fmt, str):
        raise ModelFormatError(f"{path}: not a loglin model (no metadata)")
    return fmt


# format name -> "module:class" whose ``load(path)`` reads it (imported only for the format asked for)
MODEL_CLASSES = {"loglin-linear": "loglin.model:LinearModel",
                 "loglin-tagger": "loglin.tagging.tagger:MaxentTaggerModel",
                 "loglin-chain": "loglin.structured.model:ChainModel",
                 "loglin-parser": "loglin.parsing.model:ParserModel",
                 "loglin-crfsuite": "loglin.crfsuite.estimator:CRF",
                 "loglin-sequence-tagger": "loglin.tagging.estimator:Tagger"}


def load_model(path):
    """Any loglin model file: a LinearModel (Maxent / LR), a MaxentTaggerModel, a ChainModel (CRF / M3N), a
    ParserModel, a :class:`loglin.Tagger` / :class:`loglin.Parser` estimator or a :class:`loglin.crfsuite.CRF` (sklearn-crfsuite's estimator, its features built in Python).

    The file's declared format picks the class; every one is read through :func:`load_npz_model`.
    """
    import importlib
    fmt = model_format(path)
    if fmt not in MODEL_CLASSES:
        raise ModelFormatError(f"{path}: unknown model format {fmt!r}; this loglin reads "
                               f"{', '.join(MODEL_CLASSES)}")
    module, _, name = MODEL_CLASSES[fmt].partition(":")
    return getattr(importlib.import_module(module), name).load(path)
