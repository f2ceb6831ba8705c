"""Segmented Chinese text <-> character sequences with word-boundary labels.

A segmented file has one sentence per line with words separated by whitespace (the SIGHAN
gold files use one or two spaces, CRLF line ends, sometimes a BOM); empty lines are skipped
(so a sentence of length 0 cannot occur), and the ``read_*`` functions refuse a file with no
sentence (or, for :func:`read_word_list`, no word). Words are split at any whitespace,
including the ideographic space U+3000; a word list keeps each whole (stripped) line.
Characters are labelled with one of two schemes:

- ``"BMES"``: B = first character of a multi-character word, M = inner character,
  E = last character, S = single-character word;
- ``"BIE"`` (MTL sec. 3.2): B = first character of a word (also a single-character word),
  I = inner character, E = last character of a multi-character word.

:func:`tags_to_words` inverts either scheme and accepts any tag sequence (as a predictor
may output): a word starts at a ``B`` or ``S`` (or after an ``E`` or ``S``).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator, Sequence

from cutplane.exceptions import InputError
from problems.io._open import iter_lines, no_records
from problems.io.conll import ColumnCorpus

__all__ = [
    "SCHEMES",
    "iter_segmented",
    "read_segmented",
    "read_word_list",
    "words_to_tags",
    "tags_to_words",
    "read_segmented_as_tags",
    "write_segmented",
]

SCHEMES = {"BMES": ("B", "M", "E", "S"), "BIE": ("B", "I", "E")}


def _check_scheme(scheme: str) -> str:
    if scheme not in SCHEMES:
        raise InputError(f"unknown tagging scheme {scheme!r}; expected one of {sorted(SCHEMES)}", field="scheme")
    return scheme


def iter_segmented(path, *, encoding: str = "utf-8") -> Iterator[tuple[int, list[str]]]:
    """Yield ``(lineno, words)`` for each non-empty line of a segmented file (in ``encoding``)."""
    for lineno, line in iter_lines(path, encoding):
        words = line.split()
        if words:
            yield lineno, words


def read_segmented(path, *, encoding: str = "utf-8") -> list[list[str]]:
    """All sentences of a segmented file, each a list of words (an error when there is none)."""
    out = [words for _, words in iter_segmented(path, encoding=encoding)]
    if not out:
        raise no_records(path, "sentences")
    return out


def read_word_list(path, *, encoding: str = "utf-8") -> set[str]:
    """A word list (one entry per line, e.g. SIGHAN ``*_training_words.utf8``) as a set; blank lines skipped."""
    out = set()
    for _, line in iter_lines(path, encoding):
        w = line.strip()  # the whole line is the entry (CityU has 'Phang\u3000Nga')
        if w:
            out.add(w)
    if not out:
        raise no_records(path, "words")
    return out


def words_to_tags(words: Sequence[str], scheme: str = "BMES") -> tuple[list[str], list[str]]:
    """Characters of a segmented sentence and their boundary tags.

    Parameters
    ----------
    words : sequence of str
        Non-empty words.
    scheme : {"BMES", "BIE"}

    Returns
    -------
    chars, tags : list of str, list of str
        One entry per character.
    """
    _check_scheme(scheme)
    inner = "M" if scheme == "BMES" else "I"
    single = "S" if scheme == "BMES" else "B"
    chars: list[str] = []
    tags: list[str] = []
    for w in words:
        if not w:
            raise InputError("empty word", field="words")
        n = len(w)
        chars.extend(w)
        if n == 1:
            tags.append(single)
        else:
            tags.append("B")
            tags.extend([inner] * (n - 2))
            tags.append("E")
    return chars, tags


def tags_to_words(chars: Sequence[str], tags: Sequence[str], scheme: str = "BMES") -> list[str]:
    """Words from characters and (possibly inconsistent) boundary tags.

    A word boundary is placed before every ``B``/``S`` and after every ``E``/``S``; other
    transitions (e.g. ``M`` after ``E``) keep the characters in the current word.
    """
    _check_scheme(scheme)
    if len(chars) != len(tags):
        raise InputError(f"{len(chars)} characters but {len(tags)} tags", field="tags")
    allowed = SCHEMES[scheme]
    words: list[str] = []
    cur: list[str] = []
    for ch, tag in zip(chars, tags):
        if tag not in allowed:
            raise InputError(f"tag {tag!r} is not in the {scheme} scheme {allowed}", field="tags")
        if tag in ("B", "S") and cur:
            words.append("".join(cur))
            cur = []
        cur.append(ch)
        if tag in ("E", "S"):
            words.append("".join(cur))
            cur = []
    if cur:
        words.append("".join(cur))
    return words


def read_segmented_as_tags(path, scheme: str = "BMES", *, encoding: str = "utf-8") -> ColumnCorpus:
    """A segmented file (in ``encoding``) as a character-level labelled corpus.

    Returns
    -------
    ColumnCorpus
        ``inputs[i][t] = (character,)``, ``labels[i][t]`` its tag, ``first_lines[i]`` the
        line of sentence ``i`` (all characters of a sentence share its line).
    """
    _check_scheme(scheme)
    inputs, labels, firsts = [], [], []
    for lineno, words in iter_segmented(path, encoding=encoding):
        chars, tags = words_to_tags(words, scheme)
        inputs.append([(c,) for c in chars])
        labels.append(tags)
        firsts.append(lineno)
    if not inputs:
        raise no_records(path, "sentences")
    return ColumnCorpus(inputs, labels, firsts, os.fspath(path))


def write_segmented(path, sentences: Sequence[Sequence[str]], *, sep: str = " ") -> None:
    """Write sentences (lists of words) one per line, words joined by ``sep``; ``.gz`` is compressed."""
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8", newline="\n") as f:
        for i, words in enumerate(sentences):
            if any((not w) or any(ch.isspace() for ch in w) for w in words):
                raise InputError(f"sentence {i}: empty word or whitespace inside a word", field="words")
            f.write(sep.join(words))
            f.write("\n")
