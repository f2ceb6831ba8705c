"""The quadratic reduced problem of BMRM with ``Omega = 1/2 ||w||^2`` (Franc et al. 2012, Example 1.2).

Dual over the simplex::

    max_{alpha >= 0, sum alpha = 1}  b^T alpha - 1/(2 lam) alpha^T G alpha,   G = A^T A,
    w = -A alpha / lam.

The default backend is ACTIVESET, the native active-set solver of
:mod:`cutplane.reduced.simplex_qp` (exact in a few steps from the previous duals; its answer
is accepted only when its Frank-Wolfe gap certifies it, else the next backend is tried).
The cvxpy backends follow in preference order, with two formulations chosen per solve by
size (``formulation="auto"``):

- ``"dpp"``: a parametrised problem built once per capacity bucket (8, 16, 32, ...) with a
  factor ``F`` of ``G`` (``alpha^T G alpha = ||F alpha||^2``) as a parameter and a mask
  parameter pinning the padding entries to zero; cvxpy compiles it once and later solves
  only substitute parameters (less overhead per solve than a fresh compilation).
- ``"direct"``: a fresh problem with ``quad_form(alpha, psd_wrap(G))``, which hands ``G`` to
  the QP backends as is; cheaper than the padded factor once the backend time dominates.

The parametrised form is the faster one for few cuts and the direct one beyond (the factor
adds n variables and a dense block to the backend's problem); ``dpp_max_cuts=24`` is the
crossover found by ``benchmarks/engine_overhead.py``'s reduced-problem section.
One and two cuts are solved in closed form.

The lower bound is recomputed from the (clipped, renormalised) ``alpha`` in numpy.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import SolverError
from .backends import BACKENDS, backend_available, preferred_backends, resolve_backends, solve_with_fallback
from .base import ReducedSolution, dual_combination, dual_value_parts, to_simplex

__all__ = ["QPReducedSolver", "psd_factor", "two_cut_dual"]


def psd_factor(G, rtol=1e-12) -> np.ndarray:
    """A matrix ``F`` of shape (rank, n) with ``F^T F = G`` up to eigenvalues below ``rtol``."""
    G = 0.5 * (G + G.T)
    s, V = np.linalg.eigh(G)
    keep = s > rtol * max(float(s[-1]) if s.size else 0.0, 1e-300)
    return (V[:, keep] * np.sqrt(s[keep])).T


def two_cut_dual(G, b, lam) -> np.ndarray:
    """Exact dual of a two-cut working set: a concave quadratic in ``t`` on [0, 1].

    Parameters
    ----------
    G : ndarray of shape (2, 2)
        Gram matrix of the two slopes.
    b : ndarray of shape (2,)
        Offsets of the two cuts.
    lam : float
        Regularisation weight.

    Returns
    -------
    alpha : ndarray of shape (2,)
        ``(t, 1 - t)`` maximising ``b^T alpha - alpha^T G alpha / (2 lam)``.
    """
    q = G[0, 0] - 2.0 * G[0, 1] + G[1, 1]  # ||a_0 - a_1||^2 >= 0
    lin = lam * (b[0] - b[1]) - (G[0, 1] - G[1, 1])  # lam * derivative at t = 0
    if q > 1e-14 * max(G[0, 0], G[1, 1], 1e-300):
        t = min(1.0, max(0.0, lin / q))
    else:
        t = 1.0 if lin > 0 else 0.0
    return np.array([t, 1.0 - t])


class QPReducedSolver:
    """Reduced solver for the quadratic regulariser.

    Parameters
    ----------
    regularizer : object
        Gives ``conjugate`` and ``grad_conjugate`` (``L2``).
    backends : None, str or list of str
        Backend preference (see :func:`cutplane.reduced.backends.resolve_backends`).
    formulation : {"auto", "dpp", "direct"}
        See the module docstring; ``"auto"`` uses ``"dpp"`` up to ``dpp_max_cuts`` cuts.
    dpp_max_cuts : int
        Largest number of cuts solved with the parametrised formulation under ``"auto"``.
    """

    kind = "simplex_qp"

    def __init__(self, regularizer, backends=None, *, formulation="auto", dpp_max_cuts=24):
        if formulation not in ("auto", "dpp", "direct"):
            raise ValueError(f"unknown formulation {formulation!r}")
        self.regularizer = regularizer
        self.backends = preferred_backends(self.kind) if backends is None else resolve_backends(backends, self.kind)
        self.formulation = formulation
        self.dpp_max_cuts = int(dpp_max_cuts)
        self._dpp = {}
        self._factor = None  # (row ids of the members, L, lam) of the last native answer's face factor

    # ----------------------------------------------------------------- problems
    def _dpp_problem(self, cap):
        if cap not in self._dpp:
            import cvxpy as cp

            alpha = cp.Variable(cap, nonneg=True)
            F = cp.Parameter((cap, cap))
            b = cp.Parameter(cap)
            mask = cp.Parameter(cap, nonneg=True)
            prob = cp.Problem(cp.Maximize(b @ alpha - cp.sum_squares(F @ alpha)), [cp.sum(alpha) == 1, alpha <= mask])
            self._dpp[cap] = (prob, alpha, F, b, mask)
        return self._dpp[cap]

    def _solve_dpp(self, G, b, lam, warm, names):
        n = b.shape[0]
        cap = 8
        while cap < n:
            cap *= 2
        prob, alpha, F, bp, mask = self._dpp_problem(cap)
        fac = psd_factor(G) / np.sqrt(2.0 * lam)
        Fv = np.zeros((cap, cap))
        Fv[: fac.shape[0], :n] = fac
        bv = np.zeros(cap)
        bv[:n] = b
        mv = np.zeros(cap)
        mv[:n] = 1.0
        F.value, bp.value, mask.value = Fv, bv, mv
        if warm is not None:
            av = np.zeros(cap)
            av[:n] = warm
            alpha.value = av
        return solve_with_fallback(prob, names, lambda p: np.array(alpha.value[:n]), warm_start=warm is not None)

    def _solve_direct(self, G, b, lam, warm, names):
        import cvxpy as cp

        n = b.shape[0]
        alpha = cp.Variable(n, nonneg=True)
        G = 0.5 * (G + G.T)
        prob = cp.Problem(
            cp.Maximize(b @ alpha - (0.5 / lam) * cp.quad_form(alpha, cp.psd_wrap(G))), [cp.sum(alpha) == 1]
        )
        if warm is not None:
            alpha.value = warm
        return solve_with_fallback(prob, names, lambda p: np.array(alpha.value), warm_start=warm is not None)

    def _warm_factor(self, row_ids, lam):
        """The last face factor with its members renamed to positions of ``row_ids``, or None
        (no factor, another ``lam``, or a member no longer in the working set)."""
        if self._factor is None or row_ids is None:
            return None
        ids, L, lam_then = self._factor
        if lam_then != lam:
            return None
        from .simplex_qp import FaceFactor

        order = np.argsort(row_ids, kind="stable")
        at = np.searchsorted(row_ids, ids, sorter=order)
        at = np.minimum(at, row_ids.size - 1)
        positions = order[at]
        if not np.array_equal(row_ids[positions], ids):
            return None
        return FaceFactor(positions.astype(np.int64), L)

    def _keep_factor(self, res, row_ids, lam):
        factor = getattr(res, "factor", None)
        if factor is None or row_ids is None:
            self._factor = None
        else:
            self._factor = (np.asarray(row_ids)[factor.members], factor.L, lam)

    def _solve_backends(self, G, b, lam, warm, row_ids=None):
        """Try the backends in order: native ones directly, accepted when their Frank-Wolfe gap
        certifies them; from the first cvxpy backend on, all remaining cvxpy backends go through
        ``solve_with_fallback`` (a native backend listed after a cvxpy one is not reached)."""
        failures: list[tuple[str, str]] = []
        last_resort = None
        for i, name in enumerate(self.backends):
            native = BACKENDS[name].native
            if native is None:
                # the default list probes its cvxpy backends only now (preferred_backends)
                rest = [m for m in self.backends[i:] if BACKENDS[m].native is None and backend_available(m)]
                if not rest:
                    failures.append((name, "no usable cvxpy backend (missing or unlicensed)"))
                    break
                use_dpp = self.formulation == "dpp" or (self.formulation == "auto" and len(b) <= self.dpp_max_cuts)
                solve = self._solve_dpp if use_dpp else self._solve_direct
                from .._blas import single_thread_blas

                try:
                    # small dense algebra: BLAS threads only add contention (see
                    # cutplane._blas); the native solver is compiled code
                    with single_thread_blas():
                        alpha, backend, status, more = solve(G, b, lam, warm, rest)
                except SolverError:
                    if last_resort is None:
                        raise
                    break
                return alpha, backend, status, tuple(failures) + tuple(more)
            options = dict(BACKENDS[name].options)
            if BACKENDS[name].warm_factor:
                options["factor"] = None if warm is None else self._warm_factor(row_ids, lam)
            try:
                res = native(G / lam, b, warm, **options)
            except Exception as exc:  # a native solver must never take the engine down
                failures.append((name, f"{type(exc).__name__}: {exc}".strip()[:300]))
                continue
            if BACKENDS[name].warm_factor:
                self._keep_factor(res, row_ids, lam)
            if res.converged:
                return res.alpha, name, "optimal", tuple(failures)
            failures.append((name, f"not converged (Frank-Wolfe gap {res.fw_gap:.3g} after {res.n_iter} steps)"))
            if last_resort is None:
                last_resort = (res.alpha, name)
        if last_resort is None:
            detail = "; ".join(f"{n}: {r}" for n, r in failures) or "no backend tried"
            raise SolverError(f"every backend failed on the reduced problem: {detail}")
        failures.append((last_resort[1], "accepted inaccurate answer as last resort"))
        return last_resort[0], last_resort[1], "optimal_inaccurate", tuple(failures)

    # -------------------------------------------------------------------- solve
    def solve_gram(self, G, b, lam, warm_start=None, *, row_ids=None):
        """Solve the dual over the simplex given its Gram matrix and offsets.

        Parameters
        ----------
        G : ndarray of shape (n, n)
            Gram matrix ``A^T A`` of the slopes.
        b : ndarray of shape (n,)
            Offsets of the cuts (at least one).
        lam : float
            Regularisation weight.
        warm_start : ndarray of shape (n,), optional
            Previous duals; ignored unless of shape (n,) with a positive sum.
        row_ids : ndarray of int of shape (n,), optional
            A name per cut that outlives its position (:attr:`WorkingSet.row_ids`): with it, a
            native backend that keeps its face factor (ACTIVESET) starts the next solve from the
            last one's factor, renamed by these ids, instead of factorising afresh.

        Returns
        -------
        alpha : ndarray of shape (n,)
            Duals on the simplex (one or two cuts in closed form).
        backend : str or None
            Backend that answered (None in closed form).
        status : str
            ``"analytic"``, ``"optimal"`` or ``"optimal_inaccurate"``.
        failures : tuple of (str, str)
            Backends tried before, with the reason each was not accepted.
        """
        b = np.asarray(b, dtype=np.float64)
        n = b.shape[0]
        if n == 1:
            return np.ones(1), None, "analytic", ()
        if n == 2:
            return two_cut_dual(G, b, float(lam)), None, "analytic", ()
        warm = None
        if warm_start is not None and np.shape(warm_start) == (n,) and np.sum(warm_start) > 0:
            warm = to_simplex(warm_start)
        alpha, backend, status, failures = self._solve_backends(G, b, float(lam), warm, row_ids)
        return to_simplex(alpha, n), backend, status, failures

    def solve(self, working_set, lam, warm_start=None) -> ReducedSolution:
        """Solve the reduced QP of ``working_set`` (at least one cut; one or two cuts in closed form)."""
        b = np.asarray(working_set.offsets, dtype=np.float64)
        if b.shape[0] == 1:  # no Gram matrix needed
            alpha, backend, status, failures = np.ones(1), None, "analytic", ()
        else:
            alpha, backend, status, failures = self.solve_gram(
                working_set.gram(), b, lam, warm_start, row_ids=getattr(working_set, "row_ids", None)
            )
        lower, v, conjugate = dual_value_parts(self.regularizer, working_set, alpha, lam)
        omega = None
        if self.regularizer.self_conjugate:
            w = v  # grad Omega^*(v) = v, and v is this call's own array: no copy of a (dim,) vector
            omega = conjugate  # Omega(w) = Omega^*(w) for a self-conjugate Omega
        else:
            w = np.asarray(self.regularizer.grad_conjugate(v), dtype=np.float64)
        return ReducedSolution(
            w, lower, alpha, None, status, backend, failures, omega, combination=dual_combination(alpha, lam)
        )
