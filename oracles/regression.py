"""Regression risks of a linear model: absolute, quantile, epsilon-insensitive, squared, Huber.

``R(w) = (1/n) sum_i s_i loss(y_i - <x_i, w> - b)``, with sample weights ``s_i`` (ones by
default) and the residual's loss one of (Teo et al. 2010, Table 5):

=================== =============================================== ======================
``loss``            ``loss(r)``                                     form
=================== =============================================== ======================
absolute            ``|r|``                                         2 affine pieces
quantile (tau)      ``max(tau r, (tau - 1) r)`` (pinball)           2 affine pieces
epsilon_insensitive ``max(0, |r| - epsilon)``                       3 affine pieces
squared             ``r^2 / 2``                                     smooth
huber (delta)       ``r^2 / 2`` if ``|r| <= delta``, else           smooth
                    ``delta (|r| - delta / 2)``
poisson             ``mu - y - y log(mu / y)``, ``mu = exp(eta)``   smooth
=================== =============================================== ======================

**Poisson** (log link, targets ``y_i >= 0``) is not a loss of the residual: with the linear
predictor ``eta_i = <x_i, w> + b`` and the mean ``mu_i = exp(eta_i)`` it is half the Poisson
deviance, ``mu_i - y_i - y_i log(mu_i / y_i)`` (``0 log 0 = 0``): the negative log-likelihood
up to a constant, so ``R >= 0``. Its derivative in ``eta_i`` is ``mu_i - y_i``; the profiled
intercept is ``b* = log(sum_i s_i y_i / sum_i s_i exp(<x_i, w>))``, where the derivatives
balance (so it needs some ``y_i > 0``).

**Intercept.** The engine regularises every coordinate of ``w``, and scikit-learn's intercept is
not regularised. With ``fit_intercept=True`` the oracle profiles it out:
``R(w) = min_b (1/n) sum_i s_i loss(y_i - <x_i, w> - b)``, a convex function of ``w`` (a partial
minimum of a jointly convex one). At a minimiser ``b*`` the residual subgradients ``g_i`` can be
chosen with ``sum_i s_i g_i = 0`` (zero is in the subdifferential in ``b``); then
``-(1/n) sum_i s_i g_i x_i`` is a subgradient of the profiled risk, so each cut is exact.
``b*`` is found exactly: for the piecewise-linear losses by one sort of the ``n k`` breakpoints
``z_i - kappa_j`` of ``b -> sum_i s_i loss(z_i - b)`` (``z = y - X w``, kinks ``kappa_j``)
and the first breakpoint where its slope turns non-negative (the tied kinks share the remaining
slope so that the ``g_i`` balance); for the squared loss it is the weighted mean of ``z``; for
Huber's, the root of a piecewise-linear increasing derivative, also from one sort.

Without an intercept, the piecewise-linear losses have the form (16) of Franc et al. 2012 and
give LS-BMRM's exact line search (:meth:`RegressionRisk.line_search_pieces`); with one, the
profiled risk is still piecewise linear along a line but not of form (16) (the intercept couples
the examples), and :meth:`RegressionRisk.line_function` gives its values and slopes for
:func:`cutplane.linesearch.piecewise_linear_search`.
"""

from __future__ import annotations

import numpy as np

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear import LinePieces
from oracles.linear_inputs import as_features, as_sample_weight, as_vector

__all__ = ["RegressionRisk", "REGRESSION_LOSSES", "PIECEWISE_LINEAR_LOSSES", "ALL_LOSSES"]

PIECEWISE_LINEAR_LOSSES = ("absolute", "quantile", "epsilon_insensitive")
#: The losses of the residual ``y - <x, w> - b``.
REGRESSION_LOSSES = (*PIECEWISE_LINEAR_LOSSES, "squared", "huber")
#: Every ``loss`` of :class:`RegressionRisk`: the residual's and the Poisson loss (log link).
ALL_LOSSES = (*REGRESSION_LOSSES, "poisson")


def _pieces(loss, epsilon, quantile):
    """``(slopes, offsets)`` of ``loss(r) = max_j slopes[j] r + offsets[j]``, slopes increasing."""
    if loss == "absolute":
        return np.array([-1.0, 1.0]), np.zeros(2)
    if loss == "quantile":
        return np.array([quantile - 1.0, quantile]), np.zeros(2)
    return np.array([-1.0, 0.0, 1.0]), np.array([-epsilon, 0.0, -epsilon])


class RegressionRisk:
    """Mean regression loss of a linear model, with an optional unregularised intercept.

    ``R(w) = (1/n) sum_i s_i loss(y_i - <x_i, w> - b)``, ``b = 0`` or profiled out (module
    docstring).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Finite targets.
    loss : {"absolute", "quantile", "epsilon_insensitive", "squared", "huber", "poisson"}, default="squared"
    epsilon : float, default=0.1
        Half width of the insensitive tube (``epsilon_insensitive``), >= 0.
    quantile : float, default=0.5
        ``tau`` of the pinball loss, in (0, 1).
    delta : float, default=1.35
        Huber's threshold, > 0.
    fit_intercept : bool, default=False
        Profile out an unregularised intercept.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative ``s_i``; ones by default.

    Attributes
    ----------
    dim : int
        ``n_features``.
    n_samples : int
    supports_line_search : bool
        True for the piecewise-linear losses without an intercept.
    piecewise_linear : bool
        True for the piecewise-linear losses with an intercept (:meth:`line_function`).

    Examples
    --------
    >>> import numpy as np
    >>> oracle = RegressionRisk(np.eye(2), np.array([1.0, -3.0]), loss="absolute")
    >>> oracle(np.zeros(2)).value
    2.0
    """

    risk_lower_bound = 0.0  # every loss is >= 0

    def __init__(
        self,
        X,
        y,
        loss="squared",
        *,
        epsilon=0.1,
        quantile=0.5,
        delta=1.35,
        fit_intercept=False,
        sample_weight=None,
    ):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        y = np.asarray(y, dtype=np.float64) if np.asarray(y).dtype.kind in "biuf" else None
        if y is None or y.shape != (self.n_samples,) or not np.all(np.isfinite(y)):
            raise InputError(f"targets must be {self.n_samples} finite numbers", field="y")
        if loss not in ALL_LOSSES:
            raise InputError(f"must be one of {', '.join(ALL_LOSSES)}, got {loss!r}", field="loss")
        if not (np.isfinite(epsilon) and epsilon >= 0):
            raise InputError(f"must be >= 0, got {epsilon!r}", field="epsilon")
        if not (0.0 < quantile < 1.0):
            raise InputError(f"must be in (0, 1), got {quantile!r}", field="quantile")
        if not (np.isfinite(delta) and delta > 0):
            raise InputError(f"must be > 0, got {delta!r}", field="delta")
        if loss == "poisson" and np.any(y < 0):
            raise InputError("the Poisson loss needs targets >= 0", field="y")
        s = as_sample_weight(sample_weight, self.n_samples)
        weighted = y > 0 if s is None else (y > 0) & (s > 0)
        if loss == "poisson" and fit_intercept and not np.any(weighted):
            raise InputError("the Poisson loss with an intercept needs a positive target", field="y")
        self.y = y
        self.loss = loss
        self.epsilon, self.quantile, self.delta = float(epsilon), float(quantile), float(delta)
        self.fit_intercept = bool(fit_intercept)
        self.sample_weight = np.ones(self.n_samples) if s is None else s
        self.supports_line_search = loss in PIECEWISE_LINEAR_LOSSES and not self.fit_intercept
        self.piecewise_linear = loss in PIECEWISE_LINEAR_LOSSES and self.fit_intercept
        if loss in PIECEWISE_LINEAR_LOSSES:
            self._slopes, self._offsets = _pieces(loss, self.epsilon, self.quantile)
            ds, dc = np.diff(self._slopes), -np.diff(self._offsets)
            self._kinks = dc / ds  # piece j - 1 meets piece j at r = kinks[j - 1], increasing

    # ---------------------------------------------------------------- the loss
    def _loss_and_derivative(self, r):
        """``loss(r)`` and one derivative (ndarray of shape (n,) each), no intercept balance."""
        if self.loss == "squared":
            return 0.5 * r * r, r.copy()
        if self.loss == "huber":
            d = self.delta
            inside = np.abs(r) <= d
            return np.where(inside, 0.5 * r * r, d * (np.abs(r) - 0.5 * d)), np.clip(r, -d, d)
        terms = r[:, None] * self._slopes[None, :] + self._offsets[None, :]
        j = np.argmax(terms, axis=1)
        return terms[np.arange(r.shape[0]), j], self._slopes[j]

    def _intercept_piecewise(self, z):
        """``(b*, g)``: a minimiser of ``sum_i s_i loss(z_i - b)`` and balanced derivatives ``g``."""
        s = self.sample_weight
        jumps = np.diff(self._slopes)  # (K,)
        bps = z[:, None] - self._kinks[None, :]  # (n, K): the slope in b jumps by s_i * jumps[j] here
        w_jumps = s[:, None] * jumps[None, :]
        start = -float(s.sum()) * self._slopes[-1]  # slope in b at b -> -inf
        flat = bps.ravel()
        order = np.argsort(flat, kind="mergesort")
        cum = start + np.cumsum(w_jumps.ravel()[order])
        k = int(np.searchsorted(cum, 0.0, side="left"))  # first breakpoint after which slope >= 0
        k = min(k, flat.shape[0] - 1)
        b = float(flat[order[k]])
        crossed = bps < b
        tied = bps == b
        below = start + float(w_jumps[crossed].sum())
        above = below + float(w_jumps[tied].sum())
        theta = -below / (above - below) if above > below else 0.0
        theta = min(max(theta, 0.0), 1.0)
        g = self._slopes[-1] - (crossed * jumps).sum(axis=1) - theta * (tied * jumps).sum(axis=1)
        return b, g

    def _intercept_huber(self, z):
        """Root ``b`` of ``sum_i s_i clip(z_i - b, -delta, delta) = 0`` (exact, one sort)."""
        s, d = self.sample_weight, self.delta
        # h'(b) = A + B b between breakpoints; events at z - d (enter the quadratic part), z + d (leave it)
        pts = np.concatenate([z - d, z + d])
        dA = np.concatenate([s * (d - z), s * (d + z)])
        dB = np.concatenate([s, -s])
        order = np.argsort(pts, kind="mergesort")
        A = -d * float(s.sum()) + np.cumsum(dA[order])
        B = np.cumsum(dB[order])
        value_at = A + B * pts[order]  # h' at each breakpoint (events up to it included)
        k = int(np.searchsorted(value_at, 0.0, side="left"))
        k = min(max(k, 1), pts.shape[0] - 1)
        a_prev, b_prev = A[k - 1], B[k - 1]
        b = -a_prev / b_prev if b_prev > 0 else float(pts[order[k]])
        return float(b)

    def _poisson(self, w):
        """Half the Poisson deviance and its gradient cut (module docstring); ``argmax`` is ``b``."""
        s, y = self.sample_weight, self.y
        eta = np.asarray(self.X @ w, dtype=np.float64).ravel()
        b = 0.0
        if self.fit_intercept:
            top = float(eta.max())  # log-sum-exp shift: exp never overflows here
            b = float(np.log(s @ y) - (top + np.log(s @ np.exp(eta - top))))
        eta = eta + b
        mu = np.exp(eta)
        ylogy = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
        values = mu - y - y * eta + ylogy
        n = self.n_samples
        value = max(float(s @ values) / n, 0.0)
        slope = np.asarray(self.X.T @ (s * (mu - y) / n), dtype=np.float64).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, b)

    def residuals(self, w):
        """``(r, b)``: residuals ``y - X w - b`` (ndarray (n_samples,)) at the intercept ``b`` used."""
        w = as_vector(w, self.dim)
        if self.loss == "poisson":
            b = float(self._poisson(w).argmax)
            return self.y - np.asarray(self.X @ w, dtype=np.float64).ravel() - b, b
        z = self.y - np.asarray(self.X @ w, dtype=np.float64).ravel()
        if not self.fit_intercept:
            return z, 0.0
        if self.loss in PIECEWISE_LINEAR_LOSSES:
            b, _ = self._intercept_piecewise(z)
        elif self.loss == "squared":
            b = float(self.sample_weight @ z / self.sample_weight.sum())
        else:
            b = self._intercept_huber(z)
        return z - b, b

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (ndarray of shape (dim,)); ``argmax`` is the intercept."""
        w = as_vector(w, self.dim)
        if self.loss == "poisson":
            return self._poisson(w)
        z = self.y - np.asarray(self.X @ w, dtype=np.float64).ravel()
        b = 0.0
        if self.fit_intercept and self.loss in PIECEWISE_LINEAR_LOSSES:
            b, g = self._intercept_piecewise(z)
            values, _ = self._loss_and_derivative(z - b)
        else:
            if self.fit_intercept:
                b = (
                    float(self.sample_weight @ z / self.sample_weight.sum())
                    if self.loss == "squared"
                    else self._intercept_huber(z)
                )
            values, g = self._loss_and_derivative(z - b)
        n = self.n_samples
        coef = -self.sample_weight * g / n
        value = float(self.sample_weight @ values) / n
        slope = np.asarray(self.X.T @ coef, dtype=np.float64).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, b)

    def line_search_pieces(self, w, d) -> LinePieces:
        """Form (16) of ``k -> R(w + k d)`` for a piecewise-linear loss without an intercept.

        Parameters
        ----------
        w, d : ndarray of shape (dim,)

        Returns
        -------
        LinePieces
            ``offsets`` and ``slopes`` of shape (n_samples, n_pieces): piece ``j`` of example
            ``i`` is ``(s_i / n) (slope_j (y_i - <x_i, w + k d>) + offset_j)``.
        """
        if not self.supports_line_search:
            raise InputError("the exact line search needs a piecewise-linear loss without an intercept", field="loss")
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, "d")
        z = self.y - np.asarray(self.X @ w, dtype=np.float64).ravel()
        q = np.asarray(self.X @ d, dtype=np.float64).ravel()
        scale = (self.sample_weight / self.n_samples)[:, None]
        offsets = scale * (z[:, None] * self._slopes[None, :] + self._offsets[None, :])
        slopes = -scale * q[:, None] * self._slopes[None, :]
        return LinePieces(offsets, slopes)

    def line_function(self, w, d):
        """``phi(k) -> (R(w + k d), d/dk R(w + k d))``, ``k >= 0``, for a piecewise-linear loss with
        the intercept profiled out: one profile (a sort of the breakpoints) per call.

        The slope is ``sum_i coef_i <x_i, d>`` with the balanced derivatives of the cut (the
        derivative off the breakpoints).
        """
        if not self.piecewise_linear:
            raise InputError("line_function needs a piecewise-linear loss with an intercept", field="loss")
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, "d")
        z = self.y - np.asarray(self.X @ w, dtype=np.float64).ravel()
        q = np.asarray(self.X @ d, dtype=np.float64).ravel()
        s, n = self.sample_weight, self.n_samples

        def phi(k):
            zk = z - k * q
            b, g = self._intercept_piecewise(zk)
            values, _ = self._loss_and_derivative(zk - b)
            return float(s @ values) / n, -float((s * g) @ q) / n

        return phi
