"""SVMlight / LIBSVM sparse text format: ``<label> [qid:<q>] <index>:<value> ... [# comment]``.

Reading goes through scikit-learn's compiled parser (fast path); when it fails, or when the
file holds NaN or infinite numbers (which that parser accepts), the file is read again in
Python, which names the first offending line and field in one
:class:`~cutplane.exceptions.InputError` (or reads what that parser refuses but the format
allows, such as a byte-order mark). Both paths apply the same rules, checked in one place
after parsing (:func:`read_svmlight_file`): a feature index is an ASCII integer in
``0..MAX_INDEX`` (``1..MAX_INDEX`` for a 1-based file), increasing along the line.

Index base: SVMlight's indices start at 1, scikit-learn's ``dump_svmlight_file`` writes
0-based ones by default. ``zero_based="auto"`` detects the base as scikit-learn's
``load_svmlight_file(zero_based="auto")`` does: the file is 0-based when some index is 0,
1-based otherwise (a 0-based file without any index 0 is read as 1-based: pass the base
explicitly when it is known). :func:`read_svmlight_file` returns the base it used.
gzip, bzip2 and xz input is read transparently (magic bytes, or the
``.gz`` / ``.bz2`` / ``.xz`` suffix).
"""

from __future__ import annotations

import gzip
import io
import math
import numbers
import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from cutplane.exceptions import InputError
from problems.io._open import decompression_errors, iter_lines, no_records, open_binary, parse_int

if TYPE_CHECKING:  # scipy is imported when a file is read (the package imports fast)
    import scipy.sparse as sp

__all__ = [
    "read_svmlight",
    "read_svmlight_file",
    "write_svmlight",
    "SvmlightData",
    "SvmlightFile",
    "SvmlightRanking",
    "read_svmlight_ranking",
    "MAX_INDEX",
]

#: Largest feature index accepted, whatever the base and whichever reader path (scipy's and
#: scikit-learn's int32 index arrays; a 0-based file then has at most ``MAX_INDEX + 1`` columns).
MAX_INDEX = 2**31 - 2


class SvmlightData(NamedTuple):
    """Features and labels read from an SVMlight file.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of float64 of shape (n_samples,)
    """

    X: sp.csr_matrix
    y: np.ndarray


class SvmlightRanking(NamedTuple):
    """A ranking file read by :func:`read_svmlight_ranking`: items, relevance, queries, index base.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of float64 of shape (n_samples,)
        Relevance (the label column).
    qid : ndarray of int64 of shape (n_samples,) or None
        The ``qid:`` of each line; None when no line has one (one query).
    zero_based : bool
    """

    X: sp.csr_matrix
    y: np.ndarray
    qid: np.ndarray | None
    zero_based: bool


class SvmlightFile(NamedTuple):
    """An SVMlight file read by :func:`read_svmlight_file`: the data and the index base used.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
        Column ``j`` holds the file's index ``j`` (0-based file) or ``j + 1`` (1-based).
    y : ndarray of float64 of shape (n_samples,)
    zero_based : bool
        Whether the indices were read as 0-based (given, or detected by ``"auto"``).
    """

    X: sp.csr_matrix
    y: np.ndarray
    zero_based: bool


def _open_binary(path):
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=path)
    if path.is_dir():
        raise InputError("is a directory, expected an SVMlight file", path=path)
    return open_binary(path)  # gzip, bzip2 or xz decompressed (problems.io._open.compression_of)


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


def _check_index(idx, *, zero_based, path, line, field):
    """The one rule on a feature index as written in the file, for both reader paths: an
    integer in ``lowest..MAX_INDEX`` with ``lowest`` 0 (0-based) or 1 (1-based)."""
    lowest = 0 if zero_based else 1
    if idx > MAX_INDEX:
        raise InputError(
            f"feature index {idx} exceeds the largest index accepted, {MAX_INDEX}", path=path, line=line, field=field
        )
    if idx < lowest:
        hint = (
            ""
            if zero_based
            else " (1-based indices were expected, as SVMlight writes them; scikit-learn's "
            "dump_svmlight_file writes 0-based ones: zero_based=True or 'auto', --zero-based yes|auto "
            "in the CLI)"
        )
        raise InputError(f"invalid feature index {idx}{hint}", path=path, line=line, field=field)


def _parse_line(text, *, path, line, zero_based, n_features):
    """``(label, indices, values, qid)`` of one data line (indices as written in the file; ``qid``
    None when the line has none), or None
    for a blank or comment-only line; raises an InputError naming the line and token when it
    breaks the format (``zero_based`` None: the base is not known yet, any index >= 0 passes)."""
    body = text.split("#", 1)[0].strip()
    if not body:
        return None
    tokens = body.split()
    label = _parse_float(tokens[0], path=path, line=line, field="label")
    prev = -1
    lowest = 0 if zero_based in (None, True) else 1
    indices, values = [], []
    qid = None
    for k, tok in enumerate(tokens[1:], start=1):
        if k == 1 and tok.startswith("qid:"):
            qid = parse_int(tok[4:], path=path, line=line, field="qid")
            continue
        idx_s, sep, val_s = tok.partition(":")
        field = f"token {k + 1}"
        if not sep:
            raise InputError(f"expected <index>:<value>, got {_shown(tok)}", path=path, line=line, field=field)
        idx = parse_int(idx_s, path=path, line=line, field=field)
        _check_index(idx, zero_based=zero_based is not False, path=path, line=line, field=field)
        if idx <= prev:
            raise InputError(
                f"feature indices must be increasing and unique; {idx} follows {prev}",
                path=path,
                line=line,
                field=field,
            )
        prev = idx
        if n_features is not None and idx - lowest >= n_features:
            raise InputError(f"feature index {idx} exceeds n_features={n_features}", path=path, line=line, field=field)
        indices.append(idx)
        values.append(_parse_float(val_s, path=path, line=line, field=field))
    return label, indices, values, qid


def _read_python(path, *, zero_based, n_features, qids=None):
    """The pure-Python reader: slower, but every error names its line (and BOM/CRLF are fine).
    Returns ``(X, y)`` with column ``j`` = the file's index ``j`` (``zero_based`` None or
    True: the raw indices) or ``j + 1`` (False). ``qids``, a list, receives ``(line, qid)`` of
    each example (``qid`` None where the line has none)."""
    import scipy.sparse as sp

    lowest = 0 if zero_based in (None, True) else 1
    labels: list[float] = []
    indptr = [0]
    indices: list[int] = []
    values: list[float] = []
    for line_no, text in iter_lines(path):
        row = _parse_line(text, path=path, line=line_no, zero_based=zero_based, n_features=n_features)
        if row is None:
            continue
        labels.append(row[0])
        if qids is not None:
            qids.append((line_no, row[3]))
        indices.extend(i - lowest for i in row[1])
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


def _read_fast(path, n_features, zero_based):
    """scikit-learn's parser on the raw indices, then the same checks as the Python reader;
    ``(X, y, zero_based)``, or None when the Python reader must read the file (it either names
    the offending line or reads what scikit-learn refuses)."""
    import scipy.sparse as sp
    from sklearn.datasets import load_svmlight_file

    try:
        with _open_binary(path) as f:
            data = f.read()
        # Python's int/float (used by scikit-learn's parser) accept '1_0' as 10: such files, and
        # those with a byte-order mark, go to the strict reader.
        if b"_" in data or data.startswith(b"\xef\xbb\xbf"):
            return None
        raw, y, _ = load_svmlight_file(io.BytesIO(data), zero_based=True, dtype=np.float64, query_id=True)
    except InputError:
        raise
    except (ValueError, TypeError, IndexError, OverflowError, MemoryError, *decompression_errors()):
        return None
    if raw.shape[0] == 0 or not (np.all(np.isfinite(raw.data)) and np.all(np.isfinite(y))):
        return None
    if n_features is None and raw.nnz == 0:  # scikit-learn invents one column for a file without features
        return None
    cols = raw.indices
    smallest = int(cols.min()) if raw.nnz else None
    largest = int(cols.max()) if raw.nnz else -1
    if zero_based == "auto":
        zero_based = smallest == 0
    lowest = 0 if zero_based else 1
    if largest > MAX_INDEX or (smallest is not None and smallest < lowest):
        return None  # the Python reader names the line
    width = largest + 1 - lowest
    if n_features is not None:
        if width > n_features:
            return None
        width = n_features
    X = sp.csr_matrix((raw.data, cols.astype(np.int64) - lowest, raw.indptr), shape=(raw.shape[0], width))
    return X, y, zero_based


def read_svmlight_file(path, n_features=None, *, zero_based="auto") -> SvmlightFile:
    """Read an SVMlight / LIBSVM file and say which index base was used.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip-compressed files are recognised by their magic bytes.
    n_features : int, optional
        Number of columns of ``X``; inferred from the largest index when None. A file with
        an index beyond it is an error.
    zero_based : {"auto", True, False}, default="auto"
        Whether feature indices start at 0 (scikit-learn's ``dump_svmlight_file``, LIBSVM
        variants) or at 1 (SVMlight). ``"auto"``, as scikit-learn's ``load_svmlight_file``:
        0-based when some index in the file is 0, else 1-based.

    Returns
    -------
    SvmlightFile
        ``(X, y, zero_based)``: ``X`` a csr_matrix of float64 of shape (n_samples,
        n_features) with sorted indices, ``y`` an ndarray of float64 of shape (n_samples,),
        ``zero_based`` the base used.

    Raises
    ------
    InputError
        Missing or empty file, or a malformed line (the message names the line and token):
        a non-number or non-finite label or value, a feature index that is not an ASCII
        integer in ``1..MAX_INDEX`` (``0..MAX_INDEX`` when 0-based), indices not increasing, a
        ``qid:`` that is not an integer, bad UTF-8, a corrupt gzip stream; or a bad
        ``n_features`` / ``zero_based``.

    Notes
    -----
    Input policy: a UTF-8 byte-order mark and CRLF line ends are accepted; ``#`` starts a
    comment; a file with no example, or (without ``n_features``) no feature at all, is an error;
    the optional ``qid:`` is validated and dropped. The fast path is scikit-learn's parser, read
    on the raw indices and checked by the same rules as the Python reader; when it fails, finds
    a non-finite number or an index the rules refuse, the pure-Python reader re-reads the file
    and either names the offending line or (for what scikit-learn does not accept, e.g. a BOM)
    returns the data. Which path reads a file never changes what is accepted.
    """
    if n_features is not None and (
        isinstance(n_features, bool)
        or not isinstance(n_features, numbers.Integral)
        or not 1 <= int(n_features) <= MAX_INDEX + 1
    ):
        raise InputError(f"must be an integer in 1..{MAX_INDEX + 1}, got {n_features!r}", field="n_features")
    if not (zero_based is True or zero_based is False or zero_based == "auto"):
        raise InputError(f"must be True, False or 'auto', got {zero_based!r}", field="zero_based")
    fast = _read_fast(path, n_features, zero_based)
    if fast is not None:
        X, y, base = fast
    else:
        base = zero_based
        if base == "auto":  # a first pass on the raw indices decides (this path is for odd files)
            raw, _ = _read_python(path, zero_based=None, n_features=None)
            base = bool(raw.nnz and raw.indices.min() == 0)
        X, y = _read_python(path, zero_based=base, n_features=n_features)
    if X.shape[1] == 0:
        raise InputError(
            "no example has a feature (expected <index>:<value> pairs after the labels); pass "
            "n_features to read such a file",
            path=path,
        )
    X = X.tocsr()
    X.sort_indices()
    return SvmlightFile(X, np.asarray(y, dtype=np.float64), bool(base))


def read_svmlight(path, n_features=None, *, zero_based=False) -> SvmlightData:
    """Read an SVMlight / LIBSVM file.

    Parameters
    ----------
    path : str or os.PathLike
        The file; gzip-compressed files are recognised by their magic bytes.
    n_features : int, optional
        Number of columns of ``X``; inferred from the largest index when None. A file with
        an index beyond it is an error (use the model's ``n_features`` when predicting).
    zero_based : {False, True, "auto"}, default=False
        Whether feature indices start at 0 (scikit-learn's ``dump_svmlight_file``, LIBSVM
        variants) instead of 1 (SVMlight); ``"auto"`` detects it as scikit-learn does (0-based
        when some index is 0). :func:`read_svmlight_file` also returns the base used.

    Returns
    -------
    SvmlightData
        ``(X, y)``: ``X`` a csr_matrix of float64 of shape (n_samples, n_features), ``y``
        an ndarray of float64 of shape (n_samples,).

    Raises
    ------
    InputError
        As :func:`read_svmlight_file`.

    Notes
    -----
    The input policy and the two reader paths are those of :func:`read_svmlight_file`.
    """
    X, y, _ = read_svmlight_file(path, n_features, zero_based=zero_based)
    return SvmlightData(X, y)


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


def read_svmlight_ranking(path, n_features=None, *, zero_based="auto") -> SvmlightRanking:
    """Read an SVMlight ranking file (SVM^rank's format): ``<relevance> qid:<q> <index>:<value> ...``.

    Parameters
    ----------
    path : str or os.PathLike
    n_features : int, optional
    zero_based : {"auto", True, False}, default="auto"
        As in :func:`read_svmlight_file`.

    Returns
    -------
    SvmlightRanking
        ``(X, y, qid, zero_based)``; ``qid`` None when no line has a ``qid:``.

    Raises
    ------
    InputError
        As :func:`read_svmlight_file`; also a ``qid:`` that is not an integer, or a line without
        a ``qid:`` in a file where others have one (the message names the file and line).

    Notes
    -----
    Read by the pure-Python reader (every error names its line).
    """
    X, y, base = read_svmlight_file(path, n_features, zero_based=zero_based)
    qids: list = []
    _read_python(path, zero_based=base, n_features=X.shape[1] if n_features is None else n_features, qids=qids)
    given = [q for _, q in qids if q is not None]
    if not given:
        return SvmlightRanking(X, y, None, base)
    if len(given) != len(qids):
        line = next(line for line, q in qids if q is None)
        raise InputError("a line without qid: in a file whose other lines have one", path=path, line=line, field="qid")
    return SvmlightRanking(X, y, np.asarray(given, dtype=np.int64), base)
