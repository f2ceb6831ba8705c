"""Imports the command line's process defers until a module is used (pandas).

scikit-learn imports pandas when it is installed (``sklearn.utils.fixes``), for the data frames
a user may give its estimators; ``cutplane``'s commands read their own files and never make a
data frame, yet the import adds to the process's resident memory
(``docs/results/plain_memory.md`` measures the plain command's peak with and without). The command line
registers pandas with the standard library's lazy loader (:class:`importlib.util.LazyLoader`)
before anything imports it: ``import pandas`` then gives a module whose code runs at the first
attribute read, so a command that does use pandas gets the whole module, unchanged. The library
itself defers nothing in a program that imports it. A command run with ``--executor dask``
defers nothing either: the dask client's own thread may import pandas, and the lazy loader is
not safe when two threads load the same module at once before Python 3.12.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import logging
import os
import sys

__all__ = ["DEFERRED", "defer_import", "defer_unused_imports"]

logger = logging.getLogger(__name__)

#: The modules the command line defers.
DEFERRED = ("pandas",)


class _LazyFinder(importlib.abc.MetaPathFinder):
    """Finds the deferred modules with the other finders and wraps their loaders in
    :class:`importlib.util.LazyLoader` (a module put in ``sys.modules`` beforehand would be
    loaded by the next ``import`` statement: reading its ``__spec__`` runs it)."""

    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.names:
            return None
        self.names.discard(fullname)  # once: the module's own submodules are found as usual
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        logger.debug("import of %s deferred until first use", fullname)
        return spec


def defer_import(name: str) -> bool:
    """Have the top-level module ``name`` loaded by :class:`importlib.util.LazyLoader` when it
    is first imported: its code runs when one of its attributes is first read. Returns False
    (nothing done) when it is already imported or not installed."""
    if name in sys.modules or importlib.util.find_spec(name) is None:
        return False
    if not any(isinstance(f, _LazyFinder) and name in f.names for f in sys.meta_path):
        sys.meta_path.insert(0, _LazyFinder([name]))
    return True


def defer_unused_imports() -> dict[str, bool]:
    """:func:`defer_import` of every module of :data:`DEFERRED`, unless the environment says
    ``CUTPLANE_DEFER_IMPORTS=no``. Returns which were deferred."""
    if os.environ.get("CUTPLANE_DEFER_IMPORTS", "").strip().lower() in ("no", "0", "false"):
        return dict.fromkeys(DEFERRED, False)
    return {name: defer_import(name) for name in DEFERRED}
