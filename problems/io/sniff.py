"""Which of the package's input formats a text file looks like, from its first lines.

Used by ``cutplane predict`` and ``cutplane evaluate`` to refuse a model applied to data of
another task (an SVMlight file given to a sequence model, CoNLL columns given to a linear
model, ...) with one message naming both, before a reader that would accept the file for the
wrong reasons (a column reader takes any whitespace-separated tokens) labels it.

The guess only says what a file *conclusively* looks like; a file that fits none of the
shapes below is ``"text"`` (the segmented-text format, and every malformed file), for which
the task's own reader decides and names the line.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from problems.io._open import open_text

__all__ = ["sniff_format", "Sniffed", "FORMAT_NAMES"]

#: Format name -> how messages call it.
FORMAT_NAMES = {
    "svmlight": "an SVMlight file (<label> <index>:<value> ...)",
    "conllu": "a CoNLL-U treebank (10 tab-separated columns)",
    "columns": "a CoNLL / CRF++ column file (tokens in rows, sentences separated by blank lines)",
    "text": "plain or segmented text",
}

_PAIR = re.compile(r"(qid:\S+|[0-9]+:\S*)")
_CONLLU_ID = re.compile(r"[0-9]+([-.][0-9]+)?")


class Sniffed(NamedTuple):
    """What :func:`sniff_format` found.

    Attributes
    ----------
    format : str
        ``"svmlight"``, ``"conllu"``, ``"columns"`` or ``"text"`` (a key of :data:`FORMAT_NAMES`).
    line : int or None
        1-based number of the first data line (None for a file without one).
    text : str
        That line (at most 80 characters), for messages.
    """

    format: str
    line: int | None
    text: str


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return "_" not in token


def _svmlight_line(line: str) -> bool:
    tokens = line.split("#", 1)[0].split()
    return bool(tokens) and _is_number(tokens[0]) and all(_PAIR.fullmatch(t) for t in tokens[1:])


def _conllu_line(line: str) -> bool:
    fields = line.split("\t")
    return len(fields) == 10 and bool(_CONLLU_ID.fullmatch(fields[0]))


def sniff_format(path, *, max_lines: int = 200, encoding: str = "utf-8") -> Sniffed:
    """Guess the format of a text file from its first ``max_lines`` lines.

    Parameters
    ----------
    path : str or os.PathLike
        A plain or gzip'ed text file.
    max_lines : int, default=200
        Lines read at most.
    encoding : str, default="utf-8"
        The file's text encoding (``--encoding``).

    Returns
    -------
    Sniffed
        ``"conllu"`` when most data lines (not blank, not ``#`` comments) are 10 tab-separated
        fields starting with a word ID; else ``"svmlight"`` when most data lines are a number
        followed only by ``index:value`` (or ``qid:q``) tokens; else ``"columns"`` when the
        first sentence has the same number (at least 2) of whitespace-separated tokens on each
        line and a blank line separates it from the next; else ``"text"``.

    Raises
    ------
    InputError
        The file cannot be opened or decoded (naming the line).
    """
    data: list[tuple[int, str]] = []
    blocks: list[list[str]] = []
    current: list[str] = []
    with open_text(path, encoding) as reader:
        for lineno, raw in enumerate(reader, start=1):
            if lineno > max_lines:
                break
            line = raw.rstrip("\n")
            if not line.strip():
                if current:
                    blocks.append(current)
                    current = []
                continue
            if line.lstrip().startswith("#"):
                continue
            data.append((lineno, line))
            current.append(line)
    if current:
        blocks.append(current)
    if not data:
        return Sniffed("text", None, "")
    first_line, first_text = data[0]
    shown = first_text if len(first_text) <= 80 else first_text[:80] + "..."

    def most(pred) -> bool:
        return 2 * sum(pred(text) for _, text in data) > len(data)

    if most(_conllu_line):
        return Sniffed("conllu", first_line, shown)
    if most(_svmlight_line):
        return Sniffed("svmlight", first_line, shown)
    widths = {len(line.split()) for line in blocks[0]}
    if len(blocks) >= 2 and len(widths) == 1 and widths.pop() >= 2:
        return Sniffed("columns", first_line, shown)
    return Sniffed("text", first_line, shown)
