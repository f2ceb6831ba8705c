"""The 1-slack structural-SVM oracle of a grid CRF, with loss-augmented MAP by the dual cutting-plane algorithm.

Each example is a ``rows x cols`` grid (4-connectivity) with node features ``x_v`` (length
``n_features``) and labels ``y_v`` in ``0..n_states-1``. The joint feature map is

    Phi(x, y) = [ sum_v x_v (x) e_{y_v} ,  sum_{c} sum_{(u,v) in E_c} psi_c(y_u, y_v) ]

with the weights laid out as ``w = concat(U.ravel(), P.ravel())``: ``U`` of shape
(n_states, n_features), and per edge class ``c`` (horizontal / vertical, or one class) either a
Potts weight (``P`` of shape (n_classes,), ``psi_c = [y_u == y_v]``) or a full table (``P`` of shape
(n_classes, n_states, n_states), ``psi_c = e_{y_u} (x) e_{y_v}``). The loss is the Hamming loss
``Delta(y, y') = loss_scale * #{v : y_v != y'_v}``, added to the unary scores, and the
loss-augmented MAP ``max_y Delta(y_i, y) + <w, Phi(x_i, y)>`` is solved by
:func:`oracles.mapinference.dual_cutting_plane` (all unit squares of the grid as candidates).

The cut (MTL eq. 5) is formed from the decoded labellings ``y^_i``:

    slope = (1/n) sum_i Phi(x_i, y^_i) - Phi(x_i, y_i),    offset = (1/n) sum_i Delta(y_i, y^_i).

Whatever ``y^_i`` is, this affine function is a minorant of the true risk
``R(w) = (1/n) sum_i max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>]`` everywhere, so the
engine's model and lower bound stay valid. When the relaxation is tight for every example, ``y^_i``
are exact maximisers, ``value = R(w)`` is attained by the cut and ``exact=True``. Otherwise
``exact=False`` and ``value`` is the relaxation's upper bound ``(1/n) sum_i [UB_i - <w, Phi(x_i, y_i)>]``
(``UB_i`` the final bound of eq. 40 for example i; tight examples contribute their exact term), an
upper bound on ``R(w)`` that the cut does not reach. The engine's upper bound ``lam*Omega(w) + value`` is
then an upper bound of the true objective and its lower bound a true lower bound: the certified gap
brackets the exact problem, and it cannot close below the relaxation gap at the returned ``w`` -
the certificate is relative to the relaxation (the engine flags it, ``Result.exact = False``).
"""

from __future__ import annotations

import numpy as np

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from cutplane.executors import chunk_bounds, get_executor

from .mapinference import dual_cutting_plane, grid_cycles, grid_edges

__all__ = ["GridCRFOracle"]

_DEFAULT_MAP = {"max_steps": 20, "max_iter": 5000, "csp_budget": 50_000}


def _check_examples(X, Y, n_states):
    if not isinstance(n_states, (int, np.integer)) or isinstance(n_states, bool) or n_states < 2:
        raise InputError(f"expected an integer >= 2, got {n_states!r}", field="n_states")
    if len(X) != len(Y) or len(X) == 0:
        raise InputError(f"{len(X)} feature grids for {len(Y)} label grids (need >= 1 of each)", field="Y")
    Xs, Ys, d = [], [], None
    for i, (x, y) in enumerate(zip(X, Y)):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 3 or x.shape[0] < 1 or x.shape[1] < 1:
            raise InputError(
                f"example {i}: expected features of shape (rows, cols, n_features), got {x.shape}", field="X"
            )
        if d is None:
            d = x.shape[2]
        if x.shape[2] != d:
            raise InputError(f"example {i} has {x.shape[2]} features, example 0 has {d}", field="X")
        if not np.all(np.isfinite(x)):
            raise InputError(f"example {i}: features contain NaN or inf", field="X")
        y = np.asarray(y)
        if y.shape != x.shape[:2] or not np.issubdtype(y.dtype, np.integer):
            raise InputError(
                f"example {i}: expected integer labels of shape {x.shape[:2]}, got {y.dtype} {y.shape}", field="Y"
            )
        if (y < 0).any() or (y >= n_states).any():
            raise InputError(f"example {i}: labels outside 0..{n_states - 1}", field="Y")
        Xs.append(x)
        Ys.append(y.astype(np.int64))
    return Xs, Ys, d


class GridCRFOracle:
    """Loss-augmented MAP oracle of a grid CRF for the 1-slack structural SVM.

    Parameters
    ----------
    X : list of ndarray of shape (rows_i, cols_i, n_features)
        Node features of each example (grids may differ in size).
    Y : list of ndarray of int of shape (rows_i, cols_i)
        True labels.
    n_states : int
        Number of labels (>= 2).
    pairwise : {"potts", "full"}, default="potts"
        One weight per edge class on ``[y_u == y_v]``, or a full table per edge class.
    edge_classes : {"hv", "one"}, default="hv"
        Separate weights for horizontal and vertical edges, or one shared class.
    loss_scale : float, default=1.0
        Weight of one wrong node in the Hamming loss.
    map_options : dict, optional
        Keyword arguments for :func:`~oracles.mapinference.dual_cutting_plane`
        (default ``max_steps=20, max_iter=5000, csp_budget=50000``).
    executor, n_workers
        Executor for the map over chunks of examples (see :mod:`cutplane.executors`).

    Attributes
    ----------
    dim : int
    last_tight : ndarray of bool of shape (n_examples,)
        Per example, whether the relaxation was tight at the last call.
    last_relaxation_gap : float
        ``value`` minus the cut's value at the last query point (0 when exact).
    """

    risk_lower_bound = 0.0

    def __init__(
        self,
        X,
        Y,
        n_states,
        *,
        pairwise="potts",
        edge_classes="hv",
        loss_scale=1.0,
        map_options=None,
        executor=None,
        n_workers=None,
    ):
        self.X, self.Y, self.n_features = _check_examples(X, Y, n_states)
        self.n_states = int(n_states)
        if pairwise not in ("potts", "full"):
            raise InputError(f"expected 'potts' or 'full', got {pairwise!r}", field="pairwise")
        if edge_classes not in ("hv", "one"):
            raise InputError(f"expected 'hv' or 'one', got {edge_classes!r}", field="edge_classes")
        if not np.isfinite(loss_scale) or loss_scale <= 0:
            raise InputError(f"must be a positive number, got {loss_scale!r}", field="loss_scale")
        self.pairwise, self.edge_classes, self.loss_scale = pairwise, edge_classes, float(loss_scale)
        self.map_options = dict(_DEFAULT_MAP, **(map_options or {}))
        self.n_classes = 2 if edge_classes == "hv" else 1
        self.n_pair = self.n_classes * (1 if pairwise == "potts" else self.n_states**2)
        self.dim = self.n_states * self.n_features + self.n_pair
        self.executor = get_executor(executor, n_workers)
        self._graphs = {}
        self.last_tight = np.ones(len(self.X), dtype=bool)
        self.last_relaxation_gap = 0.0

    # -- model pieces ---------------------------------------------------------------------
    def _graph(self, shape):
        if shape not in self._graphs:
            rows, cols = shape
            edges = grid_edges(rows, cols)
            cls = np.zeros(len(edges), dtype=np.int64)
            if self.edge_classes == "hv":
                cls[rows * (cols - 1) :] = 1  # grid_edges lists the horizontal edges first
            self._graphs[shape] = (edges, cls, grid_cycles(rows, cols))
        return self._graphs[shape]

    def split_weights(self, w):
        """``(U, P)``: U of shape (n_states, n_features), P of shape (n_classes,) or (n_classes, K, K)."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.dim,):
            raise InputError(f"w has shape {w.shape}, expected ({self.dim},)", field="w")
        U = w[: self.n_states * self.n_features].reshape(self.n_states, self.n_features)
        P = w[self.n_states * self.n_features :]
        return U, (P if self.pairwise == "potts" else P.reshape(self.n_classes, self.n_states, self.n_states))

    def scores(self, w, x, y_true=None):
        """Unary (n_nodes, K) and pairwise (n_edges, K, K) scores; Hamming loss added when ``y_true`` is given."""
        U, P = self.split_weights(w)
        rows, cols = x.shape[:2]
        edges, cls, _ = self._graph((rows, cols))
        unary = x.reshape(rows * cols, -1) @ U.T
        if y_true is not None:
            unary = unary + self.loss_scale
            unary[np.arange(rows * cols), y_true.ravel()] -= self.loss_scale
        tables = P[cls][:, None, None] * np.eye(self.n_states) if self.pairwise == "potts" else P[cls]
        return unary, tables, edges

    def joint_feature(self, x, y):
        """``Phi(x, y)``: ndarray of shape (dim,)."""
        rows, cols = x.shape[:2]
        edges, cls, _ = self._graph((rows, cols))
        y = np.asarray(y).ravel()
        phi_u = np.zeros((self.n_states, self.n_features))
        np.add.at(phi_u, y, x.reshape(rows * cols, -1))
        a, b = y[edges[:, 0]], y[edges[:, 1]]
        phi_p: np.ndarray
        if self.pairwise == "potts":
            phi_p = np.bincount(cls, weights=(a == b).astype(float), minlength=self.n_classes)
        else:
            phi_p = np.zeros((self.n_classes, self.n_states, self.n_states))
            np.add.at(phi_p, (cls, a, b), 1.0)
        return np.concatenate([phi_u.ravel(), phi_p.ravel()])

    def loss(self, y_true, y):
        """Hamming loss ``loss_scale * #{v : y_true_v != y_v}``."""
        return self.loss_scale * float(np.count_nonzero(np.asarray(y_true).ravel() != np.asarray(y).ravel()))

    # -- oracle ---------------------------------------------------------------------------
    def _example(self, w, i):
        x, y = self.X[i], self.Y[i]
        unary, tables, edges = self.scores(w, x, y)
        res = dual_cutting_plane(unary, tables, edges, candidates=self._graph(x.shape[:2])[2], **self.map_options)
        phi_true = self.joint_feature(x, y)
        s_true = float(w @ phi_true)
        yhat = res.labels.reshape(y.shape)
        if res.lower_bound < s_true:  # the truth itself is better: a zero term
            yhat = y.copy()
        dphi = self.joint_feature(x, yhat) - phi_true
        lb_term = self.loss(y, yhat) + float(w @ dphi)
        ub_term = lb_term if res.tight else max(res.upper_bound - s_true, lb_term)
        return yhat, dphi, self.loss(y, yhat), ub_term, bool(res.tight)

    def __call__(self, w) -> OracleResult:
        w = np.asarray(w, dtype=np.float64)
        self.split_weights(w)
        n = len(self.X)

        def run(chunk):
            return [self._example(w, i) for i in range(*chunk)]

        parts = [p for chunk in self.executor.map(run, chunk_bounds(n, self.executor.n_workers)) for p in chunk]
        slope = sum(p[1] for p in parts) / n
        offset = sum(p[2] for p in parts) / n
        value = sum(p[3] for p in parts) / n
        self.last_tight = np.array([p[4] for p in parts])
        exact = bool(self.last_tight.all())
        self.last_relaxation_gap = value - (float(slope @ w) + offset)
        if exact:
            value = float(slope @ w) + offset
        return OracleResult(
            value=float(value), cut=Cut(slope, float(offset)), exact=exact, argmax=[p[0] for p in parts]
        )

    def predict(self, w, X=None):
        """MAP labellings (no loss) of the grids ``X`` (default: the training grids)."""
        out = []
        for x in self.X if X is None else X:
            x = np.asarray(x, dtype=np.float64)
            if x.ndim != 3 or x.shape[2] != self.n_features:
                raise InputError(
                    f"expected features of shape (rows, cols, {self.n_features}), got {x.shape}", field="X"
                )
            unary, tables, edges = self.scores(w, x)
            res = dual_cutting_plane(unary, tables, edges, candidates=self._graph(x.shape[:2])[2], **self.map_options)
            out.append(res.labels.reshape(x.shape[:2]))
        return out
