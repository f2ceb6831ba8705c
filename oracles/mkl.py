"""The SVM-dual oracle of Kelley MKL (SILP; Franc et al. 2012, sec. 1.3, eq. 24-30, Alg. 1.5).

For base Gram matrices ``K_1..K_K`` (n, n), labels ``y`` in {-1, +1} and ``C > 0``, the MKL
problem (26) is ``min_{beta in simplex} D(beta)`` with

    D(beta) = max_{alpha in A} S(alpha, beta),   S(alpha, beta) = sum_k beta_k S_k(alpha),
    S_k(alpha) = 1^T alpha - 1/2 (y o alpha)^T K_k (y o alpha),
    A = {0 <= alpha <= C, y^T alpha = 0},

convex in ``beta`` (a maximum of linear functions). At ``beta`` the oracle solves the SVM
dual with the combined kernel ``K_beta = sum_k beta_k K_k`` by libsvm
(scikit-learn's ``SVC(kernel="precomputed")``; Franc et al. 2012: existing SVM solvers are
directly applicable) and returns the cut of eq. 28-29: slope ``(S_1(alpha), ..., S_K(alpha))``,
offset 0.

How the inner approximation is bounded
--------------------------------------
libsvm stops on a KKT-violation tolerance (``tol``), not on a duality gap, so its ``alpha``
is only near-optimal. The oracle makes both numbers it hands the engine rigorous anyway:

* ``alpha`` is first made exactly feasible (clipped to [0, C], then the larger side of
  ``y^T alpha = 0`` scaled down), so the cut ``beta' -> S(alpha, beta')`` is a minorant of
  ``D`` on the whole simplex whatever the inner accuracy (``D`` is a max over ``A``);
* the value is the primal SVM objective (23) at the primal point recovered from ``alpha``
  (eq. 27: ``w_k = beta_k sum_i alpha_i y_i Phi_k(x_i)``, the hinge-optimal bias ``b``),
  ``P(beta) = 1/2 sum_k beta_k q_k + C sum_i max(0, 1 - y_i (f_i + b))`` with
  ``q_k = (y o alpha)^T K_k (y o alpha)`` and ``f = K_beta (y o alpha)``: an upper bound on
  ``D(beta)`` by weak duality (valid for any symmetric ``K``, PSD or not).

The inner duality gap ``P(beta) - S(alpha, beta) >= 0`` is measured in double precision at
every call. libsvm caches the kernel in single precision, which alone caps that gap at about
1e-8 (C = 1) to 1e-5 (C = 100) of ``D`` whatever ``tol``; so when the gap exceeds
``gap_tol`` the oracle first *polishes* ``alpha``: with libsvm's bound sets fixed it solves
the KKT linear system on the free support vectors in double precision and keeps the result
when it stays in the box (the gap is then at round-off level). If the gap is still
above ``gap_tol`` the SVM is re-solved with ``tol / 100`` (at most ``max_refine`` times);
failing that the result is marked ``exact=False``: the engine then reports its certificate
as relative to the approximation. (The two bounds stay valid even then, but the cut is not
tight at ``beta`` and Kelley's gap cannot fall below the inner gap.) Warm starts: libsvm as
wrapped by scikit-learn has no warm start of ``alpha``; every solve starts cold.

The inner solve is :func:`solve_svm` (libsvm, the feasible ``alpha``, the measured gap, the
polish and the re-solves), its result an :class:`SVMSolution`; the bias is by :func:`best_bias`
(hinge-optimal, for the primal value) and :func:`free_sv_bias` (eq. 27, reported).
"""

from __future__ import annotations

import numbers
import warnings
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError, SolverError

__all__ = [
    "SVMSolution",
    "SVMDualOracle",
    "OneVsRestMKLOracle",
    "combine_grams",
    "best_bias",
    "free_sv_bias",
    "check_grams",
    "solve_svm",
]


# ---------------------------------------------------------------------------- the inner SVM solve
class SVMSolution(NamedTuple):
    """The inner SVM solve at one ``beta`` (the oracle's ``argmax``).

    Attributes
    ----------
    alpha : ndarray of shape (n_samples,)
        Dual variables, exactly in ``A`` (up to round-off).
    bias : float
        Bias averaged over the free support vectors ``0 < alpha_i < C`` (eq. 27); the
        hinge-optimal bias when there is none.
    primal : float
        Primal SVM objective (23) at the recovered ``(w, b_opt)``: an upper bound on ``D(beta)``.
    dual : float
        ``S(alpha, beta)``: a lower bound on ``D(beta)``.
    gap : float
        ``primal - dual``, the inner duality gap.
    slopes : ndarray of shape (n_kernels,)
        ``S_k(alpha)``, the cut's slope (eq. 28).
    svm_tol : float
        libsvm tolerance of the accepted solve.
    n_support : int
        Number of ``alpha_i > 0``.
    """

    alpha: np.ndarray
    bias: float
    primal: float
    dual: float
    gap: float
    slopes: np.ndarray
    svm_tol: float
    n_support: int


def best_bias(f, y):
    """The bias minimising ``sum_i max(0, 1 - y_i (f_i + b))`` (exact, O(n log n)).

    The sum is convex piecewise linear in ``b`` with kinks at ``c_i = y_i - f_i`` and slope
    ``#{y_i = -1, c_i < b} - #{y_i = +1, c_i > b}``; the minimiser is the first kink where
    the slope to its right is >= 0.

    Parameters
    ----------
    f : ndarray of shape (n,)
        Scores without bias.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.

    Returns
    -------
    float
    """
    c = y - f
    pos, neg = np.sort(c[y > 0]), np.sort(c[y < 0])
    kinks = np.unique(c)
    right = -(pos.size - np.searchsorted(pos, kinks, side="right")) + np.searchsorted(neg, kinks, side="right")
    return float(kinks[int(np.argmax(right >= 0))])


def free_sv_bias(f, y, alpha, C, rtol=1e-8):
    """Eq. 27: ``b = mean_{i in J} (y_i - f_i)`` over ``J = {0 < alpha_i < C}``, or None if J is empty."""
    thr = rtol * C
    free = (alpha > thr) & (alpha < C - thr)
    if not free.any():
        return None
    return float(np.mean(y[free] - f[free]))


def _feasible_alpha(alpha, y, C):
    """Project libsvm's ``alpha`` into ``A``: clip to [0, C], then scale the heavier side down."""
    alpha = np.clip(alpha, 0.0, C)
    sp_, sn = alpha[y > 0].sum(), alpha[y < 0].sum()
    if sp_ > sn and sp_ > 0:
        alpha[y > 0] *= sn / sp_
    elif sn > sp_ and sn > 0:
        alpha[y < 0] *= sp_ / sn
    return alpha


def _quad_forms(grams, v, idx):
    """``q_k = v^T K_k v`` restricted to the support ``idx``; ndarray of shape (n_kernels,)."""
    vs = v[idx]
    q = np.empty(len(grams))
    for k, K in enumerate(grams):
        sub = K[idx][:, idx]
        q[k] = float(vs @ (sub @ vs))
    return q


def _evaluate(alpha, K_beta, grams, beta, y, C, tol):
    """Cut, primal and dual values of a feasible ``alpha``; the inner gap in double precision."""
    idx = np.flatnonzero(alpha > 0)
    v = y * alpha
    q = _quad_forms(grams, v, idx)
    slopes = alpha.sum() - 0.5 * q
    dual = float(beta @ slopes)
    f = K_beta[:, idx] @ v[idx]
    b_opt = best_bias(f, y)
    primal = 0.5 * float(beta @ q) + C * float(np.maximum(0.0, 1.0 - y * (f + b_opt)).sum())
    b = free_sv_bias(f, y, alpha, C)
    return SVMSolution(
        alpha, b_opt if b is None else b, primal, dual, max(primal - dual, 0.0), slopes, tol, int(idx.size)
    )


def _polish(alpha, K_beta, y, C):
    """Re-solve the dual on libsvm's free set exactly, in double precision (None if it leaves the box).

    libsvm keeps the kernel in single precision (its ``Qfloat`` cache), which caps the inner
    duality gap at about 1e-8 to 1e-5 of ``D``. With the bound sets of libsvm's solution
    fixed, the optimality conditions on the free set ``J`` are the linear KKT system
    ``Q_JJ alpha_J + b y_J = 1 - Q_JB alpha_B``, ``y_J^T alpha_J = -y_B^T alpha_B``
    (``Q = diag(y) K diag(y)``); its solution is accepted when it stays in ``(0, C)``.
    """
    thr = 1e-8 * C
    free = np.flatnonzero((alpha > thr) & (alpha < C - thr))
    if free.size == 0:
        return None
    bound = np.flatnonzero(alpha >= C - thr)
    yJ = y[free]
    Q = K_beta[np.ix_(free, free)] * np.outer(yJ, yJ)
    rhs = 1.0 - yJ * (K_beta[np.ix_(free, bound)] @ (C * y[bound]))
    m = free.size
    A = np.zeros((m + 1, m + 1))
    A[:m, :m], A[:m, m], A[m, :m] = Q, yJ, yJ
    rhs = np.append(rhs, -C * y[bound].sum())
    import scipy.linalg

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(A, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):  # singular Q_JJ (low-rank kernel)
        sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
    aJ = sol[:m]
    if not np.all(np.isfinite(aJ)) or aJ.min() < 0.0 or aJ.max() > C:
        return None
    out = np.zeros_like(alpha)
    out[bound], out[free] = C, aJ
    return _feasible_alpha(out, y, C)


def solve_svm(K_beta, grams, beta, y, C, *, svm_tol, gap_tol, max_refine=2, polish=True):
    """Solve the SVM dual on ``K_beta`` by libsvm and measure the inner duality gap.

    Each attempt runs libsvm, makes ``alpha`` feasible and measures the gap; above
    ``gap_tol(primal)`` it polishes ``alpha`` on the free set in double precision
    (:func:`_polish`) and keeps the better of the two, then re-solves with ``tol / 100``.

    Parameters
    ----------
    K_beta : ndarray of shape (n, n)
        ``sum_k beta_k K_k``.
    grams : list of (n, n) matrices
    beta : ndarray of shape (n_kernels,)
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C, svm_tol : float
    gap_tol : callable
        ``gap_tol(primal) -> float``, the accepted inner gap.
    max_refine : int
        Re-solves with ``tol / 100`` while the gap exceeds ``gap_tol``.
    polish : bool
        Try the double-precision polish on the free set.

    Returns
    -------
    SVMSolution
        The smallest-gap solution found.
    """
    from sklearn.svm import SVC

    tol, best = float(svm_tol), None
    for _ in range(max_refine + 1):
        svc = SVC(kernel="precomputed", C=C, tol=tol, shrinking=True)
        try:
            svc.fit(K_beta, y)
        except ValueError as exc:  # libsvm input errors, surfaced as one clear error
            raise SolverError(f"libsvm failed on the combined kernel: {exc}") from None
        alpha = np.zeros(y.shape[0])
        alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())
        alpha = _feasible_alpha(alpha, y, C)
        cand = [_evaluate(alpha, K_beta, grams, beta, y, C, tol)]
        if polish and cand[0].gap > gap_tol(cand[0].primal):
            polished = _polish(alpha, K_beta, y, C)
            if polished is not None:
                cand.append(_evaluate(polished, K_beta, grams, beta, y, C, tol))
        top = min(cand, key=lambda sol: sol.gap)  # the first of the smallest gaps
        if best is None or top.gap < best.gap:
            best = top
        if best.gap <= gap_tol(best.primal):
            break
        tol /= 100.0
    return best


# ---------------------------------------------------------------------------- the oracles
def _positive(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(float(value)) or value <= 0:
        raise InputError(f"must be a positive finite number, got {value!r}", field=name)
    return float(value)


def check_grams(grams, *, name="kernels"):
    """Validate a list of square Gram matrices of one size; dense float64 or CSR.

    Parameters
    ----------
    grams : sequence of array-like or sparse matrix
    name : str, default="kernels"
        Argument name in error messages (``field`` of the InputError).

    Returns
    -------
    list of ndarray or csr_matrix, each of shape (n, n)
    """
    if callable(grams) or isinstance(grams, np.ndarray) and grams.ndim == 2:
        raise InputError("expected a list of Gram matrices, got a single matrix or callable", field=name)
    try:
        grams = list(grams)
    except TypeError:
        raise InputError(f"expected a list of Gram matrices, got {type(grams).__name__}", field=name) from None
    if not grams:
        raise InputError("needs at least one kernel", field=name)
    out, n = [], None
    for k, K in enumerate(grams):
        if sp.issparse(K):
            if K.dtype.kind not in "biuf":  # complex values would lose their imaginary part
                raise InputError(f"kernel {k}: expected real numbers, got dtype {K.dtype}", field=name)
            K = sp.csr_matrix(K, dtype=np.float64)
            data = K.data
        else:
            K = np.asarray(K)
            if K.dtype.kind not in "biuf":
                raise InputError(f"kernel {k}: expected numbers, got dtype {K.dtype}", field=name)
            K = np.ascontiguousarray(K, dtype=np.float64)
            data = K
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise InputError(f"kernel {k}: a Gram matrix must be square, got shape {K.shape}", field=name)
        if n is None:
            n = K.shape[0]
        elif K.shape[0] != n:
            raise InputError(
                f"kernel {k} is {K.shape[0]} x {K.shape[0]}, kernel 0 is {n} x {n}: "
                "all Gram matrices must be over the same samples",
                field=name,
            )
        if not np.isfinite(data).all():
            raise InputError(f"kernel {k} contains NaN or inf", field=name)
        out.append(K)
    return out


def combine_grams(grams, beta):
    """``sum_k beta_k K_k`` as a dense ndarray of shape (n, n) (kernels with beta_k = 0 skipped)."""
    n = grams[0].shape[0]
    out = np.zeros((n, n))
    for b, K in zip(beta, grams):
        if b == 0.0:
            continue
        if sp.issparse(K):
            Kc = K.tocoo()
            np.add.at(out, (Kc.row, Kc.col), b * Kc.data)
        else:
            out += b * K
    return out


def _check_labels(y, n, name="y"):
    y = np.asarray(y)
    if y.shape != (n,):
        raise InputError(f"expected shape ({n},) (one label per Gram row), got {y.shape}", field=name)
    if y.dtype.kind not in "biuf" or not np.isin(y, (-1, 1)).all():
        bad = np.unique(y)[:5] if y.dtype.kind in "biufUSO" else y.dtype
        raise InputError(f"binary labels must be -1 or +1, found {bad}", field=name)
    if not ((y > 0).any() and (y < 0).any()):
        raise InputError("both classes -1 and +1 must be present", field=name)
    return y.astype(np.float64)


class _Base:
    """Shared parameter handling of the MKL oracles."""

    def _setup(self, grams, C, svm_tol, gap_tol, max_refine, polish):
        self.grams = check_grams(grams)
        self.n_samples = self.grams[0].shape[0]
        self.dim = len(self.grams)
        self.C = _positive(C, "C")
        self.svm_tol = _positive(svm_tol, "svm_tol")
        self.gap_tol = None if gap_tol is None else _positive(gap_tol, "gap_tol")
        if isinstance(max_refine, bool) or not isinstance(max_refine, numbers.Integral) or max_refine < 0:
            raise InputError(f"must be an integer >= 0, got {max_refine!r}", field="max_refine")
        self.max_refine = int(max_refine)
        if not isinstance(polish, (bool, np.bool_)):
            raise InputError(f"must be True or False, got {polish!r}", field="polish")
        self.polish = bool(polish)
        self.risk_lower_bound = 0.0  # D(beta) >= S(0, beta) = 0
        self.n_calls = 0

    def _tolerance(self, primal):
        # floored at 1e-11 |P|: below that the measured gap is round-off (polished gaps are
        # 1e-15 to 1e-12 relative), and asking for less only re-solves in vain
        floor = 1e-11 * max(1.0, abs(primal))
        if self.gap_tol is not None:
            return max(self.gap_tol, floor)
        return 1e-6 * max(1.0, abs(primal))

    def _beta(self, beta):
        beta = np.asarray(beta, dtype=np.float64).ravel()
        if beta.shape != (self.dim,) or not np.isfinite(beta).all():
            raise InputError(f"beta must be finite of shape ({self.dim},), got {beta.shape}", field="beta")
        if (beta < -1e-9).any():
            raise InputError(f"kernel weights must be >= 0, got min {beta.min():.3g}", field="beta")
        return np.maximum(beta, 0.0)


class SVMDualOracle(_Base):
    """Oracle of ``D(beta)`` (eq. 24) for binary MKL: one libsvm solve per call.

    Parameters
    ----------
    grams : list of ndarray or sparse matrix, each of shape (n_samples, n_samples)
        Base Gram matrices ``K_k`` on the training samples.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    C : float
        SVM constant (> 0), weight of the summed hinge loss as in (21).
    svm_tol : float, default=1e-5
        libsvm's KKT tolerance for the first solve at each ``beta``.
    gap_tol : float, optional
        Accepted inner duality gap (absolute, on the scale of ``D``), floored at
        ``1e-11 * max(1, |P(beta)|)`` (round-off of the measured gap); default
        ``1e-6 * max(1, |P(beta)|)``. Above it the SVM is polished, re-solved, then marked
        inexact.
    max_refine : int, default=2
        Re-solves with a 100x smaller ``tol`` before giving up on ``gap_tol``.
    polish : bool, default=True
        Polish libsvm's ``alpha`` on its free set in double precision when the gap is above
        ``gap_tol`` (module docstring).

    Attributes
    ----------
    dim : int
        Number of kernels.
    n_calls : int
        Oracle calls so far.
    last_ : SVMSolution or None
        The inner solution of the last call.

    Notes
    -----
    ``__call__(beta)`` returns ``OracleResult(value=P(beta), cut=Cut(S(alpha), 0.0),
    exact=gap <= gap_tol, argmax=SVMSolution)``; see the module docstring for why
    ``P(beta) >= D(beta) >= S(alpha, beta)`` holds whatever libsvm's accuracy.
    """

    def __init__(self, grams, y, C, *, svm_tol=1e-5, gap_tol=None, max_refine=2, polish=True):
        self._setup(grams, C, svm_tol, gap_tol, max_refine, polish)
        self.y = _check_labels(y, self.n_samples)
        self.last_ = None

    def __call__(self, beta) -> OracleResult:
        beta = self._beta(beta)
        self.n_calls += 1
        K_beta = combine_grams(self.grams, beta)
        sol = solve_svm(
            K_beta,
            self.grams,
            beta,
            self.y,
            self.C,
            svm_tol=self.svm_tol,
            gap_tol=self._tolerance,
            max_refine=self.max_refine,
            polish=self.polish,
        )
        self.last_ = sol
        exact = sol.gap <= self._tolerance(sol.primal)
        return OracleResult(sol.primal, Cut(sol.slopes.copy(), 0.0), bool(exact), sol)


class OneVsRestMKLOracle(_Base):
    """Oracle of ``sum_c D_c(beta)``: one-vs-rest MKL with kernel weights shared by all classes.

    Each class ``c`` is the binary problem ``y_c = +1`` for class ``c``, ``-1`` otherwise; the
    value, the cut and the inner gaps are sums over the classes (a sum of convex functions,
    minimised over the simplex by the same Kelley method). The combined kernel is built once
    per call and shared by the per-class libsvm solves.

    Parameters
    ----------
    grams : list of (n_samples, n_samples) matrices
    Y : array-like of shape (n_samples, n_classes)
        One-vs-rest labels in {-1, +1}, one column per class.
    C, svm_tol, max_refine, polish
        As in :class:`SVMDualOracle`.
    gap_tol : float, optional
        Accepted inner gap per class (default ``1e-6 * max(1, P_c(beta))``); the call is
        exact when every class meets its tolerance.

    Attributes
    ----------
    dim, n_calls
    last_ : list of SVMSolution or None
        Per-class inner solutions of the last call.
    """

    def __init__(self, grams, Y, C, *, svm_tol=1e-5, gap_tol=None, max_refine=2, polish=True):
        self._setup(grams, C, svm_tol, gap_tol, max_refine, polish)
        Y = np.asarray(Y)
        if Y.ndim != 2 or Y.shape[0] != self.n_samples:
            raise InputError(f"expected shape ({self.n_samples}, n_classes), got {Y.shape}", field="Y")
        self.Y = np.column_stack([_check_labels(Y[:, c], self.n_samples, f"Y[:, {c}]") for c in range(Y.shape[1])])
        self.last_ = None

    def __call__(self, beta) -> OracleResult:
        beta = self._beta(beta)
        self.n_calls += 1
        K_beta = combine_grams(self.grams, beta)
        sols = [
            solve_svm(
                K_beta,
                self.grams,
                beta,
                self.Y[:, c],
                self.C,
                svm_tol=self.svm_tol,
                gap_tol=self._tolerance,
                max_refine=self.max_refine,
                polish=self.polish,
            )
            for c in range(self.Y.shape[1])
        ]
        self.last_ = sols
        value = float(sum(s.primal for s in sols))
        slope = np.sum([s.slopes for s in sols], axis=0)
        exact = all(s.gap <= self._tolerance(s.primal) for s in sols)
        return OracleResult(value, Cut(slope, 0.0), bool(exact), sols)
