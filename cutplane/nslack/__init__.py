"""The n-slack method: a working set per example, block-coordinate steps on the dual.

``cutplane.minimize(oracle, L2(), lam, method="n-slack")`` with an
:class:`~cutplane.protocols.ExampleCutsOracle`: the method's state and step are
:mod:`cutplane.nslack.loop`; the storage and the dual of the per-example working sets are
:class:`ExampleWorkingSets`.
"""

from .example_working_sets import DEFAULT_PLANES, ExampleWorkingSets

__all__ = ["ExampleWorkingSets", "DEFAULT_PLANES"]
