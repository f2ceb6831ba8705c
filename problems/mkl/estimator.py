"""Multiple kernel learning: :class:`MKL`, one estimator with a solver choice.

:class:`MKL` learns a convex combination ``sum_k beta_k K_k`` of base kernels and an SVM on it
by solving the min-max problem (26) of Franc et al. 2012, ``min_{beta in simplex} D(beta)``. Every
solver uses the same oracle (:mod:`oracles.mkl`: one libsvm solve with the combined kernel per
call, with its inner duality gap measured) and stops on a certified gap ``eps``; they differ
in the update of ``beta``:

- ``solver=CuttingPlane(method="kelley", ...)`` (the default): Kelley's cutting-plane method
  (SILP; Franc et al. 2012, sec. 1.3, Alg. 1.5) by the engine, :func:`cutplane.minimize`: each oracle
  call adds a cut, the reduced problem is the LP (30) over the simplex;
- ``solver=Wrapper(method="gauss-seidel" | "simplemkl", ...)``: the wrapper baselines of
  :mod:`problems.mkl.wrappers` (Gauss-Seidel alternation, SimpleMKL's reduced gradient).

Scale convention: ``C`` is the constant of the primal (21) of Franc et al. 2012,
``1/2 sum_k ||w_k||^2 / beta_k + C sum_i xi_i`` (summed hinge loss), i.e. libsvm's / scikit-
learn's ``SVC(C=...)`` and SPOM's ``C = 1/(lambda N)``. (The linear estimators of this
package weight the *mean* loss: their ``C`` is this ``C`` times ``n_samples``.) The solver's
``eps``, and ``objective_``, ``lower_bound_`` and ``gap_`` are on the scale of (21) = ``D``.

Kernels: kernel functions evaluated on the samples ``X`` (a scikit-learn classifier in every
respect: ``check_estimator`` passes), or precomputed Gram matrices, given as MKLpy does
(``MKL("precomputed").fit(KL, y)``, ``predict(KL_test)``: the lists of training and
test-vs-train matrices are ``X``) or, as in earlier versions, as ``kernels`` with
``fit(None, y)``.

Model files (:meth:`MKL.save` / :meth:`MKL.load`): npz + JSON through
:mod:`problems.model_io`, never pickle. Kernels given as objects of :mod:`problems.mkl.kernels`
(``LinearKernel``, ``PolynomialKernel``, ``GaussianKernel``, ``B1SplineKernel``) are saved by
class name and parameters, with the support vectors; other callables cannot be saved
(InputError). Precomputed training Gram matrices are **not** saved: the model keeps only
what prediction needs (kernel weights, ``dual_coef_``, ``support_``, intercepts), and a loaded
model predicts from test-vs-train Gram matrices as before; a model of ``kernels="precomputed"``
keeps that string and can be refitted on new Gram matrices, one of Gram matrices given as
``kernels`` cannot be refitted without new ``kernels``. The solver is saved by class name and
parameters. Model files of format version 1 (``estimator`` ``"KelleyMKL"``,
``"GaussSeidelMKL"`` or ``"SimpleMKL"``) load as :class:`MKL` with the equivalent solver.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from cutplane.exceptions import ConvergenceWarning, InputError, ModelFormatError
from problems.mkl.wrappers import Wrapper
from problems.model_schemas import ModelSchema, check_schema
from problems.solvers import CuttingPlane, Param, check_params
from problems.validation import (
    check_bool,
    check_choice,
    check_classification_targets,
    check_positive,
    check_target,
    validate_features,
)

__all__ = ["MKL", "LEGACY_ESTIMATORS", "MODEL_SCHEMA"]

_MULTICLASS = ("shared", "per-class", "none")
_KERNEL_CLASSES = ("LinearKernel", "PolynomialKernel", "GaussianKernel", "B1SplineKernel")
_SOLVERS = {"CuttingPlane": CuttingPlane, "Wrapper": Wrapper}
#: ``kernels`` value of MKLpy's convention: the Gram matrices are ``X`` of ``fit`` and ``predict``.
PRECOMPUTED = "precomputed"
#: Defaults of the solver's ``eps`` and ``max_iter`` for MKL.
_DEFAULT_EPS, _DEFAULT_MAX_ITER = 1e-3, 200
#: Estimator names of the model files of the MKL classes this one replaced (one per solver).
LEGACY_ESTIMATORS = ("KelleyMKL", "GaussSeidelMKL", "SimpleMKL")


def _not_fitted(est):
    if not hasattr(est, "kernel_weights_"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"This {type(est).__name__} instance is not fitted yet; call fit first.")


class MKL(ClassifierMixin, BaseEstimator):
    """MKL classifier: kernel weights and an SVM, by Kelley's cutting planes or a wrapper method.

    Parameters
    ----------
    kernels : list of callables, "precomputed", or list of ndarray / sparse matrix
        One of three ways to give the base kernels:

        - kernel functions ``k(X, Y) -> Gram (n_x, n_y)`` (e.g. the kernels of
          :mod:`problems.mkl.kernels`): ``fit(X, y)`` and ``predict(X)`` take samples, as any
          scikit-learn classifier (dense or sparse ``X``; every sparse format is converted to
          CSR);
        - ``"precomputed"``, MKLpy's convention: ``fit(KL, y)`` takes the training Gram
          matrices as ``X``, a list of ``n_kernels`` matrices of shape (n_samples, n_samples)
          or an array of shape (n_kernels, n_samples, n_samples), and ``predict(KL_test)`` the
          test-vs-train matrices, a list of (n_test, n_samples) matrices or an array of shape
          (n_kernels, n_test, n_samples), in the same order;
        - the training Gram matrices themselves (the data in a hyper-parameter, the form of
          earlier versions, kept working): then ``fit(None, y)``, and ``predict`` takes the
          test-vs-train matrices as with ``"precomputed"``.

        scikit-learn's cross-validation (``GridSearchCV``, ``cross_val_score``) splits samples,
        which the first form only has: with precomputed Gram matrices, slice the training
        rows and columns of each matrix for each fold yourself.
    C : float, default=1.0
        Weight of the summed hinge loss in (21) (libsvm's ``C``).
    multiclass : {"shared", "per-class", "none"}, default="shared"
        More than two classes: one-vs-rest with one ``beta`` shared by all classes
        (minimises ``sum_c D_c(beta)``: one run, one set of kernel weights, as in SPOM
        Table 1), or one independent MKL per class; ``"none"`` accepts binary labels only
        (InputError otherwise).
    check_psd : bool, default=True
        Check each training Gram matrix with :func:`problems.mkl.kernels.check_psd` and warn
        (``NotPSDWarning``, with the most negative eigenvalue) when one is not PSD.
    svm_tol : float, default=1e-5
        libsvm's KKT tolerance; the inner duality gap is measured and the solve refined
        (see :mod:`oracles.mkl`).
    gap_tol : float, optional
        Accepted inner duality gap per SVM solve; default the solver's ``eps / 10`` divided by
        the number of one-vs-rest problems sharing one ``beta``, so the inner approximation
        uses at most a tenth of ``eps``. A solve above it is flagged inexact
        (``result_.exact`` False).
    solver : CuttingPlane or Wrapper, optional
        How ``beta`` is found. None: ``CuttingPlane(method="kelley")``. A
        :class:`~problems.solvers.CuttingPlane` must have ``method="kelley"`` (the outer
        problem is over the simplex) and no ``executor`` / ``n_workers`` / ``scheduler`` (one
        oracle call is one libsvm solve per class); its ``eps`` (default 1e-3) is the certified
        absolute gap of ``D(beta) - min D`` (summed over classes for shared one-vs-rest
        weights), ``max_iter`` (default 200) counts oracle calls of each run, ``time_limit`` is
        per run, ``backend`` is the LP backend. A :class:`~problems.mkl.wrappers.Wrapper` runs
        Gauss-Seidel or SimpleMKL to the same kind of certified gap. Options are reachable as
        ``solver__eps`` etc. through ``get_params`` / ``set_params``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_weights_ : ndarray of shape (n_kernels,) or (n_classes, n_kernels)
        ``beta``; one row per class for ``multiclass="per-class"``.
    dual_coef_ : ndarray of shape (n_outputs, n_support)
        ``y_i alpha_i`` of each output (1 for binary, else n_classes) on ``support_``.
    support_ : ndarray of shape (n_support,)
        Training indices with a nonzero ``alpha`` in some output.
    support_vectors_ : ndarray, sparse matrix or None
        The training samples of ``support_`` (None for precomputed Gram matrices).
    n_features_in_ : int
        Number of features of ``X`` (kernel functions only).
    intercept_ : ndarray of shape (n_outputs,)
        Bias of eq. 27, averaged over the free support vectors ``0 < alpha_i < C`` (the
        hinge-optimal bias when there is none).
    objective_ : float
        Best ``D(beta)`` upper bound (the primal (21) value of the returned model; summed
        over the runs).
    lower_bound_ : float
        Certified lower bound on ``min D`` (summed likewise).
    gap_ : float
        ``objective_ - lower_bound_``.
    inner_gaps_ : ndarray of shape (n_outputs,)
        Inner SVM duality gaps at the returned ``beta``.
    result_ : cutplane.Result, WrapperResult, or a list of them
        The solver's result(s) (a list for ``multiclass="per-class"``); ``result_.w`` is
        ``beta`` for both kinds.
    n_iter_ : int
        Oracle calls in total.
    n_train_ : int
    """

    #: The declarative parameter table of the task's parameters (checked at ``fit``; the
    #: kernels and the solver are checked by their own rules).
    PARAMETERS = {
        "C": Param(lambda v, n: check_positive(v, n), "weight of the summed hinge loss"),
        "multiclass": Param(lambda v, n: check_choice(v, n, _MULTICLASS), "one-vs-rest mode"),
        "check_psd": Param(check_bool, "warn on non-PSD Gram matrices"),
        "svm_tol": Param(lambda v, n: check_positive(v, n), "libsvm tolerance"),
        "gap_tol": Param(lambda v, n: check_positive(v, n), "accepted inner gap", allow_none=True),
    }

    def __init__(self, kernels, *, C=1.0, multiclass="shared", check_psd=True, svm_tol=1e-5, gap_tol=None, solver=None):
        self.kernels = kernels
        self.C = C
        self.multiclass = multiclass
        self.check_psd = check_psd
        self.svm_tol = svm_tol
        self.gap_tol = gap_tol
        self.solver = solver

    def __sklearn_tags__(self):
        """scikit-learn's tags: a classifier whose kernel functions take sparse samples too."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ------------------------------------------------------------------ helpers
    def _solver_options(self, n_runs):
        """The checked options of the solver (default ``CuttingPlane(method="kelley")``)."""
        solver = CuttingPlane(method="kelley") if self.solver is None else self.solver
        if isinstance(solver, Wrapper):
            return solver.checked(eps=_DEFAULT_EPS, max_iter=_DEFAULT_MAX_ITER)
        if not isinstance(solver, CuttingPlane):
            raise InputError(
                f"must be CuttingPlane(method='kelley'), Wrapper(...) or None, got {type(solver).__name__}",
                field="solver",
            )
        opts = solver.checked(eps=_DEFAULT_EPS, max_iter=_DEFAULT_MAX_ITER)
        if opts.method != "kelley":
            raise InputError(
                f"MKL's outer problem is over the simplex: use CuttingPlane(method='kelley'), "
                f"got method={opts.method!r}",
                field="solver__method",
            )
        for name in ("executor", "n_workers", "scheduler"):
            if getattr(opts, name) is not None:
                raise InputError(
                    "does not apply to MKL (one oracle call is one libsvm solve per class)", field=f"solver__{name}"
                )
        if opts.checkpoint is not None and n_runs > 1:
            raise InputError(
                f"a checkpoint holds one Kelley run; multiclass='per-class' makes {n_runs}", field="solver__checkpoint"
            )
        return opts

    def _kernel_mode(self):
        """``(kernels, mode)``: the kernel list (None for ``"precomputed"``) and ``"callables"``,
        ``"precomputed"`` (the Gram matrices are ``X``) or ``"grams"`` (they are ``kernels``)."""
        ks = self.kernels
        if isinstance(ks, str):
            if ks != PRECOMPUTED:
                raise InputError(
                    f"expected a list of kernels (callables or Gram matrices) or {PRECOMPUTED!r}, got {ks!r}",
                    field="kernels",
                )
            return None, PRECOMPUTED
        if ks is None:
            raise InputError(
                "no kernels (a model loaded with precomputed Gram matrices keeps none): set "
                "kernels to the training Gram matrices to refit",
                field="kernels",
            )
        if callable(ks) or isinstance(ks, np.ndarray) or sp.issparse(ks):
            raise InputError("expected a list of kernels (callables or Gram matrices)", field="kernels")
        try:
            ks = list(ks)
        except TypeError:
            raise InputError(f"expected a list of kernels, got {type(ks).__name__}", field="kernels") from None
        if not ks:
            raise InputError("needs at least one kernel", field="kernels")
        n_callable = sum(callable(k) for k in ks)
        if 0 < n_callable < len(ks):
            raise InputError("mix of callables and Gram matrices: give all kernels the same way", field="kernels")
        return ks, ("callables" if n_callable else "grams")

    def _train_data(self, X, y):
        """The training samples (callables; else None), labels and Gram matrices, checked."""
        from oracles.mkl import check_grams

        ks, mode = self._kernel_mode()
        if mode == "callables":
            if X is None:
                raise InputError("kernels are callables: fit needs the samples X", field="X")
            X = validate_features(self, X, reset=True)
            y = check_target(y, n_samples=X.shape[0], owner=type(self).__name__)
            return X, y, check_grams([k(X, None) for k in ks])
        for name in ("n_features_in_", "feature_names_in_"):  # of an earlier fit on samples
            if hasattr(self, name):
                delattr(self, name)
        if mode == "grams":
            if X is not None:
                raise InputError("kernels are precomputed Gram matrices: call fit(None, y)", field="X")
            grams = check_grams(ks)
        else:
            if X is None:
                raise InputError(
                    "kernels='precomputed': pass the training Gram matrices as X, a list of (n_samples, "
                    "n_samples) matrices or an array of shape (n_kernels, n_samples, n_samples)",
                    field="X",
                )
            grams = check_grams(_gram_list(X, "X", "training Gram matrices"), name="X")
        y = check_target(y, owner=type(self).__name__)
        if grams[0].shape[0] != y.shape[0]:
            raise InputError(
                f"Gram matrices are {grams[0].shape[0]} x {grams[0].shape[0]} but y has {y.shape[0]} labels", field="y"
            )
        return None, y, grams

    # ---------------------------------------------------------------- estimator
    def fit(self, X, y):
        """Learn the kernel weights and the SVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), list of (n_samples, n_samples) matrices, or None
            Samples for kernel functions (converted as scikit-learn does: numeric object arrays,
            every sparse format to CSR; complex numbers are refused); for
            ``kernels="precomputed"`` the training Gram matrices, a list or an array of shape
            (n_kernels, n_samples, n_samples); None when ``kernels`` holds the Gram matrices.
        y : array-like of shape (n_samples,)
            At least two classes. A column vector is raveled with scikit-learn's
            ``DataConversionWarning``.

        Returns
        -------
        self

        Raises
        ------
        InputError
            Bad parameters, kernels or data (``field`` names which).
        InputTypeError
            Samples that are not numbers (an :class:`InputError` and a ``TypeError``).
        """
        from oracles.mkl import OneVsRestMKLOracle, SVMDualOracle
        from problems.mkl.psd import check_psd

        p = check_params(self, self.PARAMETERS)
        X, y, grams = self._train_data(X, y)
        classes, y_idx = check_classification_targets(y)
        n_classes = classes.shape[0]
        if n_classes > 2 and p["multiclass"] == "none":
            raise InputError(
                f"binary labels expected (multiclass='none'), got {n_classes} classes ({classes.tolist()[:5]})",
                field="y",
            )
        shared = n_classes == 2 or p["multiclass"] == "shared"
        opts = self._solver_options(1 if shared else n_classes)
        if p["check_psd"]:
            for k, K in enumerate(grams):
                check_psd(K, tol=1e-8, warn=True, name=f"kernels[{k}]")
        if n_classes == 2:
            Y = np.where(y_idx == 1, 1.0, -1.0)[:, None]
        else:
            Y = np.where(y_idx[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
        n_share = Y.shape[1] if shared else 1
        gap_tol = p["gap_tol"] if p["gap_tol"] is not None else opts.eps / (10.0 * n_share)
        okw = dict(svm_tol=p["svm_tol"], gap_tol=gap_tol)
        runs = []
        if shared:
            oracle = (
                SVMDualOracle(grams, Y[:, 0], p["C"], **okw)
                if Y.shape[1] == 1
                else OneVsRestMKLOracle(grams, Y, p["C"], **okw)
            )
            runs.append(_run(oracle, opts))
        else:
            for c in range(n_classes):
                runs.append(_run(SVMDualOracle(grams, Y[:, c], p["C"], **okw), opts))
        self._store(runs, Y, grams, shared, classes, opts.eps)
        callables = X is not None
        self.support_vectors_ = X[self.support_] if callables else None
        self.n_train_ = int(Y.shape[0])
        self._callables = callables
        return self

    def _store(self, runs, Y, grams, shared, classes, eps):
        n_out = Y.shape[1]
        betas = np.empty((n_out, len(grams)))
        alphas = np.empty((n_out, Y.shape[0]))
        bias, inner = np.empty(n_out), np.empty(n_out)
        c = 0
        for res, sols in runs:
            for sol in sols:
                betas[c], alphas[c], bias[c], inner[c] = res.w, sol.alpha, sol.bias, sol.gap
                c += 1
        support = np.flatnonzero((alphas > 0).any(axis=0))
        self.classes_ = classes
        self.kernel_weights_ = betas[0].copy() if shared else betas
        self._betas = betas
        self.support_ = support
        self.dual_coef_ = (Y.T * alphas)[:, support]
        self.intercept_ = bias
        self.inner_gaps_ = inner
        results = [r for r, _ in runs]
        self.result_ = results[0] if shared else results
        self.objective_ = float(sum(r.objective for r in results))
        self.lower_bound_ = float(sum(r.lower_bound for r in results))
        self.gap_ = self.objective_ - self.lower_bound_
        self.n_iter_ = int(sum(r.n_iter for r in results))
        not_conv = [r for r in results if r.status != "converged"]
        if not_conv:
            warnings.warn(
                f"{type(self).__name__}: {len(not_conv)} run(s) stopped before the certified gap "
                f"reached eps = {eps:.3g} (status {not_conv[0].status!r}, gap "
                f"{not_conv[0].gap:.3g})",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _test_grams(self, X):
        """Base kernels between X and the support vectors: list of (n_test, n_support)."""
        n_kernels = self._betas.shape[1]
        if self._callables:
            if X is None:
                raise InputError("kernels are callables: pass the samples X", field="X")
            X = validate_features(self, X, reset=False)
            out = [k(X, self.support_vectors_) for k in self.kernels]
            return [K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64) for K in out]
        mats = _gram_list(X, "X", "test-vs-train matrices, each of shape (n_test, n_train)")
        if len(mats) != n_kernels:
            raise InputError(f"expected {n_kernels} test Gram matrices, got {len(mats)}", field="X")
        out, n_test = [], None
        for k, K in enumerate(mats):
            K = K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64)
            if K.ndim != 2 or K.shape[1] != self.n_train_ or (n_test is not None and K.shape[0] != n_test):
                raise InputError(
                    f"test Gram matrix {k} has shape {K.shape}, expected (n_test, {self.n_train_}) like the others",
                    field="X",
                )
            if not np.isfinite(K).all():
                raise InputError(f"test Gram matrix {k} contains NaN or inf", field="X")
            n_test = K.shape[0]
            out.append(K[:, self.support_])
        return out

    def decision_function(self, X):
        """Kernel expansion ``h_c(x) = sum_i y_ci alpha_ci sum_k beta_ck K_k(x_i, x) + b_c``.

        Parameters
        ----------
        X : array-like of shape (n_test, n_features), or list of (n_test, n_train) matrices
            Samples (kernel functions) or the test-vs-train Gram matrices (precomputed kernels,
            given as ``kernels`` or with ``kernels="precomputed"``): a list of ``n_kernels``
            matrices or an array of shape (n_kernels, n_test, n_train), in the order of ``fit``.

        Returns
        -------
        ndarray of shape (n_test,) for two classes (positive means ``classes_[1]``), else
        (n_test, n_classes).
        """
        _not_fitted(self)
        Ks = self._test_grams(X)
        n_test = Ks[0].shape[0]
        scores = np.empty((n_test, self.dual_coef_.shape[0]))
        for c in range(self.dual_coef_.shape[0]):
            Kb = sum(b * K for b, K in zip(self._betas[c], Ks) if b != 0.0)
            scores[:, c] = (Kb @ self.dual_coef_[c] if not np.isscalar(Kb) else 0.0) + self.intercept_[c]
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted labels, ndarray of shape (n_test,) drawn from ``classes_``."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.int64)]
        return self.classes_[np.argmax(scores, axis=1)]

    def primal_weights(self, features):
        """The primal weights of eq. 27, ``w_ck = beta_ck sum_i alpha_ci y_ci Phi_k(x_i)``.

        Parameters
        ----------
        features : list of ndarray or sparse matrix, each of shape (n_train, n_features_k)
            Explicit feature maps ``Phi_k`` of the training samples, one per kernel, with
            ``Phi_k(X) Phi_k(Y)^T = K_k(X, Y)`` (e.g. ``LinearKernel.feature_map``).

        Returns
        -------
        list of ndarray, the k-th of shape (n_outputs, n_features_k)
            Then ``h_c(x) = sum_k <W_k[c], Phi_k(x)> + intercept_[c]``.
        """
        _not_fitted(self)
        feats = list(features)
        if len(feats) != self._betas.shape[1]:
            raise InputError(f"expected {self._betas.shape[1]} feature matrices, got {len(feats)}", field="features")
        out = []
        for k, Phi in enumerate(feats):
            if Phi.shape[0] != self.n_train_:
                raise InputError(
                    f"feature matrix {k} has {Phi.shape[0]} rows, expected {self.n_train_}", field="features"
                )
            Ps = Phi[self.support_]
            W = np.asarray((Ps.T @ self.dual_coef_.T).T) * self._betas[:, k][:, None]
            out.append(W)
        return out

    # ------------------------------------------------------------------- models
    def save(self, path, *, extra_meta=None):
        """Write the fitted model as npz + JSON metadata (never pickle); see the module docstring.

        Parameters
        ----------
        path : str or os.PathLike
        extra_meta : dict, optional
            More JSON fields.

        Returns
        -------
        pathlib.Path

        Raises
        ------
        InputError
            A kernel is a callable other than the classes of :mod:`problems.mkl.kernels`, or
            a solver option is not JSON (e.g. an executor instance).
        """
        from problems.model_io import save_model

        _not_fitted(self)
        specs = None
        arrays = {
            "classes": np.asarray(self.classes_),
            "kernel_weights": self._betas,
            "dual_coef": self.dual_coef_,
            "support": self.support_.astype(np.int64),
            "intercept": self.intercept_,
            "inner_gaps": self.inner_gaps_,
        }
        if self._callables:
            specs = []
            for k, kern in enumerate(self.kernels):
                name = type(kern).__name__
                if name not in _KERNEL_CLASSES or type(kern).__module__ != "problems.mkl.kernels":
                    raise InputError(
                        f"kernels[{k}] is a {name}: only the kernels of problems.mkl.kernels "
                        f"({', '.join(_KERNEL_CLASSES)}) can be saved (by name and parameters)",
                        field="kernels",
                    )
                specs.append({"name": name, "params": kern.params()})
            SV = self.support_vectors_
            assert SV is not None  # fit keeps the support vectors whenever the kernels are callables
            if sp.issparse(SV):
                SV = SV.tocsr()
                arrays.update(
                    sv_data=SV.data,
                    sv_indices=SV.indices.astype(np.int64),
                    sv_indptr=SV.indptr.astype(np.int64),
                    sv_shape=np.asarray(SV.shape, np.int64),
                )
            else:
                arrays["support_vectors"] = np.asarray(SV, dtype=np.float64)
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in ("kernels", "solver")}
        meta = dict(extra_meta or {})
        meta.update(
            {
                "estimator": type(self).__name__,
                "params": params,
                "solver": _solver_spec(self.solver),
                "kernels": PRECOMPUTED if isinstance(self.kernels, str) else specs,
                "n_kernels": int(self._betas.shape[1]),
                "n_train": self.n_train_,
                "n_features_in": getattr(self, "n_features_in_", None),
                "shared": bool(np.ndim(self.kernel_weights_) == 1),
                "objective": self.objective_,
                "lower_bound": self.lower_bound_,
                "gap": self.gap_,
                "n_iter": self.n_iter_,
            }
        )
        return save_model(path, arrays, meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save` (validated, never unpickled).

        Files of the former ``KelleyMKL``, ``GaussSeidelMKL`` and ``SimpleMKL`` estimators
        load too, with the solver they used (``CuttingPlane(method="kelley")`` or
        ``Wrapper(method=...)``) and their ``eps`` / ``max_iter`` / ``time_limit``.

        Returns
        -------
        MKL
            ``kernels`` is rebuilt from the saved names and parameters; it is ``"precomputed"``
            for a model fitted with ``kernels="precomputed"`` (it can be refitted), and None for
            one fitted with the Gram matrices as ``kernels`` (which are not saved); in both
            cases ``predict`` takes test-vs-train matrices.

        Raises
        ------
        ModelFormatError
            Not a model file, a file of another estimator, or a malformed one.
        """
        from problems.model_io import load_model

        arrays, meta = load_model(path)
        name = meta["estimator"]
        if name != cls.__name__ and name not in LEGACY_ESTIMATORS:
            raise ModelFormatError(
                f"the file holds a {name[:80]} model, expected {cls.__name__} (or one of "
                f"{', '.join(LEGACY_ESTIMATORS)} written by earlier versions, model format "
                f"version 1)",
                path=path,
                field="estimator",
            )
        check_schema(MODEL_SCHEMA, arrays, meta, path)
        try:
            K, n_train = int(meta["n_kernels"]), int(meta["n_train"])
            kernels = _kernels_from_specs(meta["kernels"], K, path)
            params, solver = _params_and_solver(name, meta, path)
            est = cls(kernels, solver=solver, **params)
            scalars = [float(meta[k]) for k in ("objective", "lower_bound", "gap")]
            n_iter, shared = int(meta["n_iter"]), bool(meta["shared"])
            n_features = meta["n_features_in"]
            betas = np.asarray(arrays["kernel_weights"], dtype=np.float64)
            dual, support = np.asarray(arrays["dual_coef"], np.float64), np.asarray(arrays["support"], np.int64)
            intercept = np.asarray(arrays["intercept"], np.float64)
            inner = np.asarray(arrays["inner_gaps"], np.float64)
            classes = arrays["classes"]
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError, InputError) as exc:
            raise ModelFormatError(f"model metadata is incomplete or malformed: {exc!r}", path=path) from None
        n_out = 1 if classes.shape[0] == 2 else classes.shape[0]
        for field, arr, shape in (
            ("kernel_weights", betas, (n_out, K)),
            ("dual_coef", dual, (n_out, support.size)),
            ("intercept", intercept, (n_out,)),
            ("inner_gaps", inner, (n_out,)),
        ):
            if arr.shape != shape:
                raise ModelFormatError(f"{field} has shape {arr.shape}, expected {shape}", path=path, field=field)
        if support.ndim != 1 or (support.size and (support.min() < 0 or support.max() >= n_train)):
            raise ModelFormatError(f"support indices outside 0..{n_train - 1}", path=path, field="support")
        est._callables = isinstance(kernels, list)
        est.support_vectors_ = None
        if est._callables:
            SV = _support_vectors(arrays, path)
            if SV.ndim != 2 or SV.shape[0] != support.size:
                raise ModelFormatError(
                    f"support vectors of shape {SV.shape} for {support.size} support indices",
                    path=path,
                    field="support_vectors",
                )
            est.support_vectors_ = SV
            est.n_features_in_ = int(n_features if n_features is not None else SV.shape[1])
        est.classes_ = classes
        est._betas = betas
        est.kernel_weights_ = betas[0].copy() if shared else betas
        est.dual_coef_, est.support_, est.intercept_, est.inner_gaps_ = dual, support, intercept, inner
        est.objective_, est.lower_bound_, est.gap_ = scalars
        est.n_iter_, est.n_train_ = n_iter, n_train
        return est


# ---------------------------------------------------------------------- one run of a solver
def _run(oracle, opts):
    """One run of the solver (its ``minimize_simplex``: Kelley's method or a wrapper); returns
    its result and the inner SVM solution(s) at its ``w`` (= ``beta``)."""
    res, argmax = opts.minimize_simplex(oracle)
    return res, (argmax if isinstance(argmax, list) else [argmax])


# ---------------------------------------------------------------------- model-file helpers
def _solver_spec(solver):
    """The solver as JSON: ``{"name": class name, "params": its parameters}`` (None: the default)."""
    if solver is None:
        return None
    if type(solver).__name__ not in _SOLVERS or not isinstance(solver, _SOLVERS[type(solver).__name__]):
        raise InputError(f"cannot save a {type(solver).__name__} solver", field="solver")
    params = {}
    for key, value in solver.get_params(deep=False).items():
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not (value is None or isinstance(value, (bool, int, float, str))):
            raise InputError(
                f"solver option {key} = {type(value).__name__} cannot be saved (JSON values only)",
                field=f"solver__{key}",
            )
        params[key] = value
    return {"name": type(solver).__name__, "params": params}


def _params_and_solver(name, meta, path):
    """The estimator's parameters and solver from a file's metadata (new or legacy layout)."""
    params = dict(meta["params"])
    if name in LEGACY_ESTIMATORS:
        eps, max_iter, time_limit = (
            params.pop("eps", None),
            params.pop("max_iter", None),
            params.pop("time_limit", None),
        )
        backend, verbose = params.pop("solver", None), params.pop("verbose", False)
        if name == "KelleyMKL":
            solver = CuttingPlane(
                method="kelley", eps=eps, max_iter=max_iter, time_limit=time_limit, backend=backend, verbose=verbose
            )
        else:
            solver = Wrapper(
                method="gauss-seidel" if name == "GaussSeidelMKL" else "simplemkl",
                eps=eps,
                max_iter=max_iter,
                time_limit=time_limit,
            )
    else:
        spec = meta["solver"]
        if spec is None:
            solver = None
        else:
            if (
                not isinstance(spec, dict)
                or spec.get("name") not in _SOLVERS
                or not isinstance(spec.get("params"), dict)
            ):
                raise ModelFormatError(
                    f"unknown solver {str(spec)[:80]}; expected one of {sorted(_SOLVERS)}", path=path, field="solver"
                )
            cls = _SOLVERS[spec["name"]]
            unknown = sorted(set(spec["params"]) - set(cls._get_param_names()))
            if unknown:
                raise ModelFormatError(f"unknown {spec['name']} options {unknown}", path=path, field="solver")
            solver = cls(**spec["params"])
    unknown = sorted(set(params) - set(MKL._get_param_names()))
    if unknown:
        raise ModelFormatError(f"unknown hyper-parameters {unknown}", path=path, field="params")
    return params, solver


def _kernels_from_specs(specs, n_kernels, path):
    from problems.mkl import kernels as kernel_module

    if specs is None or specs == PRECOMPUTED:
        return specs
    if isinstance(specs, str):
        raise ModelFormatError(
            f"kernels must be a list of kernel specs, got {specs[:80]!r}", path=path, field="kernels"
        )
    if len(specs) != n_kernels:
        raise ModelFormatError(f"{len(specs)} kernel specs for {n_kernels} kernels", path=path, field="kernels")
    kernels = []
    for spec in specs:
        if spec["name"] not in _KERNEL_CLASSES:
            raise ModelFormatError(f"unknown kernel {spec['name']!r}", path=path, field="kernels")
        kernels.append(getattr(kernel_module, spec["name"])(**spec["params"]))
    return kernels


def _support_vectors(arrays, path):
    if "support_vectors" in arrays:
        return np.asarray(arrays["support_vectors"], dtype=np.float64)
    if "sv_data" in arrays:
        try:
            return sp.csr_matrix(
                (arrays["sv_data"], arrays["sv_indices"], arrays["sv_indptr"]),
                shape=tuple(int(v) for v in arrays["sv_shape"]),
            )
        except (KeyError, ValueError) as exc:
            raise ModelFormatError(f"bad sparse support vectors: {exc}", path=path, field="support_vectors") from None
    raise ModelFormatError(
        "kernels are callables but no support vectors are stored", path=path, field="support_vectors"
    )


_NUM = (float, type(None))
#: What an MKL model file must hold (checked by :meth:`MKL.load`); ``params`` may hold the
#: options of the former estimators' files too (``eps``, ``max_iter``, ``time_limit``,
#: ``solver`` as the LP backend, ``verbose``), which :meth:`MKL.load` turns into the solver.
MODEL_SCHEMA = ModelSchema(
    arrays={
        "classes": ("biufU", 1),
        "kernel_weights": ("f", 2),
        "dual_coef": ("f", 2),
        "support": ("iu", 1),
        "intercept": ("f", 1),
        "inner_gaps": ("f", 1),
    },
    meta={
        "params": (dict,),
        "kernels": (list, str, type(None)),
        "n_kernels": (int,),
        "n_train": (int,),
        "n_features_in": (int, type(None)),
        "shared": (bool,),
        "objective": (float,),
        "lower_bound": (float,),
        "gap": (float,),
        "n_iter": (int,),
    },
    params_of=frozenset(MKL._get_param_names()) | {"eps", "max_iter", "time_limit", "verbose"},
    optional_meta={"solver": (dict, type(None))},
)


def _gram_list(X, name, what):
    """A list of Gram matrices given as a list / tuple of matrices or an array of shape
    (n_kernels, n_rows, n_cols); a single matrix or samples are refused, saying what is expected."""
    if callable(X) or sp.issparse(X) or isinstance(X, (str, bytes)) or (isinstance(X, np.ndarray) and X.ndim != 3):
        shape = f" of shape {X.shape}" if hasattr(X, "shape") else ""
        raise InputError(
            f"got a {type(X).__name__}{shape}: pass the list of {what} "
            "(or an array of shape (n_kernels, n_rows, n_cols))",
            field=name,
        )
    try:
        return list(X)
    except TypeError:
        raise InputError(f"expected the list of {what}, got {type(X).__name__}", field=name) from None
