r"""Wrapper MKL baselines: Gauss-Seidel alternation and SimpleMKL, on Kelley MKL's objective.

Both minimise exactly what :class:`problems.KelleyMKL` minimises, ``min_{beta in simplex}
D(beta)`` (chapter eq. 26; summed over the one-vs-rest classes when ``beta`` is shared), with
the same oracle (:mod:`oracles.mkl`: one libsvm solve with ``K_beta = sum_k beta_k K_k``, the
primal value ``P(beta) >= D(beta)`` and ``S_k(alpha) = 1^T alpha - 1/2 q_k``,
``q_k = (y o alpha)^T K_k (y o alpha)``). Only the update of ``beta`` differs
(:mod:`cutplane.mkl_steps`, with ``lam = 1`` and ``||v_k||^2 = beta_k^2 q_k``, since the SVM's
primal blocks are ``v_k = beta_k sum_i alpha_i y_i phi_k(x_i)``, eq. 27):

- **Gauss-Seidel** (alternating minimisation, e.g. Kloft et al. 2010): solve the SVM at
  ``beta``, then ``beta_k <- ||v_k|| / sum_j ||v_j||`` (the exact minimiser over the simplex
  with the SVM held fixed);
- **SimpleMKL** (Rakotomamonjy et al. 2008): reduced-gradient step with
  ``dD/dbeta_k = -1/2 q_k`` (Danskin), direction of their eq. 13, step by an exact line search
  on the upper bound with ``v`` fixed (:func:`cutplane.mkl_steps.simplemkl_step`); before
  it, SimpleMKL's "descent all the way" (go to where the first weight reaches 0 along the
  direction, kept when the SVM solve there lowers ``D``; after a failed attempt the next one
  waits twice as many iterations). The kernel weights of a vertex optimum are otherwise only
  approached geometrically, since the fixed-``v`` bound is infinite where a weight with a
  nonzero block vanishes; and, when neither step lowers ``D``, backtracking on ``D`` itself
  (SVM solves), through which a kernel of zero weight can re-enter.

Certificate. Every ``alpha`` of the iterations is feasible for every ``beta``, so
``min D >= min_{beta in simplex} S(alpha, beta) = min_k S_k(alpha)`` (the MKL duality gap of
SimpleMKL's stopping rule); the wrappers keep the best such lower bound and the best
``P(beta)`` and stop when their difference is at most ``eps``: the same kind of certified
gap as Kelley's (whose LP bound over all cuts is at least as tight), so the three methods
stop on comparable guarantees. Warm starts: libsvm as wrapped by scikit-learn cannot be
warm-started in ``alpha``; every SVM solve starts cold (SPOM's Fig. 2 used structured
PEGASOS, warm-started, as the inner solver).

The estimators :class:`GaussSeidelMKL` and :class:`SimpleMKL` are :class:`KelleyMKL` with
the outer loop replaced: same parameters, kernels, one-vs-rest modes, prediction and
attributes (``result_`` is a :class:`WrapperResult`).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from cutplane.exceptions import InputError

from problems.mkl.kelley import KelleyMKL

__all__ = ["wrapper_mkl", "WrapperResult", "WrapperHistory", "GaussSeidelMKL", "SimpleMKL", "METHODS"]

logger = logging.getLogger("problems.mkl.wrappers")

METHODS = ("gauss-seidel", "simplemkl")


@dataclass
class WrapperHistory:
    """Per iteration (one oracle call each), arrays of shape (n_iter,) unless stated.

    Attributes
    ----------
    beta : ndarray of shape (n_iter, n_kernels)
        The weights the oracle was called at.
    value : ndarray
        ``P(beta_t)``.
    best_upper : ndarray
        Smallest ``P`` so far.
    lower : ndarray
        Best lower bound ``max_{s <= t} min_k S_k(alpha_s)`` so far.
    gap : ndarray
        ``best_upper - lower``.
    time : ndarray
        Seconds since the start.
    """

    beta: np.ndarray
    value: np.ndarray
    best_upper: np.ndarray
    lower: np.ndarray
    gap: np.ndarray
    time: np.ndarray

    def __len__(self) -> int:
        return int(self.value.shape[0])


@dataclass
class WrapperResult:
    """The outcome of :func:`wrapper_mkl` (the fields :class:`KelleyMKL` reads from an engine result).

    Attributes
    ----------
    w : ndarray of shape (n_kernels,)
        ``beta`` with the smallest ``P(beta)`` seen.
    objective : float
        That ``P(beta)``: an upper bound on ``min D``.
    lower_bound : float
        Certified lower bound on ``min D``.
    gap : float
        ``objective - lower_bound``.
    n_iter : int
        Oracle calls (SVM solves, per class for shared one-vs-rest).
    status : str
        ``"converged"`` (gap <= eps), ``"max_iter"``, ``"time_limit"`` or ``"stalled"`` (the
        update left ``beta`` unchanged with the gap above eps: the inner solves are too inexact).
    exact : bool
        Every oracle call met its inner gap tolerance.
    method : str
    history : WrapperHistory
    argmax : object
        The oracle's inner solution(s) at ``w``.
    time_s, oracle_time_s, solver_time_s : float
        Total, in libsvm, and in the ``beta`` updates.
    backend : str
        ``"closed form"`` (Gauss-Seidel) or ``"reduced gradient"`` (SimpleMKL), for reports.
    """

    w: np.ndarray
    objective: float
    lower_bound: float
    gap: float
    n_iter: int
    status: str
    exact: bool
    method: str
    history: WrapperHistory
    argmax: object
    time_s: float
    oracle_time_s: float
    solver_time_s: float
    backend: str


def _alpha_sum(argmax) -> float:
    sols = argmax if isinstance(argmax, list) else [argmax]
    return float(sum(np.sum(s.alpha) for s in sols))


class _Stop(Exception):
    """Raised by the evaluation that ends the run (status in ``args[0]``)."""


def wrapper_mkl(oracle, method="gauss-seidel", *, eps=1e-3, max_iter=200, time_limit=None, beta0=None,
                callback=None) -> WrapperResult:
    """Minimise ``D(beta)`` over the simplex by a wrapper method; see the module docstring.

    Parameters
    ----------
    oracle : oracles.mkl.SVMDualOracle or OneVsRestMKLOracle
        ``oracle(beta) -> OracleResult(P(beta), Cut(S(alpha), 0), exact, SVMSolution(s))``.
    method : {"gauss-seidel", "simplemkl"}
    eps : float > 0
        Certified absolute gap on the scale of ``D``.
    max_iter : int
        Oracle calls (SimpleMKL's trial points included).
    time_limit : float, optional
        Seconds.
    beta0 : array-like of shape (n_kernels,), optional
        Start (default uniform); must lie on the simplex.
    callback : callable, optional
        ``callback(t, beta, best_upper, lower)`` after each oracle call; returning True stops.

    Returns
    -------
    WrapperResult
    """
    from cutplane.mkl_steps import check_simplex

    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}", field="method")
    if not (np.isfinite(eps) and eps > 0):
        raise InputError(f"eps must be finite and > 0, got {eps!r}", field="eps")
    if isinstance(max_iter, bool) or int(max_iter) != max_iter or max_iter < 1:
        raise InputError(f"max_iter must be an integer >= 1, got {max_iter!r}", field="max_iter")
    K = int(oracle.dim)
    beta = np.full(K, 1.0 / K) if beta0 is None else check_simplex(beta0, K)
    t0 = time.perf_counter()
    rows = []
    st = {"best_upper": np.inf, "lower": -np.inf, "best": None, "oracle": 0.0, "exact": True}

    def evaluate(b):
        """One oracle call at ``b``: bounds, history, stopping rules; returns the OracleResult."""
        tic = time.perf_counter()
        res = oracle(b)
        st["oracle"] += time.perf_counter() - tic
        st["exact"] = st["exact"] and bool(res.exact)
        S = np.asarray(res.cut.slope, dtype=np.float64).ravel()
        if res.value < st["best_upper"]:
            st["best_upper"], st["best"] = float(res.value), (b.copy(), res.argmax)
        st["lower"] = max(st["lower"], float(S.min()))  # any feasible alpha bounds min D from below
        up, lo = st["best_upper"], st["lower"]
        rows.append((b.copy(), float(res.value), up, lo, up - lo, time.perf_counter() - t0))
        logger.info("%s call %d: P %.10g, best %.10g, lower %.10g, gap %.3g", method, len(rows), res.value, up,
                    lo, up - lo)
        if up - lo <= eps:
            raise _Stop("converged")
        if callback is not None and callback(len(rows), b.copy(), up, lo):
            raise _Stop("callback")
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            raise _Stop("time_limit")
        if len(rows) >= int(max_iter):
            raise _Stop("max_iter")
        return res

    status = "stalled"
    try:
        if method == "gauss-seidel":
            _gauss_seidel(evaluate, beta)
        else:
            _simplemkl(evaluate, beta)
    except _Stop as stop:
        status = stop.args[0]
    cols = list(zip(*rows))
    hist = WrapperHistory(np.array(cols[0]), *(np.asarray(c, dtype=np.float64) for c in cols[1:]))
    elapsed = time.perf_counter() - t0
    up, lo = st["best_upper"], st["lower"]
    return WrapperResult(w=st["best"][0], objective=up, lower_bound=lo, gap=up - lo, n_iter=len(rows), status=status,
                         exact=st["exact"], method=method, history=hist, argmax=st["best"][1], time_s=elapsed,
                         oracle_time_s=st["oracle"], solver_time_s=elapsed - st["oracle"],
                         backend="closed form" if method == "gauss-seidel" else "reduced gradient")


def _sq_blocks(beta, res):
    """``||v_k||^2 = beta_k^2 q_k`` with ``q_k = 2 (1^T alpha - S_k(alpha))`` summed over the classes."""
    S = np.asarray(res.cut.slope, dtype=np.float64).ravel()
    q = np.maximum(2.0 * (_alpha_sum(res.argmax) - S), 0.0)
    return beta * beta * q


def _gauss_seidel(evaluate, beta):
    """SVM at ``beta``, then ``beta_k <- ||v_k|| / sum_j ||v_j||``, until a stopping rule fires."""
    from cutplane.mkl_steps import gauss_seidel_weights

    while True:
        res = evaluate(beta)
        new = gauss_seidel_weights(np.sqrt(_sq_blocks(beta, res)))
        if np.array_equal(new, beta):
            return
        beta = new


def _simplemkl(evaluate, beta, n_bisect=3):
    """SimpleMKL (Rakotomamonjy et al. 2008, Alg. 1): reduced gradient with a line search on ``D``.

    At the accepted point ``beta``: the gradient ``dD/dbeta_k = S_k(alpha)`` (Danskin; this is
    ``-1/2 q_k`` up to a constant, and unlike the block-norm gradient of
    :func:`cutplane.mkl_steps.mkl_gradient` it is also right for ``beta_k = 0``, so a kernel can
    re-enter) and the reduced direction ``D`` (:func:`cutplane.mkl_steps.simplemkl_direction`).
    ``D`` is convex along ``beta + gamma D`` and each SVM solve there gives its slope
    ``<S(alpha'), D>``, so the line search brackets the minimiser by that sign:

    1. SimpleMKL's "descent all the way": the point ``gamma_max`` where the first weight reaches
       0; accepted when the slope there is still <= 0 (after a failed try the next one waits
       twice as many iterations);
    2. the step of the exact line search on the fixed-``v`` upper bound
       (:func:`cutplane.mkl_steps.simplemkl_step`, no SVM solve) as the first trial inside the
       bracket, then ``n_bisect`` bisections;
    3. the largest trial with a negative slope is accepted (``D`` is lower there); failing that,
       the trial with the smallest ``P`` if below the current one; else the run has stalled
       (the inner solves are too inexact to see a descent).
    """
    from cutplane.mkl_steps import simplemkl_direction, simplemkl_max_step, simplemkl_step

    res = evaluate(beta)
    skip = wait = 0
    while True:
        S = np.asarray(res.cut.slope, dtype=np.float64).ravel()
        D = simplemkl_direction(S, beta)
        if not np.any(D) or float(S @ D) >= 0:
            return

        def point(gamma):
            b = np.maximum(beta + gamma * D, 0.0)
            if gamma == gmax:
                b[np.isclose(beta, -gmax * D, rtol=1e-12, atol=0.0) & (D < 0)] = 0.0
            return b / b.sum()

        gmax = simplemkl_max_step(beta, D)
        lo, hi = 0.0, gmax if np.isfinite(gmax) else np.inf
        tried = []
        if np.isfinite(gmax) and gmax > 0 and wait == 0:
            cand = point(gmax)
            trial = evaluate(cand)
            if float(np.asarray(trial.cut.slope).ravel() @ D) <= 0:
                beta, res, skip = cand, trial, 0
                continue
            tried.append((trial.value, cand, trial))
            skip = max(1, 2 * skip)
            wait = skip
        else:
            wait = max(wait - 1, 0)
        g_s = simplemkl_step(beta * beta * np.maximum(2.0 * (_alpha_sum(res.argmax) - S), 0.0), beta, 1.0).step
        gamma = g_s if 0 < g_s < hi else (0.5 * hi if np.isfinite(hi) else 1.0)
        best_lo = None
        for _ in range(1 + n_bisect):
            cand = point(gamma)
            trial = evaluate(cand)
            tried.append((trial.value, cand, trial))
            if float(np.asarray(trial.cut.slope).ravel() @ D) < 0:
                lo, best_lo = gamma, (cand, trial)
            else:
                hi = gamma
            gamma = 0.5 * (lo + hi) if np.isfinite(hi) else 2.0 * lo
        if best_lo is not None:
            beta, res = best_lo
            continue
        value, cand, trial = min(tried, key=lambda r: r[0])
        if not value < res.value:
            return
        beta, res = cand, trial


class _WrapperMKL(KelleyMKL):
    """:class:`KelleyMKL` with the Kelley loop replaced by :func:`wrapper_mkl` (``_method``)."""

    _method = None

    def _run(self, minimize, oracle, simplex, kw):
        res = wrapper_mkl(oracle, self._method, eps=kw["eps"], max_iter=kw["max_iter"], time_limit=kw["time_limit"])
        argmax = res.argmax
        return res, (argmax if isinstance(argmax, list) else [argmax])


class GaussSeidelMKL(_WrapperMKL):
    """MKL by Gauss-Seidel alternation (SVM solve, closed-form ``beta``); parameters and
    attributes as :class:`problems.KelleyMKL` (``solver`` is unused)."""

    _method = "gauss-seidel"


class SimpleMKL(_WrapperMKL):
    """MKL by SimpleMKL's reduced gradient on ``beta``; parameters and attributes as
    :class:`problems.KelleyMKL` (``solver`` is unused)."""

    _method = "simplemkl"
