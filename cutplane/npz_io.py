"""Durable, atomic writes of ``.npz`` archives (checkpoints and saved models).

:func:`write_npz_atomic` writes the archive to a temporary file beside the target, flushes and
``fsync``-s it, renames it over the target (:func:`os.replace`) and ``fsync``-s the folder so
that the rename survives a crash. Until the rename the target is untouched: a failure at any
point (an error while writing, a full disk, an interrupt) leaves the old file as it was and no
temporary file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["write_npz_atomic"]


def write_npz_atomic(path, arrays: Mapping[str, Any], *, compress: bool = False, mode: int = 0o644) -> Path:
    """Write ``arrays`` as an ``.npz`` archive at ``path``, atomically and durably.

    Parameters
    ----------
    path : str or os.PathLike
        The target file (its folder must exist). Written exactly there: no ``.npz`` suffix is
        added.
    arrays : mapping of str to array-like
        The archive's members, by name (stored as ``name.npy``): numeric, boolean or unicode
        arrays (an object array would be pickled, which the package's readers refuse).
    compress : bool, default=False
        Deflate the members (:func:`numpy.savez_compressed`) instead of storing them
        (:func:`numpy.savez`).
    mode : int, default=0o644
        Permission bits of the written file (a temporary file is created private, 0600).

    Returns
    -------
    pathlib.Path
        The written path.

    Raises
    ------
    OSError
        The temporary file cannot be created, written or renamed; the old file at ``path``, if
        any, is unchanged and the temporary file is removed. Any other error while writing
        (e.g. from an array) propagates the same way.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    members: dict[str, Any] = dict(arrays)
    save = np.savez_compressed if compress else np.savez
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=folder)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            save(f, **members)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # make the rename durable (POSIX); not available everywhere
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return path
