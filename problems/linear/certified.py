"""What the linear estimators share: the ``solver`` parameter's nested options, sparse input and
the scores ``X @ coef_``, one certified run.

Every estimator here minimises ``F(w) = Omega(w) + C * R(w)`` with ``R`` a risk oracle of
:mod:`oracles`: the engine runs on ``F / C`` (``lam = 1/C``, ``eps / C``) and the bounds are
reported back on ``F``.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from cutplane.exceptions import ConvergenceWarning, InputError
from problems.solvers import CuttingPlane, checked_solver
from problems.validation import check_choice, validate_features

__all__ = [
    "SolverParamMixin",
    "LinearScoresMixin",
    "CertifiedRun",
    "checked_cutting_plane",
    "run_certified",
    "REGULARIZERS",
]

REGULARIZERS = ("l2", "l1")
#: Engine methods for a risk with one cut per call (no per-example cuts: no n-slack).
ONE_SLACK_METHODS = ("bmrm", "ls-bmrm")


class SolverParamMixin:
    """``set_params(solver__eps=...)`` on an estimator whose ``solver`` is still None.

    scikit-learn's ``set_params`` sends ``solver__eps`` to ``self.solver.set_params``, which a
    default None does not have; ``GridSearchCV(est, {"solver__eps": [...]})`` on a default
    estimator would fail. The default solver, ``CuttingPlane()``, is put in place first.
    """

    def set_params(self, **params):
        """Set parameters; nested ``solver__*`` keys on a None solver start from ``CuttingPlane()``."""
        if (
            "solver" not in params
            and getattr(self, "solver", None) is None
            and any(k.startswith("solver__") for k in params)
        ):
            super().set_params(solver=CuttingPlane())  # type: ignore[misc]
        return super().set_params(**params)  # type: ignore[misc]


class LinearScoresMixin:
    """A linear estimator that takes sparse input (CSR) and scores ``X @ coef_``."""

    def __sklearn_tags__(self):
        """Sparse input is accepted (CSR)."""
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        tags.input_tags.sparse = True
        return tags

    def _scores(self, X):
        """``<w, x>`` of the rows of ``X`` (checked against the fitted estimator), ndarray of
        shape (n_samples,)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        X = validate_features(self, X, reset=False)
        return np.asarray(X @ np.ravel(self.coef_), dtype=np.float64).ravel()  # type: ignore[attr-defined]


def checked_cutting_plane(solver, *, eps, max_iter, owner):
    """The checked :class:`~problems.solvers.CuttingPlaneOptions` of a one-slack linear risk.

    Raises
    ------
    InputError
        Another solver kind, a method without a one-slack cut (n-slack, Kelley) or an executor.
    """
    options = checked_solver(solver, eps=eps, max_iter=max_iter, kinds=(CuttingPlane,), owner=owner)
    check_choice(options.method, "method", ONE_SLACK_METHODS)
    if options.executor is not None or options.scheduler is not None:
        raise InputError(f"{owner}'s oracle runs in this process: the executor must stay None", field="executor")
    return options


class CertifiedRun(NamedTuple):
    """One engine run on the scale of ``F = Omega + C R``.

    Attributes
    ----------
    w : ndarray of shape (dim,)
    objective, lower_bound, gap : float
        On ``F``.
    n_iter : int
    result : cutplane.Result
        The engine's result, on its scale ``F / C``.
    """

    w: Any
    objective: float
    lower_bound: float
    gap: float
    n_iter: int
    result: Any


def run_certified(oracle, regularizer, C, options, *, owner, stacklevel=3) -> CertifiedRun:
    """Minimise ``Omega + C R`` to the certified gap ``options.eps`` (on ``F``).

    Parameters
    ----------
    oracle : Oracle
        ``R`` (declaring ``risk_lower_bound``, which the l1 regulariser needs).
    regularizer : {"l2", "l1"}
    C : float
    options : CuttingPlaneOptions
    owner : str
        The estimator's name, for the convergence warning.

    Returns
    -------
    CertifiedRun
    """
    from cutplane import minimize
    from cutplane.regularizers import L1, L2

    reg = L2() if regularizer == "l2" else L1()
    kwargs = options.minimize_kwargs(C, oracle)
    if options.risk_floor_cut:
        kwargs["risk_lower_bound"] = float(oracle.risk_lower_bound)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=ConvergenceWarning)  # the engine speaks of F / C
        res = minimize(oracle, reg, 1.0 / C, **kwargs)
    run = CertifiedRun(
        res.w, C * float(res.objective), C * float(res.lower_bound), C * float(res.gap), int(res.n_iter), res
    )
    if res.status != "converged":
        warnings.warn(
            f"{owner} stopped with status {res.status!r} after {res.n_iter} iterations; "
            f"certified gap {run.gap:.3g} > eps {options.eps:.3g}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
    return run
