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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cutplane.exceptions import InputError

__all__ = ["ChunkScore", "TypeScore", "chunk_f1", "split_tag", "is_chunk_tagset"]

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


def chunk_f1(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> ChunkScore:
    """Chunk precision / recall / F1 of predicted tag sequences against gold ones.

    Parameters
    ----------
    gold, pred : sequence of sequences of str
        One tag sequence per sentence; sentence ``i`` must have the same length in both.

    Returns
    -------
    ChunkScore

    Raises
    ------
    InputError
        Different numbers of sentences or of tokens in a sentence.
    """
    if len(gold) != len(pred):
        raise InputError(f"gold has {len(gold)} sentences, pred has {len(pred)}", field="pred")
    n_correct = n_gold = n_pred = n_tokens = n_tag_ok = 0
    c_correct: dict[str, int] = {}
    c_gold: dict[str, int] = {}
    c_pred: dict[str, int] = {}
    last_g, last_gt, last_p, last_pt = "O", "", "O", ""
    in_correct = False
    for i, (gs, ps) in enumerate(zip(gold, pred)):
        if len(gs) != len(ps):
            raise InputError(f"sentence {i}: gold has {len(gs)} tags, pred has {len(ps)}", field="pred")
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
                    n_correct += 1
                    c_correct[last_gt] = c_correct.get(last_gt, 0) + 1
                elif g_end != p_end or pt != gt:
                    in_correct = False
            if g_start and p_start and pt == gt:
                in_correct = True
            if g_start:
                n_gold += 1
                c_gold[gt] = c_gold.get(gt, 0) + 1
            if p_start:
                n_pred += 1
                c_pred[pt] = c_pred.get(pt, 0) + 1
            if is_token:
                n_tokens += 1
                n_tag_ok += g == p and gt == pt
            last_g, last_gt, last_p, last_pt = g, gt, p, pt
    if in_correct:  # pragma: no cover - the final boundary always closes the chunk
        n_correct += 1
        c_correct[last_gt] = c_correct.get(last_gt, 0) + 1
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
