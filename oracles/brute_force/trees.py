"""Exhaustive argmax over dependency trees of tiny sentences, for the tests.

All ``(n)^n`` head assignments of ``n`` words are listed (each word takes any head in
``0..n`` but itself), and the valid ones kept: arborescences rooted at 0 (every word
reaches the root), optionally only projective ones and/or only those with one child of
the root. The argmax is then a vectorised sum of scores over the listed trees. Only for
``n <= 6`` (46,656 assignments); the decoders in :mod:`oracles.parsing` are exact and
fast, this is the reference they are tested against.
"""

from __future__ import annotations

import itertools
from functools import cache
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["TreeArgmax", "enumerate_trees", "brute_force_tree", "MAX_WORDS"]

MAX_WORDS = 6


class TreeArgmax(NamedTuple):
    """Result of the exhaustive search.

    Attributes
    ----------
    heads : ndarray of shape (n+1,)
        The first optimal tree in enumeration order (``heads[0] = -1``).
    score : float
        Its objective: tree score, plus the Hamming loss when ``heads_true`` was given.
    n_optimal : int
        How many trees reach the maximum (within ``1e-9`` relative), i.e. the ties.
    """

    heads: np.ndarray
    score: float
    n_optimal: int


def _reaches_root(heads) -> bool:
    n = len(heads) - 1
    for m in range(1, n + 1):
        v, steps = m, 0
        while v != 0:
            v = heads[v]
            steps += 1
            if steps > n:
                return False
    return True


def _crossing(heads) -> bool:
    spans = [(min(heads[m], m), max(heads[m], m)) for m in range(1, len(heads))]
    for (a, b), (c, d) in itertools.combinations(spans, 2):
        if a < c < b < d or c < a < d < b:
            return True
    return False


@cache
def _trees(n: int, projective: bool, single_root: bool) -> np.ndarray:
    rows = []
    choices = [[h for h in range(n + 1) if h != m] for m in range(1, n + 1)]
    for assignment in itertools.product(*choices):
        heads = (-1,) + assignment
        if single_root and assignment.count(0) != 1:
            continue
        if not _reaches_root(heads):
            continue
        if projective and _crossing(heads):
            continue
        rows.append(heads)
    out = np.array(rows, dtype=np.int64).reshape(len(rows), n + 1)
    out.setflags(write=False)
    return out


def enumerate_trees(n: int, *, projective: bool = False, single_root: bool = False) -> np.ndarray:
    """All dependency trees of ``n`` words, in lexicographic order of their head arrays.

    Parameters
    ----------
    n : int
        Number of words, ``0 <= n <= MAX_WORDS``.
    projective : bool
        Keep only trees without crossing arcs (root at position 0).
    single_root : bool
        Keep only trees where the root has exactly one child.

    Returns
    -------
    trees : ndarray of shape (n_trees, n+1), int64, read-only
        One tree per row, ``trees[:, 0] = -1``.
    """
    if not 0 <= int(n) <= MAX_WORDS:
        raise InputError(f"brute force handles 0..{MAX_WORDS} words, got {n}", field="n")
    if n == 0:
        return np.full((1, 1), -1, dtype=np.int64)
    return _trees(int(n), bool(projective), bool(single_root))


def brute_force_tree(
    scores, heads_true=None, *, projective: bool = False, single_root: bool = False, loss_weight: float = 1.0
) -> TreeArgmax:
    """The best tree by enumeration: argmax of score (+ ``loss_weight`` x wrong heads).

    Parameters
    ----------
    scores : array-like of shape (n+1, n+1)
        ``scores[h, m]`` for head ``h`` and modifier ``m`` (root = 0).
    heads_true : array-like of shape (n+1,), optional
        Gold heads for the loss-augmented objective.
    projective, single_root : bool
        Restrict the search space as in :func:`enumerate_trees`.
    loss_weight : float
        Loss of one wrong head.

    Returns
    -------
    TreeArgmax
    """
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 1:
        raise InputError(f"expected a square array, got shape {S.shape}", field="scores")
    n = S.shape[0] - 1
    trees = enumerate_trees(n, projective=projective, single_root=single_root)
    m = np.arange(1, n + 1)
    values = S[trees[:, 1:], m].sum(axis=1)
    if heads_true is not None:
        g = np.asarray(heads_true, dtype=np.int64)
        if g.shape != (n + 1,):
            raise InputError(f"expected shape ({n + 1},), got {g.shape}", field="heads_true")
        values = values + loss_weight * (trees[:, 1:] != g[1:]).sum(axis=1)
    best = int(np.argmax(values))
    top = float(values[best])
    n_opt = int(np.count_nonzero(values >= top - 1e-9 * max(1.0, abs(top))))
    return TreeArgmax(trees[best].copy(), top, n_opt)
