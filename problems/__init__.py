"""What a user trains: estimators, features, data readers, metrics and the CLI.

Estimators and their solver objects (:mod:`problems.solvers`) are imported on first use
(``problems.LinearSVM`` loads cvxpy only then).
"""

from __future__ import annotations

import importlib

_LAZY = {
    "LinearSVM": ("problems.linear", "LinearSVM"),
    "RankSVM": ("problems.linear", "RankSVM"),
    "PerfSVM": ("problems.linear", "PerfSVM"),
    "LinearRegressor": ("problems.linear", "LinearRegressor"),
    "OrdinalRegressor": ("problems.linear", "OrdinalRegressor"),
    "NoveltySVM": ("problems.linear", "NoveltySVM"),
    "SequenceTagger": ("problems.sequence", "SequenceTagger"),
    "SequenceTaggerCV": ("problems.sequence", "SequenceTaggerCV"),
    "DependencyParser": ("problems.parsing", "DependencyParser"),
    "DependencyParserCV": ("problems.parsing", "DependencyParserCV"),
    "TreeDecoder": ("problems.parsing", "TreeDecoder"),
    "StructuredSVM": ("problems.structured", "StructuredSVM"),
    "StructuredSVMCV": ("problems.structured", "StructuredSVMCV"),
    "CuttingPlane": ("problems.solvers", "CuttingPlane"),
    "SPOM": ("problems.solvers", "SPOM"),
    "MKL": ("problems.mkl", "MKL"),
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'problems' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return __all__
