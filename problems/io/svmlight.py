"""SVMlight / LIBSVM sparse text format: ``<label> [qid:<q>] <index>:<value> ... [# comment]``.

Reading goes through scikit-learn's compiled parser (fast path); when it fails, or when the
file holds NaN or infinite numbers (which that parser accepts), the file is scanned again in
Python to name the first offending line and field, and one
:class:`~cutplane.exceptions.InputError` is raised. Feature indices are 1-based by default
(the SVMlight convention); gzip input is read transparently (``.gz`` suffix or magic bytes).
"""
from __future__ import annotations

import gzip
import math
import os
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["read_svmlight", "write_svmlight", "SvmlightData"]

_GZIP_MAGIC = b"\x1f\x8b"


class SvmlightData(NamedTuple):
    """Features and labels read from an SVMlight file.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of float64 of shape (n_samples,)
    """

    X: object
    y: np.ndarray


def _open_binary(path):
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a directory, expected an SVMlight file", path=path)
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == _GZIP_MAGIC:
        return gzip.open(path, "rb")
    return open(path, "rb")


def _parse_float(token, *, path, line, field):
    try:
        value = float(token)
    except ValueError:
        raise InputError(f"cannot parse {token!r} as a number", path=path, line=line,
                         field=field) from None
    if not math.isfinite(value):
        raise InputError(f"non-finite value {token!r}", path=path, line=line, field=field)
    return value


def _check_line(text, *, path, line, zero_based, n_features):
    """Raise an InputError when one data line breaks the format; return nothing otherwise."""
    body = text.split("#", 1)[0].strip()
    if not body:
        return
    tokens = body.split()
    _parse_float(tokens[0], path=path, line=line, field="label")
    prev = -1
    lowest = 0 if zero_based else 1
    for k, tok in enumerate(tokens[1:], start=1):
        if k == 1 and tok.startswith("qid:"):
            continue
        idx_s, sep, val_s = tok.partition(":")
        if not sep:
            raise InputError(f"expected <index>:<value>, got {tok!r}", path=path, line=line,
                             field=f"token {k + 1}")
        try:
            idx = int(idx_s)
        except ValueError:
            raise InputError(f"feature index {idx_s!r} is not an integer", path=path, line=line,
                             field=f"token {k + 1}") from None
        if idx < lowest:
            hint = "" if zero_based else " (SVMlight indices start at 1; use zero_based=True)"
            raise InputError(f"invalid feature index {idx}{hint}", path=path, line=line,
                             field=f"token {k + 1}")
        if idx <= prev:
            raise InputError(f"feature indices must be increasing and unique; {idx} follows "
                             f"{prev}", path=path, line=line, field=f"token {k + 1}")
        prev = idx
        if n_features is not None and idx - lowest >= n_features:
            raise InputError(f"feature index {idx} exceeds n_features={n_features}", path=path,
                             line=line, field=f"token {k + 1}")
        _parse_float(val_s, path=path, line=line, field=f"token {k + 1}")


def _locate_error(path, *, zero_based, n_features):
    """Scan the file in Python and raise the InputError of its first bad line (if any)."""
    from problems.io._open import iter_lines

    for line_no, text in iter_lines(path):
        _check_line(text, path=path, line=line_no, zero_based=zero_based, n_features=n_features)


def read_svmlight(path, n_features=None, *, zero_based=False) -> SvmlightData:
    """Read an SVMlight / LIBSVM file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip-compressed files are recognised by their magic bytes.
    n_features : int, optional
        Number of columns of ``X``; inferred from the largest index when None. A file with
        an index beyond it is an error (use the model's ``n_features`` when predicting).
    zero_based : bool, default=False
        Whether feature indices start at 0 (LIBSVM variants) instead of 1 (SVMlight).

    Returns
    -------
    SvmlightData
        ``(X, y)``: ``X`` a csr_matrix of float64 of shape (n_samples, n_features), ``y``
        an ndarray of float64 of shape (n_samples,).

    Raises
    ------
    InputError
        Missing or empty file, or a malformed line (the message names the line and token).
    """
    from sklearn.datasets import load_svmlight_file

    if n_features is not None and (isinstance(n_features, bool) or int(n_features) != n_features
                                   or n_features < 1):
        raise InputError(f"must be a positive integer, got {n_features!r}", field="n_features")
    try:
        with _open_binary(path) as f:
            X, y = load_svmlight_file(f, n_features=n_features, zero_based=zero_based,
                                      dtype=np.float64)
    except InputError:
        raise
    except (ValueError, TypeError, IndexError, OSError, EOFError, zlib.error) as exc:
        _locate_error(path, zero_based=zero_based, n_features=n_features)
        raise InputError(f"cannot read SVMlight data: {exc}", path=path) from None
    if X.shape[0] == 0:
        raise InputError("the file holds no examples (empty or only comments)", path=path)
    if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
        _locate_error(path, zero_based=zero_based, n_features=n_features)
        raise InputError("contains NaN or infinite values", path=path)  # pragma: no cover
    X = X.tocsr()
    X.sort_indices()
    return SvmlightData(X, np.asarray(y, dtype=np.float64))


def write_svmlight(path, X, y, *, zero_based=False, comment=None):
    """Write features and labels in SVMlight format (gzip when ``path`` ends in ``.gz``).

    Parameters
    ----------
    path : str or os.PathLike
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Numeric labels.
    zero_based : bool, default=False
        Write 0-based indices instead of the SVMlight 1-based ones.
    comment : str, optional
        Written as ``#`` lines at the top of the file.
    """
    from sklearn.datasets import dump_svmlight_file

    from problems.validation import check_X_y

    X, y = check_X_y(X, y)
    if y.dtype.kind not in "biuf":
        raise InputError(f"SVMlight labels must be numbers, got dtype {y.dtype}", field="y")
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wb") as f:
        dump_svmlight_file(X, y, f, zero_based=zero_based, comment=comment)
