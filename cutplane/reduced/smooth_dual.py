"""The smooth reduced dual of the p-block norm, ``1 < p``, by accelerated projected gradient.

For ``Omega(w) = 1/2 (sum_j ||w_j||^p)^(2/p)`` and ``q = p / (p - 1)`` the dual of the reduced
problem (Mao and Tsang 2013, eq. 11, in the engine's scale ``lam = 1/C``) is::

    max_{alpha in simplex}  g(alpha) = b^T alpha - 1/(2 lam) (sum_j n_j(alpha)^q)^(2/q),
    n_j(alpha) = sqrt(alpha^T Q^j alpha)

which is smooth for ``p > 1``. Its gradient is ``b - (1/lam) sum_j mu_j Q^j alpha`` with the
group weights ``mu_j = (n_j / ||n||_q)^(q-2)`` (eq. 12), and the primal point is
``w_j = mu_j v_j``, ``v = -A alpha / lam`` (eq. 13).

Solved by FISTA with backtracking and adaptive restart, projecting onto the simplex
(Duchi et al. 2008). Everything lives in the ``n_cuts``-dimensional space of ``alpha``.
It stops on the Frank-Wolfe gap ``max_r grad_r - <grad, alpha>``, which bounds
``g* - g(alpha)`` because ``g`` is concave. The engine's lower bound is recomputed from the
final ``alpha`` by weak duality, so an early stop only weakens it.

The primal point. Eq. (13) maps ``alpha`` to ``w`` with ``||w_j|| ~ n_j^(q-1)``, and at the
optimum ``n_j ~ ||w_j||^(p-1)``: for large ``p`` (``q -> 1``) a group whose norm is below the
largest has a dual norm like ``(||w_j|| / max_k ||w_k||)^(p-1)`` (``0.3^99 ~ 1e-52`` for
``p = 100``), far below what any numerical ``alpha`` resolves. Eq. (13) then gives such groups
the norm of the largest in a direction that is rounding noise, and the query point can be
worse than the reduced optimum by orders of magnitude (the cutting-plane loop then stalls: its
cuts are taken at the wrong points). So the reduced primal value of the eq. (13) point is
checked against the dual bound (both from the Gram blocks, O(m n^2)); when the gap exceeds
``primal_rtol``, the reduced primal is solved directly on the subspace
``w_j = A_j^T beta_j`` spanned by the group parts of the cuts in the support of ``alpha``
(it holds the reduced optimum, since eq. (13) writes ``w_j`` as a multiple of
``A_j^T alpha``): a small power-cone program in ``sum_j rank(Q^j_SS)`` variables. The better
of the two points (by the reduced primal value) is returned.
"""

from __future__ import annotations

import numpy as np

from ..groups import group_weights_from_norms, half_sq_norm
from ..prox import project_simplex
from .base import ReducedSolution, dual_value, to_simplex
from .pnorm_primal import primal_group_weights, solve_restricted_primal

__all__ = ["SmoothDualReducedSolver"]


class _Dual:
    """``g``, its gradient and the reduced primal value for stacked Gram blocks."""

    def __init__(self, grams, b, lam, p, q):
        self.Q, self.b, self.lam, self.p, self.q = grams, b, lam, p, q

    def parts(self, alpha):
        Qa = self.Q @ alpha  # (m, n)
        n2 = np.clip(np.einsum("jn,n->j", Qa, alpha), 0.0, None)
        norms = np.sqrt(n2)
        top = float(norms.max()) if norms.size else 0.0
        mu = np.zeros_like(norms)
        if top > 0.0:
            t = norms / top
            pos = t > 0
            big = float(np.sum(t[pos] ** self.q)) ** (1.0 / self.q)
            mu[pos] = (t[pos] / big) ** (self.q - 2.0)
            half_sq = 0.5 * (top * big) ** 2
        else:
            half_sq = 0.0
        value = float(self.b @ alpha) - half_sq / self.lam
        grad = self.b - (mu @ Qa) / self.lam
        return value, grad

    def primal_value(self, alpha) -> float:
        """Reduced primal ``lam Omega(w) + max_r <a_r, w> + b_r`` at the eq. (13) point of ``alpha``.

        With ``v = -A alpha / lam`` and ``w_j = mu_j v_j``: ``||w_j|| = mu_j n_j / lam`` and the
        cut values ``A w + b`` are the gradient of ``g`` (both from the Gram blocks).
        """
        Qa = self.Q @ alpha
        norms = np.sqrt(np.clip(np.einsum("jn,n->j", Qa, alpha), 0.0, None))
        mu = group_weights_from_norms(norms, self.q)
        cuts = self.b - (mu @ Qa) / self.lam
        return self.lam * half_sq_norm(mu * norms / self.lam, self.p) + float(cuts.max())


class SmoothDualReducedSolver:
    """Reduced solver for ``MixedNorm(groups, p)`` with ``p > 1``.

    Parameters
    ----------
    regularizer : MixedNorm
        Gives ``p``, ``q``, ``n_groups``, ``conjugate`` and ``from_group_weights``.
    tol : float, default=1e-10
        Stop when the Frank-Wolfe gap is below ``tol * max(1, |g|)``.
    max_iter : int, default=20000
        Iteration cap of the projected-gradient loop.
    stall_window : int, default=100
        Stop (status ``"stalled"``) when ``g`` gained less than ``1e-14`` relative over this
        many iterations. The lower bound is still certified; only its last digits are lost.
    backends : None, str or list of str
        Backends for the conic fallback.
    conic_gap : float, default=1e-7
        When projected gradient stops (stalled or max_iter) with a Frank-Wolfe gap above
        ``conic_gap * max(1, |g|)`` (large ``p``: the curvature ``~ n_j^(q-2)`` blows up at
        near-empty groups), the dual is solved as a power-cone program through cvxpy.
    primal_rtol : float, default=1e-7
        When the reduced primal value of the eq. (13) point exceeds the dual bound by more
        than ``primal_rtol * max(1, |bound|)``, the reduced primal is solved on the span of
        the support cuts (see the module docstring) and the better point is returned.
    support_rtol : float, default=1e-8
        Cuts with ``alpha_r > support_rtol * max(alpha)`` span that subspace.
    primal_first : bool, optional
        Solve the reduced primal on the span of all cuts first (one power-cone program; the
        duals of its cut constraints give ``alpha`` and, through :func:`dual_value`, the
        certified bound), falling back to projected gradient when it fails or its
        primal-dual gap exceeds ``primal_rtol``. Default: ``p > 2``, where the dual's
        curvature ``~ n_j^(q-2)`` is unbounded and projected gradient stalls, ending in a
        restricted primal solve anyway; the one conic solve up front avoids the stalled
        iterations.
    """

    kind = "smooth"

    def __init__(
        self,
        regularizer,
        backends=None,
        *,
        tol=1e-10,
        max_iter=20000,
        stall_window=100,
        conic_gap=1e-7,
        primal_rtol=1e-7,
        support_rtol=1e-8,
        primal_first=None,
    ):
        self.regularizer = regularizer
        self.primal_first = bool(regularizer.p > 2.0) if primal_first is None else bool(primal_first)
        self.primal_rtol = float(primal_rtol)
        self.support_rtol = float(support_rtol)
        self.backends = backends
        self.conic_gap = float(conic_gap)
        self.stall_window = int(stall_window)
        self.tol = float(tol)
        self.max_iter = int(max_iter)

    def solve(self, working_set, lam, warm_start=None) -> ReducedSolution:
        from .._blas import single_thread_blas

        with single_thread_blas():  # small dense products: BLAS threads only add contention
            return self._solve(working_set, lam, warm_start)

    def _solve(self, working_set, lam, warm_start):
        reg = self.regularizer
        n = working_set.n_cuts
        lam = float(lam)
        b = np.asarray(working_set.offsets, dtype=np.float64)
        # one contiguous copy: projected gradient multiplies by it thousands of times
        grams = np.ascontiguousarray(working_set.gram_blocks(reg.n_groups))
        fn = _Dual(grams, b, lam, reg.p, reg.q)
        if warm_start is not None and np.shape(warm_start) == (n,) and np.sum(warm_start) > 0:
            alpha = to_simplex(warm_start)
        else:
            alpha = np.full(n, 1.0 / n)
        status, it = "max_iter", 0
        if n > 1 and self.primal_first:
            first = self._primal_first(working_set, grams, b, lam)
            if first is not None:
                return first
        if n == 1:
            status = "analytic"
        else:
            # Lipschitz guess: the largest block curvature over lam; backtracking corrects it
            L = max(float(np.max(np.trace(grams, axis1=1, axis2=2))) / lam, 1e-12)
            y, t_k, from_alpha = alpha.copy(), 1.0, True
            g_alpha, grad_alpha = fn.parts(alpha)
            g_mark = g_alpha
            for it in range(1, self.max_iter + 1):
                if it % self.stall_window == 0:  # ill-conditioned flat face: no progress left to make
                    if g_alpha - g_mark <= 1e-14 * max(1.0, abs(g_alpha)):
                        status = "stalled"
                        break
                    g_mark = g_alpha
                # Frank-Wolfe gap: g concave, so g* - g(alpha) <= max_u <grad, u - alpha> over the simplex
                if float(grad_alpha.max() - grad_alpha @ alpha) <= self.tol * max(1.0, abs(g_alpha)):
                    status = "optimal"
                    break
                g_y, grad_y = fn.parts(y)
                while True:
                    cand = project_simplex(y + grad_y / L)
                    g_c, grad_c = fn.parts(cand)
                    step = cand - y
                    # ascent version of the sufficient-increase (quadratic lower model) test
                    if g_c >= g_y + float(grad_y @ step) - 0.5 * L * float(step @ step) - 1e-15 * abs(g_y):
                        break
                    L *= 2.0
                if g_c < g_alpha and not from_alpha:  # adaptive restart: drop momentum, step from alpha
                    y, t_k, from_alpha = alpha.copy(), 1.0, True
                    continue
                t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t_k * t_k))
                y = cand + ((t_k - 1.0) / t_next) * (cand - alpha)
                alpha, g_alpha, grad_alpha, t_k, from_alpha = cand, g_c, grad_c, t_next, False
                L *= 0.95
        backend, failures = "projected-gradient", ()
        if n > 1 and status != "optimal":
            g_alpha, grad_alpha = fn.parts(alpha)
            if float(grad_alpha.max() - grad_alpha @ alpha) > self.conic_gap * max(1.0, abs(g_alpha)):
                alpha, backend, status, failures = self._conic(grams, b, lam, alpha)
        lower, v = dual_value(reg, working_set, alpha, lam)
        status = status if n > 1 else "analytic"
        if n > 1:
            eq13 = fn.primal_value(alpha)
            if eq13 - lower > self.primal_rtol * max(1.0, abs(lower)):
                support = np.flatnonzero(alpha > self.support_rtol * float(alpha.max()))
                found, extra = self._restricted_primal(grams, b, lam, support)
                failures = tuple(failures) + tuple(extra)
                if found is not None and found.value < eq13:
                    return ReducedSolution(
                        working_set.combine_by_group(found.beta),
                        lower,
                        alpha,
                        primal_group_weights(found.norms, reg.p),
                        status,
                        backend + "+restricted-primal",
                        failures,
                    )
        mu = reg.weights(v)
        w = reg.from_group_weights(v, mu, overwrite_v=True)  # v is this call's own array
        return ReducedSolution(w, lower, alpha, mu, status, backend, failures)

    def _primal_first(self, working_set, grams, b, lam):
        """The reduced primal on the span of all cuts; None (use projected gradient) if it fails or is inaccurate."""
        found, failures = self._restricted_primal(grams, b, lam, np.arange(b.shape[0]))
        if found is None or found.duals is None:
            return None
        alpha = to_simplex(found.duals, b.shape[0])
        lower, _ = dual_value(self.regularizer, working_set, alpha, lam)
        if not found.value - lower <= self.primal_rtol * max(1.0, abs(lower)):
            return None
        return ReducedSolution(
            working_set.combine_by_group(found.beta),
            lower,
            alpha,
            primal_group_weights(found.norms, self.regularizer.p),
            "optimal",
            found.backend + "(primal)",
            failures,
        )

    def _restricted_primal(self, grams, b, lam, S):
        return solve_restricted_primal(grams, b, lam, self.regularizer.p, S, self.backends)

    def _conic(self, grams, b, lam, alpha0):
        """Dual (11) as a power-cone program through cvxpy, for when projected gradient stalls.

        ``max b^T alpha - t^2 / (2 lam)`` s.t. ``u_j >= ||F_j alpha||`` (``F_j^T F_j = Q^j``),
        ``t >= ||u||_q``. Kept only if it improves the dual value of ``alpha0``.
        """
        import cvxpy as cp

        from .backends import resolve_backends, solve_with_fallback
        from .qp import psd_factor

        n, q = b.shape[0], self.regularizer.q
        alpha = cp.Variable(n, nonneg=True)
        u = cp.Variable(grams.shape[0], nonneg=True)
        t = cp.Variable(nonneg=True)
        cons = [cp.sum(alpha) == 1, cp.pnorm(u, q, approx=False) <= t]
        cons += [cp.norm(psd_factor(G) @ alpha, 2) <= u[j] for j, G in enumerate(grams) if np.trace(G) > 0]
        prob = cp.Problem(cp.Maximize(b @ alpha - cp.square(t) / (2.0 * lam)), cons)
        fn = _Dual(grams, b, lam, self.regularizer.p, q)
        try:
            a, backend, status, failures = solve_with_fallback(
                prob, resolve_backends(self.backends, "socp"), lambda p: np.array(alpha.value)
            )
        except Exception as exc:  # keep the projected-gradient point; its bound is still valid
            return alpha0, "projected-gradient", "stalled", (("conic", f"{type(exc).__name__}: {exc}"),)
        a = to_simplex(a, n)
        if fn.parts(a)[0] >= fn.parts(alpha0)[0]:
            return a, backend, status, failures
        return alpha0, "projected-gradient", "stalled", failures
