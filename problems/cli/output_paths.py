"""Check the files a command will write before it reads anything.

``cutplane train --model adir`` (a folder), ``--model /missing/dir/m.npz`` or a model file that
cannot be written used to train the whole model and only then fail. The commands call
:func:`check_output_file` (and :func:`check_output_dir` for ``--plot``) on every path they will
write, first: a path that cannot be written is refused at once with one
:class:`~cutplane.exceptions.InputError` naming the option and the path as the user gave it.
Nothing is created or changed by the check.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from cutplane.exceptions import InputError

__all__ = ["check_output_file", "check_output_dir", "check_not_input"]


def _refuse(flag: str, path, why: str):
    raise InputError(why, path=path, field=flag)


def _folder_of(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def check_output_file(path, flag: str) -> None:
    """Raise unless a file can be written at ``path`` (given as option ``flag``).

    Refused: a folder; a path whose folder does not exist or is not a folder; an existing file
    that cannot be opened for writing (read-only, immutable); a folder where no file can be
    created (the model and checkpoint files are written to a temporary file beside the target,
    then renamed). The check opens an existing file for appending without writing to it, and
    creates and removes a temporary file in the folder otherwise: it leaves nothing behind.

    Raises
    ------
    InputError
        ``field`` the option (``--model``, ``--report``, ...); the message names the path given.
    """
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        _refuse(flag, path, "is a folder; give a file name in it, e.g. " + str(p / "out.npz"))
    folder = _folder_of(p)
    if not folder.exists():
        _refuse(flag, path, f"its folder {folder} does not exist (create it first)")
    if not folder.is_dir():
        _refuse(flag, path, f"{folder} is not a folder")
    if p.exists():
        try:
            with open(p, "ab"):  # no truncation, nothing written
                pass
        except OSError as exc:
            _refuse(flag, path, f"cannot be written ({exc.strerror or exc})")
        return
    try:
        fd, probe = tempfile.mkstemp(prefix=p.name + ".", suffix=".check", dir=folder)
    except OSError as exc:
        _refuse(flag, path, f"no file can be created in {folder} ({exc.strerror or exc})")
    else:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(probe)


def check_output_dir(path, flag: str) -> None:
    """Raise when the folder ``path`` (created on demand, with its parents) cannot be: an
    existing file at ``path`` or at one of its parents."""
    if path is None:
        return
    p = Path(path)
    for part in (p, *p.parents):
        if part.exists():
            if not part.is_dir():
                what = "is a file" if part == p else f"{part} is a file"
                _refuse(flag, path, f"{what}; give a folder")
            return


def check_not_input(output, inputs, flag: str) -> None:
    """Refuse an output path that is one of the input files (it would be overwritten)."""
    if output is None:
        return
    out = Path(output)
    for given in inputs:
        if given is None:
            continue
        with contextlib.suppress(OSError):
            if out.exists() and Path(given).exists() and os.path.samefile(out, given):
                _refuse(flag, output, f"is the input file {given}; write the output elsewhere")
