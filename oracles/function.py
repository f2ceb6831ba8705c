"""The solver API for new risk functions: any Python ``fun(w) -> (value, subgradient)``.

:class:`FunctionOracle` wraps such a function as an :class:`cutplane.protocols.Oracle`, checks
what it returns (a finite scalar and a finite subgradient of the right length) and builds
the cut ``R(v) >= R(w) + <a, v - w>``. The decorator :func:`oracle` does the same in one line.

Example: a new risk in about 20 lines, the mean absolute deviation of a linear
regression model, trained with the engine:

>>> import numpy as np
>>> import cutplane
>>> from cutplane.regularizers import L2
>>> from oracles.function import oracle
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((200, 5))
>>> t = X @ np.arange(1.0, 6.0) + 0.1 * rng.standard_normal(200)
>>> @oracle(dim=5)
... def mean_abs_deviation(w):
...     r = X @ w - t
...     return np.abs(r).mean(), X.T @ np.sign(r) / len(t)
>>> res = cutplane.minimize(mean_abs_deviation, L2(), lam=1e-3, eps=1e-6)
>>> bool(res.gap <= 1e-6)
True

The engine then certifies ``F(w) - min F <= eps`` for ``F = lam/2 ||w||^2 + R``: the
user wrote the risk and a subgradient, nothing else.
"""

from __future__ import annotations

import functools
import numbers

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import Cut, OracleResult, slope_dot
from cutplane.exceptions import InputError

__all__ = ["FunctionOracle", "oracle"]


class FunctionOracle:
    """An oracle from a function returning the risk value and one subgradient.

    Parameters
    ----------
    fun : callable
        ``fun(w) -> (value, subgradient)`` with ``w`` an ndarray of shape (dim,), ``value``
        a finite real number and ``subgradient`` array-like of shape (dim,) (or, when
        ``sparse`` is True, a scipy sparse matrix of shape (1, dim) or (dim, 1)). ``fun`` may
        also return an :class:`~cutplane.cuts.OracleResult`, which is passed through after
        the same checks.
    dim : int
        Length of ``w``.
    sparse : bool, default=False
        Keep sparse subgradients sparse (as CSR rows of shape (1, dim)) so the working set
        stores only their nonzeros. When False, sparse subgradients are densified.
    exact : bool, default=True
        Whether ``value`` is the exact risk (False for an upper bound, e.g. a relaxed
        inner solve); forwarded to the engine's certificate.
    risk_lower_bound : float, optional
        A known lower bound of the risk, ``R(w) >= risk_lower_bound`` for every ``w`` (0 for a
        non-negative loss). :func:`cutplane.minimize` adds it as a cut where the regulariser
        needs one (``L1``: without it the first reduced problems are unbounded below), as it
        does for the built-in oracles. None: unknown.

    Attributes
    ----------
    dim : int
    n_calls : int
        How many times the function was evaluated.

    Raises
    ------
    InputError
        When ``dim`` is not a positive integer, or (at call time) when ``fun`` returns a
        non-finite value or a subgradient of the wrong shape.
    """

    def __init__(self, fun, dim, *, sparse=False, exact=True, risk_lower_bound=None):
        if not callable(fun):
            raise InputError(f"fun must be callable, got {type(fun).__name__}", field="fun")
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
            raise InputError(f"dim must be a positive integer, got {dim!r}", field="dim")
        self.fun = fun
        self.dim = int(dim)
        self.sparse = bool(sparse)
        self.exact = bool(exact)
        if risk_lower_bound is not None:
            try:
                risk_lower_bound = float(risk_lower_bound)
            except (TypeError, ValueError):
                raise InputError(
                    f"must be a number, got {type(risk_lower_bound).__name__}", field="risk_lower_bound"
                ) from None
            if not np.isfinite(risk_lower_bound):
                raise InputError(f"must be finite, got {risk_lower_bound}", field="risk_lower_bound")
        self.risk_lower_bound = risk_lower_bound
        self.n_calls = 0
        functools.update_wrapper(self, fun, updated=())

    def _name(self):
        return getattr(self.fun, "__name__", type(self.fun).__name__)

    def _check_slope(self, g):
        name = self._name()
        if sp.issparse(g):
            if g.shape not in ((1, self.dim), (self.dim, 1)):
                raise InputError(
                    f"{name} returned a sparse subgradient of shape {g.shape}, expected (1, {self.dim})",
                    field="subgradient",
                )
            g = sp.csr_matrix(g.reshape(1, self.dim), dtype=np.float64)
            if not np.all(np.isfinite(g.data)):
                raise InputError(f"{name} returned a non-finite subgradient", field="subgradient")
            return g if self.sparse else g.toarray().ravel()
        g = np.asarray(g, dtype=np.float64)
        if g.shape not in ((self.dim,), (1, self.dim)):
            raise InputError(
                f"{name} returned a subgradient of shape {g.shape}, expected ({self.dim},)", field="subgradient"
            )
        g = g.reshape(self.dim)
        if not np.all(np.isfinite(g)):
            raise InputError(f"{name} returned a non-finite subgradient", field="subgradient")
        return g

    def __call__(self, w) -> OracleResult:
        """Evaluate ``fun`` at ``w`` and return the value and the cut through it."""
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (self.dim,):
            raise InputError(f"expected w of shape ({self.dim},), got {w.shape}", field="w")
        self.n_calls += 1
        out = self.fun(w)
        exact, argmax = self.exact, None
        if isinstance(out, OracleResult):
            value, slope = out.value, out.cut.slope
            exact, argmax = bool(out.exact) and self.exact, out.argmax
        else:
            try:
                value, slope = out
            except (TypeError, ValueError):
                raise InputError(
                    f"{self._name()} must return (value, subgradient), got {type(out).__name__}", field="fun"
                ) from None
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(
                f"{self._name()} returned a non-scalar value of type {type(value).__name__}", field="value"
            ) from None
        if not np.isfinite(value):
            raise InputError(f"{self._name()} returned the non-finite value {value}", field="value")
        if self.risk_lower_bound is not None and value < self.risk_lower_bound - 1e-9 * max(1.0, abs(value)):
            raise InputError(
                f"{self._name()} returned {value}, below its declared risk_lower_bound {self.risk_lower_bound}",
                field="risk_lower_bound",
            )
        slope = self._check_slope(slope)
        return OracleResult(value, Cut(slope, value - slope_dot(slope, w)), exact, argmax)

    def __repr__(self):
        return f"FunctionOracle({self._name()}, dim={self.dim}, sparse={self.sparse})"


def oracle(dim, *, sparse=False, exact=True, risk_lower_bound=None):
    """Decorator: turn ``fun(w) -> (value, subgradient)`` into a :class:`FunctionOracle`.

    Parameters
    ----------
    dim : int
        Length of ``w``.
    sparse, exact : bool
        As in :class:`FunctionOracle`.
    risk_lower_bound : float, optional
        As in :class:`FunctionOracle`: a known lower bound of the risk (an ``L1`` run needs one).

    Examples
    --------
    >>> import numpy as np
    >>> @oracle(dim=2)
    ... def l1_distance(w):
    ...     return np.abs(w - 1).sum(), np.sign(w - 1)
    >>> l1_distance(np.zeros(2)).value
    2.0
    """

    def wrap(fun):
        return FunctionOracle(fun, dim, sparse=sparse, exact=exact, risk_lower_bound=risk_lower_bound)

    return wrap
