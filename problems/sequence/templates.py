"""The CRF++ feature-template language.

A template file has one template per line::

    # comment
    U00:%x[-2,0]
    U05:%x[-1,0]/%x[0,0]
    U%x[0,1]
    U
    B
    B01:%x[0,1]

- A line starting with ``U`` is a *unigram* template: applied at token ``t`` it gives one
  feature string, which is paired with the label of ``t``.
- A line starting with ``B`` is a *bigram* template: applied at token ``t >= 1`` it gives one
  feature string, which is paired with the label pair ``(y_{t-1}, y_t)``. Without macros
  (``B``, ``B00``) the string is the same at every token: the label transition matrix. With
  macros (``B01:%x[0,1]``, a label bigram conditioned on the input) every distinct string has
  its own (n_labels, n_labels) block, so the transition score becomes position dependent:
  ``T_t[a, b] = sum of the blocks of the strings firing at t`` (see
  :mod:`problems.sequence.feature_index`). Any number of ``B`` templates may be given.
- ``%x[row,col]`` is replaced by column ``col`` (0-based, input columns only) of the token
  at relative position ``row``. Rows before the start of the sentence expand to ``_B-1``,
  ``_B-2``, ... and rows past its end to ``_B+1``, ``_B+2``, ... (CRF++'s convention).
- The feature string is the whole line with the macros replaced (``U01:Confidence``).
- Blank lines and lines starting with ``#`` are ignored.

Names and groups. As in CRF++, a template needs no name and names may repeat: what identifies
a feature is its string, so two templates that expand to the same string share that feature
(``U%x[-1,0]`` and ``U%x[1,0]`` together are a bag-of-words window). The template's *name*,
the group MTL^struct weighs (MTL sec. 1.1), is

- the text before the first ``:`` when it comes before the first macro (``U00`` of
  ``U00:%x[0,0]``);
- otherwise the text before the first macro (``U`` of ``U%x[0,0]``, ``U01`` of ``U01%x[0,0]``);
- the whole line for a line with neither (``U``, ``B``, ``B00``).

Templates of the same name form one group (their strings are built from the same prefix and
may coincide); :func:`template_groups` lists the groups in order of first appearance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from cutplane.exceptions import InputError

__all__ = [
    "Template",
    "parse_templates",
    "read_templates",
    "template_groups",
    "check_template_columns",
    "CHUNKING_TEMPLATES",
]

_MACRO = re.compile(r"%x\[\s*([+-]?[0-9]+)\s*,\s*([+-]?[0-9]+)\s*\]")
#: Largest ``|row|`` and ``col`` of a macro (larger ones are typos, not windows).
MAX_OFFSET = 10**6

#: The CRF++ chunking template set (21 unigram templates and the label bigram ``B``).
CHUNKING_TEMPLATES = """\
# CRF++ chunking templates: words (column 0) and POS tags (column 1)
U00:%x[-2,0]
U01:%x[-1,0]
U02:%x[0,0]
U03:%x[1,0]
U04:%x[2,0]
U05:%x[-1,0]/%x[0,0]
U06:%x[0,0]/%x[1,0]

U10:%x[-2,1]
U11:%x[-1,1]
U12:%x[0,1]
U13:%x[1,1]
U14:%x[2,1]
U15:%x[-2,1]/%x[-1,1]
U16:%x[-1,1]/%x[0,1]
U17:%x[0,1]/%x[1,1]
U18:%x[1,1]/%x[2,1]

U20:%x[-2,1]/%x[-1,1]/%x[0,1]
U21:%x[-1,1]/%x[0,1]/%x[1,1]
U22:%x[0,1]/%x[1,1]/%x[2,1]

U30:%x[-3,0]/%x[3,1]
U31:%x[2,0]/%x[-2,1]

# label bigram (transition) template
B
"""


def edge_value(position: int, length: int) -> str:
    """CRF++'s placeholder for a row outside a sentence of ``length`` tokens.

    ``position = -1`` gives ``"_B-1"``, ``position = length`` gives ``"_B+1"``.
    """
    if position < 0:
        return f"_B{position}"
    return f"_B+{position - length + 1}"


@dataclass(frozen=True)
class Template:
    """One CRF++ template.

    Attributes
    ----------
    name : str
        The group name (see the module docstring): the text before the first ``:`` when it
        precedes the first macro (``"U05"``), else the text before the first macro (``"U"`` of
        ``U%x[0,0]``), or the whole line for ``U`` / ``B``. Names may repeat.
    kind : {"U", "B"}
        Unigram (paired with the label of a token) or bigram (paired with a label pair).
    macros : tuple of (int, int)
        The ``(row, col)`` of each ``%x[row,col]``, in order of appearance.
    text : str
        The template line as written.
    line : int or None
        1-based line in the template text it came from.
    path : str or None
        The template file it came from, when known (for error messages).
    """

    name: str
    kind: str
    macros: tuple
    text: str
    line: int | None = None
    _pieces: tuple = field(default=(), repr=False, compare=False)
    path: str | None = field(default=None, compare=False)

    @property
    def conditioned(self) -> bool:
        """True for a bigram template with macros (label pairs conditioned on the input)."""
        return self.kind == "B" and bool(self.macros)

    def where(self) -> str:
        """``"template 'U30' (tpl.txt line 12)"``: the template named for error messages."""
        loc = [] if self.path is None else [str(self.path)]
        if self.line is not None:
            loc.append(f"line {self.line}")
        return f"template {self.name!r}" + (f" ({' '.join(loc)})" if loc else "") + f": {self.text!r}"

    @property
    def max_column(self) -> int:
        """The largest column referred to, or -1 when there is no macro."""
        return max((c for _, c in self.macros), default=-1)

    @property
    def window(self) -> int:
        """The largest ``|row|`` referred to (0 without macros)."""
        return max((abs(r) for r, _ in self.macros), default=0)

    def feature(self, columns: Sequence[Sequence[str]], t: int) -> str:
        """The feature string at token ``t``.

        Parameters
        ----------
        columns : sequence of sequences of str
            ``columns[c][s]`` is column ``c`` of token ``s`` (the sentence, column-major).
        t : int
            Token position, ``0 <= t < len(columns[0])``.
        """
        n = len(columns[0]) if columns else 0
        out = [self._pieces[0]]
        for (row, col), lit in zip(self.macros, self._pieces[1:]):
            s = t + row
            out.append(columns[col][s] if 0 <= s < n else edge_value(s, n))
            out.append(lit)
        return "".join(out)

    def features(self, columns: Sequence[Sequence[str]], length: int) -> list[str]:
        """The feature strings of all ``length`` tokens of one sentence (fast path of :meth:`feature`).

        Parameters
        ----------
        columns : sequence of sequences of str
            ``columns[c][s]`` is column ``c`` of token ``s``.
        length : int
            Number of tokens.

        Returns
        -------
        list of str of length ``length``
        """
        if length == 0:
            return []
        if not self.macros:
            return [self._pieces[0]] * length
        shifted = []
        for row, col in self.macros:
            values = list(columns[col])
            lo, hi = row, row + length  # the slice of positions needed
            left = [edge_value(s, length) for s in range(lo, min(0, hi))]
            right = [edge_value(s, length) for s in range(max(length, lo), hi)]
            a, b = max(lo, 0), min(hi, length)
            shifted.append(left + (values[a:b] if b > a else []) + right)
        p = self._pieces
        if len(shifted) == 1:
            a, b = p
            return [a + v + b for v in shifted[0]]
        if len(shifted) == 2:
            a, b, c = p
            return [a + u + b + v + c for u, v in zip(*shifted)]
        fmt = "{}".join(s.replace("{", "{{").replace("}", "}}") for s in p)
        return [fmt.format(*vals) for vals in zip(*shifted)]


def _parse_line(raw: str, lineno: int, path) -> Template:
    text = raw.strip()
    kind = text[0]
    if kind not in "UB":
        raise InputError(
            f"a template must start with 'U' (unigram) or 'B' (bigram), found {text!r}",
            path=path,
            line=lineno,
            field="template",
        )
    pieces, macros, pos = [], [], 0
    for m in _MACRO.finditer(text):
        pieces.append(text[pos : m.start()])
        if max(len(m.group(1)), len(m.group(2))) > 8:
            raise InputError(
                f"row or column out of range in {m.group(0)[:40]!r}; expected |row|, col <= {MAX_OFFSET}",
                path=path,
                line=lineno,
                field="template",
            )
        row, col = int(m.group(1)), int(m.group(2))
        if abs(row) > MAX_OFFSET or col > MAX_OFFSET:
            raise InputError(
                f"row or column out of range in {m.group(0)!r}; expected |row|, col <= {MAX_OFFSET}",
                path=path,
                line=lineno,
                field="template",
            )
        if col < 0:
            raise InputError(f"column index must be >= 0 in {m.group(0)!r}", path=path, line=lineno, field="template")
        macros.append((row, col))
        pos = m.end()
    pieces.append(text[pos:])
    for lit in pieces:
        if "%" in lit:
            bad = lit[lit.index("%") :][:12]
            raise InputError(
                f"malformed macro near {bad!r}; expected %x[row,col] with integer row and col",
                path=path,
                line=lineno,
                field="template",
            )
    colon = text.find(":")
    if colon >= 0 and (not macros or colon < len(pieces[0])):
        name = text[:colon]
    elif macros:
        name = pieces[0]
    else:
        name = text
    if any(ch.isspace() for ch in name):
        raise InputError(f"template name {name!r} contains whitespace", path=path, line=lineno, field="template")
    return Template(
        name=name,
        kind=kind,
        macros=tuple(macros),
        text=text,
        line=lineno,
        _pieces=tuple(pieces),
        path=None if path is None else str(path),
    )


def parse_templates(text: str, *, path=None) -> list[Template]:
    """Parse CRF++ template text.

    Parameters
    ----------
    text : str
        The template file's content.
    path : str or os.PathLike, optional
        Where the text came from, for error messages.

    Returns
    -------
    list of Template
        In order of appearance (:func:`template_groups` gives the groups).

    Raises
    ------
    InputError
        Bad syntax or no template at all; the message names the line.

    Notes
    -----
    As in CRF++, names may repeat, templates need no name and any number of ``B`` templates
    (with or without macros) may be given; see the module docstring for the groups.
    """
    templates: list[Template] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        templates.append(_parse_line(stripped, lineno, path))
    if not templates:
        raise InputError("no template found (expected lines like 'U00:%x[0,0]' or 'B')", path=path)
    return templates


def template_groups(templates: Sequence[Template]) -> list[str]:
    """The distinct template names in order of first appearance: the groups, by index.

    Parameters
    ----------
    templates : sequence of Template

    Returns
    -------
    list of str
    """
    return list(dict.fromkeys(t.name for t in templates))


def check_template_columns(templates: Sequence[Template], n_columns: int, *, data_path=None, line=None) -> None:
    """Refuse templates that read a column the data does not have.

    Parameters
    ----------
    templates : sequence of Template
    n_columns : int
        Number of input columns of the data (without the label column).
    data_path : str or os.PathLike, optional
        The data file, named in the message.
    line : int, optional
        A line of ``data_path`` with ``n_columns`` input columns, named in the message.

    Raises
    ------
    InputError
        For the first template that needs more columns, at the template's file and line (when
        known) with its name, the column it needs and what the data has.
    """
    for tpl in templates:
        if tpl.max_column >= n_columns:
            macro = next(f"%x[{r},{c}]" for r, c in tpl.macros if c == tpl.max_column)
            data = "the data" if data_path is None else str(data_path)
            if line is not None:
                data += f" (line {line})"
            raise InputError(
                f"template {tpl.name!r} ({tpl.text!r}) reads column {tpl.max_column} in {macro}, but {data} has "
                f"{n_columns} input column(s) (0..{n_columns - 1}; the last column is the label); expected "
                f"templates to use columns < {n_columns}",
                path=tpl.path,
                line=tpl.line,
                field="template",
            )


def read_templates(path) -> list[Template]:
    """Read and parse a CRF++ template file (plain or gzip'ed UTF-8)."""
    from problems.io._open import open_text

    with open_text(path) as f:
        text = f.read()
    return parse_templates(text, path=path)
