"""OrdinalRegressor: ordered labels by the all-threshold hinge, thresholds learned, certified."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from problems.linear.certified import (
    REGULARIZERS,
    LinearScoresMixin,
    SolverParamMixin,
    checked_cutting_plane,
    run_certified,
)
from problems.solvers import Param, check_params
from problems.validation import check_choice, check_classification_targets, check_positive, validate_features

__all__ = ["OrdinalRegressor"]


class OrdinalRegressor(SolverParamMixin, LinearScoresMixin, BaseEstimator):
    """Ordinal regression: one score ``<w, x>`` cut into ranks by learned thresholds.

    The labels' sorted unique values are the ranks ``0 .. K-1`` (``classes_``). Minimises
    ``F(w) = Omega(w) + C * R(w)``, ``Omega = 1/2 ||w||^2`` ("l2") or ``||w||_1`` ("l1"), with
    the all-threshold hinge (Chu & Keerthi 2005; the ordinal risk of Teo et al. 2010)::

        R(w) = min_theta (1/n) sum_i sum_{j=0}^{K-2} max(0, 1 - z_ij (<w, x_i> - theta_j)),
        z_ij = +1 if rank(y_i) > j else -1.

    The thresholds ``theta`` are **not regularised** (they play the intercept's part); the oracle
    (:class:`oracles.ordinal.OrdinalHinge`) profiles them out exactly, so every cut is a valid
    subgradient cut of the profiled risk, and the thresholds it finds are ordered.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the risk.
    regularizer : {"l2", "l1"}, default="l2"
    solver : CuttingPlane or None, default=None
        The engine's options; None: ``eps = 1e-3 * F(0)``, ``max_iter = 1000``.

    Attributes
    ----------
    classes_ : ndarray of shape (K,)
        The ordered labels.
    coef_ : ndarray of shape (n_features,)
    thresholds_ : ndarray of shape (K-1,)
        Non-decreasing.
    n_features_in_ : int
    objective_, lower_bound_, gap_ : float
        Certified bounds on ``F``.
    n_iter_ : int
    result_ : cutplane.Result

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2))
    >>> y = np.digitize(X @ [2.0, -1.0], [-1.0, 1.0])  # ranks 0, 1, 2
    >>> model = OrdinalRegressor(C=100.0).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """

    DEFAULT_RTOL: ClassVar[float] = 1e-3
    DEFAULT_MAX_ITER: ClassVar[int] = 1000

    PARAMETERS: ClassVar[dict] = {
        "C": Param(lambda v, n: check_positive(v, n), "weight of the risk"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "1/2 ||w||^2 or ||w||_1"),
    }

    def __init__(self, *, C=1.0, regularizer="l2", solver=None):
        self.C = C
        self.regularizer = regularizer
        self.solver = solver

    def fit(self, X, y):
        """Fit on ``X`` (array-like or sparse, (n_samples, n_features)) and ordered labels ``y`` (n_samples,).

        Returns
        -------
        self
        """
        from oracles.ordinal import OrdinalHinge
        from problems.validation import check_target

        p = check_params(self, self.PARAMETERS)
        X = validate_features(self, X, reset=True)
        y = check_target(y, n_samples=X.shape[0], owner="OrdinalRegressor")
        classes, ranks = check_classification_targets(y)
        oracle = OrdinalHinge(X, ranks)
        C = float(p["C"])
        user_eps = self.solver is not None and getattr(self.solver, "eps", None) is not None
        default_eps = 1.0
        if not user_eps:
            f0 = C * oracle(np.zeros(oracle.dim)).value
            default_eps = self.DEFAULT_RTOL * f0 if f0 > 0 else 1e-8
        options = checked_cutting_plane(
            self.solver, eps=default_eps, max_iter=self.DEFAULT_MAX_ITER, owner="OrdinalRegressor"
        )
        run = run_certified(oracle, p["regularizer"], C, options, owner="OrdinalRegressor")
        self.classes_ = classes
        self.coef_ = np.asarray(run.w, dtype=np.float64)
        self.thresholds_ = np.asarray(oracle(self.coef_).argmax, dtype=np.float64)
        self.objective_, self.lower_bound_, self.gap_ = run.objective, run.lower_bound, run.gap
        self.n_iter_, self.result_, self.solver_options_ = run.n_iter, run.result, options
        return self

    def decision_function(self, X):
        """Scores ``<w, x>``, ndarray of shape (n_samples,)."""
        return self._scores(X)

    def predict_rank(self, X):
        """Ranks ``#{j : <w, x> > theta_j}``, ndarray of int64 of shape (n_samples,)."""
        s = self.decision_function(X)
        return (s[:, None] > self.thresholds_[None, :]).sum(axis=1).astype(np.int64)

    def predict(self, X):
        """Labels ``classes_[rank]``, ndarray of shape (n_samples,)."""
        ranks = self.predict_rank(X)  # first: an unfitted model raises NotFittedError
        return self.classes_[ranks]

    def score(self, X, y, sample_weight=None):
        """Mean accuracy of the predicted labels (the share of exact ranks).

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional

        Returns
        -------
        float
        """
        from sklearn.metrics import accuracy_score

        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))
