"""Saved models: one ``.npz`` of numeric arrays plus a JSON metadata entry, never pickle.

Layout of a model file (a zip archive written by :func:`numpy.savez_compressed`):

- one entry per array, under the names given by the estimator (``coef``, ``classes``, ...);
- ``__meta__``: a 0-d unicode array holding a JSON object with

  ``format`` (``"cutplane-model"``), ``format_version`` (int), ``estimator`` (class name),
  ``params`` (hyper-parameters), ``arrays`` (``{name: {"shape": [...], "dtype": "<f8"}}``)
  and any other estimator-specific fields (classes, training report, ...).

Loading always uses ``allow_pickle=False`` and validates the format name, the version, that
the stored arrays are exactly those listed, each member's stored size against its declared
shape and dtype (before decompressing it), each array's shape and dtype, and that float
arrays are finite; given the estimator's schema (:class:`~problems.model_schemas.ModelSchema`,
declared by each task beside its estimator), also the required arrays and metadata keys, their
kinds and JSON types, and the hyper-parameter names. Any
mismatch, a truncated or corrupted archive, or invalid JSON raises one
:class:`~cutplane.exceptions.ModelFormatError` naming the file and the problem. The format is generic: later estimators
(sequence tagger, parser) save their own arrays and metadata through the same two functions.
"""

from __future__ import annotations

import json
import struct
import tokenize
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError
from cutplane.npz_io import write_npz_atomic
from problems.model_schemas import MODEL_SCHEMAS, ModelSchema, check_schema, register_schema

__all__ = [
    "save_model",
    "load_model",
    "describe_model",
    "LoadedModel",
    "ModelSchema",
    "MODEL_SCHEMAS",
    "register_schema",
    "FORMAT_NAME",
    "FORMAT_VERSION",
]

FORMAT_NAME = "cutplane-model"
#: 2: the estimators' ``params`` hold their solver as ``{"name": ..., "params": {...}}``
#: (:func:`problems.solvers.solver_to_meta`); 1: the solver's options were keywords of the
#: estimator (mapped on load by :func:`problems.solvers.solver_from_legacy_params`).
FORMAT_VERSION = 2
_META_KEY = "__meta__"
_RESERVED = {"format", "format_version", "arrays"}
_KINDS = "biufcU"
_MAX_NPY_HEADER = 1 << 16  # bytes of .npy header a member may hold beyond its data
_MAX_META_BYTES = 1 << 28


class LoadedModel(NamedTuple):
    """What :func:`load_model` returns (unpacks as ``arrays, meta``).

    Attributes
    ----------
    arrays : dict of str to ndarray
    meta : dict
        The JSON metadata, including ``format``, ``format_version``, ``estimator``,
        ``params`` and ``arrays`` (declared shapes and dtypes).
    """

    arrays: dict
    meta: dict


def _check_array(name, value):
    if not isinstance(name, str) or not name.isidentifier() or name == _META_KEY:
        raise InputError(f"array names must be identifiers other than {_META_KEY!r}, got {name!r}", field="arrays")
    arr = np.asarray(value)
    if arr.dtype.kind not in _KINDS:
        raise InputError(
            f"array {name!r} has dtype {arr.dtype}; only numeric, boolean and "
            f"unicode arrays can be saved without pickle",
            field="arrays",
        )
    return arr


def save_model(path, arrays, meta) -> Path:
    """Write a model file.

    Parameters
    ----------
    path : str or os.PathLike
        Destination; written to a temporary file beside it, flushed to disk, then renamed
        over it (:func:`cutplane.npz_io.write_npz_atomic`), so a crash or an error never leaves
        a half-written model under ``path`` nor a stray temporary file.
    arrays : dict of str to array-like
        Numeric, boolean or unicode arrays (no object arrays).
    meta : dict
        JSON-serialisable metadata; must name the ``estimator``. ``format``,
        ``format_version`` and ``arrays`` are filled in here.

    Returns
    -------
    pathlib.Path
        The written path.
    """
    if not isinstance(meta, dict) or "estimator" not in meta:
        raise InputError("meta must be a dict naming the 'estimator'", field="meta")
    clash = _RESERVED & set(meta)
    if clash:
        raise InputError(f"meta keys {sorted(clash)} are reserved", field="meta")
    checked = {name: _check_array(name, value) for name, value in arrays.items()}
    full = dict(meta)
    full["format"] = FORMAT_NAME
    full["format_version"] = FORMAT_VERSION
    full["arrays"] = {k: {"shape": list(a.shape), "dtype": a.dtype.str} for k, a in checked.items()}
    try:
        text = json.dumps(full, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputError(f"metadata is not JSON-serialisable: {exc}", field="meta") from None
    return write_npz_atomic(path, {**checked, _META_KEY: np.array(text)}, compress=True)


def _reject_constant(name):
    raise ValueError(f"non-finite number {name} in JSON")


def _read_meta(data, path):
    if _META_KEY not in data.files:
        raise ModelFormatError("not a cutplane model (no metadata entry)", path=path)
    raw = data[_META_KEY]
    if not isinstance(raw, np.ndarray) or raw.dtype.kind != "U" or raw.shape != ():
        raise ModelFormatError("metadata entry is not a JSON string", path=path, field=_META_KEY)
    try:
        meta = json.loads(str(raw), parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise ModelFormatError(f"metadata is not valid JSON ({str(exc)[:200]})", path=path, field=_META_KEY) from None
    if not isinstance(meta, dict):
        raise ModelFormatError("metadata is not a JSON object", path=path, field=_META_KEY)
    if meta.get("format") != FORMAT_NAME:
        raise ModelFormatError(
            f"unknown format {str(meta.get('format'))[:80]!r}, expected {FORMAT_NAME!r}", path=path, field="format"
        )
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        raise ModelFormatError(
            f"unsupported format_version {str(version)[:80]!r} (this version of cutplane reads 1..{FORMAT_VERSION})",
            path=path,
            field="format_version",
        )
    declared = meta.get("arrays")
    if not isinstance(declared, dict) or not isinstance(meta.get("estimator"), str):
        raise ModelFormatError("metadata lacks 'arrays' or 'estimator'", path=path, field=_META_KEY)
    return meta


def _declared_spec(name, spec, path):
    """``(shape, dtype)`` of a declared array, validated."""
    shape = spec.get("shape") if isinstance(spec, dict) else None
    if (
        not isinstance(shape, list)
        or len(shape) > 32
        or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**62 for d in shape)
    ):
        raise ModelFormatError(
            f"declared shape of {name!r} is not a list of sizes: {str(spec)[:80]}", path=path, field=name
        )
    try:
        dtype = np.dtype(spec.get("dtype"))
    except (TypeError, ValueError, SyntaxError):
        raise ModelFormatError(
            f"declared dtype of {name!r} is not a dtype: {str(spec)[:80]}", path=path, field=name
        ) from None
    if dtype.kind not in _KINDS or dtype.str != spec.get("dtype") or dtype.itemsize == 0:
        raise ModelFormatError(
            f"declared dtype {spec.get('dtype')!r} of {name!r} is not a plain numeric, boolean or unicode dtype",
            path=path,
            field=name,
        )
    return tuple(shape), dtype


def _valid_unicode(arr: np.ndarray) -> bool:
    """Every code point of a unicode array is at most U+10FFFF (numpy does not check on load)."""
    native = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    codes = np.frombuffer(native.tobytes(), dtype=np.uint32)
    return bool(codes.size == 0 or codes.max() <= 0x10FFFF)


def _check_zip_entries(data, path):
    """Refuse archive members that np.load would not read as .npy arrays, or cannot read safely."""
    zf = getattr(data, "zip", None)
    if zf is None:  # pragma: no cover - numpy always exposes it
        return {}
    sizes = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy") or info.filename.count("/"):
            raise ModelFormatError(f"unexpected archive member {info.filename[:80]!r}", path=path)
        if info.flag_bits & 0x1:
            raise ModelFormatError(f"archive member {info.filename[:80]!r} is encrypted", path=path)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ModelFormatError(
                f"archive member {info.filename[:80]!r} uses compression method "
                f"{info.compress_type}; expected stored or deflated",
                path=path,
            )
        sizes[info.filename[:-4]] = info.file_size
    return sizes


def load_model(path, *, estimator=None, schema=None, allow_nonfinite=()) -> LoadedModel:
    """Read and validate a model file written by :func:`save_model`.

    Parameters
    ----------
    path : str or os.PathLike
    estimator : str, optional
        When given, the file must have been written by this estimator class.
    schema : ModelSchema, optional
        What the estimator's file must hold (:func:`~problems.model_schemas.check_schema`);
        None: the schema registered for the file's estimator (:data:`MODEL_SCHEMAS`), if any.
    allow_nonfinite : iterable of str, default=()
        Names of float arrays that may hold NaN or infinities; every other float array must
        be finite.

    Returns
    -------
    LoadedModel
        ``(arrays, meta)``.

    Raises
    ------
    ModelFormatError
        Naming the file and the problem: missing file or a directory, truncated or corrupted
        archive (bad zip, CRC error, unsupported or encrypted member), not an ``.npz``,
        unknown format or version, metadata not a JSON object (or holding NaN), arrays
        missing, extra, or of a shape, dtype or stored size other than declared, non-finite
        values, a different estimator, or (given a schema) required arrays or metadata missing or
        of the wrong type.

    Notes
    -----
    Arrays are read with ``allow_pickle=False``; the stored size of each member is compared
    with the declared shape and dtype before it is decompressed, so a corrupted or hostile
    file cannot make the loader allocate more than it declares.
    """
    path = Path(path)
    if path.is_dir():
        raise ModelFormatError("is a directory; expected a model file", path=path)
    if not path.is_file():
        raise ModelFormatError("model file not found", path=path)
    allow_nonfinite = set(allow_nonfinite)
    try:
        with open(path, "rb") as f:
            magic = f.read(6)
    except OSError as exc:
        raise ModelFormatError(f"cannot read model file: {exc.strerror or exc}", path=path) from None
    if not (magic.startswith(b"PK") or magic == b"\x93NUMPY"):
        raise ModelFormatError(
            f"not a model archive (starts with {magic!r}; expected a .npz zip archive, "
            "perhaps the file is empty, truncated or of another format)",
            path=path,
        )
    try:
        data = np.load(path, allow_pickle=False, mmap_mode=None)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ModelFormatError("not a model archive (a single .npy array, expected an .npz)", path=path)
        with warnings.catch_warnings(), data:
            # headers in the Python 2 style are parsed (and validated below) without a warning
            warnings.filterwarnings("ignore", message="Reading `.npy`", category=UserWarning)
            sizes = _check_zip_entries(data, path)
            if sizes.get(_META_KEY, 0) > _MAX_META_BYTES:
                raise ModelFormatError(
                    f"metadata entry of {sizes[_META_KEY]} bytes is too large", path=path, field=_META_KEY
                )
            meta = _read_meta(data, path)
            declared = meta["arrays"]
            stored = set(data.files) - {_META_KEY}
            if stored != set(declared):
                raise ModelFormatError(
                    f"arrays {sorted(stored)[:20]} do not match the declared {sorted(declared)[:20]}",
                    path=path,
                    field="arrays",
                )
            arrays = {}
            for name, spec in declared.items():
                shape, dtype = _declared_spec(name, spec, path)
                nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
                extra = sizes.get(name, nbytes) - nbytes
                if not 0 <= extra <= _MAX_NPY_HEADER:
                    raise ModelFormatError(
                        f"array {name!r}: stored entry of {sizes[name]} bytes does not match the declared "
                        f"shape {list(shape)} and dtype {dtype.str}",
                        path=path,
                        field=name,
                    )
                arr = data[name]
                if not isinstance(arr, np.ndarray) or arr.shape != shape or arr.dtype.str != dtype.str:
                    got = (arr.shape, arr.dtype.str) if isinstance(arr, np.ndarray) else type(arr).__name__
                    raise ModelFormatError(
                        f"array {name!r} has shape and dtype {got}, declared {spec}", path=path, field=name
                    )
                if arr.dtype.kind == "U" and not _valid_unicode(arr):
                    raise ModelFormatError(f"array {name!r} holds invalid Unicode code points", path=path, field=name)
                if arr.dtype.kind in "fc" and name not in allow_nonfinite and not np.all(np.isfinite(arr)):
                    raise ModelFormatError(f"array {name!r} holds NaN or infinite values", path=path, field=name)
                arrays[name] = arr
    except ModelFormatError:
        raise
    except (
        zipfile.BadZipFile,
        zlib.error,
        EOFError,
        OSError,
        ValueError,
        KeyError,
        NotImplementedError,
        RuntimeError,
        struct.error,
        MemoryError,
        OverflowError,
        SyntaxError,
        tokenize.TokenError,
        TypeError,
    ) as exc:
        # np.load raises ValueError for non-npz files and for object arrays (pickle refused), and
        # SyntaxError / TokenError / TypeError for .npy headers that are not a valid dict literal.
        raise ModelFormatError(
            f"not a readable model file (truncated or corrupted?): {type(exc).__name__}: {str(exc)[:200]}", path=path
        ) from None
    if estimator is not None and meta["estimator"] != estimator:
        raise ModelFormatError(
            f"the file holds a {meta['estimator'][:80]} model, expected {estimator}", path=path, field="estimator"
        )
    if schema is None:
        schema = MODEL_SCHEMAS.get(meta["estimator"])
    if schema is not None:
        check_schema(schema, arrays, meta, path)
    return LoadedModel(arrays, meta)


def describe_model(model_path, meta) -> str:
    """``the model M.npz (task 'binary': 2 classes, 30 features)``: the model's task and, where
    the file records them, its shape (features, classes or labels)."""
    task = meta.get("task", "multiclass")
    report = meta.get("report") if isinstance(meta.get("report"), dict) else {}
    shape = []
    for key, what in (("n_classes", "classes"), ("n_labels", "labels"), ("n_features", "features")):
        value = report.get(key, meta.get("n_features_in") if key == "n_features" else None)
        if isinstance(value, int) and not isinstance(value, bool):
            shape.append(f"{value} {what}")
    return f"the model {model_path} (task {task!r}" + (": " + ", ".join(shape) if shape else "") + ")"
