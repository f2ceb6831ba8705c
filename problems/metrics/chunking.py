"""Chunk precision, recall and F1 with the semantics of the CoNLL ``conlleval`` script.

A tag is split at its first ``-`` into a prefix and a type (``B-NP`` -> ``B``, ``NP``;
``O`` -> ``O``, no type). Between two consecutive tokens (previous ``p``, current ``c``):

- a chunk **ends** when (p, c) is one of B->B, B->O, I->B, I->O, E->E, E->I, E->O, or the
  previous tag is inside a chunk (not ``O`` / ``.``) and the type changes, or the previous
  tag is ``[`` or ``]``;
- a chunk **starts** when (p, c) is one of B->B, I->B, O->B, O->I, E->E, E->I, O->E, or the
  current tag is inside a chunk (not ``O`` / ``.``) and the type changes, or the current
  tag is ``[`` or ``]``.

So IOB1 (``I-X`` opens a chunk unless the previous token is in an ``X`` chunk; ``B-X`` only
splits two adjacent ``X`` chunks) and IOB2 (every chunk opens with ``B-X``) are both read
correctly, and an ``I-X`` after ``O`` or after another type opens a chunk. A chunk is
correct when gold and prediction start it at the same token with the same type and end it at
the same token. Sentences are separated by a boundary that is outside every chunk.
Scores are in percent, as conlleval prints them.

IOBES (BIOES, BILOU's letters ``E`` / ``S``) tag sets are read as their scheme defines them, not
as conlleval reads them: conlleval merges ``S-PER S-PER`` into one chunk (its ``S`` is an
inside tag), while the scheme (and seqeval's IOBES ``mode="strict"``) makes it two. With
``scheme="iobes"`` a chunk is exactly ``S-X`` alone or ``B-X``, any number of ``I-X`` and
``E-X`` (one type, contiguous, within a sentence); any other tag run (an ``I-X`` without its
``B-X``, a ``B-X`` never closed by ``E-X``, a change of type inside) is no chunk, in the gold
tags as in the predicted ones, as seqeval's strict mode counts them. ``scheme="auto"`` (the
default) takes IOBES when a tag of gold or prediction has the prefix ``S`` or both prefixes
``B`` and ``E`` occur (seqeval's ``auto_detect`` rule), else conlleval's reading (IOB1, IOB2,
IOE1, IOE2 and brackets).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cutplane.exceptions import InputError

__all__ = ["ChunkScore", "TypeScore", "chunk_f1", "chunk_scheme", "iobes_chunks", "split_tag", "is_chunk_tagset"]

_ENDS = {("B", "B"), ("B", "O"), ("I", "B"), ("I", "O"), ("E", "E"), ("E", "I"), ("E", "O")}
_STARTS = {("B", "B"), ("I", "B"), ("O", "B"), ("O", "I"), ("E", "E"), ("E", "I"), ("O", "E")}
_OUTSIDE = ("O", ".")


def split_tag(tag: str) -> tuple[str, str]:
    """``"B-NP"`` -> ``("B", "NP")``; a tag without ``-`` has the empty type (split at the first ``-``)."""
    prefix, sep, typ = tag.partition("-")
    return (prefix, typ) if sep else (tag, "")


def _ends(prev, cur, prev_type, cur_type) -> bool:
    return (prev, cur) in _ENDS or (prev not in _OUTSIDE and prev_type != cur_type) or prev in ("[", "]")


def _starts(prev, cur, prev_type, cur_type) -> bool:
    return (prev, cur) in _STARTS or (cur not in _OUTSIDE and prev_type != cur_type) or cur in ("[", "]")


def _prf(correct, found_gold, found_pred):
    p = 100.0 * correct / found_pred if found_pred else 0.0
    r = 100.0 * correct / found_gold if found_gold else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


@dataclass(frozen=True)
class TypeScore:
    """Scores of one chunk type (percent)."""

    precision: float
    recall: float
    f1: float
    n_correct: int
    n_gold: int
    n_pred: int


@dataclass(frozen=True)
class ChunkScore:
    """conlleval's report.

    Attributes
    ----------
    precision, recall, f1 : float
        Percent; 0 when undefined, as conlleval.
    accuracy : float
        Per-token tag accuracy in percent (tags equal including type).
    n_correct, n_gold, n_pred : int
        Correct chunks, chunks in the gold data ("phrases"), chunks predicted ("found").
    n_tokens : int
    per_type : dict of str to TypeScore
        Sorted by type name.
    """

    precision: float
    recall: float
    f1: float
    accuracy: float
    n_correct: int
    n_gold: int
    n_pred: int
    n_tokens: int
    per_type: dict = field(default_factory=dict)


_SCHEMES = ("auto", "conlleval", "iobes")


def chunk_scheme(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]] = ()) -> str:
    """``"iobes"`` when a tag of ``gold`` or ``pred`` has the prefix ``S``, or the prefixes ``B``
    and ``E`` both occur (seqeval's ``auto_detect`` rule); else ``"conlleval"``."""
    prefixes = {split_tag(t)[0] for seqs in (gold, pred) for s in seqs for t in s}
    return "iobes" if "S" in prefixes or {"B", "E"} <= prefixes else "conlleval"


def iobes_chunks(tags: Sequence[str]) -> list[tuple[int, int, str]]:
    """The chunks of one IOBES tag sequence as the scheme defines them: ``(start, end, type)``
    (``end`` exclusive) for each ``S-X`` and each run ``B-X I-X* E-X`` of one type; other tags
    form no chunk (seqeval's IOBES ``mode="strict"``).

    Parameters
    ----------
    tags : sequence of str

    Returns
    -------
    list of (int, int, str)
        In order of their start.
    """
    out = []
    start, typ = -1, ""
    for t, tag in enumerate(tags):
        prefix, ttype = split_tag(tag)
        if prefix == "S":
            out.append((t, t + 1, ttype))
            start = -1
        elif prefix == "B":
            start, typ = t, ttype
        elif prefix in ("I", "E") and start >= 0 and ttype == typ:
            if prefix == "E":
                out.append((start, t + 1, typ))
                start = -1
        else:
            start = -1
    return out


def _iobes_counts(gold, pred):
    """Correct, gold and predicted counts by type (three dicts) of the strict IOBES chunks of a corpus."""
    c_correct: dict[str, int] = {}
    c_gold: dict[str, int] = {}
    c_pred: dict[str, int] = {}
    for gs, ps in zip(gold, pred):
        G, P = set(iobes_chunks(gs)), set(iobes_chunks(ps))
        for chunks, counts in ((G, c_gold), (P, c_pred), (G & P, c_correct)):
            for _, _, typ in chunks:
                counts[typ] = counts.get(typ, 0) + 1
    return c_correct, c_gold, c_pred


def chunk_f1(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], *, scheme: str = "auto") -> ChunkScore:
    """Chunk precision / recall / F1 of predicted tag sequences against gold ones.

    Parameters
    ----------
    gold, pred : sequence of sequences of str
        One tag sequence per sentence; sentence ``i`` must have the same length in both.
    scheme : {"auto", "conlleval", "iobes"}, default="auto"
        How tags make chunks: ``"conlleval"``, conlleval's reading (IOB1, IOB2, IOE, brackets);
        ``"iobes"``, the IOBES scheme's chunks (seqeval's IOBES strict mode, see the module
        docstring); ``"auto"``, ``"iobes"`` for tag sets with ``S`` or with both ``B`` and ``E``
        (:func:`chunk_scheme`), else ``"conlleval"``.

    Returns
    -------
    ChunkScore

    Raises
    ------
    InputError
        Different numbers of sentences or of tokens in a sentence, or an unknown ``scheme``.
    """
    if scheme not in _SCHEMES:
        raise InputError(f"scheme must be one of {list(_SCHEMES)}, got {scheme!r}", field="scheme")
    if len(gold) != len(pred):
        raise InputError(f"gold has {len(gold)} sentences, pred has {len(pred)}", field="pred")
    for i, (gs, ps) in enumerate(zip(gold, pred)):
        if len(gs) != len(ps):
            raise InputError(f"sentence {i}: gold has {len(gs)} tags, pred has {len(ps)}", field="pred")
    if scheme == "iobes" or (scheme == "auto" and chunk_scheme(gold, pred) == "iobes"):
        n_ok = sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))
        ok, found_gold, found_pred = _iobes_counts(gold, pred)
        return _score(ok, found_gold, found_pred, n_ok, sum(len(gs) for gs in gold))
    n_tokens = n_tag_ok = 0
    c_correct: dict[str, int] = {}
    c_gold: dict[str, int] = {}
    c_pred: dict[str, int] = {}
    last_g, last_gt, last_p, last_pt = "O", "", "O", ""
    in_correct = False
    for gs, ps in zip(gold, pred):
        # each sentence is followed by a boundary token tagged O / O (outside every chunk)
        items = [(split_tag(g), split_tag(p), True) for g, p in zip(gs, ps)] + [(("O", ""), ("O", ""), False)]
        for (g, gt), (p, pt), is_token in items:
            g_end = _ends(last_g, g, last_gt, gt)
            p_end = _ends(last_p, p, last_pt, pt)
            g_start = _starts(last_g, g, last_gt, gt)
            p_start = _starts(last_p, p, last_pt, pt)
            if in_correct:
                if g_end and p_end and last_pt == last_gt:
                    in_correct = False
                    c_correct[last_gt] = c_correct.get(last_gt, 0) + 1
                elif g_end != p_end or pt != gt:
                    in_correct = False
            if g_start and p_start and pt == gt:
                in_correct = True
            if g_start:
                c_gold[gt] = c_gold.get(gt, 0) + 1
            if p_start:
                c_pred[pt] = c_pred.get(pt, 0) + 1
            if is_token:
                n_tokens += 1
                n_tag_ok += g == p and gt == pt
            last_g, last_gt, last_p, last_pt = g, gt, p, pt
    if in_correct:  # pragma: no cover - the final boundary always closes the chunk
        c_correct[last_gt] = c_correct.get(last_gt, 0) + 1
    return _score(c_correct, c_gold, c_pred, n_tag_ok, n_tokens)


def _score(c_correct, c_gold, c_pred, n_tag_ok, n_tokens) -> ChunkScore:
    """The report of per-type chunk counts and token counts."""
    n_correct, n_gold, n_pred = sum(c_correct.values()), sum(c_gold.values()), sum(c_pred.values())
    precision, recall, f1 = _prf(n_correct, n_gold, n_pred)
    per_type = {}
    for typ in sorted(set(c_gold) | set(c_pred)):
        tp, tr, tf = _prf(c_correct.get(typ, 0), c_gold.get(typ, 0), c_pred.get(typ, 0))
        per_type[typ] = TypeScore(tp, tr, tf, c_correct.get(typ, 0), c_gold.get(typ, 0), c_pred.get(typ, 0))
    accuracy = 100.0 * n_tag_ok / n_tokens if n_tokens else 0.0
    return ChunkScore(precision, recall, f1, accuracy, n_correct, n_gold, n_pred, n_tokens, per_type)


_CHUNK_PREFIXES = frozenset("BIES")


def is_chunk_tagset(labels) -> bool:
    """True for a BIO / IOB / IOBES tag set, the sets chunk F1 is meant for.

    Every label is ``O`` or a prefix ``B``, ``I``, ``E`` or ``S``, a ``-`` and a non-empty type
    (``B-NP``, ``I-PER``), and at least one label has a type. Tag sets without types (``B``,
    ``M``, ``E``, ``S`` of word segmentation, part-of-speech tags) are not.

    Parameters
    ----------
    labels : iterable of str
    """
    typed = False
    for lab in labels:
        if lab == "O":
            continue
        prefix, sep, typ = str(lab).partition("-")
        if not sep or not typ or prefix not in _CHUNK_PREFIXES:
            return False
        typed = True
    return typed
