"""Linear models: SVMs (binary, Crammer-Singer), RankSVM, PerfSVM, LinearRegressor, OrdinalRegressor,
NoveltySVM.

The estimators are imported on first use (``from problems.linear import LinearSVM`` works as before), so
that importing a submodule (the task's command-line piece, its readers) does not load
scikit-learn and the solvers: ``cutplane --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from problems.linear.novelty import NoveltySVM
    from problems.linear.ordinal import OrdinalRegressor
    from problems.linear.perf_svm import PerfSVM
    from problems.linear.rank_svm import RankSVM
    from problems.linear.regressor import LinearRegressor
    from problems.linear.svm import LinearSVM

_LAZY = {
    "LinearSVM": "problems.linear.svm",
    "RankSVM": "problems.linear.rank_svm",
    "PerfSVM": "problems.linear.perf_svm",
    "LinearRegressor": "problems.linear.regressor",
    "OrdinalRegressor": "problems.linear.ordinal",
    "NoveltySVM": "problems.linear.novelty",
}

__all__ = ["LinearRegressor", "LinearSVM", "NoveltySVM", "OrdinalRegressor", "PerfSVM", "RankSVM"]


def __getattr__(name):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
