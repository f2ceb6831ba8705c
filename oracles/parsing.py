"""Exact decoders of arc-factored dependency parsing, plain and loss-augmented.

A sentence of ``n`` words is a graph on ``n + 1`` nodes, node 0 the artificial root.
``scores[h, m]`` is the score of the arc from head ``h`` to modifier ``m``; a tree is an
int array ``heads`` of shape (n + 1,) with ``heads[0] = -1`` and ``heads[m]`` the head of
word ``m``. Entries ``scores[:, 0]`` (arcs into the root) and the diagonal are ignored.

- :func:`chu_liu_edmonds`: maximum spanning arborescence, non-projective (McDonald et al.
  2005b), O(n^3). ``single_root=True`` forces exactly one child of the root, exactly: the
  algorithm runs over lexicographic pairs (number of root arcs penalised first, score
  second), over which Chu-Liu-Edmonds is still exact.
- :func:`eisner`: best projective tree (Eisner 1996), O(n^3).

With ``heads_true`` both maximise ``score(y) + Delta(heads_true, y)`` where ``Delta`` is the
number of words whose head differs (MTL^struct sec. 3.1): every arc except the gold one
gets ``+1`` (``+loss_weight`` if given).

Ties are broken deterministically (first maximiser in index order at every step; see
:mod:`oracles._parsing_kernels`): repeated calls return identical trees, and any tree
returned is optimal, but when several trees tie the one returned need not be the one a
brute-force enumeration lists first.
"""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError

from ._parsing_kernels import cle_kernel, eisner_kernel

__all__ = [
    "chu_liu_edmonds",
    "eisner",
    "tree_score",
    "hamming_heads",
    "loss_augment",
    "is_tree",
    "is_projective",
    "check_heads",
]


def _check_scores(scores) -> np.ndarray:
    S = np.asarray(scores, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] < 1:
        raise InputError(f"expected a square array of shape (n+1, n+1), got shape {S.shape}", field="scores")
    if not np.all(np.isfinite(S)):
        raise InputError(
            "scores contain NaN or infinite values; use a large finite penalty to forbid arcs", field="scores"
        )
    return np.ascontiguousarray(S)


def check_heads(heads, n_nodes: int, *, field: str = "heads") -> np.ndarray:
    """Validate a head array of shape (n_nodes,) with ``heads[0] = -1``; return it as int64.

    Only the shape, the root entry and the range ``0 <= heads[m] <= n, heads[m] != m`` are
    checked, not that the heads form a tree (see :func:`is_tree`).
    """
    h = np.asarray(heads)
    if h.ndim != 1 or h.shape[0] != n_nodes:
        raise InputError(f"expected shape ({n_nodes},) (words + root), got {h.shape}", field=field)
    if h.dtype.kind not in "iu":
        if h.dtype.kind == "f" and np.all(np.isfinite(h)) and np.all(h == np.round(h)):
            h = h.astype(np.int64)
        else:
            raise InputError(f"expected integer heads, got dtype {h.dtype}", field=field)
    h = h.astype(np.int64, copy=False)
    if h[0] != -1:
        raise InputError(f"heads[0] must be -1 (the root has no head), got {h[0]}", field=field)
    words = h[1:]
    bad = np.flatnonzero((words < 0) | (words >= n_nodes) | (words == np.arange(1, n_nodes)))
    if bad.size:
        m = int(bad[0]) + 1
        raise InputError(
            f"head of word {m} is {int(h[m])}, expected an index in 0..{n_nodes - 1} other than {m}", field=field
        )
    return h


def loss_augment(scores, heads_true, loss_weight: float = 1.0) -> np.ndarray:
    """Scores plus ``loss_weight`` on every arc except the gold ones: argmax of score + Hamming.

    Parameters
    ----------
    scores : ndarray of shape (n+1, n+1)
    heads_true : ndarray of shape (n+1,)
        Gold heads, ``heads_true[0] = -1``.
    loss_weight : float
        The loss of one wrong head.

    Returns
    -------
    augmented : ndarray of shape (n+1, n+1)
        Gold arcs keep their score bit for bit.
    """
    S = _check_scores(scores)
    g = check_heads(heads_true, S.shape[0], field="heads_true")
    out = S + float(loss_weight)
    m = np.arange(1, S.shape[0])
    out[g[1:], m] = S[g[1:], m]
    return out


def chu_liu_edmonds(scores, heads_true=None, *, single_root: bool = False) -> np.ndarray:
    """Maximum spanning arborescence rooted at node 0 (non-projective decoding).

    Parameters
    ----------
    scores : array-like of shape (n+1, n+1)
        ``scores[h, m]``: score of head ``h`` for modifier ``m``; node 0 is the root.
    heads_true : array-like of shape (n+1,), optional
        Gold heads (``heads_true[0] = -1``); when given, maximise score + number of
        words whose head differs from ``heads_true``.
    single_root : bool, default False
        False: the root may take several children (MSTParser, CoNLL-X). True: exactly one
        child of the root (Universal Dependencies); exact.

    Returns
    -------
    heads : ndarray of shape (n+1,), int64
        ``heads[0] = -1``; a valid arborescence.
    """
    S = _check_scores(scores) if heads_true is None else loss_augment(scores, heads_true)
    P = np.zeros(S.shape, dtype=np.int64)
    if single_root:
        P[0, :] = -1
    return cle_kernel(S, P)


def eisner(scores, heads_true=None, *, single_root: bool = False) -> np.ndarray:
    """Best projective dependency tree rooted at node 0 (Eisner's algorithm, O(n^3)).

    Parameters
    ----------
    scores : array-like of shape (n+1, n+1)
        ``scores[h, m]``: score of head ``h`` for modifier ``m``; node 0 is the root.
    heads_true : array-like of shape (n+1,), optional
        Gold heads; when given, maximise score + number of words with a wrong head.
    single_root : bool, default False
        Force exactly one child of the root.

    Returns
    -------
    heads : ndarray of shape (n+1,), int64
        ``heads[0] = -1``; a projective tree.
    """
    S = _check_scores(scores) if heads_true is None else loss_augment(scores, heads_true)
    return eisner_kernel(S, bool(single_root))


def tree_score(scores, heads) -> float:
    """``sum_m scores[heads[m], m]`` over the words ``m = 1..n``."""
    S = np.asarray(scores, dtype=np.float64)
    h = np.asarray(heads)
    m = np.arange(1, S.shape[0])
    return float(S[h[1:], m].sum())


def hamming_heads(heads_true, heads) -> int:
    """Number of words whose head differs (the parsing loss Delta)."""
    a = np.asarray(heads_true)[1:]
    b = np.asarray(heads)[1:]
    if a.shape != b.shape:
        raise InputError(f"head arrays differ in length: {a.shape[0] + 1} and {b.shape[0] + 1}", field="heads")
    return int(np.count_nonzero(a != b))


def is_tree(heads, *, single_root: bool = False) -> bool:
    """True when ``heads`` (shape (n+1,), ``heads[0] = -1``) is an arborescence rooted at 0.

    Every word has one head in ``0..n`` other than itself and every word reaches the
    root by following heads (so there is no cycle). With ``single_root`` the root must
    have exactly one child.
    """
    h = np.asarray(heads)
    N = h.shape[0]
    if h.ndim != 1 or N < 1 or h[0] != -1:
        return False
    for m in range(1, N):
        if not (0 <= h[m] < N) or h[m] == m:
            return False
    for m in range(1, N):
        v, steps = m, 0
        while v != 0:
            v = h[v]
            steps += 1
            if steps > N:
                return False
    if single_root and N > 1 and int(np.count_nonzero(h[1:] == 0)) != 1:
        return False
    return True


def is_projective(heads) -> bool:
    """True when no two arcs cross (drawn above the sentence with the root at position 0).

    Arcs ``(a, b)`` and ``(c, d)`` (as intervals ``min..max``) cross when
    ``a < c < b < d``. For a tree with the root at position 0 this is the usual definition
    of projectivity (every subtree covers a contiguous span).
    """
    h = np.asarray(heads)
    spans = [(min(int(h[m]), m), max(int(h[m]), m)) for m in range(1, h.shape[0])]
    for i, (a, b) in enumerate(spans):
        for c, d in spans[i + 1 :]:
            if a < c < b < d or c < a < d < b:
                return False
    return True
