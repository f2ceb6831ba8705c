"""Linear-programming reduced problems: ``Omega = ||w||_1`` (BMRM) and indicator sets (Kelley).

Solved in the primal epigraph form (Franc et al. 2012, eq. 13 and eq. 5)::

    min_{w, xi}  lam * Omega(w) + xi   s.t.  <a_r, w> + b_r <= xi  (all cuts),  w in dom Omega,

with the regulariser supplying its cvxpy term (``cvx_term``) and constraints
(``cvx_constraints``). The duals of the cut constraints are the ``alpha`` of eq. 14; the
lower bound is recomputed from them in numpy (``b^T alpha - lam Omega^*(-A alpha / lam)``),
so it is valid whatever the backend's accuracy.
"""

from __future__ import annotations

import numpy as np

from .backends import resolve_backends, solve_with_fallback
from .base import ReducedSolution, dual_value, to_simplex

__all__ = ["LPReducedSolver"]

_UNBOUNDED = (
    "the reduced problem is unbounded below: the cutting-plane model of R is not bounded "
    "under this regulariser yet (typical for L1 with few cuts); give the engine a lower "
    "bound on the risk (minimize(..., risk_lower_bound=0.0) for non-negative losses, or an "
    "oracle attribute risk_lower_bound)"
)


class LPReducedSolver:
    """Reduced solver for polyhedral regularisers (``L1``, ``Simplex``, ``Box``).

    Parameters
    ----------
    regularizer : object
        Gives ``cvx_term(w)`` (a cvxpy expression or None), ``cvx_constraints(w)``,
        ``conjugate``, ``repair(w)`` (snaps a solver point into the domain) and
        ``feasible_dual(alpha, working_set, lam)`` (moves round-off duals into the domain of
        the conjugate, for a rigorous bound); the last two are the identity for most
        regularisers (:class:`cutplane.regularizers.RegularizerBase`).
    backends : None, str or list of str
        Backend preference (see :func:`cutplane.reduced.backends.resolve_backends`).
    """

    kind = "lp"

    def __init__(self, regularizer, backends=None):
        self.regularizer = regularizer
        self.backends = resolve_backends(backends, self.kind)

    def solve(self, working_set, lam, warm_start=None) -> ReducedSolution:
        """Solve the reduced LP of ``working_set`` (at least one cut)."""
        import cvxpy as cp

        n, dim = working_set.n_cuts, working_set.dim
        A = working_set.matrix()
        b = np.asarray(working_set.offsets, dtype=np.float64)
        w = cp.Variable(dim)
        xi = cp.Variable()
        cut_constraint = A @ w + b <= xi
        constraints = [cut_constraint] + list(self.regularizer.cvx_constraints(w))
        term = self.regularizer.cvx_term(w)
        objective = xi if term is None else float(lam) * term + xi
        prob = cp.Problem(cp.Minimize(objective), constraints)

        def extract(p):
            return np.array(w.value, dtype=np.float64), np.array(cut_constraint.dual_value, dtype=np.float64)

        (w_val, duals), backend, status, failures = solve_with_fallback(
            prob, self.backends, extract, unbounded_message=_UNBOUNDED
        )
        alpha = to_simplex(np.reshape(duals, (n,)))
        alpha = self.regularizer.feasible_dual(alpha, working_set, lam)
        lower, _ = dual_value(self.regularizer, working_set, alpha, lam)
        w_val = self.regularizer.repair(w_val)
        return ReducedSolution(w_val, lower, alpha, None, status, backend, failures)
