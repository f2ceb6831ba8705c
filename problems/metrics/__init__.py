"""Task metrics: chunk F1 (conlleval semantics; IOBES by its scheme), segmentation P/R/F1/R_iv, UAS,
accuracy, and scikit-learn scorers (``chunk_f1_scorer``).

One task per module; the public names are re-exported here (imported on first use).
"""

from __future__ import annotations

import importlib

# name -> module; each helper module adds its public names here.
_LAZY: dict[str, str] = {
    "AttachmentScores": "problems.metrics.parsing",
    "uas": "problems.metrics.parsing",
    "ChunkScore": "problems.metrics.chunking",
    "chunk_f1": "problems.metrics.chunking",
    "is_chunk_tagset": "problems.metrics.chunking",
    "ChunkF1Scorer": "problems.metrics.scorers",
    "chunk_f1_scorer": "problems.metrics.scorers",
    "SegmentationScore": "problems.metrics.segmentation",
    "segmentation_scores": "problems.metrics.segmentation",
    "token_accuracy": "problems.metrics.accuracy",
    "ndcg_at_k": "problems.metrics.ranking",
    "pairwise_accuracy": "problems.metrics.ranking",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'problems.metrics' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
