"""Word-segmentation precision, recall, F1 and in-vocabulary recall (SIGHAN bakeoff measures).

A word is identified by its character span in the sentence; a predicted word is correct
when a gold word has exactly the same span. R_iv (R_oov) is the recall restricted to the
gold words that are (are not) in the training word list. Scores are in percent.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from cutplane.exceptions import InputError

__all__ = ["SegmentationScore", "segmentation_scores", "word_spans"]


def word_spans(words: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans ``(start, end)`` (end exclusive) of consecutive words."""
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w)))
        pos += len(w)
    return spans


@dataclass(frozen=True)
class SegmentationScore:
    """Segmentation scores (percent) and the counts behind them.

    Attributes
    ----------
    precision, recall, f1 : float
    r_iv, r_oov : float or None
        Recall on gold words in / not in the training word list (None without a word list,
        or when there is no such gold word).
    n_correct, n_gold, n_pred : int
        Correct words, gold words, predicted words.
    n_gold_iv, n_correct_iv : int
        Gold in-vocabulary words and how many of them were found (0 without a word list).
    """

    precision: float
    recall: float
    f1: float
    r_iv: float | None
    r_oov: float | None
    n_correct: int
    n_gold: int
    n_pred: int
    n_gold_iv: int = 0
    n_correct_iv: int = 0


def segmentation_scores(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], training_words: Collection[str] | None = None
) -> SegmentationScore:
    """Score predicted segmentations against gold ones.

    Parameters
    ----------
    gold, pred : sequence of sequences of str
        Words per sentence; sentence ``i`` must have the same characters in both.
    training_words : collection of str, optional
        The training word list, for R_iv and R_oov.

    Raises
    ------
    InputError
        Different numbers of sentences, or a sentence whose characters differ.
    """
    if len(gold) != len(pred):
        raise InputError(f"gold has {len(gold)} sentences, pred has {len(pred)}", field="pred")
    vocab = None if training_words is None else set(training_words)
    n_correct = n_gold = n_pred = n_gold_iv = n_correct_iv = 0
    for i, (gw, pw) in enumerate(zip(gold, pred)):
        if "".join(gw) != "".join(pw):
            raise InputError(f"sentence {i}: gold and predicted words do not spell the same characters", field="pred")
        pred_spans = set(word_spans(pw))
        n_gold += len(gw)
        n_pred += len(pw)
        for w, span in zip(gw, word_spans(gw)):
            ok = span in pred_spans
            n_correct += ok
            if vocab is not None and w in vocab:
                n_gold_iv += 1
                n_correct_iv += ok
    p = 100.0 * n_correct / n_pred if n_pred else 0.0
    r = 100.0 * n_correct / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    r_iv = r_oov = None
    if vocab is not None:
        if n_gold_iv:
            r_iv = 100.0 * n_correct_iv / n_gold_iv
        n_oov = n_gold - n_gold_iv
        if n_oov:
            r_oov = 100.0 * (n_correct - n_correct_iv) / n_oov
    return SegmentationScore(p, r, f, r_iv, r_oov, n_correct, n_gold, n_pred, n_gold_iv, n_correct_iv)
