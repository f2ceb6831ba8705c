"""The fingerprint of a problem: what a checkpoint must match to be resumed.

A checkpoint (:mod:`cutplane.checkpoint`) stores a SHA-256 of the problem it was written for:
the engine method and its options, ``lam``, and the classes and data of the oracle and the
regulariser. :func:`cutplane.minimize` refuses to resume from a file whose fingerprint differs
from the problem at hand (other training data, labels, template groups, ``C``...). Attributes
that only choose how the oracle runs (its executor, chunking, verbosity, random generator) are
left out, so a run may resume on another executor.
"""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

__all__ = ["fingerprint", "update_hash", "RUNTIME_ATTRS"]

#: Attributes that choose how an oracle runs, not what it computes: left out of the fingerprint.
RUNTIME_ATTRS = frozenset({"executor", "chunks", "n_chunks", "n_workers", "verbose", "rng"})


def update_hash(h, value):
    """Feed ``value`` to the hash ``h`` (a ``hashlib`` object): arrays by dtype, shape and bytes,
    sparse matrices by their CSR arrays, arrays of objects by dtype and shape only, anything
    else by its ``repr``."""
    if sp.issparse(value):
        m = value.tocsr()
        h.update(f"sparse{m.shape}".encode())
        for part in (m.indptr, m.indices, m.data):
            update_hash(h, np.asarray(part))
    elif isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufcU":
            h.update(f"array<{value.dtype}>{value.shape}".encode())
            return
        h.update(f"{value.dtype.str}{value.shape}".encode())
        h.update(np.ascontiguousarray(value).data)
    else:
        h.update(repr(value).encode())


def _settings(obj):
    """The public scalar and array attributes of ``obj`` that define what it computes."""
    items = []
    for name in sorted(getattr(obj, "__dict__", {})):
        if name.startswith("_") or name in RUNTIME_ATTRS:
            continue
        value = obj.__dict__[name]
        if isinstance(value, (bool, int, float, str, type(None), np.ndarray, np.generic)) or sp.issparse(value):
            items.append((name, value))
    return items


def fingerprint(oracle, regularizer, lam, method, options=None) -> str:
    """SHA-256 (hex) of what defines the problem: the oracle's and regulariser's classes and data.

    Covers ``method``, ``lam``, the step options (``theta``), the classes of ``oracle`` and
    ``regularizer`` and their public scalar, array and sparse-matrix attributes (training data,
    labels, groups, ``p``), except those that only choose how the oracle runs (executor,
    chunks). An object may provide ``checkpoint_fingerprint()`` returning a string instead.
    """
    h = hashlib.sha256()
    h.update(f"{method}|{float(lam)!r}|{sorted((options or {}).items())!r}".encode())
    for obj in (oracle, regularizer):
        h.update(f"|{type(obj).__module__}.{type(obj).__qualname__}|".encode())
        custom = getattr(obj, "checkpoint_fingerprint", None)
        if callable(custom):
            h.update(str(custom()).encode())
            continue
        for name, value in _settings(obj):
            h.update(name.encode())
            update_hash(h, value)
    return h.hexdigest()
