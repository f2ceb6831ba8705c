"""Online baselines: SPOM, the online proximal method for block-norm regularised losses.

Imported on first use: :func:`cutplane.online.spom`, :class:`cutplane.online.SPOMResult`, ...
"""

from __future__ import annotations

import importlib

# Eager on purpose: the function shares its name with the submodule ``cutplane.online.spom``;
# binding it here after the submodule import keeps ``cutplane.online.spom`` the function.
from .spom import spom  # noqa: E402  (light: numpy only)

_LAZY = {
    "OnlineProximal": ("cutplane.online.spom", "OnlineProximal"),
    "SPOMResult": ("cutplane.online.result", "SPOMResult"),
    "SPOMHistory": ("cutplane.online.result", "SPOMHistory"),
    "SPOMInfo": ("cutplane.online.result", "SPOMInfo"),
    "LazyGroupVector": ("cutplane.online.lazy_groups", "LazyGroupVector"),
    "SquaredGroupNorm": ("cutplane.online.group_terms", "SquaredGroupNorm"),
    "GroupLasso": ("cutplane.online.group_terms", "GroupLasso"),
    "GroupPower": ("cutplane.online.group_terms", "GroupPower"),
    "as_group_terms": ("cutplane.online.group_terms", "as_group_terms"),
    "ExampleSubgradient": ("cutplane.cuts", "ExampleSubgradient"),
    "ExampleOracle": ("cutplane.protocols", "ExampleOracle"),
    "as_example_oracle": ("cutplane.online.example_oracles", "as_example_oracle"),
    "tune_eta0": ("cutplane.online.learning_rates", "tune_eta0"),
    # the function pegasos shares its module's name: import it from the module
    "PegasosResult": ("cutplane.online.pegasos", "PegasosResult"),
}

__all__ = sorted(_LAZY) + ["spom"]


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'cutplane.online' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
