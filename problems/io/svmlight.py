"""SVMlight / LIBSVM sparse text format: ``<label> [qid:<q>] <index>:<value> ... [# comment]``.

Reading goes through scikit-learn's compiled parser (fast path); when it fails, or when the
file holds NaN or infinite numbers (which that parser accepts), the file is read again in
Python, which names the first offending line and field in one
:class:`~cutplane.exceptions.InputError` (or reads what that parser refuses but the format
allows, such as a byte-order mark). Feature indices are 1-based by default
(the SVMlight convention); gzip input is read transparently (``.gz`` suffix or magic bytes).
"""

from __future__ import annotations

import gzip
import io
import math
import numbers
import os
import zlib
from pathlib import Path
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError
from problems.io._open import iter_lines, no_records, parse_int

__all__ = ["read_svmlight", "write_svmlight", "SvmlightData", "MAX_INDEX"]

_GZIP_MAGIC = b"\x1f\x8b"
#: Largest feature index accepted (scipy's and scikit-learn's int32 index arrays).
MAX_INDEX = 2**31 - 2


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


def _shown(token: str) -> str:
    return repr(token if len(token) <= 40 else token[:40] + "...")


def _parse_float(token, *, path, line, field):
    if "_" in token:  # float() reads '1_0' as 10.0
        raise InputError(f"cannot parse {_shown(token)} as a number", path=path, line=line, field=field)
    try:
        value = float(token)
    except ValueError:
        raise InputError(f"cannot parse {_shown(token)} as a number", path=path, line=line, field=field) from None
    if not math.isfinite(value):
        raise InputError(f"non-finite value {_shown(token)}", path=path, line=line, field=field)
    return value


def _parse_line(text, *, path, line, zero_based, n_features):
    """``(label, indices, values)`` of one data line (0-based indices), or None for a blank or
    comment-only line; raises an InputError naming the line and token when it breaks the format."""
    body = text.split("#", 1)[0].strip()
    if not body:
        return None
    tokens = body.split()
    label = _parse_float(tokens[0], path=path, line=line, field="label")
    prev = -1
    lowest = 0 if zero_based else 1
    indices, values = [], []
    for k, tok in enumerate(tokens[1:], start=1):
        if k == 1 and tok.startswith("qid:"):
            parse_int(tok[4:], path=path, line=line, field="qid")
            continue
        idx_s, sep, val_s = tok.partition(":")
        if not sep:
            raise InputError(
                f"expected <index>:<value>, got {_shown(tok)}", path=path, line=line, field=f"token {k + 1}"
            )
        idx = parse_int(idx_s, path=path, line=line, field=f"token {k + 1}", max_value=MAX_INDEX)
        if idx < lowest:
            hint = "" if zero_based else " (SVMlight indices start at 1; use zero_based=True)"
            raise InputError(f"invalid feature index {idx}{hint}", path=path, line=line, field=f"token {k + 1}")
        if idx <= prev:
            raise InputError(
                f"feature indices must be increasing and unique; {idx} follows {prev}",
                path=path,
                line=line,
                field=f"token {k + 1}",
            )
        prev = idx
        if n_features is not None and idx - lowest >= n_features:
            raise InputError(
                f"feature index {idx} exceeds n_features={n_features}", path=path, line=line, field=f"token {k + 1}"
            )
        indices.append(idx - lowest)
        values.append(_parse_float(val_s, path=path, line=line, field=f"token {k + 1}"))
    return label, indices, values


def _read_python(path, *, zero_based, n_features):
    """The pure-Python reader: slower, but every error names its line (and BOM/CRLF are fine)."""
    import scipy.sparse as sp

    labels, indptr, indices, values = [], [0], [], []
    for line_no, text in iter_lines(path):
        row = _parse_line(text, path=path, line=line_no, zero_based=zero_based, n_features=n_features)
        if row is None:
            continue
        labels.append(row[0])
        indices.extend(row[1])
        values.extend(row[2])
        indptr.append(len(indices))
    if not labels:
        raise no_records(path, "examples")
    width = n_features if n_features is not None else max(indices, default=-1) + 1
    X = sp.csr_matrix(
        (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(len(labels), width),
    )
    return X, np.asarray(labels, dtype=np.float64)


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
        Missing or empty file, or a malformed line (the message names the line and token):
        a non-number or non-finite label or value, a feature index that is not an ASCII
        integer in ``1..MAX_INDEX`` (``0..`` with ``zero_based``), indices not increasing, a
        ``qid:`` that is not an integer, bad UTF-8, a corrupt gzip stream.

    Notes
    -----
    Input policy: a UTF-8 byte-order mark and CRLF line ends are accepted; ``#`` starts a
    comment; a file with no example, or (without ``n_features``) no feature at all, is an error;
    the optional ``qid:`` is validated and dropped. The fast path is scikit-learn's parser; when
    it fails or finds a non-finite number, the pure-Python reader re-reads the file and either
    names the offending line or (for what scikit-learn does not accept, e.g. a BOM) returns the
    data.
    """
    from sklearn.datasets import load_svmlight_file

    if n_features is not None and (
        isinstance(n_features, bool)
        or not isinstance(n_features, numbers.Integral)
        or not 1 <= n_features <= MAX_INDEX + 1
    ):
        raise InputError(f"must be an integer in 1..{MAX_INDEX + 1}, got {n_features!r}", field="n_features")
    fast = False
    try:
        with _open_binary(path) as f:
            data = f.read()
        # Python's int/float (used by scikit-learn's parser) accept '1_0' as 10: such files, and
        # those with a byte-order mark, go to the strict reader.
        if b"_" not in data and not data.startswith(b"\xef\xbb\xbf"):
            X, y, _ = load_svmlight_file(
                io.BytesIO(data), n_features=n_features, zero_based=zero_based, dtype=np.float64, query_id=True
            )
            fast = X.shape[0] > 0 and bool(np.all(np.isfinite(X.data)) and np.all(np.isfinite(y)))
    except InputError:
        raise
    except (ValueError, TypeError, IndexError, OverflowError, MemoryError, OSError, EOFError, zlib.error):
        fast = False
    if fast and n_features is None and X.nnz == 0:  # scikit-learn invents one column for a file without features
        fast = False
    if not fast:
        X, y = _read_python(path, zero_based=zero_based, n_features=n_features)
    if X.shape[1] == 0:
        raise InputError(
            "no example has a feature (expected <index>:<value> pairs after the labels); pass "
            "n_features to read such a file",
            path=path,
        )
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
