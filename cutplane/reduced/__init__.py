"""Reduced-problem solvers (the dual of Franc et al. 2012, eq. 14), their registry and the cvxpy backends.

``registry``: the reduced solver of each regulariser kind, in preference order;
``qp``: the quadratic regulariser's QP over the simplex; ``lp``: L1 and indicator sets;
``qcqp``: the mixed norm with ``p = 1``; ``smooth_dual``: the mixed norm with ``p > 1``;
``backends``: preference order, availability (MOSEK only when licensed), fallback.
The simplex projections are in :mod:`cutplane.prox` (re-exported here).
Submodules are imported on first use (cvxpy is heavy).
"""

from __future__ import annotations

import importlib

_LAZY = {
    "ReducedSolution": ("cutplane.reduced.base", "ReducedSolution"),
    "ReducedSolver": ("cutplane.protocols", "ReducedSolver"),
    "make_reduced_solver": ("cutplane.reduced.registry", "make_reduced_solver"),
    "register_reduced_solver": ("cutplane.reduced.registry", "register_reduced_solver"),
    "ReducedSolverEntry": ("cutplane.reduced.registry", "ReducedSolverEntry"),
    "QPReducedSolver": ("cutplane.reduced.qp", "QPReducedSolver"),
    "LPReducedSolver": ("cutplane.reduced.lp", "LPReducedSolver"),
    "resolve_backends": ("cutplane.reduced.backends", "resolve_backends"),
    "preferred_backends": ("cutplane.reduced.backends", "preferred_backends"),
    "available_backends": ("cutplane.reduced.backends", "available_backends"),
    "solve_with_fallback": ("cutplane.reduced.backends", "solve_with_fallback"),
    "project_simplex": ("cutplane.prox.projection", "project_simplex"),
    "project_capped_simplex": ("cutplane.prox.projection", "project_capped_simplex"),
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'cutplane.reduced' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
