"""Per-token accuracy of label sequences."""

from __future__ import annotations

from collections.abc import Sequence

from cutplane.exceptions import InputError

__all__ = ["token_accuracy"]


def token_accuracy(gold: Sequence[Sequence], pred: Sequence[Sequence]) -> float:
    """Percentage of tokens whose predicted label equals the gold one.

    Parameters
    ----------
    gold, pred : sequence of sequences
        Labels per sentence (str or int); sentence ``i`` must have the same length in both.

    Returns
    -------
    float
        Accuracy in percent (0 when there is no token).
    """
    if len(gold) != len(pred):
        raise InputError(f"gold has {len(gold)} sentences, pred has {len(pred)}", field="pred")
    n = ok = 0
    for i, (g, p) in enumerate(zip(gold, pred)):
        if len(g) != len(p):
            raise InputError(f"sentence {i}: gold has {len(g)} labels, pred has {len(p)}", field="pred")
        n += len(g)
        ok += sum(1 for a, b in zip(g, p) if a == b)
    return 100.0 * ok / n if n else 0.0
