"""The one-class (novelty detection) risk of Schölkopf et al. 2001, its offset profiled out.

Schölkopf et al. 2001 separate the data from the origin with the largest margin::

    min_{w, rho}  1/2 ||w||^2 + 1/(nu n) sum_i max(0, rho - <w, x_i>) - rho,

``nu`` in ``(0, 1]`` an upper bound on the share of training outliers. In the form
``F(w) = Omega(w) + C * R(w)`` of BMRM (Teo et al. 2010) the unregularised offset ``rho`` belongs
to the risk, profiled out exactly::

    R(w) = min_rho (1/n) sum_i max(0, rho - <w, x_i>) - nu rho,

and ``C = 1/nu`` gives Schölkopf et al.'s problem. With the scores ``s = X w`` sorted, the slope
of the inner function in ``rho`` is ``-nu + #{s_i < rho} / n``: the minimiser is the
``ceil(nu n)``-th smallest score, and ``R(w)`` is minus ``1/n`` times the sum of the ``nu n``
smallest scores (the last one weighted by the fractional part). ``R`` is positively homogeneous
(``R(t w) = t R(w)``, ``t >= 0``), convex, piecewise linear, and unbounded below: it declares no
``risk_lower_bound``. The cut is exact: with the items below ``rho*`` weighted 1 and the tied ones
sharing what makes the derivative in ``rho`` vanish (``sum_i c_i = nu n``), ``(-(1/n) X^T c, 0)``
is a joint subgradient, so ``slope = -(1/n) X^T c`` is a subgradient of the profiled ``R`` and the
offset of the cut is 0.

Along a line ``w + k d`` the risk is convex piecewise linear in ``k``:
:meth:`OneClassHinge.line_function` gives its value and right derivative in one sort, for
LS-BMRM's exact search (:func:`cutplane.linesearch.piecewise_linear_search`).
"""

from __future__ import annotations

import math

import numpy as np

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_vector

__all__ = ["OneClassHinge", "lowest_share_weights"]


def lowest_share_weights(order, nu):
    """Weights ``c`` (length ``n``) of the ``nu n`` first items of ``order``: 1, the next one the
    fractional part, the rest 0 (``sum c = nu n``).

    Parameters
    ----------
    order : ndarray of int, shape (n,)
        Items from the lowest score up.
    nu : float
        In ``(0, 1]``.

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    n = order.shape[0]
    mass = nu * n
    full = min(int(math.floor(mass)), n)
    c = np.zeros(n)
    c[order[:full]] = 1.0
    if full < n and mass > full:
        c[order[full]] = mass - full
    return c


class OneClassHinge:
    """One-class SVM risk with the offset ``rho`` profiled out (module docstring).

    ``R(w) = min_rho (1/n) sum_i max(0, rho - <w, x_i>) - nu rho``.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    nu : float, default=0.5
        In ``(0, 1]``.

    Attributes
    ----------
    dim : int
        ``n_features``.
    n_samples : int
    nu : float
    piecewise_linear : bool
        True: the risk is convex piecewise linear along every line (:meth:`line_function`).

    Examples
    --------
    >>> import numpy as np
    >>> oracle = OneClassHinge(np.array([[1.0], [2.0], [3.0], [4.0]]), nu=0.5)
    >>> oracle(np.array([1.0])).value  # minus the sum of the two lowest scores over n
    -0.75
    >>> oracle.offset(np.array([1.0]))  # the minimisers: [2, 3]
    2.5
    """

    supports_line_search = False  # no form (16) per item: the offset couples them
    piecewise_linear = True
    risk_lower_bound = None

    def __init__(self, X, nu=0.5):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        if self.n_samples < 1:
            raise InputError("needs at least one sample", field="X")
        if isinstance(nu, bool) or not isinstance(nu, (int, float, np.integer, np.floating)):
            raise InputError(f"must be a number in (0, 1], got {nu!r}", field="nu")
        if not 0.0 < float(nu) <= 1.0:
            raise InputError(f"must be in (0, 1], got {nu!r}", field="nu")
        self.nu = float(nu)
        self._k = max(1, min(self.n_samples, math.ceil(self.nu * self.n_samples)))

    def offset(self, w):
        """The profiled offset ``rho*`` at ``w`` (float): the midpoint of the minimisers.

        The minimisers are the ``ceil(nu n)``-th smallest score ``s_(k)`` when ``nu n`` is not
        an integer, and ``[s_(k), s_(k+1)]`` when it is (``k = nu n < n``).
        """
        w = as_vector(w, self.dim)
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()
        k, n = self._k, self.n_samples
        if k < n and self.nu * n == k:
            part = np.partition(s, (k - 1, k))
            return 0.5 * (float(part[k - 1]) + float(part[k]))
        return float(np.partition(s, k - 1)[k - 1])

    def _weights(self, s, tie=None):
        """The weights ``c`` of the lowest ``nu n`` scores: by a selection (``O(n)``), or, with
        ``tie``, by a sort with the ties broken by ``tie`` ascending (the order just right of a
        point on a line)."""
        if tie is not None:
            return lowest_share_weights(np.lexsort((tie, s)), self.nu)
        full = min(int(math.floor(self.nu * self.n_samples)), self.n_samples - 1)
        return lowest_share_weights(np.argpartition(s, full), self.nu)  # the first `full` lowest, then the next

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (ndarray of shape (dim,)); :meth:`offset` gives ``rho*``."""
        w = as_vector(w, self.dim)
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()
        c = self._weights(s)
        n = self.n_samples
        value = -float(c @ s) / n
        slope = -np.asarray(self.X.T @ c, dtype=np.float64).ravel() / n
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, None)

    def line_function(self, w, d):
        """``phi(k) -> (R(w + k d), right derivative of R(w + k d) in k)``, ``k >= 0``.

        The scores ``X w`` and ``X d`` are computed once; each call sorts ``X w + k X d`` with
        ties broken by ``X d`` (the order just right of ``k``), ``O(n log n)``.
        """
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, name="d")
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()
        ds = np.asarray(self.X @ d, dtype=np.float64).ravel()
        n = self.n_samples

        def phi(k):
            u = s + k * ds
            c = self._weights(u, tie=ds)
            return -float(c @ u) / n, -float(c @ ds) / n

        return phi
