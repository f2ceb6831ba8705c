"""NoveltySVM: the linear one-class SVM of Schölkopf et al. 2001 (novelty detection), certified."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin

from problems.linear.certified import LinearScoresMixin, SolverParamMixin, checked_cutting_plane, run_certified
from problems.solvers import Param, check_params
from problems.validation import validate_features

__all__ = ["NoveltySVM"]


def _check_nu(value, name):
    from cutplane.exceptions import InputError

    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"must be a number in (0, 1], got {value!r}", field=name)
    if not 0.0 < float(value) <= 1.0:
        raise InputError(f"must be in (0, 1], got {value!r}", field=name)
    return float(value)


class NoveltySVM(SolverParamMixin, LinearScoresMixin, OutlierMixin, BaseEstimator):
    """Linear novelty detection: the one-class SVM of Schölkopf et al. 2001, certified.

    Separates the training data from the origin with the largest margin; points scored below the
    offset are outliers. Minimises ``F(w) = Omega(w) + C * R(w)`` with
    ``Omega(w) = 1/2 ||w||^2``, ``C = 1/nu`` and the one-class risk, its unregularised offset
    ``rho`` profiled out (:class:`oracles.novelty.OneClassHinge`)::

        R(w) = min_rho (1/n) sum_i max(0, rho - <w, x_i>) - nu rho,

    which is Schölkopf et al.'s ``min 1/2 ||w||^2 + 1/(nu n) sum_i xi_i - rho`` subject to
    ``<w, x_i> >= rho - xi_i``, ``xi_i >= 0``. ``R`` is positively homogeneous, so another
    ``C`` would only scale ``(w, rho)`` by ``C nu`` and leave the predictions unchanged: ``nu``
    is the one parameter. The profiled ``rho`` is the ``ceil(nu n)``-th smallest training score;
    ``nu`` bounds the share of training outliers from above and of support vectors from below.

    scikit-learn's ``OneClassSVM(kernel="linear", nu=nu)`` (libsvm) solves the same problem
    scaled by ``nu n``: its ``coef_`` and ``offset_`` are ``nu n`` times these (checked by a
    test, ``tests/problems/test_novelty_svm.py``), so both flag the same points.

    Parameters
    ----------
    nu : float, default=0.5
        In ``(0, 1]``.
    solver : CuttingPlane or None, default=None
        The engine's options (``method`` "bmrm" or "ls-bmrm"; LS-BMRM's line search is exact,
        :func:`cutplane.linesearch.piecewise_linear_search`). None: ``eps = 1e-3`` times the
        scale ``1/2 ||mean(X)||^2`` of ``F`` (``1e-8`` when the data are centred), and
        ``max_iter = 1000``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        ``w``.
    offset_ : float
        ``rho``: ``decision_function = score_samples - offset_`` (scikit-learn's convention).
    n_features_in_ : int
    objective_, lower_bound_, gap_ : float
        Certified bounds on ``F``.
    n_iter_ : int
    result_ : cutplane.Result

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 2)) + 5.0
    >>> model = NoveltySVM(nu=0.1).fit(X)
    >>> bool(abs(np.mean(model.predict(X) == -1) - 0.1) < 0.05)
    True
    """

    DEFAULT_RTOL: ClassVar[float] = 1e-3
    DEFAULT_MAX_ITER: ClassVar[int] = 1000

    PARAMETERS: ClassVar[dict] = {
        "nu": Param(_check_nu, "upper bound on the share of training outliers, (0, 1]"),
    }

    def __init__(self, *, nu=0.5, solver=None):
        self.nu = nu
        self.solver = solver

    def fit(self, X, y=None):
        """Fit on ``X`` (array-like or sparse, (n_samples, n_features)); ``y`` is ignored.

        Returns
        -------
        self
        """
        from oracles.novelty import OneClassHinge

        p = check_params(self, self.PARAMETERS)
        X = validate_features(self, X, reset=True)
        nu = float(p["nu"])
        oracle = OneClassHinge(X, nu)
        C = 1.0 / nu
        user_eps = self.solver is not None and getattr(self.solver, "eps", None) is not None
        default_eps = 1.0
        if not user_eps:
            mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
            scale = 0.5 * float(mean @ mean)
            default_eps = self.DEFAULT_RTOL * scale if scale > 0 else 1e-8
        options = checked_cutting_plane(
            self.solver, eps=default_eps, max_iter=self.DEFAULT_MAX_ITER, owner="NoveltySVM"
        )
        run = run_certified(oracle, "l2", C, options, owner="NoveltySVM")
        self.coef_ = np.asarray(run.w, dtype=np.float64)
        self.offset_ = float(oracle.offset(self.coef_))
        self.objective_, self.lower_bound_, self.gap_ = run.objective, run.lower_bound, run.gap
        self.n_iter_, self.result_, self.solver_options_ = run.n_iter, run.result, options
        return self

    def score_samples(self, X):
        """Scores ``<w, x>`` (higher: more normal), ndarray of shape (n_samples,)."""
        return self._scores(X)

    def decision_function(self, X):
        """``<w, x> - rho``: negative for outliers, ndarray of shape (n_samples,)."""
        return self._scores(X) - self.offset_

    def predict(self, X):
        """``+1`` for inliers (``decision_function >= 0``), ``-1`` for outliers, ndarray of int64 (n_samples,)."""
        return np.where(self.decision_function(X) >= 0.0, 1, -1).astype(np.int64)
