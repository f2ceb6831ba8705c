"""RankSVM: a linear scoring function from graded relevance within queries (SVM^rank)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from problems.linear.certified import (
    REGULARIZERS,
    LinearScoresMixin,
    SolverParamMixin,
    checked_cutting_plane,
    run_certified,
)
from problems.model_schemas import ModelSchema
from problems.solvers import Param, check_params
from problems.validation import check_choice, check_positive, validate_features

__all__ = ["RankSVM", "MODEL_SCHEMA"]


class RankSVM(SolverParamMixin, LinearScoresMixin, BaseEstimator):
    """Linear ranking SVM on the preference pairs of each query, with a certified gap.

    Minimises ``F(w) = Omega(w) + C * R(w)`` with ``Omega = 1/2 ||w||^2`` (or ``||w||_1``) and::

        R(w) = (1/|P|) sum_{(i, j) in P} max(0, 1 - <w, x_i - x_j>),
        P = {(i, j) : qid_i = qid_j, y_i > y_j},

    the mean over the preference pairs pooled across queries (Joachims 2006). The oracle
    (:class:`oracles.ranking.PairwiseRankingHinge`) counts the violated pairs after one sort
    of each query's scores, in ``O(n_q log n_q)`` per query, never enumerating the pairs. The
    engine (BMRM, Franc et al. 2012, Alg. 1.3) stops when ``F(w) - min F <= eps`` is certified.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the mean pairwise hinge. SVM^rank's ``-c`` weighs the summed hinge, so it is
        ``C / |P|`` here (liblinear's ``C_lib`` on explicit pair differences likewise).
    regularizer : {"l2", "l1"}, default="l2"
    solver : CuttingPlane or None, default=None
        The engine's options (``eps`` on ``F``, ``max_iter``, ``method`` "bmrm" or "ls-bmrm",
        ...); None: ``CuttingPlane()`` with ``eps = 1e-3 * C`` and ``max_iter = 1000``.
        Reachable as ``solver__eps`` through ``set_params``.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_features_in_ : int
    n_pairs_ : int
        ``|P|`` of the training data.
    objective_, lower_bound_, gap_ : float
        Certified bounds on ``F``.
    n_iter_ : int
    result_ : cutplane.Result

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((60, 3))
    >>> y = (X @ [1.0, -1.0, 0.0] > 0).astype(int) + (X[:, 0] > 1)
    >>> model = RankSVM(C=10.0).fit(X, y, qid=np.repeat([0, 1, 2], 20))
    >>> bool(model.gap_ <= 1e-2)
    True
    """

    DEFAULT_EPS: ClassVar[float] = 1e-3
    DEFAULT_MAX_ITER: ClassVar[int] = 1000

    PARAMETERS: ClassVar[dict] = {
        "C": Param(lambda v, n: check_positive(v, n), "weight of the mean pairwise hinge"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "1/2 ||w||^2 or ||w||_1"),
    }

    def __init__(self, *, C=1.0, regularizer="l2", solver=None):
        self.C = C
        self.regularizer = regularizer
        self.solver = solver

    def fit(self, X, y, qid=None):
        """Learn ``w`` from items ``X`` with relevance ``y`` grouped by ``qid``.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Relevance; only its order within a query matters.
        qid : array-like of shape (n_samples,), optional
            Query of each item (any hashable numbers or strings); None: one query.

        Returns
        -------
        self

        Raises
        ------
        InputError
            No two items of one query with different relevance, or bad input.
        """
        from oracles.ranking import PairwiseRankingHinge

        p = check_params(self, self.PARAMETERS)
        C = float(p["C"])
        options = checked_cutting_plane(
            self.solver, eps=self.DEFAULT_EPS * C, max_iter=self.DEFAULT_MAX_ITER, owner="RankSVM"
        )
        X = validate_features(self, X, reset=True)
        oracle = PairwiseRankingHinge(X, y, qid)
        run = run_certified(oracle, p["regularizer"], C, options, owner="RankSVM")
        self.coef_ = np.asarray(run.w, dtype=np.float64)
        self.n_pairs_ = oracle.n_pairs
        self.objective_, self.lower_bound_, self.gap_ = run.objective, run.lower_bound, run.gap
        self.n_iter_, self.result_, self.solver_options_ = run.n_iter, run.result, options
        return self

    def decision_function(self, X):
        """Scores ``<w, x>``, ndarray of shape (n_samples,): a higher score ranks first."""
        return self._scores(X)

    def predict(self, X):
        """The scores of :meth:`decision_function` (a ranking is their order within a query)."""
        return self.decision_function(X)

    def score(self, X, y, qid=None):
        """Pairwise accuracy on ``(X, y, qid)`` (:func:`problems.metrics.ranking.pairwise_accuracy`)."""
        from problems.metrics.ranking import pairwise_accuracy

        return pairwise_accuracy(y, self.decision_function(X), qid)

    def save(self, path, *, extra_meta=None):
        """Save the fitted model as npz + JSON metadata (:mod:`problems.model_io`).

        Parameters
        ----------
        path : str or os.PathLike
        extra_meta : dict, optional
            More JSON-serialisable metadata (the CLI's task and training report).
        """
        from problems.model_io import save_model
        from problems.solvers import params_to_meta

        check_is_fitted(self, "coef_")
        meta = dict(extra_meta or {})
        meta.update(
            estimator=type(self).__name__,
            params=params_to_meta(self),
            n_features_in=int(self.n_features_in_),
            n_pairs=int(self.n_pairs_),
            objective=self.objective_,
            lower_bound=self.lower_bound_,
            gap=self.gap_,
            n_iter=int(self.n_iter_),
        )
        return save_model(path, {"coef": self.coef_}, meta)

    @classmethod
    def load(cls, path):
        """A fitted :class:`RankSVM` from a file written by :meth:`save`.

        Raises
        ------
        ModelFormatError
            Not a RankSVM file, or inconsistent arrays / parameters.
        """
        from cutplane.exceptions import InputError, ModelFormatError
        from problems.model_io import load_model
        from problems.solvers import params_from_meta

        arrays, meta = load_model(path, estimator=cls.__name__, schema=MODEL_SCHEMA)
        coef = arrays["coef"]
        if coef.shape != (meta["n_features_in"],) or not np.all(np.isfinite(coef)):
            raise ModelFormatError("inconsistent RankSVM coef", path=path, field="coef")
        try:
            params, solver = params_from_meta(meta.get("params"), meta["format_version"])
            est = cls(solver=solver, **params)
        except (InputError, TypeError) as exc:
            raise ModelFormatError(
                f"bad hyper-parameters: {getattr(exc, 'message', exc)}", path=path, field="params"
            ) from None
        est.coef_ = coef
        est.n_features_in_ = int(coef.shape[0])
        est.n_pairs_ = int(meta.get("n_pairs", 0))
        est.n_iter_ = int(meta.get("n_iter", 0))
        est.objective_, est.lower_bound_, est.gap_ = (_number(meta.get(k)) for k in ("objective", "lower_bound", "gap"))
        return est


def _number(value) -> float:
    """A stored bound: NaN when the file has none."""
    return float("nan") if value is None else float(value)


_NUM = (float, type(None))
#: What a RankSVM model file must hold (:func:`problems.model_io.load_model`).
MODEL_SCHEMA = ModelSchema(
    arrays={"coef": ("f", 1)},
    meta={"params": (dict,), "n_features_in": (int,)},
    params_of=frozenset(RankSVM._get_param_names()),
    optional_meta={"n_iter": (int,), "n_pairs": (int,), "objective": _NUM, "lower_bound": _NUM, "gap": _NUM},
)
