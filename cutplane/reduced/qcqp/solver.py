"""The QCQP reduced problem of MTL^struct with ``Omega = 1/2 (sum_j ||w_j||)^2`` (Mao and Tsang 2013, eq. 6-7).

In the engine's scale (``F_t(w) = lam * Omega(w) + max_r <a_r, w> + b_r``; MTL's ``C = 1/lam``
up to the overall factor ``C``) the dual of the reduced problem is::

    max_{alpha in simplex, theta}  b^T alpha - theta
    s.t.  1/(2 lam) alpha^T Q^j alpha <= theta,      j = 1..m,     Q^j = A_j^T A_j

where ``A_j`` holds the cuts' slopes restricted to group ``j`` (the working set keeps every
``Q^j`` incrementally). The duals ``mu_j`` of the ``m`` quadratic constraints sum to one
(stationarity in ``theta``) and give the primal point (eq. 7)::

    w_j = mu_j v_j,    v = -A alpha / lam.

Each constraint is posed as ``||F_j alpha||^2 <= 2 lam theta`` (the parametrised form
folds ``1 / (2 lam)`` into ``F_j``) with ``F_j^T F_j = Q^j`` (an
eigen-factor of rank ``<= n_cuts``), which cvxpy turns into one second-order cone;
groups whose block is zero (no cut touches them) get no constraint and ``mu_j = 0``.

As in every reduced solver the lower bound is recomputed in numpy from the feasible
``alpha``: ``b^T alpha - 1/(2 lam) max_j alpha^T Q^j alpha``, valid whatever the backend
returned.
"""

from __future__ import annotations

import functools

import numpy as np

from ..backends import resolve_backends, solve_with_fallback
from ..base import ReducedSolution, dual_value, to_simplex
from ..qp import psd_factor
from .direct import DIRECT_NAME, solve_qcqp_direct

__all__ = ["QCQPReducedSolver", "NATIVE_NAME"]

NATIVE_NAME = "NATIVE-IPM"


class QCQPReducedSolver:
    """Reduced solver for ``MixedNorm(groups, p=1)``.

    Parameters
    ----------
    regularizer : MixedNorm
        Gives ``n_groups``, ``conjugate`` and ``from_group_weights``.
    backends : None, str or list of str
        Backend preference for second-order cone programs
        (see :func:`cutplane.reduced.backends.resolve_backends`).
    zero_rtol : float, default=1e-12
        A group's block counts as zero when its trace is below ``zero_rtol`` times the
        largest trace.
    dpp_max_cuts : int, default=16
        Up to this many cuts the problem is a parametrised (DPP) one compiled once per
        capacity bucket and number of blocks; beyond, a fresh problem per solve (padded dense
        parameters make larger DPP problems slower to compile and to solve than a fresh
        problem).
    direct : bool, default=True
        When CLARABEL is the first backend, solve each cone program with Clarabel's own API
        (:mod:`cutplane.reduced.qcqp.direct`, no cvxpy compilation) and use cvxpy with
        ``backends`` only when that fails; False: always through cvxpy.
    direct_max_cuts : int, default=200
        The direct path is used up to this many cuts: its dense cone rows make Clarabel's
        factorisation grow faster with the number of cuts than cvxpy's form, so beyond this
        size the cvxpy path is the faster one.
    initial_groups, add_groups : int, default=4
        Group constraints are generated lazily: the groups that bound at the previous solve
        and the ``initial_groups`` largest at the warm start first, then up to ``add_groups``
        violated ones per round until none is violated.
    native : bool, optional
        Solve with the native primal-dual interior point (:mod:`cutplane.reduced.qcqp.native`:
        one ``n x n`` Cholesky per step, all active groups at once, no cone compilation)
        and use the conic backends above only when its answer is not certified to
        ``native_rtol``. Default: True when ``backends`` is None (a backend asked for by name
        is used as asked).
    native_rtol : float, default=1e-7
        Largest certified relative gap of the native answer accepted without a fallback.
    native_generation : bool, default=True
        Generate the native solver's groups lazily as for the cone programs (above); False:
        every active group in one solve (the reference of ``benchmarks/qcqp_native.py``).
    """

    kind = "socp"

    def __init__(
        self,
        regularizer,
        backends=None,
        *,
        zero_rtol=1e-12,
        dpp_max_cuts=16,
        initial_groups=4,
        add_groups=4,
        direct=True,
        direct_max_cuts=200,
        native=None,
        native_rtol=1e-7,
        native_generation=True,
    ):
        self.regularizer = regularizer
        self.native = (backends is None) if native is None else bool(native)
        self.native_rtol = float(native_rtol)
        self.native_generation = bool(native_generation)
        self._asked = (backends, bool(direct))
        if backends is not None or not self.native:  # names are checked now (unknown ones raise)
            self.backends  # noqa: B018 (resolves and caches the backends)
        self.direct_max_cuts = int(direct_max_cuts)
        self.zero_rtol = float(zero_rtol)
        self.dpp_max_cuts = int(dpp_max_cuts)
        self.initial_groups = int(initial_groups)
        self.add_groups = int(add_groups)
        self._dpp = {}
        self._binding = set()

    @functools.cached_property
    def backends(self) -> list:
        """The conic backends in preference order (:func:`~cutplane.reduced.backends.resolve_backends`).

        Resolved when first needed: with the native solver (the default) that is its first
        fallback, so a run the native solver answers never imports cvxpy (its memory and
        start-up: ``docs/results/plain_memory.md`` measures the plain command's peak).
        """
        return resolve_backends(self._asked[0], self.kind)

    @functools.cached_property
    def direct(self) -> bool:
        """True when Clarabel is the first backend: the direct path (used when Clarabel is the
        backend of first choice, the default unless MOSEK is licensed, or asked for by name)."""
        return self._asked[1] and bool(self.backends) and self.backends[0] == "CLARABEL"

    def _problem(self, blocks, b, lam, warm):
        """A fresh problem with one cone per non-zero block (used beyond ``dpp_max_cuts``)."""
        import cvxpy as cp

        n = b.shape[0]
        alpha = cp.Variable(n, nonneg=True)
        theta = cp.Variable()
        quad = [cp.sum_squares(psd_factor(Q) @ alpha) / (2.0 * lam) <= theta for Q in blocks]
        prob = cp.Problem(cp.Maximize(b @ alpha - theta), [cp.sum(alpha) == 1, *quad])
        if warm is not None:
            alpha.value = warm
        return prob, (lambda: np.array(alpha.value)), quad

    def _dpp_problem(self, blocks, b, lam, warm):
        """The parametrised problem of a capacity bucket (8, 16, 32, ...) and block count,
        compiled once by cvxpy; later solves only substitute the factors, offsets and mask."""
        import cvxpy as cp

        n, k = b.shape[0], len(blocks)
        cap = 8
        while cap < n:
            cap *= 2
        key = (cap, k)
        if key not in self._dpp:
            alpha = cp.Variable(cap, nonneg=True)
            theta = cp.Variable()
            F = [cp.Parameter((cap, cap)) for _ in range(k)]
            bp = cp.Parameter(cap)
            mask = cp.Parameter(cap, nonneg=True)
            quad = [cp.sum_squares(Fj @ alpha) <= theta for Fj in F]
            prob = cp.Problem(cp.Maximize(bp @ alpha - theta), [cp.sum(alpha) == 1, alpha <= mask, *quad])
            self._dpp[key] = (prob, alpha, F, bp, mask, quad)
        prob, alpha, F, bp, mask, quad = self._dpp[key]
        for Fj, Q in zip(F, blocks):
            fac = psd_factor(Q) / np.sqrt(2.0 * lam)
            val = np.zeros((cap, cap))
            val[: fac.shape[0], :n] = fac
            Fj.value = val
        bv, mv = np.zeros(cap), np.zeros(cap)
        bv[:n], mv[:n] = b, 1.0
        bp.value, mask.value = bv, mv
        if warm is not None:
            av = np.zeros(cap)
            av[:n] = warm
            alpha.value = av
        return prob, (lambda: np.array(alpha.value[:n])), quad

    def solve(self, working_set, lam, warm_start=None) -> ReducedSolution:
        """Solve the reduced QCQP of ``working_set`` (at least one cut)."""
        from ..._blas import single_thread_blas

        reg = self.regularizer
        n = working_set.n_cuts
        lam = float(lam)
        b = np.asarray(working_set.offsets, dtype=np.float64)
        m = reg.n_groups
        grams = working_set.gram_blocks(m)
        traces = np.einsum("jii->j", grams)
        top = float(traces.max()) if m else 0.0
        active = np.flatnonzero(traces > self.zero_rtol * top) if top > 0 else np.array([], dtype=int)
        failures: list[tuple[str, str]] = []
        backend, status = None, "analytic"
        mu = np.zeros(m)
        if active.size == 0:
            # every slope is zero: the model is max_r b_r, attained at the largest offset
            alpha = np.zeros(n)
            alpha[int(np.argmax(b))] = 1.0
        elif n == 1:
            alpha = np.ones(1)  # mu: the subgradient weights of the largest groups, below
        else:
            warm = None
            if warm_start is not None and np.shape(warm_start) == (n,) and np.sum(warm_start) > 0:
                warm = to_simplex(warm_start)
            # small dense factorisations: BLAS threads only add contention (see cutplane._blas)
            with single_thread_blas():
                found = self._solve_native(grams, active, b, lam, warm, failures) if self.native else None
                if found is not None:
                    alpha, duals, work, backend, status = found
                else:
                    alpha, duals, work, backend, status, more = self._solve_by_group_generation(
                        grams, active, b, lam, warm
                    )
                    failures.extend(more)
            if duals.sum() > 0:
                mu[work] = duals / duals.sum()
        lower, v = dual_value(reg, working_set, alpha, lam)
        if mu.sum() == 0.0:
            mu = reg.weights(v)
        w = reg.from_group_weights(v, mu, overwrite_v=True)  # v is this call's own array
        return ReducedSolution(w, lower, alpha, mu, status, backend, tuple(failures))

    def _solve_native(self, grams, active, b, lam, warm, failures):
        """The native interior point with group generation: ``(alpha, mu, groups, backend,
        status)``, or None (reason appended to ``failures``) when a certified gap is above
        ``native_rtol`` or it raised.

        Each round solves over the working groups (those that bound at the previous solve and
        the ``initial_groups`` largest at the warm start first), then evaluates every active
        group's quadratic form at the answer and adds all the violated ones; when none is
        violated (to ``native_rtol``), the restricted optimum is feasible for the full problem
        and has its value, so it is the full optimum. Each step costs ``O(|work| n^2)``
        instead of ``O(m n^2)``, which pays off when few of the ``m`` groups bind (compared
        by ``benchmarks/qcqp_native.py``).

        A restricted problem can stall where the full one does not (a few nearly collinear
        cuts in the groups kept): when a round fails, one more solve over every active group
        is tried before giving up. The conic fallback it saves is costly: a cone program over
        a few hundred cuts took minutes where the native solve over all groups took seconds.
        """
        n = b.shape[0]
        start = warm if warm is not None else np.full(n, 1.0 / n)
        forms = _quadratic_forms(grams, active, start)
        work = set(active[self._last_binding(active)]) | set(active[np.argsort(-forms)[: self.initial_groups]])
        if not self.native_generation:
            work = set(active)
        found = self._native_rounds(grams, active, b, lam, warm, work, failures)
        if found is None and len(work) < active.size:
            found = self._native_rounds(grams, active, b, lam, warm, set(active), failures)
        return found

    def _native_rounds(self, grams, active, b, lam, warm, work, failures):
        """The rounds of :meth:`_solve_native` from the working groups ``work``."""
        from .native import solve_qcqp_native

        alpha0 = warm
        for _ in range(len(active)):
            ordered = np.array(sorted(work))
            try:
                res = solve_qcqp_native([grams[j] for j in ordered], b, lam, alpha0=alpha0)
            except Exception as exc:  # noqa: BLE001 - a native solver must never take the engine down
                failures.append((NATIVE_NAME, f"{type(exc).__name__}: {exc}".strip()[:300]))
                return None
            scale = max(abs(float(res.value)), abs(float(res.theta)), np.finfo(float).tiny)
            if not (res.converged or res.gap <= self.native_rtol * scale):
                failures.append(
                    (
                        NATIVE_NAME,
                        f"not certified: gap {res.gap:.3g} after {res.n_iter} steps "
                        f"({ordered.size} of {active.size} groups)",
                    )
                )
                return None
            forms = _quadratic_forms(grams, active, res.alpha) / (2.0 * lam)
            outside = ~np.isin(active, ordered)
            limit = res.theta + self.native_rtol * scale
            violated = active[outside & (forms > limit)]
            if violated.size == 0:
                break
            work = work | set(violated.tolist())
            alpha0 = res.alpha
        self._binding = set(ordered[res.mu > 0])
        return res.alpha, np.asarray(res.mu, dtype=np.float64), ordered, NATIVE_NAME, "optimal"

    def _solve_by_group_generation(self, grams, active, b, lam, warm):
        """Solve with the constraints of the groups likely to bind, then add violated ones.

        Groups whose quadratic form stays below ``theta`` at the solution do not change it, so
        the restricted problem's optimum is the full one as soon as no group is violated; at
        the optimum only a few groups bind (``mu`` is sparse), so the cone programs stay small.
        The lower bound is computed from ``alpha`` over all groups afterwards, so even an early
        stop cannot make it wrong.
        """
        n = b.shape[0]
        start = warm if warm is not None else np.full(n, 1.0 / n)
        values = np.array([start @ grams[j] @ start for j in active])
        work = set(active[self._last_binding(active)]) | set(active[np.argsort(-values)[: self.initial_groups]])
        failures = []
        for _ in range(len(active)):
            ordered = np.array(sorted(work))
            blocks = [grams[j] for j in ordered]
            direct = None
            if self.direct and n <= self.direct_max_cuts:
                direct = solve_qcqp_direct([psd_factor(Q) for Q in blocks], b, lam)
            if direct is not None:
                (alpha, duals), backend, status = direct, DIRECT_NAME, "optimal"
            else:
                build = self._dpp_problem if n <= self.dpp_max_cuts else self._problem
                prob, get_alpha, quad = build(blocks, b, lam, warm)

                def extract(p):
                    duals = np.array(
                        [float(np.ravel(c.dual_value)[0]) if c.dual_value is not None else 0.0 for c in quad]
                    )
                    return get_alpha(), duals

                (alpha, duals), backend, status, fails = solve_with_fallback(
                    prob, self.backends, extract, warm_start=warm is not None
                )
                failures.extend(fails)
            alpha = to_simplex(alpha, n)
            vals = np.array([alpha @ grams[j] @ alpha for j in active])
            bound = max(float(np.max(vals[np.isin(active, ordered)])), 0.0)
            viol = [(v, j) for v, j in zip(vals, active) if j not in work and v > bound * (1 + 1e-7) + 1e-14]
            if not viol:
                break
            work.update(j for _, j in sorted(viol, reverse=True)[: self.add_groups])
            warm = alpha
        duals = np.clip(duals, 0.0, None)
        self._binding = set(ordered[duals > 1e-9 * max(duals.max(), 1e-300)]) if duals.size else set()
        return alpha, duals, ordered, backend, status, failures

    def _last_binding(self, active):
        return np.isin(active, sorted(self._binding)) if self._binding else np.zeros(active.size, bool)


def _quadratic_forms(grams, groups, alpha):
    """``alpha^T Q^j alpha`` for each ``j`` in ``groups``, ndarray of shape (len(groups),)."""
    return np.array([float(alpha @ (grams[j] @ alpha)) for j in groups])
