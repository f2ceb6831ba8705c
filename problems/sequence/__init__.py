"""Sequence labelling: the tagger, CRF++ templates, the feature index, word segmentation.

The estimators are imported on first use (``from problems.sequence import SequenceTagger`` works as before), so
that importing a submodule (the task's command-line piece, its readers) does not load
scikit-learn and the solvers: ``cutplane --help`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from problems.sequence.tagger import SequenceTagger, SequenceTaggerCV

_LAZY = {
    "SequenceTagger": "problems.sequence.tagger",
    "SequenceTaggerCV": "problems.sequence.tagger",
}

__all__ = ["SequenceTagger", "SequenceTaggerCV"]


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
