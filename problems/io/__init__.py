"""Readers and writers, streaming, with errors that name file, line and field.

One format per module; the public names are re-exported here (imported on first use).
Every reader accepts gzip input transparently (``.gz`` suffix or gzip magic bytes).
"""

from __future__ import annotations

import importlib

# name -> module; each helper module adds its public names here.
_LAZY: dict[str, str] = {
    "ConlluSentence": "problems.io.conllu",
    "iter_conllu": "problems.io.conllu",
    "read_conllu": "problems.io.conllu",
    "write_conllu": "problems.io.conllu",
    "read_svmlight": "problems.io.svmlight",
    "read_svmlight_file": "problems.io.svmlight",
    "write_svmlight": "problems.io.svmlight",
    "SvmlightData": "problems.io.svmlight",
    "SvmlightFile": "problems.io.svmlight",
    "SvmlightRanking": "problems.io.svmlight",
    "read_svmlight_ranking": "problems.io.svmlight",
    "sniff_format": "problems.io.sniff",
    "ColumnSentence": "problems.io.conll",
    "ColumnCorpus": "problems.io.conll",
    "iter_column_sentences": "problems.io.conll",
    "read_conll": "problems.io.conll",
    "read_crfpp": "problems.io.conll",
    "write_columns": "problems.io.conll",
    "iter_segmented": "problems.io.segmentation",
    "read_segmented": "problems.io.segmentation",
    "read_word_list": "problems.io.segmentation",
    "words_to_tags": "problems.io.segmentation",
    "tags_to_words": "problems.io.segmentation",
    "read_segmented_as_tags": "problems.io.segmentation",
    "write_segmented": "problems.io.segmentation",
    "OCRLetters": "problems.io.ocr",
    "read_ocr_letters": "problems.io.ocr",
    "open_text": "problems.io._open",
    "iter_lines": "problems.io._open",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'problems.io' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
