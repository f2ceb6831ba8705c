"""Saved models: one ``.npz`` of numeric arrays plus a JSON metadata entry, never pickle.

Layout of a model file (a zip archive written by :func:`numpy.savez_compressed`):

- one entry per array, under the names given by the estimator (``coef``, ``classes``, ...);
- ``__meta__``: a 0-d unicode array holding a JSON object with

  ``format`` (``"cutplane-model"``), ``format_version`` (int), ``estimator`` (class name),
  ``params`` (hyper-parameters), ``arrays`` (``{name: {"shape": [...], "dtype": "<f8"}}``)
  and any other estimator-specific fields (classes, training report, ...).

Loading always uses ``allow_pickle=False`` and validates the format name, the version, that
the stored arrays are exactly those listed, and each array's shape and dtype; any mismatch,
a truncated or corrupted archive, or invalid JSON raises
:class:`~cutplane.exceptions.ModelFormatError`. The format is generic: later estimators
(sequence tagger, parser) save their own arrays and metadata through the same two functions.
"""
from __future__ import annotations

import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError

__all__ = ["save_model", "load_model", "LoadedModel", "FORMAT_NAME", "FORMAT_VERSION"]

FORMAT_NAME = "cutplane-model"
FORMAT_VERSION = 1
_META_KEY = "__meta__"
_RESERVED = {"format", "format_version", "arrays"}


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
        raise InputError(f"array names must be identifiers other than {_META_KEY!r}, got "
                         f"{name!r}", field="arrays")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biufcU":
        raise InputError(f"array {name!r} has dtype {arr.dtype}; only numeric, boolean and "
                         f"unicode arrays can be saved without pickle", field="arrays")
    return arr


def save_model(path, arrays, meta) -> Path:
    """Write a model file.

    Parameters
    ----------
    path : str or os.PathLike
        Destination; written to a temporary file first, then renamed, so a crash never
        leaves a half-written model under ``path``.
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
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **checked, **{_META_KEY: np.array(text)})
    os.replace(tmp, path)
    return path


def _read_meta(data, path):
    if _META_KEY not in data.files:
        raise ModelFormatError("not a cutplane model (no metadata entry)", path=path)
    raw = data[_META_KEY]
    if raw.dtype.kind != "U" or raw.shape != ():
        raise ModelFormatError("metadata entry is not a JSON string", path=path, field=_META_KEY)
    try:
        meta = json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise ModelFormatError(f"metadata is not valid JSON ({exc})", path=path,
                               field=_META_KEY) from None
    if not isinstance(meta, dict):
        raise ModelFormatError("metadata is not a JSON object", path=path, field=_META_KEY)
    if meta.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"unknown format {meta.get('format')!r}, expected "
                               f"{FORMAT_NAME!r}", path=path, field="format")
    version = meta.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        raise ModelFormatError(f"unsupported format_version {version!r} (this version of "
                               f"cutplane reads 1..{FORMAT_VERSION})", path=path,
                               field="format_version")
    declared = meta.get("arrays")
    if not isinstance(declared, dict) or not isinstance(meta.get("estimator"), str):
        raise ModelFormatError("metadata lacks 'arrays' or 'estimator'", path=path, field=_META_KEY)
    return meta


def load_model(path, *, estimator=None) -> LoadedModel:
    """Read and validate a model file written by :func:`save_model`.

    Parameters
    ----------
    path : str or os.PathLike
    estimator : str, optional
        When given, the file must have been written by this estimator class.

    Returns
    -------
    LoadedModel
        ``(arrays, meta)``.

    Raises
    ------
    ModelFormatError
        Missing, truncated or corrupted file, unknown format or version, arrays missing,
        extra, or of the wrong shape or dtype, or a different estimator.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFormatError("model file not found", path=path)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = _read_meta(data, path)
            declared = meta["arrays"]
            stored = set(data.files) - {_META_KEY}
            if stored != set(declared):
                raise ModelFormatError(
                    f"arrays {sorted(stored)} do not match the declared {sorted(declared)}",
                    path=path, field="arrays")
            arrays = {}
            for name, spec in declared.items():
                arr = data[name]
                if (not isinstance(spec, dict) or list(arr.shape) != spec.get("shape")
                        or arr.dtype.str != spec.get("dtype")):
                    raise ModelFormatError(
                        f"array {name!r} has shape {arr.shape} and dtype {arr.dtype.str}, "
                        f"declared {spec}", path=path, field=name)
                arrays[name] = arr
    except ModelFormatError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError) as exc:
        # np.load raises ValueError for non-npz files and for object arrays (pickle refused).
        raise ModelFormatError(f"not a readable model file (truncated or corrupted?): {exc}",
                               path=path) from None
    if estimator is not None and meta["estimator"] != estimator:
        raise ModelFormatError(f"the file holds a {meta['estimator']} model, expected "
                               f"{estimator}", path=path, field="estimator")
    return LoadedModel(arrays, meta)
