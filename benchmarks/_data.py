"""The benchmarks' data folder: the project's ``../shared/data`` when ``CUTPLANE_DATA`` is unset.

The library reads the datasets from ``$CUTPLANE_DATA`` or ``~/cutplane_data``
(:func:`problems.datasets.get_data_home`); the benchmarks, like the test suite, also find the
project's copy beside the checkout. :func:`use_shared_data` names it in ``CUTPLANE_DATA`` (for
this process and the commands it starts); ``benchmarks/__init__.py`` calls it, so every
``python -m benchmarks.<name>`` sees the same data as before.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["SHARED_DATA", "use_shared_data"]

#: ``../shared/data`` relative to the repository root (not to the working directory).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def use_shared_data() -> Path | None:
    """Set ``CUTPLANE_DATA`` to :data:`SHARED_DATA` when it is unset (or empty) and that folder
    exists; the folder ``CUTPLANE_DATA`` names afterwards, or None."""
    if not os.environ.get("CUTPLANE_DATA") and SHARED_DATA.is_dir():
        os.environ["CUTPLANE_DATA"] = str(SHARED_DATA)
    return Path(os.environ["CUTPLANE_DATA"]) if os.environ.get("CUTPLANE_DATA") else None
