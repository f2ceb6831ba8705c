"""Arc-factored dependency parsing: the parser, its decoder choice and its arc features.

The estimators are imported on first use (``from problems.parsing import DependencyParser`` works as before), so
that importing a submodule (the task's command-line piece, its readers) does not load
scikit-learn and the solvers: ``cutplane --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from problems.parsing.parser import DependencyParser, DependencyParserCV, TreeDecoder

_LAZY = {
    "DependencyParser": "problems.parsing.parser",
    "DependencyParserCV": "problems.parsing.parser",
    "TreeDecoder": "problems.parsing.parser",
}

__all__ = ["DependencyParser", "DependencyParserCV", "TreeDecoder"]


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
