"""Multiple kernel learning by Kelley's cutting-plane method (SILP; chapter sec. 1.3, Alg. 1.5).

:class:`KelleyMKL` learns a convex combination ``sum_k beta_k K_k`` of base kernels and an
SVM on it by solving the min-max problem (26), ``min_{beta in simplex} D(beta)``, with the
engine's ``kelley`` method: each oracle call is one libsvm solve with the combined kernel
(:mod:`oracles.mkl`), the reduced problem is the LP (30) over the simplex.

Scale convention: ``C`` is the constant of the chapter's primal (21),
``1/2 sum_k ||w_k||^2 / beta_k + C sum_i xi_i`` (summed hinge loss), i.e. libsvm's / scikit-
learn's ``SVC(C=...)`` and SPOM's ``C = 1/(lambda N)``. (The linear estimators of this
package weight the *mean* loss: their ``C`` is this ``C`` times ``n_samples``.) ``eps``,
``objective_``, ``lower_bound_`` and ``gap_`` are on the scale of (21) = ``D``.

Model files (:meth:`KelleyMKL.save` / :meth:`KelleyMKL.load`): npz + JSON through
:mod:`problems.model_io`, never pickle. Kernels given as objects of :mod:`problems.mkl.kernels`
(``LinearKernel``, ``PolynomialKernel``, ``GaussianKernel``, ``B1SplineKernel``) are saved by
class name and parameters, with the support vectors; other callables cannot be saved
(InputError). Precomputed training Gram matrices are **not** saved: the model keeps only
what prediction needs (kernel weights, ``dual_coef_``, ``support_``, intercepts), and a loaded
model predicts from test-vs-train Gram matrices as before; it cannot be refitted without
new ``kernels``.

The bodies of ``save`` / ``load`` live in the private module ``problems.mkl._model_file``,
one Kelley run (``KelleyMKL._run``) in ``problems.mkl._kelley_run``.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin

from cutplane.exceptions import ConvergenceWarning, InputError
from problems.validation import (check_bool, check_choice, check_classification_targets, check_int,
                                 check_positive)

from problems.mkl._kelley_run import _kelley_run
from problems.mkl._model_file import _load_kelley_mkl, _save_kelley_mkl

__all__ = ["KelleyMKL"]

_MULTICLASS = ("shared", "per-class", "none")


def _not_fitted(est):
    if not hasattr(est, "kernel_weights_"):
        from sklearn.exceptions import NotFittedError

        raise NotFittedError(f"This {type(est).__name__} instance is not fitted yet; call fit first.")


class KelleyMKL(ClassifierMixin, BaseEstimator):
    """MKL classifier with kernel weights learned by Kelley's cutting-plane method.

    Parameters
    ----------
    kernels : list of callables or list of ndarray / sparse matrix
        Either kernel functions ``k(X, Y) -> Gram (n_x, n_y)`` (e.g. the kernels of
        :mod:`problems.mkl.kernels`), evaluated on ``X`` at fit; or precomputed Gram matrices of
        shape (n_samples, n_samples) on the training samples (then ``fit(None, y)`` and
        ``predict`` takes the list of test-vs-train matrices, each (n_test, n_samples)).
    C : float, default=1.0
        Weight of the summed hinge loss in (21) (libsvm's ``C``).
    eps : float, default=1e-3
        Certified absolute gap of the outer problem ``D(beta) - min D`` (summed over classes
        for shared one-vs-rest weights).
    max_iter : int, default=200
        Oracle calls (SVM solves per class) of each Kelley run.
    svm_tol : float, default=1e-5
        libsvm's KKT tolerance; the inner duality gap is measured and the solve refined
        (see :mod:`oracles.mkl`).
    gap_tol : float, optional
        Accepted inner duality gap per SVM solve; default ``eps / 10`` divided by the number
        of one-vs-rest problems sharing one ``beta``, so the inner approximation uses at most
        a tenth of ``eps``. A solve above it is flagged inexact (``result_.exact`` False).
    multiclass : {"shared", "per-class", "none"}, default="shared"
        More than two classes: one-vs-rest with one ``beta`` shared by all classes
        (minimises ``sum_c D_c(beta)``: one Kelley run, one set of kernel weights, as in
        SPOM Table 1), or one independent MKL per class; ``"none"`` accepts binary labels
        only (InputError otherwise).
    check_psd : bool, default=True
        Check each training Gram matrix with :func:`problems.mkl.kernels.check_psd` and warn
        (``NotPSDWarning``, with the most negative eigenvalue) when one is not PSD.
    time_limit : float, optional
        Seconds per Kelley run.
    solver : str, optional
        LP backend for the engine.
    verbose : bool, default=False

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_weights_ : ndarray of shape (n_kernels,) or (n_classes, n_kernels)
        ``beta``; one row per class for ``multiclass="per-class"``.
    dual_coef_ : ndarray of shape (n_outputs, n_support)
        ``y_i alpha_i`` of each output (1 for binary, else n_classes) on ``support_``.
    support_ : ndarray of shape (n_support,)
        Training indices with a nonzero ``alpha`` in some output.
    intercept_ : ndarray of shape (n_outputs,)
        Bias of eq. 27, averaged over the free support vectors ``0 < alpha_i < C`` (the
        hinge-optimal bias when there is none).
    objective_ : float
        Best ``D(beta)`` upper bound (the primal (21) value of the returned model; summed
        over the Kelley runs).
    lower_bound_ : float
        Certified lower bound on ``min D`` (summed likewise).
    gap_ : float
        ``objective_ - lower_bound_``.
    inner_gaps_ : ndarray of shape (n_outputs,)
        Inner SVM duality gaps at the returned ``beta``.
    result_ : cutplane.Result or list of cutplane.Result
        The engine's result(s) (a list for ``multiclass="per-class"``).
    n_iter_ : int
        Oracle calls in total.
    """

    def __init__(self, kernels, *, C=1.0, eps=1e-3, max_iter=200, svm_tol=1e-5, gap_tol=None,
                 multiclass="shared", check_psd=True, time_limit=None, solver=None, verbose=False):
        self.kernels = kernels
        self.C = C
        self.eps = eps
        self.max_iter = max_iter
        self.svm_tol = svm_tol
        self.gap_tol = gap_tol
        self.multiclass = multiclass
        self.check_psd = check_psd
        self.time_limit = time_limit
        self.solver = solver
        self.verbose = verbose

    # ------------------------------------------------------------------ helpers
    def _check_params(self):
        return dict(
            C=check_positive(self.C, "C"),
            eps=check_positive(self.eps, "eps"),
            max_iter=check_int(self.max_iter, "max_iter"),
            svm_tol=check_positive(self.svm_tol, "svm_tol"),
            gap_tol=None if self.gap_tol is None else check_positive(self.gap_tol, "gap_tol"),
            multiclass=check_choice(self.multiclass, "multiclass", _MULTICLASS),
            check_psd=check_bool(self.check_psd, "check_psd"),
            time_limit=None if self.time_limit is None else check_positive(self.time_limit, "time_limit"),
            verbose=check_bool(self.verbose, "verbose"),
        )

    def _kernel_mode(self):
        ks = self.kernels
        if ks is None:
            raise InputError("no kernels (a model loaded with precomputed Gram matrices keeps none): set "
                             "kernels to the training Gram matrices to refit", field="kernels")
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
            raise InputError("mix of callables and Gram matrices: give all kernels the same way",
                             field="kernels")
        return ks, n_callable > 0

    def _train_grams(self, X, n_labels, psd):
        from problems.mkl.kernels import check_psd
        from oracles.mkl import check_grams

        ks, callables = self._kernel_mode()
        if callables:
            if X is None:
                raise InputError("kernels are callables: fit needs the samples X", field="X")
            if not sp.issparse(X):
                X = np.asarray(X)
            if X.ndim != 2 or X.shape[0] != n_labels:
                raise InputError(f"X has shape {X.shape}; expected ({n_labels}, n_features) for "
                                 f"{n_labels} labels", field="X")
            grams = [k(X, None) for k in ks]
        else:
            if X is not None:
                raise InputError("kernels are precomputed Gram matrices: call fit(None, y)", field="X")
            grams = ks
        grams = check_grams(grams)
        if grams[0].shape[0] != n_labels:
            raise InputError(f"Gram matrices are {grams[0].shape[0]} x {grams[0].shape[0]} but y has "
                             f"{n_labels} labels", field="y")
        if psd:
            for k, K in enumerate(grams):
                check_psd(K, tol=1e-8, warn=True, name=f"kernels[{k}]")
        return grams, callables, X

    # ---------------------------------------------------------------- estimator
    def fit(self, X, y):
        """Learn the kernel weights and the SVM.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None
            Samples for callable kernels; None for precomputed Gram matrices.
        y : array-like of shape (n_samples,)
            At least two classes.

        Returns
        -------
        self
        """
        from cutplane import minimize
        from cutplane.regularizers import Simplex
        from oracles.mkl import OneVsRestMKLOracle, SVMDualOracle

        p = self._check_params()
        y = np.asarray(y)
        if y.ndim != 1:
            raise InputError(f"y must be 1-d, got shape {y.shape}", field="y")
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise InputError("contains NaN or infinite values", field="y")
        classes, y_idx = check_classification_targets(y)
        n_classes = classes.shape[0]
        if n_classes > 2 and p["multiclass"] == "none":
            raise InputError(f"binary labels expected (multiclass='none'), got {n_classes} classes "
                             f"({classes.tolist()[:5]})", field="y")
        grams, callables, X = self._train_grams(X, y.shape[0], p["check_psd"])
        if n_classes == 2:
            Y = np.where(y_idx == 1, 1.0, -1.0)[:, None]
        else:
            Y = np.where(y_idx[:, None] == np.arange(n_classes)[None, :], 1.0, -1.0)
        shared = n_classes == 2 or p["multiclass"] == "shared"
        n_share = Y.shape[1] if shared else 1
        gap_tol = p["gap_tol"] if p["gap_tol"] is not None else p["eps"] / (10.0 * n_share)
        okw = dict(svm_tol=p["svm_tol"], gap_tol=gap_tol)
        kw = dict(method="kelley", eps=p["eps"], max_iter=p["max_iter"], time_limit=p["time_limit"],
                  verbose=p["verbose"])
        if self.solver is not None:
            kw["solver"] = self.solver
        runs = []
        if shared:
            oracle = (SVMDualOracle(grams, Y[:, 0], p["C"], **okw) if Y.shape[1] == 1
                      else OneVsRestMKLOracle(grams, Y, p["C"], **okw))
            runs.append(self._run(minimize, oracle, Simplex(len(grams)), kw))
        else:
            for c in range(n_classes):
                oracle = SVMDualOracle(grams, Y[:, c], p["C"], **okw)
                runs.append(self._run(minimize, oracle, Simplex(len(grams)), kw))
        self._store(runs, Y, grams, shared, classes, p)
        self.support_vectors_ = X[self.support_] if callables else None
        if callables:
            self.n_features_in_ = int(X.shape[1])
        self.n_train_ = int(Y.shape[0])
        self._callables = callables
        return self

    _run = staticmethod(_kelley_run)

    def _store(self, runs, Y, grams, shared, classes, p):
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
            warnings.warn(f"{type(self).__name__}: {len(not_conv)} run(s) stopped before the certified gap "
                          f"reached eps = {p['eps']:.3g} (status {not_conv[0].status!r}, gap "
                          f"{not_conv[0].gap:.3g})", ConvergenceWarning, stacklevel=3)

    def _test_grams(self, X):
        """Base kernels between X and the support vectors: list of (n_test, n_support)."""
        ks = list(self.kernels) if self.kernels is not None else [None] * self._betas.shape[1]
        if self._callables:
            if X is None:
                raise InputError("kernels are callables: pass the samples X", field="X")
            out = [k(X, self.support_vectors_) for k in ks]
            return [K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64) for K in out]
        if callable(X) or isinstance(X, np.ndarray) or sp.issparse(X):
            raise InputError("fitted with precomputed Gram matrices: pass the list of test-vs-train "
                             "matrices, each of shape (n_test, n_train)", field="X")
        mats = list(X)
        if len(mats) != len(ks):
            raise InputError(f"expected {len(ks)} test Gram matrices, got {len(mats)}", field="X")
        out, n_test = [], None
        for k, K in enumerate(mats):
            K = K.toarray() if sp.issparse(K) else np.asarray(K, dtype=np.float64)
            if K.ndim != 2 or K.shape[1] != self.n_train_ or (n_test is not None and K.shape[0] != n_test):
                raise InputError(f"test Gram matrix {k} has shape {K.shape}, expected (n_test, "
                                 f"{self.n_train_}) like the others", field="X")
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
            Samples (callable kernels) or test-vs-train Gram matrices (precomputed kernels).

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
            raise InputError(f"expected {self._betas.shape[1]} feature matrices, got {len(feats)}",
                             field="features")
        out = []
        for k, Phi in enumerate(feats):
            if Phi.shape[0] != self.n_train_:
                raise InputError(f"feature matrix {k} has {Phi.shape[0]} rows, expected {self.n_train_}",
                                 field="features")
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
            A kernel is a callable other than the classes of :mod:`problems.mkl.kernels`.
        """
        _not_fitted(self)
        return _save_kelley_mkl(self, path, extra_meta)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save` (validated, never unpickled).

        Returns
        -------
        KelleyMKL (or the subclass that saved it)
            ``kernels`` is rebuilt from the saved names and parameters, or None when the model
            was fitted on precomputed Gram matrices (predict then takes test-vs-train matrices).
        """
        return _load_kelley_mkl(cls, path)
