"""The n-slack method: a working set per example, block-coordinate steps on the dual.

``cutplane.minimize(oracle, L2(), lam, method="n-slack")`` with an
:class:`~cutplane.protocols.ExampleCutsOracle` (:mod:`cutplane.nslack.loop`); the storage and
the dual of the per-example working sets are :class:`ExampleWorkingSets`.
"""

from .example_working_sets import DEFAULT_PLANES, ExampleWorkingSets
from .loop import NSLACK, NSLACK_OPTIONS, minimize_nslack

__all__ = ["ExampleWorkingSets", "DEFAULT_PLANES", "minimize_nslack", "NSLACK", "NSLACK_OPTIONS"]
