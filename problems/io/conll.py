"""CoNLL column files and CRF++ data files: one token per line, blank line between sentences.

CoNLL-2000 chunking (``word POS chunk``), CoNLL-2002 NER (``word POS NE``, with optional
``-DOCSTART-`` lines, which are skipped) and CRF++ training/test files share this layout:
whitespace-separated columns, the same number of columns on every token line, the label in
the last column of a training file. Reading is streaming (:func:`iter_column_sentences`);
every error names the file and the line. Gzip input is read transparently.

Input policy (see also :mod:`problems.io._open`): columns are separated by runs of spaces and
tabs, and by nothing else, as CRF++ splits them: other whitespace (U+3000 IDEOGRAPHIC SPACE,
U+00A0, a lone ``\\r`` inside a line, ...) is part of a column, so CRF++'s ``example/seg``, whose
tokens include U+3000, reads as it does in CRF++ (a ``\\r`` ending the line, as in a file with
Windows line ends, is dropped). Files are UTF-8 unless ``encoding`` names another
(:func:`problems.io._open.check_encoding`). One or more blank lines (nothing but spaces and
tabs) end a sentence, so a sentence of length 0 cannot occur; a ``-DOCSTART-``
line (CoNLL-2002) ends a sentence and is dropped; ``read_conll`` / ``read_crfpp`` refuse a
file without any sentence. Labels are read as strings: whether a label is known is decided
by :class:`problems.sequence.feature_index.LabelAlphabet` (an error for training, a warning and a
wrong prediction at evaluation, see :meth:`LabelAlphabet.encode_unseen`).
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from sys import intern
from typing import NamedTuple

from cutplane.exceptions import InputError
from problems.io._open import iter_lines, no_records

__all__ = [
    "ColumnSentence",
    "ColumnCorpus",
    "iter_column_sentences",
    "read_conll",
    "read_crfpp",
    "write_columns",
    "split_columns",
]

DOCSTART = "-DOCSTART-"
#: The column separators (CRF++'s): runs of these split a token line into columns.
SEPARATORS = " \t"


def split_columns(line: str) -> list[str]:
    """The columns of a token line: split on runs of spaces and tabs only (CRF++'s rule).

    A ``\\r`` at the end of the line is dropped first; any other character, Unicode whitespace
    included, belongs to a column.

    Parameters
    ----------
    line : str
        One line without its ``\\n``.

    Returns
    -------
    list of str
        The non-empty columns (an empty list for a blank line), interned (:func:`sys.intern`):
        a corpus repeats its words, tags and labels, and holds each once.
    """
    if line.endswith("\r"):
        line = line[:-1]
    return [intern(f) for f in line.replace("\t", " ").split(" ") if f]


class ColumnSentence(NamedTuple):
    """One sentence of a column file.

    Attributes
    ----------
    rows : list of tuple of str
        The token lines split into columns.
    first_line : int
        1-based line of the first token (token ``t`` is on line ``first_line + t``).
    """

    rows: list
    first_line: int


@dataclass
class ColumnCorpus:
    """A column file split into input columns and labels.

    Attributes
    ----------
    inputs : list of list of tuple of str
        Per sentence, per token, the input columns (all columns but the label).
    labels : list of list of str or None
        Per sentence, the label column; None for unlabelled files.
    first_lines : list of int
        Line of the first token of each sentence.
    path : str or None
        The file read.
    """

    inputs: list
    labels: list | None
    first_lines: list
    path: str | None = None

    @property
    def n_sentences(self) -> int:
        return len(self.inputs)

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.inputs)

    def label_codes(self, alphabet):
        """Labels encoded with a :class:`problems.sequence.feature_index.LabelAlphabet` (int32, concatenated).

        An unknown label raises :class:`InputError` naming this file and the token's line.
        """
        if self.labels is None:
            raise InputError("this corpus has no label column", path=self.path)
        return alphabet.encode_corpus(self.labels, path=self.path, first_lines=self.first_lines)


def iter_column_sentences(
    path,
    *,
    n_columns: int | None = None,
    skip_docstart: bool = True,
    encoding: str = "utf-8",
) -> Iterator[ColumnSentence]:
    """Stream the sentences of a column file.

    Parameters
    ----------
    path : str or os.PathLike
        Plain or gzip'ed text file.
    n_columns : int, optional
        Expected number of columns; by default the count of the first token line.
    skip_docstart : bool, default=True
        Skip lines whose first column is ``-DOCSTART-`` (they also end a sentence).
    encoding : str, default="utf-8"
        The file's text encoding (``"latin-1"``, ``"euc-jp"``, ...).

    Yields
    ------
    ColumnSentence

    Raises
    ------
    InputError
        A token line with a different number of columns (names file, line, expected and found
        counts), bytes not valid in ``encoding`` or a corrupt gzip.
    """
    expected = n_columns
    rows: list = []
    first = 0
    for lineno, line in iter_lines(path, encoding):
        fields = split_columns(line)
        if not fields:
            if rows:
                yield ColumnSentence(rows, first)
                rows = []
            continue
        if skip_docstart and fields[0] == DOCSTART:
            if rows:
                yield ColumnSentence(rows, first)
                rows = []
            continue
        if expected is None:
            expected = len(fields)
        elif len(fields) != expected:
            other = sorted({f"U+{ord(ch):04X}" for ch in line if ch.isspace() and ch not in SEPARATORS})
            hint = f" (only spaces and tabs separate columns; {', '.join(other)} belongs to a column)" if other else ""
            raise InputError(
                f"expected {expected} space- or tab-separated columns, found {len(fields)}{hint}: {line[:200]!r}",
                path=path,
                line=lineno,
                field="columns",
            )
        if not rows:
            first = lineno
        rows.append(tuple(fields))
    if rows:
        yield ColumnSentence(rows, first)


def read_conll(
    path,
    *,
    n_columns: int | None = None,
    labeled: bool = True,
    skip_docstart: bool = True,
    encoding: str = "utf-8",
) -> ColumnCorpus:
    """Read a CoNLL column file (CoNLL-2000, CoNLL-2002, ...) into inputs and labels.

    Parameters
    ----------
    path : str or os.PathLike
    n_columns : int, optional
        Expected number of columns (3 for CoNLL-2000/2002); by default that of the first line.
    labeled : bool, default=True
        The last column is the label.
    skip_docstart : bool, default=True
    encoding : str, default="utf-8"
        The file's text encoding (``"latin-1"`` for CoNLL-2002's original files, ``"euc-jp"``
        for CRF++'s JapaneseNE example).

    Returns
    -------
    ColumnCorpus

    Raises
    ------
    InputError
        Naming the file (and the line): no sentence at all, a token line whose column count
        differs from the first one, a labelled file with one column, bytes not valid in
        ``encoding`` or a corrupt gzip stream, a missing file or a directory.
    """
    inputs: list[list] = []
    labels: list[list[str]] = []
    firsts: list[int] = []
    for sent in iter_column_sentences(path, n_columns=n_columns, skip_docstart=skip_docstart, encoding=encoding):
        if labeled:
            if len(sent.rows[0]) < 2:
                raise InputError(
                    "a labelled file needs at least two columns (input and label)",
                    path=path,
                    line=sent.first_line,
                    field="columns",
                )
            inputs.append([row[:-1] for row in sent.rows])
            labels.append([row[-1] for row in sent.rows])
        else:
            inputs.append(list(sent.rows))
        firsts.append(sent.first_line)
    if not inputs:
        raise no_records(path, "sentences")
    return ColumnCorpus(inputs, labels if labeled else None, firsts, os.fspath(path))


def read_crfpp(path, *, labeled: bool = True, n_columns: int | None = None, encoding: str = "utf-8") -> ColumnCorpus:
    """Read a CRF++ data file (training: label in the last column; test: ``labeled=False``)."""
    return read_conll(path, n_columns=n_columns, labeled=labeled, skip_docstart=False, encoding=encoding)


def write_columns(
    path, sentences: Sequence[Sequence[Sequence[str]]], predicted=None, *, sep: str = " ", encoding: str = "utf-8"
) -> None:
    """Write sentences as a column file, optionally appending a predicted-label column.

    Parameters
    ----------
    path : str or os.PathLike
        Output file; gzip-compressed when it ends in ``.gz``.
    sentences : sequence of sequences of token rows (sequences of str)
        E.g. ``[gold_row + (gold_label,) ...]`` per sentence, as ``conlleval`` expects.
    predicted : sequence of sequences of str, optional
        One label per token, appended as the last column.
    sep : str, default=" "
    encoding : str, default="utf-8"

    Raises
    ------
    InputError
        An empty cell, or a cell holding a space, a tab or a line end (it would not read back
        as one column).
    """
    if predicted is not None and len(predicted) != len(sentences):
        raise InputError(f"{len(predicted)} predicted sentences for {len(sentences)} sentences", field="predicted")
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "wt", encoding=encoding, newline="\n") as f:
        for i, sent in enumerate(sentences):
            pred = None if predicted is None else predicted[i]
            if pred is not None and len(pred) != len(sent):
                raise InputError(
                    f"sentence {i}: {len(pred)} predicted labels for {len(sent)} tokens", field="predicted"
                )
            for t, row in enumerate(sent):
                cells = list(row) + ([pred[t]] if pred is not None else [])
                if any((not c) or any(ch in " \t\n\r" for ch in c) for c in cells):
                    raise InputError(
                        f"sentence {i}, token {t}: empty cell, or whitespace that separates columns (space, tab, "
                        f"line end) inside a cell {cells!r}",
                        field="columns",
                    )
                f.write(sep.join(cells))
                f.write("\n")
            f.write("\n")
