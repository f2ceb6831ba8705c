"""Regularisers ``Omega``: value, Fenchel conjugate, its gradient, prox, and declared capabilities.

Every regulariser satisfies :class:`cutplane.protocols.Regularizer` (re-exported here) and
derives from :class:`RegularizerBase`, which gives each capability attribute its default. The
engine never branches on the type: it reads the capabilities (``is_indicator``,
``risk_floor_cut``, ``groups``, ...) and finds the reduced solver of the dual problem
(Franc et al. 2012, eq. 14) by the regulariser's ``kind`` in :mod:`cutplane.reduced.registry`.

- :class:`L2`, :class:`L1` (:mod:`cutplane.regularizers.norms`);
- :class:`MixedNorm`, the squared p-block norm of MTL^struct
  (:mod:`cutplane.regularizers.mixed_norm`); its ``groups`` make the working set keep
  per-group Gram blocks;
- :class:`Simplex`, :class:`Box` (:mod:`cutplane.regularizers.indicators`): indicator sets,
  which turn the engine into Kelley's cutting-plane method (Franc et al. 2012, Alg. 1.2).
"""

from __future__ import annotations

from ..protocols import Regularizer
from .base import RegularizerBase
from .indicators import Box, IndicatorSet, Simplex
from .mixed_norm import MixedNorm, group_weights_from_norms
from .norms import L1, L2

__all__ = [
    "Regularizer",
    "RegularizerBase",
    "IndicatorSet",
    "L2",
    "L1",
    "Simplex",
    "Box",
    "MixedNorm",
    "group_weights_from_norms",
]
