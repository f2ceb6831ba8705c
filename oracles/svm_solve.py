"""The inner SVM solve of the Kelley MKL oracle, with its duality gap measured.

:func:`solve_svm` solves the SVM dual on a combined kernel ``K_beta`` by libsvm (scikit-learn's
``SVC(kernel="precomputed")``), makes ``alpha`` exactly feasible, evaluates the primal SVM
objective at the recovered primal point (bias by :func:`best_bias`; the reported bias by
:func:`free_sv_bias`, eq. 27) and the dual, polishes ``alpha`` on libsvm's free set in double
precision and re-solves with a smaller tolerance while the gap is above the accepted one. The
result is an :class:`SVMSolution`. Why both bounds are rigorous is explained in
:mod:`oracles.mkl`, the oracles that call it (moved here from that module, which re-exports
these names).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import SolverError

__all__ = ["SVMSolution", "solve_svm", "best_bias", "free_sv_bias"]



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
    return SVMSolution(alpha, b_opt if b is None else b, primal, dual, max(primal - dual, 0.0),
                       slopes, tol, int(idx.size))


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
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):   # singular Q_JJ (low-rank kernel)
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
        except ValueError as exc:           # libsvm input errors, surfaced as one clear error
            raise SolverError(f"libsvm failed on the combined kernel: {exc}") from None
        alpha = np.zeros(y.shape[0])
        alpha[svc.support_] = np.abs(svc.dual_coef_.ravel())
        alpha = _feasible_alpha(alpha, y, C)
        cand = [_evaluate(alpha, K_beta, grams, beta, y, C, tol)]
        if polish and cand[0].gap > gap_tol(cand[0].primal):
            polished = _polish(alpha, K_beta, y, C)
            if polished is not None:
                cand.append(_evaluate(polished, K_beta, grams, beta, y, C, tol))
        for sol in cand:
            if best is None or sol.gap < best.gap:
                best = sol
        if best.gap <= gap_tol(best.primal):
            break
        tol /= 100.0
    return best
