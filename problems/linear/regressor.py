"""LinearRegressor: absolute, quantile, epsilon-insensitive, squared or Huber loss, certified."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin

from cutplane.exceptions import InputError
from problems.linear.certified import (
    REGULARIZERS,
    LinearScoresMixin,
    SolverParamMixin,
    checked_cutting_plane,
    run_certified,
)
from problems.solvers import Param, check_params
from problems.validation import check_bool, check_choice, check_positive, validate_features

__all__ = ["LinearRegressor"]

_LOSSES = ("squared", "absolute", "quantile", "epsilon_insensitive", "huber", "poisson")


def _fraction(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) or not 0 < value < 1:
        raise InputError(f"must be a number in (0, 1), got {value!r}", field=name)
    return float(value)


class LinearRegressor(SolverParamMixin, LinearScoresMixin, RegressorMixin, BaseEstimator):
    """Linear regression by a bundle method, with a certified gap.

    Minimises ``F(w) = Omega(w) + C * R(w)``, ``Omega = 1/2 ||w||^2`` ("l2") or ``||w||_1``
    ("l1"), with the mean loss of the residuals ``r_i = y_i - <x_i, w> - b``::

        R(w) = min_b (1/S) sum_i s_i loss(r_i),   S = sum_i s_i,

    (``b = 0`` without ``fit_intercept``; ``s_i`` the sample weights, ones by default, so that
    ``R`` is the plain mean) and ``loss`` one of ``|r|`` ("absolute"), the pinball loss
    ``max(tau r, (tau - 1) r)`` ("quantile", ``tau = quantile``), ``max(0, |r| - epsilon)``
    ("epsilon_insensitive"), ``r^2 / 2`` ("squared") or Huber's ("huber", threshold ``delta``).
    ``loss="poisson"`` (targets ``y_i >= 0``) is Poisson regression with the log link: the loss is
    half the Poisson deviance ``mu_i - y_i - y_i log(mu_i / y_i)`` of the mean
    ``mu_i = exp(<x_i, w> + b)`` (not a loss of the residual), and :meth:`predict` returns
    ``mu``; with ``regularizer="l2"`` and ``fit_intercept=True``, ``F / C`` is the objective of
    scikit-learn's ``PoissonRegressor(alpha=1/C)``. BMRM's iteration bound needs a bounded
    subgradient, which the exponential does not have (plain BMRM can stall on it): with
    ``solver=None`` the Poisson loss runs LS-BMRM (a line search on the risk's values).
    The intercept is not regularised (scikit-learn's convention): the oracle profiles it out
    exactly (:class:`oracles.regression.RegressionRisk`). Without an intercept, the
    piecewise-linear losses give LS-BMRM's exact line search (``solver=CuttingPlane(method=
    "ls-bmrm")``).

    Correspondences: ``loss="quantile", regularizer="l1"`` is scikit-learn's
    ``QuantileRegressor(quantile=tau, alpha=1/C)`` (mean pinball loss plus ``alpha ||w||_1``);
    ``loss="epsilon_insensitive", regularizer="l2", fit_intercept=False`` is ``LinearSVR(C=C/n,
    epsilon=epsilon, fit_intercept=False)``; ``loss="squared", regularizer="l2"`` is
    ``Ridge(alpha=n/C)``.

    Parameters
    ----------
    loss : {"squared", "absolute", "quantile", "epsilon_insensitive", "huber", "poisson"}, default="squared"
    epsilon : float, default=0.1
        Half width of the insensitive tube (>= 0).
    quantile : float, default=0.5
        ``tau`` in (0, 1).
    delta : float, default=1.35
        Huber's threshold (> 0).
    regularizer : {"l2", "l1"}, default="l2"
    C : float, default=1.0
        Weight of the mean loss.
    fit_intercept : bool, default=True
    solver : CuttingPlane or None, default=None
        The engine's options; ``eps`` left None is ``1e-3 * F(0)`` (relative to the objective of
        the zero model), ``max_iter`` 1000. Reachable as ``solver__eps`` through ``set_params``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_features_in_ : int
    objective_, lower_bound_, gap_ : float
        Certified bounds on ``F``.
    n_iter_ : int
    result_ : cutplane.Result

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 3))
    >>> y = X @ [1.0, 2.0, 0.0] + 5.0 + 0.1 * rng.standard_normal(200)
    >>> model = LinearRegressor(loss="absolute", C=100.0).fit(X, y)
    >>> round(model.intercept_, 1)
    5.0
    """

    DEFAULT_RTOL: ClassVar[float] = 1e-3
    DEFAULT_MAX_ITER: ClassVar[int] = 1000

    PARAMETERS: ClassVar[dict] = {
        "loss": Param(lambda v, n: check_choice(v, n, _LOSSES), "the residual's loss"),
        "epsilon": Param(lambda v, n: check_positive(v, n, allow_zero=True), "insensitive tube half width"),
        "quantile": Param(_fraction, "tau of the pinball loss"),
        "delta": Param(lambda v, n: check_positive(v, n), "Huber's threshold"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "1/2 ||w||^2 or ||w||_1"),
        "C": Param(lambda v, n: check_positive(v, n), "weight of the mean loss"),
        "fit_intercept": Param(check_bool, "unregularised intercept"),
    }

    def __init__(
        self,
        *,
        loss="squared",
        epsilon=0.1,
        quantile=0.5,
        delta=1.35,
        regularizer="l2",
        C=1.0,
        fit_intercept=True,
        solver=None,
    ):
        self.loss = loss
        self.epsilon = epsilon
        self.quantile = quantile
        self.delta = delta
        self.regularizer = regularizer
        self.C = C
        self.fit_intercept = fit_intercept
        self.solver = solver

    def __sklearn_tags__(self):
        """Sparse input is accepted (CSR); the Poisson loss takes targets >= 0 only."""
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = self.loss == "poisson"
        return tags

    def _oracle(self, X, y, p, sample_weight):
        from oracles.regression import RegressionRisk

        return RegressionRisk(
            X,
            y,
            p["loss"],
            epsilon=p["epsilon"],
            quantile=p["quantile"],
            delta=p["delta"],
            fit_intercept=p["fit_intercept"],
            sample_weight=sample_weight,
        )

    def fit(self, X, y, sample_weight=None):
        """Fit on ``X`` (array-like or sparse, (n_samples, n_features)) and targets ``y`` (n_samples,).

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative; ``R`` is the weighted mean (a weight 2 counts as a repeated sample).

        Returns
        -------
        self
        """
        from sklearn.utils.validation import column_or_1d

        p = check_params(self, self.PARAMETERS)
        X = validate_features(self, X, reset=True)
        y = column_or_1d(y, warn=True)
        if y.dtype.kind not in "biuf":
            raise InputError("Unknown label type: targets must be numbers", field="y")
        if y.shape[0] != X.shape[0]:
            raise InputError(f"y has {y.shape[0]} samples, X has {X.shape[0]}", field="y")
        s = None
        if sample_weight is not None:
            from oracles.linear_inputs import as_sample_weight

            s = as_sample_weight(sample_weight, X.shape[0])
            s = s * (X.shape[0] / s.sum())  # the oracle's (1/n) sum_i s_i is then the weighted mean
        oracle = self._oracle(X, y, p, s)
        C = float(p["C"])
        user_eps = self.solver is not None and getattr(self.solver, "eps", None) is not None
        default_eps = 1.0
        if not user_eps:
            f0 = C * oracle(np.zeros(oracle.dim)).value
            default_eps = self.DEFAULT_RTOL * f0 if f0 > 0 else 1e-8
        solver = self.solver
        if solver is None and p["loss"] == "poisson":
            from problems.solvers import CuttingPlane

            solver = CuttingPlane(method="ls-bmrm")  # the exponential has no bounded gradient: see the docstring
        options = checked_cutting_plane(
            solver, eps=default_eps, max_iter=self.DEFAULT_MAX_ITER, owner="LinearRegressor"
        )
        run = run_certified(oracle, p["regularizer"], C, options, owner="LinearRegressor")
        self.coef_ = np.asarray(run.w, dtype=np.float64)
        self.intercept_ = float(oracle(self.coef_).argmax)
        self.objective_, self.lower_bound_, self.gap_ = run.objective, run.lower_bound, run.gap
        self.n_iter_, self.result_, self.solver_options_ = run.n_iter, run.result, options
        return self

    def predict(self, X):
        """``<x, w> + b`` (``exp(<x, w> + b)`` for "poisson"), ndarray of shape (n_samples,)."""
        eta = self._scores(X) + self.intercept_
        return np.exp(eta) if self.loss == "poisson" else eta
