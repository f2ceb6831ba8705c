"""Dependency parsing scores: attachment scores with and without punctuation, exact match.

Definitions (CoNLL-X shared task, MTL^struct sec. 3.4):

- UAS: fraction of scored words whose predicted head equals the gold head;
  ``uas`` excludes punctuation (words whose gold UPOS is ``PUNCT``, or a given mask),
  ``uas_punct`` scores every word (the "UASP" of MTL^struct Table 7).
- complete (ACC): fraction of sentences where every word has the right head
  (``complete`` over all words, ``complete_nopunct`` over non-punctuation words only).
- LAS variants when relations are given: head and relation both right.

Head arrays may be in the file convention (shape (n,), 0 = root) or the decoders' one
(shape (n+1,) with a leading -1); a leading -1 is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["AttachmentScores", "uas"]


class AttachmentScores(NamedTuple):
    """Attachment scores of a parsed corpus.

    Attributes
    ----------
    uas : float or None
        Unlabelled attachment score without punctuation (None: no punctuation information).
    uas_punct : float
        Unlabelled attachment score over all words.
    complete : float
        Fraction of sentences with every head right.
    complete_nopunct : float or None
        Same, ignoring punctuation words.
    las, las_punct : float or None
        Labelled scores (head and relation right), when relations were given.
    n_sentences, n_words, n_words_nopunct : int
        Counts (``n_words_nopunct`` is None without punctuation information).
    n_correct, n_correct_nopunct : int
        Words with the right head (all / non-punctuation).
    """

    uas: float | None
    uas_punct: float
    complete: float
    complete_nopunct: float | None
    las: float | None
    las_punct: float | None
    n_sentences: int
    n_words: int
    n_words_nopunct: int | None
    n_correct: int
    n_correct_nopunct: int | None


def _heads(h, field, i):
    a = np.asarray(h)
    if a.ndim != 1:
        raise InputError(f"sentence {i}: expected a 1-d head array, got shape {a.shape}", field=field)
    if a.shape[0] and a[0] == -1:
        a = a[1:]
    if a.dtype.kind not in "iu" and a.size:
        raise InputError(f"sentence {i}: expected integer heads, got dtype {a.dtype}", field=field)
    return a


def _ratio(num, den):
    return float(num) / den if den else float("nan")


def uas(
    gold,
    pred,
    *,
    upos: Sequence | None = None,
    punct: Sequence | None = None,
    gold_deprels: Sequence | None = None,
    pred_deprels: Sequence | None = None,
    punct_tag: str = "PUNCT",
) -> AttachmentScores:
    """Attachment scores of predicted heads against gold heads.

    Parameters
    ----------
    gold : sequence of array-like or of sentences
        Gold heads per sentence; or objects with ``.heads`` (and ``.upos``, ``.deprels``),
        e.g. :class:`problems.io.conllu.ConlluSentence`, which then also give the
        punctuation (``upos == punct_tag``) and gold relations unless passed explicitly.
    pred : sequence of array-like
        Predicted heads per sentence, same lengths.
    upos : sequence of sequences of str, optional
        Gold UPOS per word; punctuation is ``upos == punct_tag``.
    punct : sequence of bool array-like, optional
        Punctuation masks per word (overrides ``upos``).
    gold_deprels, pred_deprels : sequence of sequences of str, optional
        Relations, for LAS (both needed).
    punct_tag : str, default "PUNCT"

    Returns
    -------
    AttachmentScores
    """
    gold = list(gold)
    pred = list(pred)
    if len(gold) != len(pred):
        raise InputError(f"{len(gold)} gold and {len(pred)} predicted sentences", field="pred")
    if gold and hasattr(gold[0], "heads"):
        if upos is None and punct is None:
            upos = [s.upos for s in gold]
        if gold_deprels is None and pred_deprels is not None:
            gold_deprels = [s.deprels for s in gold]
        gold = [s.heads for s in gold]
    if punct is None and upos is not None:
        punct = [np.asarray(u, dtype=object) == punct_tag for u in upos]
    if punct is not None and len(punct) != len(gold):
        raise InputError(f"{len(punct)} punctuation masks for {len(gold)} sentences", field="punct")
    labelled = gold_deprels is not None and pred_deprels is not None
    n_words = n_correct = n_np = n_correct_np = 0
    n_las = n_las_np = 0
    complete = complete_np = 0
    for i, (g, p) in enumerate(zip(gold, pred)):
        g = _heads(g, "gold", i)
        p = _heads(p, "pred", i)
        if g.shape != p.shape:
            raise InputError(f"sentence {i}: {g.shape[0]} gold heads but {p.shape[0]} predicted", field="pred")
        ok = g == p
        n_words += g.shape[0]
        n_correct += int(ok.sum())
        complete += bool(ok.all())
        if gold_deprels is not None and pred_deprels is not None:  # labelled
            gl = np.asarray(gold_deprels[i], dtype=object)
            pl = np.asarray(pred_deprels[i], dtype=object)
            if gl.shape != g.shape or pl.shape != g.shape:
                raise InputError(f"sentence {i}: relation lists do not match {g.shape[0]} words", field="deprels")
            lok = ok & (gl == pl)
            n_las += int(lok.sum())
        if punct is not None:
            mask = np.asarray(punct[i], dtype=bool)
            if mask.shape != g.shape:
                raise InputError(
                    f"sentence {i}: punctuation mask of length {mask.shape} for {g.shape[0]} words", field="punct"
                )
            keep = ~mask
            n_np += int(keep.sum())
            n_correct_np += int(ok[keep].sum())
            complete_np += bool(ok[keep].all())
            if labelled:
                n_las_np += int(lok[keep].sum())
    n_sent = len(gold)
    has_p = punct is not None
    return AttachmentScores(
        uas=_ratio(n_correct_np, n_np) if has_p else None,
        uas_punct=_ratio(n_correct, n_words),
        complete=_ratio(complete, n_sent),
        complete_nopunct=_ratio(complete_np, n_sent) if has_p else None,
        las=(_ratio(n_las_np, n_np) if has_p else None) if labelled else None,
        las_punct=_ratio(n_las, n_words) if labelled else None,
        n_sentences=n_sent,
        n_words=n_words,
        n_words_nopunct=n_np if has_p else None,
        n_correct=n_correct,
        n_correct_nopunct=n_correct_np if has_p else None,
    )
