"""Where the benchmark datasets live.

Code never ships the datasets; it reads them from the folder named by the environment
variable ``CUTPLANE_DATA`` (laid out like the project's ``shared/data``), falling back
to ``../shared/data`` relative to the working directory or to the source checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

from cutplane.exceptions import InputError

__all__ = ["data_home", "dataset_path"]

_ENV = "CUTPLANE_DATA"


def data_home() -> Path | None:
    """The data folder, or None when neither ``$CUTPLANE_DATA`` nor ``../shared/data`` exists."""
    env = os.environ.get(_ENV)
    if env:
        p = Path(env).expanduser()
        return p if p.is_dir() else None
    candidates = [
        Path.cwd().parent / "shared" / "data",
        Path(__file__).resolve().parent.parent.parent / "shared" / "data",
    ]
    for p in candidates:
        if p.is_dir():
            return p
    return None


def dataset_path(*parts: str) -> Path:
    """Path of a file or folder inside the data folder; a clear error when it is missing."""
    home = data_home()
    if home is None:
        raise InputError(f"no data folder: set {_ENV} to a folder laid out like shared/data")
    p = home.joinpath(*parts)
    if not p.exists():
        raise InputError(f"{p} does not exist (data folder {home}; see its README.md)")
    return p
