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

import time
import warnings
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from cutplane.exceptions import ConvergenceWarning, InputError, ModelFormatError
from problems.linear.certified import SolverParamMixin
from problems.model_schemas import ModelSchema
from problems.model_selection import (
    PATH_COLUMNS,
    SELECTION_META,
    check_C,
    load_selection,
    path_table,
    selection_meta,
)
from problems.solvers import (
    LEGACY_SOLVER_KEYS,
    CuttingPlane,
    Param,
    check_params,
    checked_solver,
    params_from_meta,
    params_to_meta,
)
from problems.validation import (
    check_choice,
    check_classification_targets,
    check_positive,
    check_target,
    validate_features,
)

__all__ = ["LinearSVM", "MODEL_SCHEMA"]

_REGULARIZERS = ("l2", "l1")
_LOSSES = ("hinge", "squared_hinge", "logistic")


def _methods():
    """Engine methods usable on a regularised risk: :func:`cutplane.engine.method_names` without
    Kelley's indicator-set method (the n-slack method included: the hinge oracles give one cut
    per example)."""
    from cutplane.engine import method_names

    return method_names(indicator=False)


class LinearSVM(SolverParamMixin, ClassifierMixin, BaseEstimator):
    """Linear SVM without bias, binary or multiclass (Crammer-Singer), with a certified gap.

    Minimises ``F(w) = Omega(w) + C * (1/n) sum_i loss_i(w)`` by a bundle method (BMRM,
    Franc et al. 2012, Alg. 1.3) until ``F(w) - min F <= eps`` is certified by the method's lower bound.
    Binary problems use the hinge loss ``max(0, 1 - y_i <x_i, w>)`` with ``y_i = +1`` for
    ``classes_[1]``; three or more classes use the Crammer-Singer loss
    ``max_y [y != y_i] + <w_y - w_{y_i}, x_i>`` on one weight vector per class.

    Parameters
    ----------
    C : float or sequence of float, default=1.0
        Weight of the mean loss (SVM^hmm convention). scikit-learn's / liblinear's
        ``C_lib`` (weight of the summed loss) is ``C / n_samples``. A sequence: ``fit``
        trains along the grid (one certified run per C, each warm-started from the cuts of
        the previous one; ``eps`` left None is ``1e-3 * C`` at each point, ``max_iter`` per
        point, ``time_limit`` for the whole grid), scores each point by accuracy on
        ``validation_data`` or ``validation_fraction`` (required) and keeps the best
        (``C_``, ``path_``).
    regularizer : {"l2", "l1"}, default="l2"
        ``1/2 ||w||^2`` or ``||w||_1``.
    bias : float, optional
        No intercept is fitted by default (``fit_intercept`` is not supported). With a value
        ``b > 0``, a constant feature ``b`` is appended as in liblinear's ``-B b`` (its weight
        is regularised); ``intercept_`` is then ``b`` times that weight.
    solver : CuttingPlane or None, default=None
        The engine's options (:class:`~problems.solvers.CuttingPlane`): ``method`` (``"bmrm"``,
        or any engine method that does not need an indicator set, e.g. ``"ls-bmrm"``), ``eps``
        (certified absolute tolerance on ``F``; the engine gets ``eps / C``; ``F(0) = C`` for
        both losses, so ``eps = 1e-3 * C`` is a relative tolerance of about 1e-3), ``max_iter``,
        ``time_limit``, ``max_cuts``, ``backend``, ``checkpoint``, ``memory_limit``, ``verbose``,
        ... None: ``CuttingPlane()`` with ``eps=1e-3`` and ``max_iter=1000``. Reachable as
        ``solver__eps`` etc. through ``get_params`` / ``set_params`` (also while ``solver`` is
        None: ``CuttingPlane()`` is put in place first). The oracle is one sparse
        matrix product in this process: ``executor`` must stay None.
    class_weight : dict, "balanced" or None, default=None
        Weight of each class's losses, as liblinear's ``-wi`` and scikit-learn's: the loss of
        example ``i`` is multiplied by ``class_weight[y_i]``. ``"balanced"`` is
        ``n_samples / (n_classes * count(y_i))``; None: ones.
    loss : {"hinge", "squared_hinge", "logistic"}, default="hinge"
        The loss of the mean. "hinge" is described above. "squared_hinge" is
        ``max(0, 1 - y_i <x_i, w>)^2`` (binary; liblinear's L2-loss SVM) and
        ``(max_y [y != y_i] + <w_y - w_{y_i}, x_i>)^2`` (multiclass, squared Crammer-Singer);
        "logistic" is ``log(1 + exp(-y_i <x_i, w>))`` (binary) and the multinomial logistic
        (softmax) loss ``log sum_y exp(<w_y, x_i>) - <w_{y_i}, x_i>`` (multiclass)
        (:mod:`oracles.smooth_linear`; Teo et al. 2010, Table 5). The smooth losses give the
        gradient as the cut; they take ``method`` "bmrm" or "ls-bmrm" (a line search on the
        oracle's values: no form (16)), not the n-slack method. ``F(0) = C log 2`` for
        "logistic" (``C log n_classes`` multiclass).

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
    solver_options_ : CuttingPlaneOptions
        The solver's checked options at ``fit`` (the defaults filled in).
    C_ : float
        The C of the model (the one chosen on the validation data, for a grid); the
        attributes above are those of the model at ``C_``.
    best_index_ : int
        Index of ``C_`` in ``path_``.
    path_ : dict of str to list
        One entry per C, in the order given (``pandas.DataFrame(clf.path_)`` is the table):
        ``C``, ``eps`` (on ``F``), ``objective``, ``lower_bound``, ``gap``, ``status``
        (``"not_run"`` where the time limit ran out first), ``n_iter``, ``seconds``,
        ``validation_score`` (accuracy in [0, 1]; None without validation data).
    path_result_ : cutplane.PathResult or None
        The engine's path (every point's result) for a grid; None for one C.
    validation_ : dict or None
        The validation data used (``source``, ``fraction``, ``seed``, ``n_examples``,
        ``metric="accuracy"``).

    Examples
    --------
    >>> from problems.demo_data import make_binary
    >>> from problems.solvers import CuttingPlane
    >>> data = make_binary(n_samples=300, n_features=10, seed=0)
    >>> clf = LinearSVM(C=10.0, solver=CuttingPlane(eps=1e-2)).fit(data.X_train, data.y_train)
    >>> bool(clf.gap_ <= 1e-2)
    True
    """

    #: Certified tolerance and iteration limit of a ``CuttingPlane`` that leaves them None.
    DEFAULT_EPS: ClassVar[float] = 1e-3
    DEFAULT_MAX_ITER: ClassVar[int] = 1000
    #: With a grid of C and an ``eps`` left None: the tolerance of each point on the engine's
    #: scale ``F / C`` (``DEFAULT_PATH_EPS * C`` on ``F``, a relative 1e-3 of ``F(0) = C``).
    DEFAULT_PATH_EPS: ClassVar[float] = 1e-3

    #: The declarative parameter table (checked at ``fit``; the solver checks its own).
    PARAMETERS: ClassVar[dict] = {
        "C": Param(check_C, "weight of the mean loss: a number or a sequence of numbers"),
        "regularizer": Param(lambda v, n: check_choice(v, n, _REGULARIZERS), "1/2 ||w||^2 or ||w||_1"),
        "bias": Param(lambda v, n: check_positive(v, n), "constant feature", allow_none=True),
        "loss": Param(lambda v, n: check_choice(v, n, _LOSSES), "the loss of the mean"),
    }

    def __init__(self, *, C=1.0, regularizer="l2", bias=None, solver=None, class_weight=None, loss="hinge"):
        self.C = C
        self.regularizer = regularizer
        self.bias = bias
        self.solver = solver
        self.class_weight = class_weight
        self.loss = loss

    # ------------------------------------------------------------------ helpers
    def _check_params(self):
        """The checked parameters (:data:`PARAMETERS`) and the solver's checked options."""
        prm = check_params(self, self.PARAMETERS)
        options = checked_solver(
            self.solver, eps=self.DEFAULT_EPS, max_iter=self.DEFAULT_MAX_ITER, kinds=(CuttingPlane,), owner="LinearSVM"
        )
        check_choice(options.method, "method", _methods())
        if prm["loss"] != "hinge" and options.method not in ("bmrm", "ls-bmrm"):
            raise InputError(
                f"loss={prm['loss']!r} gives one cut per call: method must be 'bmrm' or 'ls-bmrm', "
                f"got {options.method!r}",
                field="method",
            )
        if options.executor is not None or options.scheduler is not None:
            raise InputError(
                "LinearSVM's oracle is one sparse matrix product in this process; the executor "
                "applies to the structured estimators",
                field="executor",
            )
        return prm, options

    def _example_weights(self, classes, y_idx, sample_weight):
        """``c_i = s_i * class_weight[y_i] * n / sum_i s_i`` (the oracle's ``(1/n) sum_i c_i loss_i``
        is then ``sum_i s_i cw_i loss_i / sum_i s_i``), or None when every weight is one."""
        from sklearn.utils.class_weight import compute_class_weight

        cw = self.class_weight
        if cw is not None and not (cw == "balanced" or isinstance(cw, dict)):
            raise InputError(f"must be a dict, 'balanced' or None, got {cw!r}", field="class_weight")
        if cw is None and sample_weight is None:
            return None
        n = y_idx.shape[0]
        c = np.ones(n) if sample_weight is None else sample_weight * (n / float(np.sum(sample_weight)))
        if cw is not None:
            if isinstance(cw, dict):
                unknown = [k for k in cw if k not in set(classes.tolist())]
                if unknown:
                    raise InputError(f"class_weight names labels not in y: {unknown!r}", field="class_weight")
            try:
                per_class = compute_class_weight(cw, classes=classes, y=classes[y_idx])
            except ValueError as exc:
                raise InputError(str(exc), field="class_weight") from None
            if not np.all(np.isfinite(per_class)) or np.any(per_class < 0):
                raise InputError("class weights must be finite and non-negative", field="class_weight")
            c = c * per_class[y_idx]
        return c

    @staticmethod
    def _append_bias(X, bias):
        col = np.full((X.shape[0], 1), bias)
        if sp.issparse(X):
            return sp.hstack([X, sp.csr_matrix(col)], format="csr")
        return np.hstack([X, col])

    def __sklearn_tags__(self):
        """scikit-learn's tags: a classifier that takes sparse input (CSR; other formats are converted)."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ---------------------------------------------------------------- estimator
    def fit(
        self, X, y, sample_weight=None, *, validation_data=None, validation_fraction=None, validation_seed=0, refit=True
    ):
        """Train on features ``X`` and labels ``y``.

        Parameters
        ----------
        X : array-like or scipy sparse matrix of shape (n_samples, n_features)
            Converted as scikit-learn converts samples (lists, pandas frames and object arrays
            of numbers to float64, every sparse format to CSR); complex numbers and strings are
            refused.
        y : array-like of shape (n_samples,)
            At least two distinct labels. A column vector is raveled with scikit-learn's
            ``DataConversionWarning``.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative weights of the examples' losses: the risk becomes
            ``sum_i c_i loss_i / sum_i s_i`` with ``c_i = s_i * class_weight[y_i]``, so a weight 2
            counts an example twice and a weight 0 drops it (liblinear's instance weights, with
            ``C`` still weighing a mean). Not with ``validation_fraction``.
        validation_data : (X_dev, y_dev), optional
            Labelled samples to choose C on by accuracy (a grid of C), or to score the model
            on (one C). Labels never seen in training count as errors (with a warning).
        validation_fraction : float, optional
            Hold out this share of the samples (at least one) instead; the model is trained
            on the rest.
        validation_seed : int, default=0
            Seed of the held-out samples (``np.random.default_rng(validation_seed)``).
        refit : bool, default=True
            After a grid of C scored on held-out samples (``validation_fraction``), train again
            at ``C_`` on all the samples (:func:`problems.model_selection.refit_at_chosen`), as
            scikit-learn's ``GridSearchCV(refit=True)``; False keeps the model trained without
            them.

        Returns
        -------
        self

        Raises
        ------
        InputError
            A grid of C without validation data, both ``validation_data`` and
            ``validation_fraction``, or bad input.
        InputTypeError
            Samples that are not numbers (an :class:`InputError` and a ``TypeError``).
        """
        from cutplane import minimize
        from cutplane.regularizers import L1, L2
        from oracles.linear import BinaryHinge, MulticlassHinge
        from oracles.smooth_linear import BinarySmoothLoss, MulticlassSmoothLoss
        from problems.model_selection import holdout_split, plan_validation, refit_at_chosen, take

        started = time.perf_counter()
        p, options = self._check_params()
        X = validate_features(self, X, reset=True)
        y = check_target(y, n_samples=X.shape[0], owner="LinearSVM")
        X_all, y_all = X, y
        if sample_weight is not None:
            from oracles.linear_inputs import as_sample_weight

            if validation_fraction is not None:
                raise InputError(
                    "sample_weight with validation_fraction is not supported: pass validation_data",
                    field="sample_weight",
                )
            sample_weight = as_sample_weight(sample_weight, X.shape[0])
        grid = p["C"]
        plan = plan_validation(
            grid, validation_data, validation_fraction, validation_seed, default_fraction=None, owner="LinearSVM"
        )
        self.validation_ = None
        X_val = y_val = None
        if plan.source == "fraction" and plan.fraction is not None:  # a "fraction" plan always has one
            keep, held = holdout_split(X.shape[0], plan.fraction, plan.seed, unit="samples")
            X, y, X_val, y_val = take(X, keep), take(y, keep), take(X, held), take(y, held)
        elif plan.source == "data":
            if (
                isinstance(validation_data, (str, bytes))
                or not isinstance(validation_data, (tuple, list))
                or len(validation_data) != 2
            ):
                raise InputError("validation_data must be a pair (X_dev, y_dev)", field="validation_data")
            X_val, y_val = validation_data
        classes, y_idx = check_classification_targets(y)
        n_features = X.shape[1]
        Xb = X if p["bias"] is None else self._append_bias(X, p["bias"])
        n_classes = classes.shape[0]
        weights = self._example_weights(classes, y_idx, sample_weight)
        oracle: BinaryHinge | MulticlassHinge | BinarySmoothLoss | MulticlassSmoothLoss
        if p["loss"] != "hinge" and n_classes == 2:
            oracle = BinarySmoothLoss(Xb, np.where(y_idx == 1, 1.0, -1.0), p["loss"], sample_weight=weights)
        elif p["loss"] != "hinge":
            oracle = MulticlassSmoothLoss(Xb, y_idx, n_classes, p["loss"], sample_weight=weights)
        elif n_classes == 2:
            oracle = BinaryHinge(Xb, np.where(y_idx == 1, 1.0, -1.0), sample_weight=weights)
        else:
            oracle = MulticlassHinge(Xb, y_idx, n_classes, sample_weight=weights)
        reg = L2() if p["regularizer"] == "l2" else L1()
        self.classes_ = classes
        self.n_features_in_ = n_features
        self.solver_options_ = options
        scorer = None
        if plan.source is not None:
            scorer = self._validation_scorer(X_val, y_val, plan)
        if grid.is_path:
            self._fit_path(oracle, reg, grid.values, options, p["bias"], n_features, n_classes, scorer)
            if refit and plan.source == "fraction":
                refit_at_chosen(self, X_all, y_all, started=started, time_limit=options.time_limit)
            return self
        C = grid.values[0]
        kwargs = options.minimize_kwargs(C)
        if options.risk_floor_cut:  # else the regulariser decides
            kwargs["risk_lower_bound"] = float(oracle.risk_lower_bound)
        with warnings.catch_warnings():
            # the engine's warning speaks of its scale F / C; ours below speaks of F
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(oracle, reg, 1.0 / C, **kwargs)
        self._adopt_result(res, C, p["bias"], n_features, n_classes)
        row = self._current_row(C, float(options.eps), None if scorer is None else scorer())
        self.C_, self.best_index_, self.path_result_ = float(C), 0, None
        self.path_ = path_table([row], PATH_COLUMNS)
        if res.status != "converged":
            warnings.warn(
                f"LinearSVM stopped with status {res.status!r} after {res.n_iter} "
                f"iterations; certified gap {self.gap_:.3g} > eps {options.eps:.3g}",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _adopt_result(self, res, C, bias, n_features, n_classes):
        """``coef_``, ``intercept_``, ``result_``, ``n_iter_`` and the bounds (scale ``F``) of an
        engine result at ``C``."""
        W = np.asarray(res.w, dtype=np.float64).reshape(1 if n_classes == 2 else n_classes, -1)
        if bias is None:
            self.coef_ = W
            self.intercept_ = np.zeros(W.shape[0])
        else:
            self.coef_ = np.ascontiguousarray(W[:, :n_features])
            self.intercept_ = bias * W[:, n_features]
        self.result_ = res
        self.n_iter_ = int(res.n_iter)
        self.objective_ = C * float(res.objective)
        self.lower_bound_ = C * float(res.lower_bound)
        self.gap_ = C * float(res.gap)

    def _current_row(self, C, eps_F, score) -> dict:
        res = self.result_
        return dict(
            C=float(C),
            eps=float(eps_F),
            objective=float(self.objective_),
            lower_bound=float(self.lower_bound_),
            gap=float(self.gap_),
            status=str(res.status),
            n_iter=int(self.n_iter_),
            seconds=float(res.time_s),
            validation_score=None if score is None else float(score),
        )

    def _validation_scorer(self, X_val, y_val, plan):
        """``scorer() -> float``: accuracy of :meth:`predict` on the validation samples (labels
        unseen in training count as errors, with an UnseenLabelWarning); sets ``validation_``."""
        from problems.validation import warn_unseen_labels

        try:
            X_val = validate_features(self, X_val, reset=False)
            y_val = check_target(y_val, n_samples=X_val.shape[0], owner="LinearSVM")
        except InputError as exc:
            raise InputError(f"validation_data: {exc.message}", field="validation_data") from None
        warn_unseen_labels([y_val.tolist()], self.classes_.tolist(), stacklevel=4)
        self.validation_ = {
            "source": plan.source,
            "fraction": plan.fraction,
            "seed": plan.seed if plan.source == "fraction" else None,
            "n_examples": int(X_val.shape[0]),
            "metric": "accuracy",
        }
        return lambda: float(np.mean(self.predict(X_val) == y_val))

    def _fit_path(self, oracle, reg, values, options, bias, n_features, n_classes, scorer):
        """Train along the grid (:func:`problems.model_selection.run_cutting_plane_path`), keep
        the model of the best validation accuracy."""
        from problems.model_selection import choose_best, not_run_row, path_eps, run_cutting_plane_path, warn_path

        user_eps = self.solver is not None and getattr(self.solver, "eps", None) is not None
        eps = path_eps(options, values, user_eps=user_eps, default_eps=self.DEFAULT_PATH_EPS)
        rows = [not_run_row(C, e * C) for C, e in zip(values, eps)]

        def on_point(i, C, res):
            self._adopt_result(res, C, bias, n_features, n_classes)
            rows[i] = self._current_row(C, eps[i] * C, scorer())

        rlb = float(oracle.risk_lower_bound) if options.risk_floor_cut else None
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            path = run_cutting_plane_path(oracle, reg, values, options, eps, on_point=on_point, risk_lower_bound=rlb)
        table = path_table(rows, PATH_COLUMNS)
        best = choose_best(table["validation_score"], values)
        res = path.results[best]
        self._adopt_result(res, values[best], bias, n_features, n_classes)
        self.C_, self.best_index_, self.path_, self.path_result_ = float(values[best]), int(best), table, path
        warn_path("LinearSVM", table, best, category=ConvergenceWarning)
        if res.status != "converged":
            warnings.warn(
                f"LinearSVM stopped with status {res.status!r} after {res.n_iter} iterations at C={values[best]:g}; "
                f"certified gap {self.gap_:.3g} (eps {eps[best] * values[best]:.3g})",
                ConvergenceWarning,
                stacklevel=3,
            )

    def decision_function(self, X):
        """Scores: ndarray of shape (n_samples,) for two classes (positive means
        ``classes_[1]``), else of shape (n_samples, n_classes).

        ``X`` is converted as in :meth:`fit` and must have ``n_features_in_`` columns.
        """
        check_is_fitted(self, "coef_")
        X = validate_features(self, X, reset=False)
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

        check_is_fitted(self, "coef_")
        classes = self.classes_
        if classes.dtype.kind not in "biufU":
            classes = classes.astype(str)
        meta = dict(extra_meta or {})
        params = params_to_meta(self)
        meta.update(
            estimator=type(self).__name__,
            params=params,
            n_features_in=int(self.n_features_in_),
            objective=self.objective_,
            lower_bound=self.lower_bound_,
            gap=self.gap_,
            n_iter=self.n_iter_,
            **selection_meta(self),
        )
        return save_model(path, {"coef": self.coef_, "intercept": self.intercept_, "classes": classes}, meta)

    @classmethod
    def load(cls, path):
        """A fitted :class:`LinearSVM` from a file written by :meth:`save`."""
        from problems.model_io import load_model

        arrays, meta = load_model(path, estimator=cls.__name__, schema=MODEL_SCHEMA)
        coef, intercept, classes = arrays["coef"], arrays["intercept"], arrays["classes"]
        k = classes.shape[0] if classes.ndim == 1 else 0
        if (
            coef.ndim != 2
            or k < 2
            or coef.shape[0] != (1 if k == 2 else k)
            or intercept.shape != (coef.shape[0],)
            or coef.dtype.kind != "f"
            or coef.shape[1] != meta.get("n_features_in")
            or not np.all(np.isfinite(coef))
            or not np.all(np.isfinite(intercept))
        ):
            raise ModelFormatError("inconsistent LinearSVM arrays (coef, intercept, classes)", path=path, field="coef")
        try:
            params, solver = params_from_meta(meta.get("params"), meta["format_version"])
            est = cls(solver=solver, **params)
        except (InputError, TypeError) as exc:
            raise ModelFormatError(
                f"bad hyper-parameters (format_version {meta['format_version']}): {getattr(exc, 'message', exc)}",
                path=path,
                field="params",
            ) from None
        est.coef_, est.intercept_, est.classes_ = coef, intercept, classes
        est.n_features_in_ = int(coef.shape[1])
        est.n_iter_ = int(meta.get("n_iter", 0))
        load_selection(est, meta, path)
        est.objective_ = meta.get("objective")
        est.lower_bound_ = meta.get("lower_bound")
        est.gap_ = meta.get("gap")
        return est


_NUM = (float, type(None))
#: What a LinearSVM model file must hold (passed to :func:`problems.model_io.load_model`);
#: ``params`` may hold the solver options of format-version-1 files too.
MODEL_SCHEMA = ModelSchema(
    arrays={"coef": ("f", 2), "intercept": ("f", 1), "classes": ("biufU", 1)},
    meta={"params": (dict,), "n_features_in": (int,)},
    params_of=frozenset(LinearSVM._get_param_names()) | LEGACY_SOLVER_KEYS,
    optional_meta={"n_iter": (int,), "objective": _NUM, "lower_bound": _NUM, "gap": _NUM, **SELECTION_META},
)
