"""cutplane: batch cutting-plane and bundle solvers with certified duality gaps.

The engine: an oracle gives a cut (risk value and subgradient) at ``w``; the engine keeps
the working set of cuts, solves the reduced problem in its dual through cvxpy and stops
when the certified gap between the upper and the lower bound is below ``eps``.

Main entry points: :func:`cutplane.minimize` and :class:`cutplane.Result`; a certified path over
``lam`` (warm-started from point to point): :func:`cutplane.regularization_path`.
Heavy submodules (cvxpy) are imported on first use.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_LAZY = {
    "minimize": ("cutplane.engine", "minimize"),
    "regularization_path": ("cutplane.path", "regularization_path"),
    "WarmStart": ("cutplane.path", "WarmStart"),
    "PathResult": ("cutplane.path", "PathResult"),
    "Result": ("cutplane.result", "Result"),
    "Cut": ("cutplane.cuts", "Cut"),
    "OracleResult": ("cutplane.cuts", "OracleResult"),
    "Oracle": ("cutplane.protocols", "Oracle"),
    "Regularizer": ("cutplane.protocols", "Regularizer"),
    "ReducedSolver": ("cutplane.protocols", "ReducedSolver"),
    "CutplaneError": ("cutplane.exceptions", "CutplaneError"),
    "InputError": ("cutplane.exceptions", "InputError"),
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'cutplane' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
