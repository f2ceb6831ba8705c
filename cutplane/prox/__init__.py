"""Proximity operators of the (block-)norm regularisers and Euclidean projections.

Shared by the engine's regularisers and SPOM. :mod:`cutplane.prox.operators` holds the
operators (``prox_l1``, ``prox_squared_group_l1``, ...), :mod:`cutplane.prox.projection` the
projections onto the simplex and the capped simplex, :mod:`cutplane.prox.roots` the root
finders behind the power and squared-lp operators, :mod:`cutplane.prox.checks` the input
checks. Everything public is importable from here.
"""

from __future__ import annotations

from .operators import (
    project_l2_ball,
    prox_group_l2q,
    prox_group_l21,
    prox_l1,
    prox_squared_group_l1,
    prox_squared_group_lp,
    prox_squared_l1,
    prox_squared_lp,
    prox_squared_weighted_l1,
)
from .projection import project_capped_simplex, project_simplex

__all__ = [
    "prox_l1",
    "prox_group_l21",
    "prox_squared_l1",
    "prox_squared_weighted_l1",
    "prox_squared_group_l1",
    "prox_group_l2q",
    "prox_squared_lp",
    "prox_squared_group_lp",
    "project_l2_ball",
    "project_simplex",
    "project_capped_simplex",
]
