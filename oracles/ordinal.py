"""The all-threshold ordinal hinge with learned, unregularised thresholds (Chu & Keerthi 2005).

Examples ``x_i`` carry ranks ``r_i`` in ``0 .. K-1``; a score ``s_i = <w, x_i>`` is cut by
thresholds ``theta_0 <= ... <= theta_{K-2}`` into ranks. Every threshold contributes a hinge of
the signed margin (Chu & Keerthi 2005's implicit constraints; the ordinal risk of Teo et al. 2010)::

    R(w) = min_theta (1/n) sum_i sum_{j=0}^{K-2} max(0, 1 - z_ij (s_i - theta_j)),
    z_ij = +1 if r_i > j else -1.

**Thresholds.** They are not regularised: the oracle profiles them out, so ``R`` is a convex
function of ``w`` alone (a partial minimum of a jointly convex function) and the engine's
regulariser acts on ``w`` only. The minimum separates over ``j``: ``theta_j`` minimises the
piecewise-linear ``phi_j(t) = sum_i max(0, 1 - z_ij (s_i - t))``, whose slope starts at
``-#{i : r_i <= j}`` and rises by 1 at each breakpoint ``s_i - z_ij``; the leftmost minimiser is
the ``#{i : r_i <= j}``-th smallest breakpoint, one selection per threshold (``O(n K)`` after
nothing but a partition). These leftmost minimisers are ordered: ``phi_{j+1} - phi_j`` has a
non-increasing slope, so the minimisers move right with ``j`` (Chu & Keerthi 2005 show the
order holds at the optimum without imposing it).

**Cut.** At ``theta*`` the hinges' derivatives ``d_ij`` in ``theta_j`` are chosen in their
subdifferentials with ``sum_i d_ij = 0`` (the hinges at the kink share the remaining slope), so
``(-(1/n) X^T sum_j d_.j, 0)`` is a joint subgradient with a zero ``theta`` part, and
``slope = -(1/n) X^T sum_j d_.j`` is a subgradient of the profiled ``R``: each cut is exact.
"""

from __future__ import annotations

import numpy as np

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_vector

__all__ = ["OrdinalHinge"]


class OrdinalHinge:
    """All-threshold ordinal hinge, thresholds profiled out (module docstring).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    ranks : array-like of int, shape (n_samples,)
        Ranks ``0 .. K-1``, every rank present, ``K >= 2``.

    Attributes
    ----------
    dim : int
        ``n_features``.
    n_samples : int
    n_ranks : int
        ``K``.

    Examples
    --------
    >>> import numpy as np
    >>> oracle = OrdinalHinge(np.array([[0.0], [1.0], [2.0]]), np.array([0, 1, 2]))
    >>> round(oracle(np.array([2.0])).value, 6)
    0.0
    """

    supports_line_search = False  # the profiled thresholds couple the examples: not form (16)
    piecewise_linear = True  # LS-BMRM's exact search from values and slopes (line_function)
    risk_lower_bound = 0.0

    def __init__(self, X, ranks):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        r = np.asarray(ranks)
        if r.shape != (self.n_samples,) or r.dtype.kind not in "iu":
            raise InputError(f"ranks must be {self.n_samples} integers", field="y")
        k = int(r.max()) + 1 if r.size else 0
        if r.min() < 0 or k < 2 or np.unique(r).shape[0] != k:
            raise InputError("ranks must be 0 .. K-1 with every rank present and K >= 2", field="y")
        self.ranks = r.astype(np.int64)
        self.n_ranks = k
        self._z = np.where(self.ranks[:, None] > np.arange(k - 1)[None, :], 1.0, -1.0)  # (n, K-1)
        self._n_below = np.cumsum(np.bincount(self.ranks, minlength=k))[:-1]  # #{r_i <= j}, >= 1

    def thresholds(self, w):
        """The profiled thresholds ``theta*`` at ``w``, ndarray of shape (K-1,), non-decreasing."""
        w = as_vector(w, self.dim)
        return self._profile(np.asarray(self.X @ w, dtype=np.float64).ravel())

    def _profile(self, s):
        bps = s[:, None] - self._z  # (n, K-1): phi_j's slope rises by 1 at each
        return np.array([np.partition(bps[:, j], m - 1)[m - 1] for j, m in enumerate(self._n_below)])

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (ndarray (dim,)); ``argmax`` holds the thresholds."""
        w = as_vector(w, self.dim)
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()
        value, coef, theta = self._value_coef(s)
        slope = np.asarray(self.X.T @ coef, dtype=np.float64).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, theta)

    def line_function(self, w, d):
        """``phi(k) -> (R(w + k d), d/dk R(w + k d))`` for ``k >= 0``: one profile per call.

        ``R`` is a partial minimum of a piecewise-linear function, so it is piecewise linear along
        the line; the slope is ``sum_i coef_i <x_i, d>`` with the balanced derivatives of the cut
        (the derivative off the breakpoints).
        """
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, "d")
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()
        ds = np.asarray(self.X @ d, dtype=np.float64).ravel()

        def phi(k):
            value, coef, _ = self._value_coef(s + k * ds)
            return value, float(coef @ ds)

        return phi

    def _value_coef(self, s):
        """``(R, coef, theta)`` at the scores ``s``: ``coef`` the risk's derivatives in ``s_i``."""
        theta = self._profile(s)
        z = self._z
        bps = s[:, None] - z
        margins = 1.0 - z * (s[:, None] - theta[None, :])
        value = float(np.maximum(margins, 0.0).sum()) / self.n_samples
        below, tied = bps < theta[None, :], bps == theta[None, :]
        # slope of phi_j just left of theta_j, and the share of the tied hinges that balances it
        left = -self._n_below + below.sum(axis=0)
        n_tied = tied.sum(axis=0)
        frac = np.clip(-left / np.maximum(n_tied, 1), 0.0, 1.0)
        # d/dtheta of each hinge: z = +1 is 0 then 1, z = -1 is -1 then 0 (crossing its breakpoint)
        d = np.where(z > 0, 0.0, -1.0) + below + tied * frac[None, :]
        coef = -d.sum(axis=1) / self.n_samples  # each hinge's derivative in s_i is minus its one in theta_j
        return max(value, 0.0), coef, theta
