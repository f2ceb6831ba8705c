"""CoNLL-U dependency treebanks: a streaming reader and a writer of predicted heads.

Format (https://universaldependencies.org/format.html): one token per line, ten
tab-separated columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``; comment lines
start with ``#``; a blank line ends a sentence. Multiword-token lines (``ID`` a range such as
``3-4``) and empty nodes (``ID`` such as ``3.1``) are skipped: a sentence holds the basic
words ``1..n`` only.

The reader is hand-written on top of :func:`problems.io._open.iter_lines` (gzip is
transparent, UTF-8 strict) so that every error names the file and the line: a wrong column
count, a non-consecutive or non-integer ID, a non-integer HEAD, a head out of range, a cycle
in the gold heads (the line of a word on the cycle) and bad UTF-8 all raise one
:class:`~cutplane.exceptions.InputError`. IDs and heads are ASCII decimal integers (``01`` is
not the ID ``1``); a sentence cannot be empty (a blank line after comments only is an
error); a file with no sentence is refused by :func:`read_conllu`.

Heads are kept in the file's convention, ``heads[k]`` the head of word ``k + 1`` with 0 the
root; :meth:`ConlluSentence.tree` gives the decoders' convention (shape (n+1,), ``-1`` first).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from cutplane.exceptions import InputError
from problems.io._open import iter_lines, no_records

__all__ = ["ConlluSentence", "iter_conllu", "read_conllu", "write_conllu"]

_N_COLS = 10
_COLS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


@dataclass
class ConlluSentence:
    """One dependency-annotated sentence (basic words only).

    Attributes
    ----------
    forms, lemmas, upos, xpos, feats, deprels, deps, misc : list of str, length n
        The columns of the words, as in the file (``"_"`` for empty).
    heads : ndarray of shape (n,), int64, or None
        ``heads[k]`` is the head of word ``k + 1`` (0 = root); None when the file leaves every
        HEAD of the sentence empty (``_``) and the reader was told to allow it.
    comments : list of str
        The comment lines before the sentence, without the leading ``#`` and one space.
    line : int
        1-based line number of the first word of the sentence in its file.
    path : str or None
        The file it was read from.
    """

    forms: list
    lemmas: list
    upos: list
    xpos: list
    feats: list
    heads: np.ndarray | None
    deprels: list
    deps: list = field(default_factory=list)
    misc: list = field(default_factory=list)
    comments: list = field(default_factory=list)
    line: int = 0
    path: str | None = None

    def __len__(self) -> int:
        return len(self.forms)

    @property
    def sent_id(self) -> str | None:
        """The value of a ``# sent_id = ...`` comment, if any."""
        for c in self.comments:
            if c.startswith("sent_id"):
                key, _, value = c.partition("=")
                if key.strip() == "sent_id":
                    return value.strip()
        return None

    def tree(self) -> np.ndarray:
        """Gold heads in the decoders' convention: shape (n+1,), ``tree[0] = -1``."""
        if self.heads is None:
            raise InputError("this sentence has no heads", path=self.path, line=self.line, field="HEAD")
        return np.concatenate(([-1], self.heads)).astype(np.int64)


def _is_index(text: str) -> bool:
    """Non-negative decimal integer in ASCII digits (``str.isdigit`` also accepts ``'\u00b2'``)."""
    return text.isascii() and text.isdigit()


def _check_tree(heads: np.ndarray, lines: list, path) -> None:
    """Raise on a cycle in ``heads`` (file convention), naming a line on the cycle."""
    n = heads.shape[0]
    state = np.zeros(n + 1, dtype=np.int8)  # 0 new, 1 on walk, 2 reaches root
    state[0] = 2
    for start in range(1, n + 1):
        path_nodes = []
        v = start
        while state[v] == 0:
            state[v] = 1
            path_nodes.append(v)
            v = int(heads[v - 1])
        if state[v] == 1:
            cycle = [v]
            u = int(heads[v - 1])
            while u != v:
                cycle.append(u)
                u = int(heads[u - 1])
            first = min(cycle)
            raise InputError(
                f"the gold heads contain a cycle through words {sorted(cycle)}; expected a tree rooted at 0",
                path=path,
                line=lines[first - 1],
                field="HEAD",
            )
        for u in path_nodes:
            state[u] = 2


def _finish(rows, lines, comments, path, allow_missing_heads) -> ConlluSentence:
    n = len(rows)
    raw_heads = [r[6] for r in rows]
    if allow_missing_heads and all(h == "_" for h in raw_heads):
        heads = None
    else:
        heads = np.empty(n, dtype=np.int64)
        for k, h in enumerate(raw_heads):
            if not _is_index(h):
                shown = h if len(h) <= 40 else h[:40] + "..."
                raise InputError(
                    f"HEAD must be an integer word index (ASCII digits), got {shown!r}",
                    path=path,
                    line=lines[k],
                    field="HEAD",
                )
            value = int(h) if len(h) <= 18 else n + 1  # longer: out of range anyway
            if not 0 <= value <= n or value == k + 1:
                what = "itself" if value == k + 1 else (h if len(h) <= 40 else h[:40] + "...")
                raise InputError(
                    f"head of word {k + 1} is {what}; expected 0..{n} (0 = root) and not the word itself",
                    path=path,
                    line=lines[k],
                    field="HEAD",
                )
            heads[k] = value
        _check_tree(heads, lines, path)
    cols = list(zip(*rows))
    return ConlluSentence(
        forms=list(cols[1]),
        lemmas=list(cols[2]),
        upos=list(cols[3]),
        xpos=list(cols[4]),
        feats=list(cols[5]),
        heads=heads,
        deprels=list(cols[7]),
        deps=list(cols[8]),
        misc=list(cols[9]),
        comments=comments,
        line=lines[0],
        path=path,
    )


def iter_conllu(path, *, allow_missing_heads: bool = False) -> Iterator[ConlluSentence]:
    """Stream the sentences of a CoNLL-U file (plain or gzip'ed).

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    allow_missing_heads : bool, default False
        Accept sentences whose HEAD column is ``_`` for every word (raw text to parse); they
        get ``heads = None``. A sentence mixing ``_`` and integer heads is always an error.

    Yields
    ------
    ConlluSentence

    Raises
    ------
    InputError
        Naming the file and line: bad UTF-8 or gzip, a line without 10 tab-separated
        columns, a field with leading or trailing whitespace, a bad or out-of-order ID, a
        non-integer HEAD, a head out of range, a cycle in the heads, a comment line between the
        words of a sentence.
    """
    spath = os.fspath(path)
    rows: list = []
    lines: list = []
    comments: list = []
    for lineno, text in iter_lines(spath):
        if not text.strip():
            if rows:
                yield _finish(rows, lines, comments, spath, allow_missing_heads)
            elif comments:
                raise InputError("comment lines without a sentence after them", path=spath, line=lineno)
            rows, lines, comments = [], [], []
            continue
        if text.startswith("#"):
            if rows:
                raise InputError("comment line inside a sentence; expected a blank line first", path=spath, line=lineno)
            comments.append(text[1:].lstrip(" ") if text.startswith("# ") else text[1:])
            continue
        cols = text.split("\t")
        if len(cols) != _N_COLS:
            raise InputError(
                f"expected {_N_COLS} tab-separated columns ({' '.join(_COLS)}), found {len(cols)}",
                path=spath,
                line=lineno,
            )
        for name, value in zip(_COLS, cols):
            if value != value.strip():  # ' punct' is not 'punct': the UD validator refuses it too
                raise InputError(
                    f"{value[:40]!r} has leading or trailing whitespace; expected the value alone between the tabs",
                    path=spath,
                    line=lineno,
                    field=name,
                )
        tid = cols[0]
        if "-" in tid or "." in tid:  # multiword token or empty node
            parts = tid.replace(".", "-").split("-")
            if len(parts) != 2 or not all(_is_index(p) for p in parts):
                raise InputError(
                    f"bad ID {tid[:40]!r}; expected an integer, a range a-b or a decimal a.b",
                    path=spath,
                    line=lineno,
                    field="ID",
                )
            continue
        if not _is_index(tid) or tid != str(len(rows) + 1):
            shown = tid if len(tid) <= 40 else tid[:40] + "..."
            raise InputError(
                f"bad ID {shown!r}; expected {len(rows) + 1} (words numbered 1, 2, ...)",
                path=spath,
                line=lineno,
                field="ID",
            )
        if cols[1] == "":
            raise InputError("empty FORM; expected a word or '_'", path=spath, line=lineno, field="FORM")
        rows.append(cols)
        lines.append(lineno)
    if rows:
        yield _finish(rows, lines, comments, spath, allow_missing_heads)


def read_conllu(path, *, allow_missing_heads: bool = False) -> list:
    """All sentences of a CoNLL-U file as a list (see :func:`iter_conllu`); a file without any
    sentence is an :class:`~cutplane.exceptions.InputError`."""
    out = list(iter_conllu(path, allow_missing_heads=allow_missing_heads))
    if not out:
        raise no_records(path, "sentences")
    return out


def _as_file_heads(h, n: int, index: int) -> np.ndarray:
    a = np.asarray(h)
    if a.ndim == 1 and a.shape[0] == n + 1 and a[0] == -1:
        a = a[1:]
    if a.ndim != 1 or a.shape[0] != n or a.dtype.kind not in "iu":
        raise InputError(
            f"sentence {index}: expected {n} integer heads (or {n + 1} with a leading -1), "
            f"got shape {a.shape} dtype {a.dtype}",
            field="heads",
        )
    if np.any((a < 0) | (a > n)):
        raise InputError(f"sentence {index}: heads must lie in 0..{n}", field="heads")
    return a.astype(np.int64)


def write_conllu(path, sentences: Iterable[ConlluSentence], heads=None, deprels=None) -> None:
    """Write sentences in CoNLL-U, optionally replacing their heads (and relations).

    Parameters
    ----------
    path : str or os.PathLike
        Output file (``.gz`` suffix: gzip'ed).
    sentences : iterable of ConlluSentence
        The sentences (their comments and other columns are written unchanged). Multiword
        tokens and empty nodes were dropped by the reader and are not written back.
    heads : sequence of array-like, optional
        Predicted heads per sentence, shape (n,) (0 = root) or (n+1,) with a leading -1.
    deprels : sequence of sequences of str, optional
        Predicted relations; when ``heads`` is given without ``deprels`` the DEPREL column
        is written as ``_`` (an unlabelled prediction) and DEPS as ``_``.
    """
    import gzip

    sentences = list(sentences)
    if heads is not None and len(heads) != len(sentences):
        raise InputError(f"{len(heads)} head arrays for {len(sentences)} sentences", field="heads")
    if deprels is not None and len(deprels) != len(sentences):
        raise InputError(f"{len(deprels)} relation lists for {len(sentences)} sentences", field="deprels")
    spath = os.fspath(path)
    opener = gzip.open if spath.endswith(".gz") else open
    with opener(spath, "wt", encoding="utf-8", newline="\n") as f:
        for i, s in enumerate(sentences):
            n = len(s)
            h = s.heads if heads is None else _as_file_heads(heads[i], n, i)
            if deprels is not None:
                rel = list(deprels[i])
                if len(rel) != n:
                    raise InputError(f"sentence {i}: {len(rel)} relations for {n} words", field="deprels")
            else:
                rel = s.deprels if heads is None else ["_"] * n
            deps = s.deps if heads is None else ["_"] * n
            for c in s.comments:
                f.write(f"# {c}\n")
            for k in range(n):
                hk = "_" if h is None else str(int(h[k]))
                cols = (
                    str(k + 1),
                    s.forms[k],
                    s.lemmas[k],
                    s.upos[k],
                    s.xpos[k],
                    s.feats[k],
                    hk,
                    rel[k],
                    deps[k] if k < len(deps) else "_",
                    s.misc[k] if k < len(s.misc) else "_",
                )
                f.write("\t".join(cols) + "\n")
            f.write("\n")
