"""Graphs, candidate cycles and random instances for MAP inference (Franc et al. 2012, sec. 1.4).

* :func:`grid_edges` - the 4-connected ``rows x cols`` grid (node ``r * cols + c``);
* :func:`grid_cycles` - its ``(rows - 1) * (cols - 1)`` cycles of length 4 (the candidate
  extensions of Franc et al. 2012, Fig. 1.4);
* :func:`short_cycles` - triangles and 4-cycles of any graph (the candidates by default);
* :func:`random_grid_instance` - seeded random frustrated instances on a grid.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["GridInstance", "grid_edges", "grid_cycles", "short_cycles", "random_grid_instance"]


def _check_shape(rows, cols):
    for name, val in (("rows", rows), ("cols", cols)):
        if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or val < 1:
            raise InputError(f"expected a positive integer, got {val!r}", field=name)
    return int(rows), int(cols)


def grid_edges(rows, cols):
    """Edges of the 4-connected grid.

    Parameters
    ----------
    rows, cols : int
        Grid shape; node ``(r, c)`` has index ``r * cols + c``.

    Returns
    -------
    edges : ndarray of shape (rows * (cols - 1) + (rows - 1) * cols, 2)
        The horizontal edges ``(r, c) - (r, c + 1)`` first, then the vertical ones
        ``(r, c) - (r + 1, c)``; always ``u < v``.
    """
    rows, cols = _check_shape(rows, cols)
    idx = np.arange(rows * cols).reshape(rows, cols)
    horiz = np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], axis=1)
    vert = np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], axis=1)
    return np.concatenate([horiz, vert]).astype(np.int64).reshape(-1, 2)


def grid_cycles(rows, cols, max_size=1):
    """Cycles of the grid: the boundaries of its rectangles of up to ``max_size x max_size`` cells.

    Parameters
    ----------
    rows, cols : int
    max_size : int, default=1
        1 gives the ``(rows - 1) * (cols - 1)`` unit squares (4-cycles, the candidate extensions of
        Franc et al. 2012, Fig. 1.4); 2 adds the 6-cycles around 1 x 2 and 2 x 1 cells and the 8-cycles
        around 2 x 2 cells, and so on.

    Returns
    -------
    cycles : list of tuple of int
        Node indices in traversal order (clockwise from the top-left corner), shortest first.
    """
    rows, cols = _check_shape(rows, cols)
    if not isinstance(max_size, (int, np.integer)) or max_size < 1:
        raise InputError(f"expected a positive integer, got {max_size!r}", field="max_size")
    out = []
    for h in range(1, int(max_size) + 1):
        for w in range(1, int(max_size) + 1):
            for r in range(rows - h):
                for c in range(cols - w):
                    top = [(r, c + j) for j in range(w)]
                    right = [(r + i, c + w) for i in range(h)]
                    bottom = [(r + h, c + w - j) for j in range(w)]
                    left = [(r + h - i, c) for i in range(h)]
                    out.append(tuple(a * cols + b for a, b in top + right + bottom + left))
    return sorted(out, key=len)


def short_cycles(n_nodes, edges, max_length=4):
    """All triangles and (if ``max_length >= 4``) all 4-cycles of a simple graph, each once.

    Parameters
    ----------
    n_nodes : int
    edges : array-like of shape (n_edges, 2)
    max_length : {3, 4}, default=4

    Returns
    -------
    cycles : list of tuple of int
        Node tuples in traversal order, sorted; a 4-cycle ``(a, b, c, d)`` has edges
        ab, bc, cd, da (its chords, if any, are ignored).
    """
    if max_length not in (3, 4):
        raise InputError(f"max_length must be 3 or 4, got {max_length!r}", field="max_length")
    nbrs: list[set[int]] = [set() for _ in range(int(n_nodes))]
    for u, v in np.asarray(edges, dtype=np.int64).reshape(-1, 2):
        nbrs[u].add(int(v))
        nbrs[v].add(int(u))
    found: set[tuple[int, ...]] = set()
    for a in range(len(nbrs)):
        for b in nbrs[a]:
            if b <= a:
                continue
            for c in nbrs[a] & nbrs[b]:
                if c > b:
                    found.add((a, b, c))
    if max_length == 4:
        for a in range(len(nbrs)):  # a is the smallest node, c the node opposite to a
            for b in nbrs[a]:
                if b <= a:
                    continue
                for c in nbrs[b]:
                    if c <= a or c == b:
                        continue
                    for d in nbrs[c] & nbrs[a]:
                        if d > b and d != c:  # canonical: a smallest, b < d
                            found.add((a, b, c, d))
    return sorted(found, key=lambda t: (len(t), t))


class GridInstance(NamedTuple):
    """A pairwise MAP problem on a grid.

    Attributes
    ----------
    unary : ndarray of shape (rows * cols, n_states)
    pairwise : ndarray of shape (n_edges, n_states, n_states)
        ``pairwise[e, x_u, x_v]`` for ``edges[e] = (u, v)``.
    edges : ndarray of shape (n_edges, 2)
    shape : tuple of int
        ``(rows, cols)``.
    """

    unary: np.ndarray
    pairwise: np.ndarray
    edges: np.ndarray
    shape: tuple

    @property
    def cycles(self):
        """The grid's 4-cycles (see :func:`grid_cycles`)."""
        return grid_cycles(*self.shape)


def random_grid_instance(rows, cols, n_states, *, kind="random", coupling=1.0, unary_scale=1.0, seed=None):
    """A random, usually frustrated, pairwise problem on the ``rows x cols`` grid.

    Parameters
    ----------
    rows, cols, n_states : int
    kind : {"random", "potts"}, default="random"
        ``"random"``: every pairwise table has i.i.d. N(0, coupling^2) entries.
        ``"potts"``: ``pairwise[e] = s_e * coupling * I`` with a random sign ``s_e`` per edge
        (attractive or repulsive Potts), which frustrates cycles with mixed signs.
    coupling : float, default=1.0
        Scale of the pairwise weights.
    unary_scale : float, default=1.0
        Unary weights are i.i.d. N(0, unary_scale^2).
    seed : int, Generator or None
        Passed to ``np.random.default_rng``.

    Returns
    -------
    GridInstance
    """
    rows, cols = _check_shape(rows, cols)
    if not isinstance(n_states, (int, np.integer)) or n_states < 1:
        raise InputError(f"expected a positive integer, got {n_states!r}", field="n_states")
    if kind not in ("random", "potts"):
        raise InputError(f"kind must be 'random' or 'potts', got {kind!r}", field="kind")
    rng = np.random.default_rng(seed)
    edges = grid_edges(rows, cols)
    n, k = rows * cols, int(n_states)
    unary = unary_scale * rng.standard_normal((n, k))
    if kind == "random":
        pairwise = coupling * rng.standard_normal((len(edges), k, k))
    else:
        signs = rng.choice([-1.0, 1.0], size=len(edges))
        pairwise = coupling * signs[:, None, None] * np.eye(k)[None, :, :]
    return GridInstance(unary, pairwise, edges, (rows, cols))
