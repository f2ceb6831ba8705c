r"""Wrapper MKL: Gauss-Seidel alternation and SimpleMKL, an outer loop on the kernel weights.

A *wrapper* keeps the kernel weights ``beta`` on the simplex outside an ordinary SVM: solve the
SVM with the kernel ``K_beta = sum_k beta_k K_k`` (equivalently, features of block ``k`` scaled by
``sqrt(beta_k)``), then update ``beta`` from the SVM's primal blocks ``v_k`` (eq. 27:
``v_k = beta_k sum_i alpha_i y_i phi_k(x_i)``) by one of the two rules of
:mod:`problems.mkl.steps`:

- **Gauss-Seidel** (alternating minimisation, e.g. Kloft et al. 2010):
  ``beta_k <- ||v_k|| / sum_j ||v_j||``, the exact minimiser over the simplex with the SVM held
  fixed;
- **SimpleMKL** (Rakotomamonjy et al. 2008): a reduced-gradient step with
  ``dD/dbeta_k = -1/2 ||v_k||^2 / beta_k^2`` (Danskin), direction of their eq. 13.

:func:`wrapper_mkl` runs either rule with one of two inner SVM solvers, and returns one
:class:`WrapperResult`:

**libsvm on the SVM dual** (``inner=None``; the solver of :class:`problems.mkl.MKL` with
``solver=Wrapper(...)``). The oracle is one of :mod:`oracles.mkl` (one libsvm solve with
``K_beta``, the primal value ``P(beta) >= D(beta)`` and ``S_k(alpha) = 1^T alpha - 1/2 q_k``,
``q_k = (y o alpha)^T K_k (y o alpha)``, so ``||v_k||^2 = beta_k^2 q_k``); the wrappers minimise
exactly what Kelley's method minimises, ``min_{beta in simplex} D(beta)`` (Franc et al. 2012, eq. 26, summed
over the one-vs-rest classes when ``beta`` is shared). Since ``D`` and its slope along a
direction are available at every SVM solve, SimpleMKL's step is a line search on ``D`` itself:
first SimpleMKL's "descent all the way" (go to where the first weight reaches 0 along the
direction, kept when the SVM solve there lowers ``D``; after a failed attempt the next one waits
twice as many iterations), then the exact line search on the fixed-``v`` upper bound
(:func:`problems.mkl.steps.simplemkl_step`) as the first trial of a bisection on the sign of
the slope of ``D``, through which a kernel of zero weight can re-enter.

*Certificate.* Every ``alpha`` of the iterations is feasible for every ``beta``, so
``min D >= min_{beta in simplex} S(alpha, beta) = min_k S_k(alpha)`` (the MKL duality gap of
SimpleMKL's stopping rule); the run keeps the best such lower bound and the best ``P(beta)``
and stops when their difference is at most ``eps``: the same kind of certified gap as
Kelley's (whose LP bound over all cuts is at least as tight), so the methods stop on
comparable guarantees. libsvm as wrapped by scikit-learn cannot be warm-started in ``alpha``;
every SVM solve starts cold.

**Structured PEGASOS on explicit feature blocks** (``inner=PegasosInner(lam, groups, ...)``; the
baseline of SPOM's Fig. 2). The oracle is a structured risk ``R`` with a per-example protocol
(:func:`cutplane.online.example_oracles.as_example_oracle`) over features grouped into blocks,
and the problem is the l1 MKL problem that SPOM and MTL^struct solve,

.. math:: F(w) = \lambda\, \frac12 \Big(\sum_k \|w_k\|\Big)^2 + R(w)
          \qquad (= \texttt{lam * MixedNorm(groups, p=1)(w) + R(w)}).

An outer iteration: (1) PEGASOS (:func:`cutplane.online.pegasos.pegasos`) on
``lam/2 ||u||^2 + R(sqrt(beta) o u)``, ``first_epochs`` epochs in the first call and
``later_epochs`` in the later ones, warm-started from the previous ``u`` and continuing its
step-size schedule; (2) the block norms ``||v_k||`` of the predictor ``v = sqrt(beta) o u``;
(3) the update of ``beta`` (SimpleMKL: one reduced-gradient step with the exact line search of
:func:`~problems.mkl.steps.simplemkl_step`, as no exact ``D`` is at hand); (4) the warm start
``u_k = v_k / sqrt(beta_k)`` (0 where ``beta_k = 0``), so the predictor, hence ``F``, is
unchanged by the update. ``F`` at the current predictor is recorded after every PEGASOS epoch
(``F(w) <= lam/2 ||u||^2 + R(w)`` by Cauchy-Schwarz): the same function, on the same ``lam``
scale, as :func:`cutplane.online.spom` and ``cutplane.minimize(oracle, MixedNorm(groups, p=1),
lam)``. There is no certificate (``lower_bound`` and ``gap`` are None); the budget is
``PegasosInner.max_passes`` epochs.

:class:`Wrapper` is the solver object that selects this loop in :class:`problems.mkl.MKL`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np

from cutplane.exceptions import InputError, SolverError
from problems.mkl.steps import (
    check_simplex,
    gauss_seidel_weights,
    simplemkl_direction,
    simplemkl_max_step,
    simplemkl_step,
)
from problems.solvers import OptionSet, Param, check_params
from problems.validation import check_choice, check_int, check_positive

__all__ = [
    "Wrapper",
    "WrapperOptions",
    "wrapper_mkl",
    "PegasosInner",
    "WrapperResult",
    "WrapperHistory",
    "WrapperInfo",
    "METHODS",
]

logger = logging.getLogger("problems.mkl.wrappers")

#: The kernel-weight update rules of :func:`wrapper_mkl` and :class:`Wrapper`.
METHODS = ("gauss-seidel", "simplemkl")


# --------------------------------------------------------------------------- the solver object
@dataclass(frozen=True)
class WrapperOptions:
    """The validated options of a :class:`Wrapper`, with the estimator's defaults filled in."""

    method: str
    eps: float
    max_iter: int
    time_limit: float | None

    def minimize_simplex(self, oracle) -> tuple:
        """Minimise ``oracle``'s ``D(beta)`` over the simplex by this wrapper
        (:func:`wrapper_mkl`), as :meth:`problems.solvers.CuttingPlaneOptions.minimize_simplex`
        does by Kelley's method.

        Returns
        -------
        result : WrapperResult
        argmax : object
            The inner SVM solution(s) at the returned ``beta``.
        """
        res = wrapper_mkl(oracle, self.method, eps=self.eps, max_iter=self.max_iter, time_limit=self.time_limit)
        return res, res.argmax


class Wrapper(OptionSet):
    """A wrapper method (Gauss-Seidel or SimpleMKL, libsvm inside) as the solver of :class:`problems.mkl.MKL`.

    Runs :func:`wrapper_mkl` on the estimator's SVM-dual oracle: the same objective ``D(beta)``
    and the same kind of certified gap as Kelley's method (``CuttingPlane(method="kelley")``).
    Compared by value, as the other solver objects (:class:`~problems.solvers.OptionSet`): an
    estimator and its clone have equal parameters.

    Parameters
    ----------
    method : {"gauss-seidel", "simplemkl"}, default="gauss-seidel"
        The kernel-weight update (module docstring).
    eps : float, optional
        Certified absolute gap of ``min D`` (summed over the classes sharing ``beta``).
        None: the estimator's default (1e-3).
    max_iter : int, optional
        Oracle calls (SVM solves per class, SimpleMKL's trial points included). None: the
        estimator's default (200).
    time_limit : float, optional
        Seconds per run.
    """

    #: The declarative parameter table: checked at ``fit`` by :meth:`checked`.
    PARAMETERS: ClassVar[dict] = {
        "method": Param(lambda v, n: check_choice(v, n, METHODS), "kernel-weight update"),
        "eps": Param(lambda v, n: check_positive(v, n), "certified tolerance on D", allow_none=True),
        "max_iter": Param(lambda v, n: check_int(v, n), "oracle-call limit", allow_none=True),
        "time_limit": Param(lambda v, n: check_positive(v, n), "wall-clock limit (s)", allow_none=True),
    }

    def __init__(self, *, method="gauss-seidel", eps=None, max_iter=None, time_limit=None):
        self.method = method
        self.eps = eps
        self.max_iter = max_iter
        self.time_limit = time_limit

    def checked(self, *, eps: float, max_iter: int) -> WrapperOptions:
        """The options, validated, with ``eps`` / ``max_iter`` defaulting to the given values.

        Raises
        ------
        InputError
            A bad option (``field`` is its name).
        """
        prm = check_params(self, self.PARAMETERS)
        prm["eps"] = eps if prm["eps"] is None else prm["eps"]
        prm["max_iter"] = max_iter if prm["max_iter"] is None else prm["max_iter"]
        return WrapperOptions(**prm)


# --------------------------------------------------------------------------- results
@dataclass
class WrapperHistory:
    """One point per oracle call (libsvm) or per PEGASOS epoch, arrays of shape (n_points,).

    With PEGASOS the first point is ``w = 0`` before any epoch.

    Attributes
    ----------
    objective : ndarray
        ``P(beta_t)`` of the oracle call (libsvm), or ``F(w)`` at the current predictor (PEGASOS).
    best_upper : ndarray
        Smallest ``objective`` so far.
    lower : ndarray or None
        Best lower bound ``max_{s <= t} min_k S_k(alpha_s)`` so far (libsvm); None with PEGASOS.
    gap : ndarray or None
        ``best_upper - lower`` (libsvm); None with PEGASOS.
    time : ndarray
        Seconds since the start.
    train_time : ndarray
        Seconds in the SVM solves and the ``beta`` updates (PEGASOS: evaluations of ``F``
        excluded; libsvm: equal to ``time``).
    outer : ndarray of int
        SVM call of the point, 0-based (-1 at PEGASOS' starting point).
    passes : ndarray or None
        PEGASOS epochs so far (None with libsvm).
    beta : ndarray of shape (n_points, n_kernels)
        The kernel weights of the point's SVM call.
    """

    objective: np.ndarray
    best_upper: np.ndarray
    lower: np.ndarray | None
    gap: np.ndarray | None
    time: np.ndarray
    train_time: np.ndarray
    outer: np.ndarray
    passes: np.ndarray | None
    beta: np.ndarray

    def __len__(self) -> int:
        return int(self.objective.shape[0])


@dataclass
class WrapperResult:
    """The outcome of :func:`wrapper_mkl`.

    Attributes
    ----------
    w : ndarray
        The point where ``objective`` was evaluated: the kernel weights ``beta`` with the
        smallest ``P(beta)`` (libsvm: the variable of ``min D(beta)``, as ``w`` of the engine's
        result for Kelley's method), or the predictor ``sqrt(beta) o u`` in the original feature
        space (PEGASOS: the variable of ``F``).
    beta : ndarray of shape (n_kernels,)
        The kernel weights of the returned model (PEGASOS: those of the last SVM call).
    objective : float
        libsvm: the best ``P(beta)``, an upper bound on ``min D``; PEGASOS: ``F(w)``.
    lower_bound : float or None
        Certified lower bound on ``min D`` (libsvm); None with PEGASOS.
    gap : float or None
        ``objective - lower_bound`` (libsvm); None with PEGASOS.
    n_iter : int
        SVM calls (libsvm: oracle calls, per class for shared one-vs-rest, SimpleMKL's trial
        points included).
    status : str
        ``"converged"`` (gap <= eps, libsvm), ``"max_iter"``, ``"max_passes"`` (PEGASOS),
        ``"time_limit"``, ``"callback"`` or ``"stalled"`` (libsvm: the update left ``beta``
        unchanged with the gap above eps: the inner solves are too inexact).
    exact : bool
        Every oracle call met its inner gap tolerance (libsvm); False with PEGASOS, whose
        inner gap is not measured.
    method : str
    history : WrapperHistory
    beta_history : ndarray of shape (n_updates + 1, n_kernels)
        ``beta`` before every SVM call whose update was made, and the final one (PEGASOS);
        the distinct ``beta`` of the oracle calls in order (libsvm).
    passes : int or None
        PEGASOS epochs in total (None with libsvm).
    argmax : object
        The oracle's inner solution(s) at ``w`` (libsvm); None with PEGASOS.
    time_s, oracle_time_s, solver_time_s : float
        Training seconds (PEGASOS: evaluations of ``F`` excluded), of which in the SVM solves,
        and in the ``beta`` updates.
    backend : str
        ``"closed form"`` (Gauss-Seidel) or ``"reduced gradient"`` (SimpleMKL), for reports.
    """

    w: np.ndarray
    beta: np.ndarray
    objective: float
    lower_bound: float | None
    gap: float | None
    n_iter: int
    status: str
    exact: bool
    method: str
    history: WrapperHistory
    beta_history: np.ndarray
    passes: int | None
    argmax: object
    time_s: float
    oracle_time_s: float
    solver_time_s: float
    backend: str


class WrapperInfo(NamedTuple):
    """What :func:`wrapper_mkl` hands its ``callback`` after each oracle call (libsvm) or epoch (PEGASOS).

    Attributes
    ----------
    n_calls : int
        SVM calls so far (the current one included).
    passes : int or None
        PEGASOS epochs so far (None with libsvm).
    beta : ndarray of shape (n_kernels,)
        Kernel weights of the current SVM call.
    objective : float
        ``P(beta)`` of the call (libsvm) or ``F`` at the current predictor (PEGASOS).
    best_upper : float
    lower : float or None
        Best certified lower bound (libsvm); None with PEGASOS.
    w : ndarray
        ``beta`` (libsvm) or the current predictor (PEGASOS); do not modify.
    """

    n_calls: int
    passes: int | None
    beta: np.ndarray
    objective: float
    best_upper: float
    lower: float | None
    w: np.ndarray


@dataclass(eq=False)
class PegasosInner:
    """Structured PEGASOS as the inner SVM of :func:`wrapper_mkl` (SPOM's Fig. 2), and its problem.

    Parameters
    ----------
    lam : float > 0
        Weight of the MKL regulariser (``lam = 1/C`` on the scale ``Omega + C * mean loss``).
    groups : array-like of int of shape (dim,)
        Kernel (block) of every coordinate.
    n_groups : int, optional
    first_epochs, later_epochs : int, default=20, 3
        PEGASOS epochs of the first and of each later SVM call.
    max_passes : int, default=100
        Budget of PEGASOS epochs in total (the last call is cut to fit).
    seed : int or None, default=0
        ``np.random.default_rng(seed)`` draws every PEGASOS epoch order.
    batch_oracle : callable, optional
        ``batch_oracle(w).value = R(w)`` for the objective; default the oracle when callable.
    project : bool, default=True
        PEGASOS projection onto ``||u|| <= sqrt(2 R(0) / lam)``.
    """

    lam: float
    groups: Any
    n_groups: int | None = None
    first_epochs: int = 20
    later_epochs: int = 3
    max_passes: int = 100
    seed: Any = 0
    batch_oracle: Any = None
    project: bool = True


# --------------------------------------------------------------------------- the loop
def wrapper_mkl(
    oracle, method="gauss-seidel", *, inner=None, eps=1e-3, max_iter=None, time_limit=None, beta0=None, callback=None
) -> WrapperResult:
    """Minimise an MKL objective over the kernel weights by a wrapper method; see the module docstring.

    Parameters
    ----------
    oracle : oracles.mkl.SVMDualOracle, OneVsRestMKLOracle, or a per-example structured oracle
        With ``inner=None``: ``oracle(beta) -> OracleResult(P(beta), Cut(S(alpha), 0), exact,
        SVMSolution(s))``. With a :class:`PegasosInner`: an ``ExampleOracle`` or an oracle with
        ``example_oracle`` / ``loss_augmented`` (per-example losses over the feature blocks).
    method : {"gauss-seidel", "simplemkl"}
    inner : PegasosInner, optional
        None: the oracle's libsvm solves (certified gap). A :class:`PegasosInner`: structured
        PEGASOS on explicit features, warm-started (no certificate).
    eps : float > 0, default=1e-3
        Certified absolute gap on the scale of ``D`` (libsvm; unused with PEGASOS).
    max_iter : int, optional
        SVM calls (libsvm: oracle calls, SimpleMKL's trial points included; default 200;
        PEGASOS: default unlimited, the budget is then ``inner.max_passes`` epochs).
    time_limit : float, optional
        Seconds (PEGASOS: training seconds, checked after every epoch).
    beta0 : array-like of shape (n_kernels,), optional
        Start (default uniform); must lie on the simplex.
    callback : callable, optional
        ``callback(WrapperInfo)`` after each oracle call (libsvm) or epoch (PEGASOS);
        returning True stops with status ``"callback"``.

    Returns
    -------
    WrapperResult
    """
    if method not in METHODS:
        raise InputError(f"method must be one of {METHODS}, got {method!r}", field="method")
    if max_iter is not None and (isinstance(max_iter, bool) or int(max_iter) != max_iter or max_iter < 1):
        raise InputError(f"max_iter must be an integer >= 1, got {max_iter!r}", field="max_iter")
    if inner is None:
        if not (np.isfinite(eps) and eps > 0):
            raise InputError(f"eps must be finite and > 0, got {eps!r}", field="eps")
        return _dual_run(
            oracle, method, float(eps), 200 if max_iter is None else int(max_iter), time_limit, beta0, callback
        )
    if not isinstance(inner, PegasosInner):
        raise InputError(f"inner must be None or a PegasosInner, got {type(inner).__name__}", field="inner")
    return _pegasos_run(oracle, method, inner, max_iter, time_limit, beta0, callback)


# ------------------------------------------------------------------ libsvm: D(beta) with a certificate
def _alpha_sum(argmax) -> float:
    sols = argmax if isinstance(argmax, list) else [argmax]
    return float(sum(np.sum(s.alpha) for s in sols))


class _Stop(Exception):
    """Raised by the evaluation that ends the run (status in ``args[0]``)."""


@dataclass
class _DualRunState:
    """What the evaluations of a libsvm wrapper run keep: the bounds, the best point so far
    (``(beta, argmax)``), the oracle's seconds and whether every call was exact."""

    best_upper: float = np.inf
    lower: float = -np.inf
    best: tuple[np.ndarray, Any] | None = None
    oracle: float = 0.0
    exact: bool = True


def _dual_run(oracle, method, eps, max_iter, time_limit, beta0, callback) -> WrapperResult:
    K = int(oracle.dim)
    beta = np.full(K, 1.0 / K) if beta0 is None else check_simplex(beta0, K)
    t0 = time.perf_counter()
    rows = []
    st = _DualRunState()

    def evaluate(b):
        """One oracle call at ``b``: bounds, history, stopping rules; returns the OracleResult."""
        tic = time.perf_counter()
        res = oracle(b)
        st.oracle += time.perf_counter() - tic
        st.exact = st.exact and bool(res.exact)
        S = np.asarray(res.cut.slope, dtype=np.float64).ravel()
        if res.value < st.best_upper:
            st.best_upper, st.best = float(res.value), (b.copy(), res.argmax)
        st.lower = max(st.lower, float(S.min()))  # any feasible alpha bounds min D from below
        up, lo = st.best_upper, st.lower
        rows.append((b.copy(), float(res.value), up, lo, up - lo, time.perf_counter() - t0))
        logger.info(
            "%s call %d: P %.10g, best %.10g, lower %.10g, gap %.3g", method, len(rows), res.value, up, lo, up - lo
        )
        if up - lo <= eps:
            raise _Stop("converged")
        if callback is not None and callback(
            WrapperInfo(len(rows), None, b.copy(), float(res.value), up, lo, b.copy())
        ):
            raise _Stop("callback")
        if time_limit is not None and time.perf_counter() - t0 > time_limit:
            raise _Stop("time_limit")
        if len(rows) >= max_iter:
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
    betas = np.array([r[0] for r in rows])
    times = np.array([r[5] for r in rows])
    hist = WrapperHistory(
        objective=np.array([r[1] for r in rows]),
        best_upper=np.array([r[2] for r in rows]),
        lower=np.array([r[3] for r in rows]),
        gap=np.array([r[4] for r in rows]),
        time=times,
        train_time=times.copy(),
        outer=np.arange(len(rows)),
        passes=None,
        beta=betas,
    )
    distinct = [0] + [i for i in range(1, len(rows)) if not np.array_equal(betas[i], betas[i - 1])]
    elapsed = time.perf_counter() - t0
    up, lo = st.best_upper, st.lower
    if st.best is None:  # every value was NaN or +inf
        raise SolverError(f"the SVM oracle returned no finite value in {len(rows)} call(s)")
    best_beta, argmax = st.best
    return WrapperResult(
        w=best_beta,
        beta=best_beta.copy(),
        objective=up,
        lower_bound=lo,
        gap=up - lo,
        n_iter=len(rows),
        status=status,
        exact=st.exact,
        method=method,
        history=hist,
        beta_history=betas[distinct],
        passes=None,
        argmax=argmax,
        time_s=elapsed,
        oracle_time_s=st.oracle,
        solver_time_s=elapsed - st.oracle,
        backend="closed form" if method == "gauss-seidel" else "reduced gradient",
    )


def _sq_blocks(beta, res):
    """``||v_k||^2 = beta_k^2 q_k`` with ``q_k = 2 (1^T alpha - S_k(alpha))`` summed over the classes."""
    S = np.asarray(res.cut.slope, dtype=np.float64).ravel()
    q = np.maximum(2.0 * (_alpha_sum(res.argmax) - S), 0.0)
    return beta * beta * q


def _gauss_seidel(evaluate, beta):
    """SVM at ``beta``, then ``beta_k <- ||v_k|| / sum_j ||v_j||``, until a stopping rule fires."""
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
    :func:`problems.mkl.steps.mkl_gradient` it is also right for ``beta_k = 0``, so a kernel can
    re-enter) and the reduced direction ``D`` (:func:`problems.mkl.steps.simplemkl_direction`).
    ``D`` is convex along ``beta + gamma D`` and each SVM solve there gives its slope
    ``<S(alpha'), D>``, so the line search brackets the minimiser by that sign:

    1. SimpleMKL's "descent all the way": the point ``gamma_max`` where the first weight reaches
       0; accepted when the slope there is still <= 0 (after a failed try the next one waits
       twice as many iterations);
    2. the step of the exact line search on the fixed-``v`` upper bound
       (:func:`problems.mkl.steps.simplemkl_step`, no SVM solve) as the first trial inside the
       bracket, then ``n_bisect`` bisections;
    3. the largest trial with a negative slope is accepted (``D`` is lower there); failing that,
       the trial with the smallest ``P`` if below the current one; else the run has stalled
       (the inner solves are too inexact to see a descent).
    """
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


# ------------------------------------------------------------------ PEGASOS: F(w) on explicit features
def _pegasos_run(oracle, method, inner, max_iter, time_limit, beta0, callback) -> WrapperResult:
    from cutplane.groups import as_group_ids, group_norms
    from cutplane.online.example_oracles import as_example_oracle
    from cutplane.online.pegasos import pegasos, pegasos_radius

    ex = as_example_oracle(oracle)
    dim = int(ex.dim)
    ids = as_group_ids(inner.groups, dim, inner.n_groups)
    m = int(inner.n_groups) if inner.n_groups is not None else int(ids.max()) + 1
    lam = float(inner.lam)
    if not (np.isfinite(lam) and lam > 0):
        raise InputError(f"lam must be finite and > 0, got {lam}", field="lam")
    for name in ("first_epochs", "later_epochs", "max_passes"):
        val = getattr(inner, name)
        if isinstance(val, bool) or int(val) != val or val < 1:
            raise InputError(f"{name} must be an integer >= 1, got {val!r}", field=name)
    max_passes = int(inner.max_passes)
    beta = np.full(m, 1.0 / m) if beta0 is None else check_simplex(beta0, m)
    batch_oracle = inner.batch_oracle
    if batch_oracle is None:
        if not callable(oracle):
            raise InputError("need batch_oracle(w).value = R(w) for the objective", field="batch_oracle")
        batch_oracle = oracle

    def objective(w):
        return lam * 0.5 * float(group_norms(w, ids, m).sum()) ** 2 + float(batch_oracle(w).value)

    rng = np.random.default_rng(inner.seed)
    start = time.perf_counter()
    risk0 = float(batch_oracle(np.zeros(dim)).value)
    radius = pegasos_radius(risk0, lam) if inner.project and risk0 > 0 else None
    rows = [(0, risk0, 0.0, time.perf_counter() - start, -1, beta.copy())]
    u = np.zeros(dim)
    t, passes, outer, train, in_svm = 0, 0, 0, 0.0, 0.0
    betas = [beta.copy()]
    status = "max_passes"
    w = np.zeros(dim)
    stop = False
    while passes < max_passes and not stop:
        if max_iter is not None and outer >= int(max_iter):
            status = "max_iter"
            break
        scale = np.sqrt(beta)[ids]
        n_ep = min(int(inner.first_epochs if outer == 0 else inner.later_epochs), max_passes - passes)
        epoch_start = [time.perf_counter()]

        def after_epoch(epoch, t_now, u_now, scale=scale, beta=beta):
            nonlocal passes, train, in_svm, stop, status
            spent = time.perf_counter() - epoch_start[0]
            train += spent
            in_svm += spent
            passes += 1
            w_now = scale * u_now
            obj = objective(w_now)
            rows.append((passes, obj, train, time.perf_counter() - start, outer, beta.copy()))
            logger.info("%s: pass %d (SVM call %d): objective %.10g", method, passes, outer, obj)
            best = min(r[1] for r in rows)
            if callback is not None and callback(WrapperInfo(outer + 1, passes, beta.copy(), obj, best, None, w_now)):
                status, stop = "callback", True
            elif time_limit is not None and train > float(time_limit):
                status, stop = "time_limit", True
            epoch_start[0] = time.perf_counter()
            return stop

        res = pegasos(ex, lam, epochs=n_ep, scale=scale, u0=u, t0=t, radius=radius, seed=rng, callback=after_epoch)
        tic = time.perf_counter()
        t = res.t
        w = res.w
        outer += 1
        norms = group_norms(w, ids, m)
        if method == "gauss-seidel":
            beta = gauss_seidel_weights(norms)
        else:
            beta = simplemkl_step(norms**2, beta, lam).beta
        betas.append(beta.copy())
        inv = np.zeros(m)
        inv[beta > 0] = 1.0 / np.sqrt(beta[beta > 0])
        u = w * inv[ids]  # v = sqrt(beta) o u unchanged where beta > 0
        train += time.perf_counter() - tic
    objs = np.array([r[1] for r in rows], dtype=float)
    history = WrapperHistory(
        objective=objs,
        best_upper=np.minimum.accumulate(objs),
        lower=None,
        gap=None,
        time=np.array([r[3] for r in rows], dtype=float),
        train_time=np.array([r[2] for r in rows], dtype=float),
        outer=np.array([r[4] for r in rows], dtype=np.int64),
        passes=np.array([r[0] for r in rows], dtype=float),
        beta=np.array([r[5] for r in rows]),
    )
    return WrapperResult(
        w=w,
        beta=betas[-2] if len(betas) > 1 else beta,
        objective=float(objs[-1]),
        lower_bound=None,
        gap=None,
        n_iter=outer,
        status=status,
        exact=False,
        method=method,
        history=history,
        beta_history=np.asarray(betas),
        passes=passes,
        argmax=None,
        time_s=train,
        oracle_time_s=in_svm,
        solver_time_s=train - in_svm,
        backend="closed form" if method == "gauss-seidel" else "reduced gradient",
    )
