"""Where the datasets live: the data home.

The package never ships the datasets; it reads them from one folder, the *data home*, laid out
like the project's ``shared/data`` (one sub-folder per corpus: ``conll2000-chunking/``,
``ud-danish-ddt/``, ...). As scikit-learn's :func:`sklearn.datasets.get_data_home`, the data
home is, in this order:

1. the ``data_home`` argument, where a function takes one;
2. the folder named by the environment variable ``CUTPLANE_DATA``;
3. ``~/cutplane_data``, the per-user default (``~`` expanded).

Nothing else is searched: the working directory does not matter. (The project's test suite and
benchmarks set ``CUTPLANE_DATA`` to the checkout's ``../shared/data`` when it is unset.)
Nothing is created or downloaded here.
"""

from __future__ import annotations

import os
from pathlib import Path

from cutplane.exceptions import InputError

__all__ = ["DATA_ENV", "DEFAULT_DATA_HOME", "get_data_home", "data_home", "dataset_path"]

#: The environment variable naming the data home.
DATA_ENV = "CUTPLANE_DATA"
#: The data home when neither an argument nor ``CUTPLANE_DATA`` names one (``~`` expanded on use).
DEFAULT_DATA_HOME = "~/cutplane_data"


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """The data home: ``data_home`` if given, else ``$CUTPLANE_DATA``, else ``~/cutplane_data``.

    Parameters
    ----------
    data_home : str or os.PathLike, optional
        A folder laid out like the project's ``shared/data``; ``~`` is expanded.

    Returns
    -------
    pathlib.Path
        The folder (it may not exist: nothing is created; see :func:`data_home`). An empty
        ``CUTPLANE_DATA`` counts as unset.
    """
    if data_home is None:
        data_home = os.environ.get(DATA_ENV) or DEFAULT_DATA_HOME
    return Path(data_home).expanduser()


def data_home() -> Path | None:
    """The data home (:func:`get_data_home`) when it is an existing folder, else None."""
    home = get_data_home()
    return home if home.is_dir() else None


def dataset_path(*parts: str, data_home: str | os.PathLike[str] | None = None) -> Path:
    """Path of a file or folder inside the data home; a clear error when it is missing.

    Parameters
    ----------
    *parts : str
        The path inside the data home, e.g. ``"conll2000-chunking", "train.txt.gz"``.
    data_home : str or os.PathLike, optional
        The data home; default :func:`get_data_home`'s (``$CUTPLANE_DATA``, else
        ``~/cutplane_data``).

    Raises
    ------
    InputError
        The data home or the path inside it does not exist (the message says where it looked
        and how to name another folder).
    """
    home = get_data_home(data_home)
    if not home.is_dir():
        raise InputError(
            f"no data folder {home}: set {DATA_ENV} to a folder laid out like shared/data "
            f"(one sub-folder per corpus), or put the datasets in {DEFAULT_DATA_HOME}"
        )
    p = home.joinpath(*parts)
    if not p.exists():
        raise InputError(f"{p} does not exist (data folder {home}; see its README.md)")
    return p
