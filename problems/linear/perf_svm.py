"""PerfSVM: a linear classifier trained for a multivariate performance measure (SVM^perf)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from cutplane.exceptions import InputError
from problems.linear.certified import (
    REGULARIZERS,
    LinearScoresMixin,
    SolverParamMixin,
    checked_cutting_plane,
    run_certified,
)
from problems.solvers import Param, check_params
from problems.validation import check_choice, check_classification_targets, check_positive, validate_features

__all__ = ["PerfSVM"]

#: The measures with an oracle (Joachims 2005, sec. 4.1-4.2).
MEASURES = ("roc_auc", "f1", "precision_at_k")


class PerfSVM(ClassifierMixin, SolverParamMixin, LinearScoresMixin, BaseEstimator):
    """Linear classifier minimising the convex bound of a multivariate loss (Joachims 2005).

    For ``measure="roc_auc"``, ``F(w) = Omega(w) + C * R(w)`` with ``Omega = 1/2 ||w||^2`` (or
    ``||w||_1``) and::

        R(w) = (1 / (n_+ n_-)) sum_{p: y_p = +1} sum_{n: y_n = -1} max(0, 1 - <w, x_p - x_n>),

    the mean hinge over the positive-negative pairs, an upper bound of ``1 - AUC``. The oracle
    (:class:`oracles.roc_area.ROCAreaHinge`) costs one sort, ``O(n log n)``, not the
    ``n_+ n_-`` pairs. The risk does not depend on a threshold: the model has no intercept and
    :meth:`predict` thresholds the score at 0.

    For ``measure="f1"`` and ``measure="precision_at_k"``, ``R`` is Joachims 2005's multivariate
    hinge over labellings ``y'`` of the whole training set (labels ``y_i`` in {-1, +1})::

        R(w) = max_{y'} [Delta(y, y') + (1/(2n)) sum_i (y'_i - y_i) <w, x_i>],

    ``Delta = 1 - F1`` over every labelling, or ``Delta = 1 - precision@k`` over the labellings
    with exactly ``k`` positives; the exact argmax (:class:`oracles.multivariate.MultivariateHinge`)
    is an ``O(n_+ n_-)`` search for F1 and ``O(k)`` for precision@k after one sort. The scale
    matches ``roc_auc`` (``R(0) = 1``; a flipped label costs its margin over ``n``).
    Precision@k's risk is not bounded below unless ``y`` has exactly ``k`` positives, so it is
    refused with ``regularizer="l1"`` (and with the solver's ``risk_floor_cut``).

    Parameters
    ----------
    measure : {"roc_auc", "f1", "precision_at_k"}, default="roc_auc"
    k : int, optional
        The ``k`` of precision@k (``1 <= k <= n_samples``); must stay None for the others.
    C : float, default=1.0
        Weight of the mean pairwise hinge (as in :class:`~problems.LinearSVM`, ``C`` weighs
        the mean).
    regularizer : {"l2", "l1"}, default="l2"
    solver : CuttingPlane or None, default=None
        The engine's options; None: ``eps = 1e-3 * C`` (``F(0) = C``), ``max_iter = 1000``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
        Zero.
    objective_, lower_bound_, gap_ : float
    n_iter_ : int
    result_ : cutplane.Result

    Examples
    --------
    >>> from problems.demo_data import make_binary
    >>> data = make_binary(n_samples=200, n_features=5, seed=0)
    >>> clf = PerfSVM(C=10.0).fit(data.X_train, data.y_train)
    >>> bool(clf.gap_ <= 1e-2)
    True
    """

    DEFAULT_EPS: ClassVar[float] = 1e-3
    DEFAULT_MAX_ITER: ClassVar[int] = 1000

    PARAMETERS: ClassVar[dict] = {
        "measure": Param(lambda v, n: check_choice(v, n, MEASURES), "the performance measure"),
        "C": Param(lambda v, n: check_positive(v, n), "weight of the risk"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "1/2 ||w||^2 or ||w||_1"),
    }

    def __init__(self, *, measure="roc_auc", k=None, C=1.0, regularizer="l2", solver=None):
        self.measure = measure
        self.k = k
        self.C = C
        self.regularizer = regularizer
        self.solver = solver

    def __sklearn_tags__(self):
        """A binary classifier taking sparse input (CSR)."""
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit on ``X`` (n_samples, n_features) and two-class labels ``y`` (n_samples,).

        Returns
        -------
        self
        """
        from oracles.multivariate import MultivariateHinge
        from oracles.roc_area import ROCAreaHinge
        from problems.validation import check_target

        p = check_params(self, self.PARAMETERS)
        if self.k is not None and p["measure"] != "precision_at_k":
            raise InputError(f"k applies to precision_at_k, not to {p['measure']}", field="k")
        if p["measure"] == "precision_at_k" and self.k is None:
            raise InputError("precision_at_k needs k", field="k")
        C = float(p["C"])
        options = checked_cutting_plane(
            self.solver, eps=self.DEFAULT_EPS * C, max_iter=self.DEFAULT_MAX_ITER, owner="PerfSVM"
        )
        X = validate_features(self, X, reset=True)
        y = check_target(y, n_samples=X.shape[0], owner="PerfSVM")
        classes, y_idx = check_classification_targets(y)
        if classes.shape[0] != 2:
            raise InputError(
                f"Only binary classification is supported: PerfSVM got {classes.shape[0]} classes",
                field="y",
            )
        labels = np.where(y_idx == 1, 1, -1)
        oracle: ROCAreaHinge | MultivariateHinge
        if p["measure"] == "roc_auc":
            oracle = ROCAreaHinge(X, labels)
        else:
            oracle = MultivariateHinge(X, labels, p["measure"], self.k)
        if oracle.risk_lower_bound is None and (p["regularizer"] == "l1" or options.risk_floor_cut):
            raise InputError(
                "precision_at_k's risk is not bounded below when y does not have exactly k positives: "
                "use regularizer='l2' without risk_floor_cut",
                field="regularizer",
            )
        run = run_certified(oracle, p["regularizer"], C, options, owner="PerfSVM")
        self.classes_ = classes
        self.coef_ = np.asarray(run.w, dtype=np.float64).reshape(1, -1)
        self.intercept_ = np.zeros(1)
        self.objective_, self.lower_bound_, self.gap_ = run.objective, run.lower_bound, run.gap
        self.n_iter_, self.result_, self.solver_options_ = run.n_iter, run.result, options
        return self

    def decision_function(self, X):
        """Scores ``<w, x>``, ndarray of shape (n_samples,); positive means ``classes_[1]``."""
        return self._scores(X)

    def predict(self, X):
        """Labels from ``classes_``, ndarray of shape (n_samples,)."""
        positive = self.decision_function(X) > 0  # first: an unfitted model raises NotFittedError
        return self.classes_[positive.astype(np.int64)]
