"""Linear support vector machines trained by the cutting-plane engine (BMRM and friends).

Scale convention (the whole package): ``C`` is the structural-SVM / SVM^hmm constant,

    F(w) = Omega(w) + C * (1/n) sum_i loss_i(w),     Omega = 1/2 ||w||^2 (l2) or ||w||_1 (l1),

so the engine, which minimises ``lam * Omega + R`` with ``R`` the mean loss, runs with
``lam = 1/C`` on ``F / C``. Everything reported by the estimator (``objective_``,
``lower_bound_``, ``gap_``) and the tolerance ``eps`` are on the scale of ``F``: the engine
gets ``eps / C`` and its bounds are multiplied back by ``C``.

Mapping to liblinear / scikit-learn: ``LinearSVC(C=C_lib, loss="hinge", fit_intercept=False)``
minimises ``1/2 ||w||^2 + C_lib * sum_i loss_i``, the same problem with ``C_lib = C / n``.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from cutplane.exceptions import ConvergenceWarning
from problems.estimator_options import check_checkpoint_params
from problems.validation import (check_bool, check_choice, check_classification_targets,
                                 check_features, check_int, check_n_features, check_positive,
                                 check_X_y)

__all__ = ["LinearSVM"]

_REGULARIZERS = ("l2", "l1")


def _methods():
    """Engine methods usable on a regularised risk (not Kelley's indicator-set method)."""
    from cutplane.engine import METHODS

    return tuple(name for name, spec in METHODS.items()
                 if not getattr(spec, "needs_indicator", False))


def _not_fitted(est):
    if not hasattr(est, "coef_"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"This {type(est).__name__} instance is not fitted yet; call fit first.")


class LinearSVM(ClassifierMixin, BaseEstimator):
    """Linear SVM without bias, binary or multiclass (Crammer-Singer), with a certified gap.

    Minimises ``F(w) = Omega(w) + C * (1/n) sum_i loss_i(w)`` by a bundle method (BMRM,
    chapter Alg. 1.3) until ``F(w) - min F <= eps`` is certified by the method's lower bound.
    Binary problems use the hinge loss ``max(0, 1 - y_i <x_i, w>)`` with ``y_i = +1`` for
    ``classes_[1]``; three or more classes use the Crammer-Singer loss
    ``max_y [y != y_i] + <w_y - w_{y_i}, x_i>`` on one weight vector per class.

    Parameters
    ----------
    C : float, default=1.0
        Weight of the mean loss (SVM^hmm convention). scikit-learn's / liblinear's
        ``C_lib`` (weight of the summed loss) is ``C / n_samples``.
    regularizer : {"l2", "l1"}, default="l2"
        ``1/2 ||w||^2`` or ``||w||_1``.
    method : str, default="bmrm"
        Engine method (:func:`cutplane.minimize`): ``"bmrm"``, or ``"ls-bmrm"`` once the
        engine provides it (any engine method that does not need an indicator set).
    eps : float, default=1e-3
        Certified absolute tolerance on ``F`` (the engine gets ``eps / C``). ``F(0) = C``
        for both losses, so ``eps = 1e-3 * C`` is a relative tolerance of about 1e-3.
    max_iter : int, default=1000
        Maximum number of oracle calls.
    time_limit : float, optional
        Wall-clock limit in seconds.
    max_cuts : int, optional
        Working-set budget (limited-memory BMRM).
    bias : float, optional
        No intercept is fitted by default (``fit_intercept`` is not supported). With a value
        ``b > 0``, a constant feature ``b`` is appended as in liblinear's ``-B b`` (its weight
        is regularised); ``intercept_`` is then ``b`` times that weight.
    solver : str, optional
        Reduced-problem backend forwarded to the engine (None: its own preference order).
    checkpoint : str or os.PathLike, optional
        File where the engine saves its state every ``checkpoint_every`` iterations and on
        Ctrl-C / SIGTERM (:func:`cutplane.minimize`).
    checkpoint_every : int, default=10
    resume : bool, default=False
        Continue from ``checkpoint`` when it exists (same data and hyper-parameters).
    memory_limit : int, optional
        Bytes for the engine's working set (oldest cuts aggregated to stay within it).
    verbose : bool, default=False
        Progress bar and per-iteration logging from the engine.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zeros unless ``bias`` is set.
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int
    objective_ : float
        ``F`` at the returned weights (best upper bound).
    lower_bound_ : float
        Certified lower bound on ``min F``.
    gap_ : float
        ``objective_ - lower_bound_``.
    n_iter_ : int
    result_ : cutplane.Result
        The engine's result (on the engine's scale ``F / C``), with the bound history.

    Examples
    --------
    >>> from problems.demo_data import make_binary
    >>> data = make_binary(n_samples=300, n_features=10, seed=0)
    >>> clf = LinearSVM(C=10.0, eps=1e-2).fit(data.X_train, data.y_train)
    >>> bool(clf.gap_ <= 1e-2)
    True
    """

    def __init__(self, *, C=1.0, regularizer="l2", method="bmrm", eps=1e-3, max_iter=1000,
                 time_limit=None, max_cuts=None, bias=None, solver=None, checkpoint=None, checkpoint_every=10,
                 resume=False, memory_limit=None, verbose=False):
        self.C = C
        self.regularizer = regularizer
        self.method = method
        self.eps = eps
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.max_cuts = max_cuts
        self.bias = bias
        self.solver = solver
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.resume = resume
        self.memory_limit = memory_limit
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers
    def _check_params(self):
        return dict(
            C=check_positive(self.C, "C"),
            regularizer=check_choice(self.regularizer, "regularizer", _REGULARIZERS),
            method=check_choice(self.method, "method", _methods()),
            eps=check_positive(self.eps, "eps"),
            max_iter=check_int(self.max_iter, "max_iter"),
            time_limit=None if self.time_limit is None else check_positive(self.time_limit, "time_limit"),
            max_cuts=check_int(self.max_cuts, "max_cuts", min_value=2, allow_none=True),
            bias=None if self.bias is None else check_positive(self.bias, "bias"),
            verbose=check_bool(self.verbose, "verbose"),
            **check_checkpoint_params(self),
        )

    @staticmethod
    def _append_bias(X, bias):
        col = np.full((X.shape[0], 1), bias)
        if sp.issparse(X):
            return sp.hstack([X, sp.csr_matrix(col)], format="csr")
        return np.hstack([X, col])

    # ---------------------------------------------------------------- estimator
    def fit(self, X, y):
        """Train on features ``X`` and labels ``y``.

        Parameters
        ----------
        X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            At least two distinct labels.

        Returns
        -------
        self
        """
        from cutplane import minimize
        from cutplane.regularizers import L1, L2
        from oracles.linear import BinaryHinge, MulticlassHinge

        p = self._check_params()
        X, y = check_X_y(X, y)
        classes, y_idx = check_classification_targets(y)
        n_features = X.shape[1]
        Xb = X if p["bias"] is None else self._append_bias(X, p["bias"])
        n_classes = classes.shape[0]
        if n_classes == 2:
            oracle = BinaryHinge(Xb, np.where(y_idx == 1, 1.0, -1.0))
        else:
            oracle = MulticlassHinge(Xb, y_idx, n_classes)
        reg = L2() if p["regularizer"] == "l2" else L1()
        C = p["C"]
        kwargs = dict(method=p["method"], eps=p["eps"] / C, max_iter=p["max_iter"],
                      time_limit=p["time_limit"], max_cuts=p["max_cuts"], verbose=p["verbose"],
                      checkpoint=p["checkpoint"], checkpoint_every=p["checkpoint_every"], resume=p["resume"],
                      memory_limit=p["memory_limit"])
        if self.solver is not None:
            kwargs["solver"] = self.solver
        with warnings.catch_warnings():
            # the engine's warning speaks of its scale F / C; ours below speaks of F
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(oracle, reg, 1.0 / C, **kwargs)
        W = np.asarray(res.w, dtype=np.float64).reshape(1 if n_classes == 2 else n_classes, -1)
        if p["bias"] is None:
            self.coef_ = W
            self.intercept_ = np.zeros(W.shape[0])
        else:
            self.coef_ = np.ascontiguousarray(W[:, :n_features])
            self.intercept_ = p["bias"] * W[:, n_features]
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.result_ = res
        self.n_iter_ = int(res.n_iter)
        self.objective_ = C * float(res.objective)
        self.lower_bound_ = C * float(res.lower_bound)
        self.gap_ = C * float(res.gap)
        if res.status != "converged":
            warnings.warn(f"LinearSVM stopped with status {res.status!r} after {res.n_iter} "
                          f"iterations; certified gap {self.gap_:.3g} > eps {p['eps']:.3g}",
                          ConvergenceWarning, stacklevel=2)
        return self

    def decision_function(self, X):
        """Scores: ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else of shape (n_samples, n_classes)."""
        _not_fitted(self)
        X = check_features(X)
        check_n_features(X, self.n_features_in_)
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.ravel() if self.coef_.shape[0] == 1 else scores

    def predict(self, X):
        """Predicted labels, ndarray of shape (n_samples,) drawn from ``classes_``."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.int64)]
        return self.classes_[np.argmax(scores, axis=1)]

    # ---------------------------------------------------------------- model files
    def save(self, path, *, extra_meta=None):
        """Save the fitted model as npz + JSON metadata (see :mod:`problems.model_io`).

        Parameters
        ----------
        path : str or os.PathLike
        extra_meta : dict, optional
            More JSON-serialisable metadata (e.g. the training report).
        """
        from problems.model_io import save_model

        _not_fitted(self)
        classes = self.classes_
        if classes.dtype.kind not in "biufU":
            classes = classes.astype(str)
        meta = dict(extra_meta or {})
        params = self.get_params()
        params["checkpoint"] = None if self.checkpoint is None else str(self.checkpoint)
        meta.update(estimator=type(self).__name__, params=params,
                    n_features_in=int(self.n_features_in_),
                    objective=self.objective_, lower_bound=self.lower_bound_, gap=self.gap_,
                    n_iter=self.n_iter_)
        return save_model(path, {"coef": self.coef_, "intercept": self.intercept_,
                                 "classes": classes}, meta)

    @classmethod
    def load(cls, path):
        """A fitted :class:`LinearSVM` from a file written by :meth:`save`."""
        from cutplane.exceptions import ModelFormatError
        from problems.model_io import load_model

        arrays, meta = load_model(path, estimator=cls.__name__)
        coef, intercept, classes = arrays["coef"], arrays["intercept"], arrays["classes"]
        k = classes.shape[0] if classes.ndim == 1 else 0
        if (coef.ndim != 2 or k < 2 or coef.shape[0] != (1 if k == 2 else k)
                or intercept.shape != (coef.shape[0],) or coef.dtype.kind != "f"
                or coef.shape[1] != meta.get("n_features_in")
                or not np.all(np.isfinite(coef)) or not np.all(np.isfinite(intercept))):
            raise ModelFormatError("inconsistent LinearSVM arrays (coef, intercept, classes)",
                                   path=path, field="coef")
        params = meta.get("params")
        try:
            est = cls(**params)
        except TypeError as exc:
            raise ModelFormatError(f"bad hyper-parameters: {exc}", path=path,
                                   field="params") from None
        est.coef_, est.intercept_, est.classes_ = coef, intercept, classes
        est.n_features_in_ = int(coef.shape[1])
        est.n_iter_ = int(meta.get("n_iter", 0))
        est.objective_ = meta.get("objective")
        est.lower_bound_ = meta.get("lower_bound")
        est.gap_ = meta.get("gap")
        return est
