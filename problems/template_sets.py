"""Named CRF++ template sets of the seeds' experiments.

- ``TP1`` and ``TP2``: Chinese word segmentation, Mao & Tsang (seed 004) Table 2, on one column
  of characters. TP2 adds seven character bi-gram templates to TP1.
- ``CHUNKING``: the CoNLL-2000 set of ``shared/ANCHORS.md`` (CRF++'s chunking example).
"""
from __future__ import annotations

from .templates import CHUNKING_TEMPLATES

__all__ = ["TP1", "TP2", "CHUNKING", "TEMPLATE_SETS"]

_UNI = ["U00:%x[-2,0]", "U01:%x[-1,0]", "U02:%x[0,0]", "U03:%x[1,0]", "U04:%x[2,0]"]
_TRI = ["U05:%x[-2,0]/%x[-1,0]/%x[0,0]", "U06:%x[-1,0]/%x[0,0]/%x[1,0]", "U07:%x[0,0]/%x[1,0]/%x[2,0]"]
_BI1 = ["U08:%x[-1,0]/%x[0,0]", "U09:%x[0,0]/%x[1,0]"]
_BI2 = ["U10:%x[-2,0]/%x[-1,0]", "U11:%x[1,0]/%x[2,0]", "U12:%x[-2,0]/%x[0,0]", "U13:%x[-1,0]/%x[1,0]",
        "U14:%x[0,0]/%x[2,0]", "U15:%x[-2,0]/%x[1,0]", "U16:%x[-1,0]/%x[2,0]"]

TP1 = "\n".join(_UNI + _TRI + _BI1 + ["B"]) + "\n"
TP2 = "\n".join(_UNI + _TRI + _BI1 + _BI2 + ["B"]) + "\n"
CHUNKING = CHUNKING_TEMPLATES if isinstance(CHUNKING_TEMPLATES, str) else "\n".join(
    t.text for t in CHUNKING_TEMPLATES) + "\n"

TEMPLATE_SETS = {"tp1": TP1, "tp2": TP2, "chunking": CHUNKING}
