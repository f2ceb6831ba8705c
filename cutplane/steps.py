"""Step strategies of the cutting-plane loop: where the oracle is called next.

After each reduced solve the engine asks its method's strategy for the next query point.
BMRM and Kelley query the reduced minimiser ``w_t`` (:class:`DirectStep`). LS-BMRM / OCAS
(Franc et al. 2012, Alg. 1.4, lines 7-9) first searches the line from the best-so-far point ``w^b``
through ``w_t``::

    k_t = argmin_{k >= 0} F(w^b + k (w_t - w^b)),      w^b <- w^b + k_t (w_t - w^b),

then queries the oracle at ``w^c = (1 - theta) w^b + theta w_t`` (:class:`LineSearchStep`).
The line-search point has a known ``F``: the strategy returns it as a candidate, an upper
bound the engine records exactly like an oracle point.

The in-out rule (:class:`InOutStep`) queries the same ``w^c`` without the search, as the in-out
separation of column generation does (Wentges 1997; Ben-Ameur and Neto 2007): the cut is taken
between the best point and the reduced minimiser, which damps BMRM's oscillation when the
regulariser is weak (a large C), and every ``direct_every``-th query is ``w_t`` itself.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .exceptions import InputError
from .protocols import piecewise_linear_along, supports_line_search

__all__ = ["StepContext", "StepOutcome", "DirectStep", "InOutStep", "LineSearchStep"]


class StepContext(NamedTuple):
    """What a step strategy may use to choose the next query point.

    Attributes
    ----------
    oracle, regularizer : object
    lam : float
    best_w : ndarray of shape (dim,)
        Best point so far (``w^b``).
    best_upper : float
        ``F(best_w)``.
    iteration : int
    vector : callable or None
        ``vector()`` gives a writable float64 array of shape (dim,), its content arbitrary, for a
        new point (the engine's :meth:`~cutplane.working_set.WorkingSet.output_vector`: an
        array no longer used is filled again rather than a new one mapped); None: allocate.
    """

    oracle: object
    regularizer: object
    lam: float
    best_w: np.ndarray
    best_upper: float
    iteration: int
    vector: Callable[[], np.ndarray] | None = None


class StepOutcome(NamedTuple):
    """A step strategy's answer: the next query point and optionally a point with known ``F``.

    Attributes
    ----------
    query : ndarray of shape (dim,)
        Where the oracle is called next.
    candidate : ndarray of shape (dim,) or None
        A point whose objective the strategy evaluated (the line-search point).
    candidate_value : float
        ``F(candidate)`` (an upper bound on ``min F``); ``inf`` without a candidate.
    step_length : float
        The line-search step ``k_t`` (NaN for strategies without a line search).
    oracle_calls : int
        Oracle evaluations the strategy made (the generic line search calls the oracle).
    line_search : bool
        True when a line search was run.
    """

    query: np.ndarray
    candidate: np.ndarray | None = None
    candidate_value: float = math.inf
    step_length: float = math.nan
    oracle_calls: int = 0
    line_search: bool = False


class DirectStep:
    """BMRM / Kelley: query the oracle at the reduced problem's minimiser."""

    def next_query(self, solution, context: StepContext) -> StepOutcome:
        return StepOutcome(solution.w)

    def get_state(self) -> dict:
        """JSON-serialisable state for a checkpoint (none: the step is memoryless)."""
        return {}

    def set_state(self, state: dict) -> None:
        """Restore :meth:`get_state` (nothing to restore)."""


def _checked_theta(theta) -> float:
    if (
        isinstance(theta, bool)
        or not isinstance(theta, numbers.Real)
        or not math.isfinite(theta)
        or not 0.0 < float(theta) <= 1.0
    ):
        raise InputError(
            f"must be in (0, 1] (theta = 0 would cut at the best point itself and stall), got {theta!r}",
            field="theta",
        )
    return float(theta)


class InOutStep:
    """BMRM with in-out query points: the oracle is called between ``w^b`` and ``w_t``.

    The next query is ``w^c = w^b + theta (w_t - w^b)``, the point of LS-BMRM's rule
    (Franc et al. 2012, Alg. 1.4) without its line search, which is the in-out separation
    of stabilised column generation (Wentges 1997; Ben-Ameur and Neto 2007); every
    ``direct_every``-th query (by the iteration count) is the reduced minimiser ``w_t``
    itself, a BMRM step. The certificate is the engine's, whatever the query: every cut is
    valid and the lower bound is the reduced problem's. Convergence is BMRM's: the BMRM
    steps alone give Teo et al. 2010's bound on their number (the other cuts only raise the
    model), so at most ``direct_every`` times BMRM's iterations; in practice the damped
    queries need far fewer, because BMRM's reduced minimiser oscillates when ``lam`` is small
    and a cut near the best point improves the model where the optimum is
    (``docs/results/in_out.md`` measures both).

    Parameters
    ----------
    theta : float, default=0.1
        Weight of ``w_t`` in the query, ``0 < theta <= 1`` (1 is BMRM).
    direct_every : int, default=10
        Every this many iterations the query is ``w_t`` (1 is BMRM).
    """

    def __init__(self, theta=0.1, direct_every=10):
        self.theta = _checked_theta(theta)
        if isinstance(direct_every, bool) or not isinstance(direct_every, numbers.Integral) or direct_every < 1:
            raise InputError(f"must be an integer >= 1, got {direct_every!r}", field="direct_every")
        self.direct_every = int(direct_every)

    def next_query(self, solution, context: StepContext) -> StepOutcome:
        wt = solution.w
        if self.theta == 1.0 or (int(context.iteration) + 1) % self.direct_every == 0:
            return StepOutcome(wt)
        wb = np.asarray(context.best_w, dtype=np.float64)
        out = None if context.vector is None else context.vector()
        query = np.subtract(wt, wb, out=out, dtype=np.float64)  # one vector of dim floats, no temporaries
        query *= self.theta
        query += wb
        return StepOutcome(query)

    def get_state(self) -> dict:
        """JSON-serialisable state for a checkpoint (none: the rule reads the iteration count)."""
        return {}

    def set_state(self, state: dict) -> None:
        """Restore :meth:`get_state` (nothing to restore)."""


def _is_half_squared_l2(regularizer) -> bool:
    return regularizer.kind == "l2"


class LineSearchStep:
    """LS-BMRM / OCAS (Franc et al. 2012, Alg. 1.4): line search from ``w^b`` through ``w_t``, query ``w^c``.

    The search is exact (Franc & Sonnenburg, :func:`cutplane.linesearch.exact_line_search`)
    when the regulariser is ``L2`` and the oracle declares ``supports_line_search`` (risk of
    form 16, ``line_search_pieces(w, d)``), or declares ``piecewise_linear`` (a risk piecewise linear
    along the line with too many pieces to list: :func:`cutplane.linesearch.piecewise_linear_search`
    on ``line_function(w, d)``, each evaluation counted as an oracle call); otherwise a safeguarded 1-D convex search on
    ``F(w^b + k d) = lam Omega(w^b + k d) + R(w^b + k d)`` through oracle values
    (:func:`cutplane.linesearch.line_search`), each evaluation counted as an oracle call.

    Parameters
    ----------
    theta : float, default=0.1
        Cutting point ``w^c = (1 - theta) w^b + theta w_t``, ``0 < theta <= 1`` (``theta = 0``
        would query ``w^b`` itself, which breaks convergence; Franc et al. 2012, sec. 1.2.2).
    xtol : float, default=1e-8
        Tolerance of the generic search on ``k``.
    max_evals : int, default=60
        Budget of oracle evaluations of one generic search.
    """

    def __init__(self, theta=0.1, *, xtol=1e-8, max_evals=60):
        self.theta = _checked_theta(theta)
        self.xtol = float(xtol)
        self.max_evals = int(max_evals)
        self.time_s = 0.0

    def get_state(self) -> dict:
        """JSON-serialisable state for a checkpoint: ``theta`` and the time spent so far.

        The line search's base point ``w^b`` is the engine's best point, saved by the engine.
        """
        return {"theta": self.theta, "time_s": self.time_s}

    def set_state(self, state: dict) -> None:
        """Restore :meth:`get_state`; ``theta`` must be the one this strategy was built with."""
        theta = state.get("theta", self.theta)
        if not math.isclose(float(theta), self.theta, rel_tol=0.0, abs_tol=0.0):
            raise InputError(
                f"the checkpoint was written with theta={theta}, this run has theta={self.theta}", field="theta"
            )
        self.time_s = float(state.get("time_s", 0.0))

    def _search(self, context, wb, d):
        from .linesearch import line_search, minimize_along

        oracle, reg, lam = context.oracle, context.regularizer, float(context.lam)
        if _is_half_squared_l2(reg) and supports_line_search(oracle):
            return minimize_along(oracle, lam, wb, d), 0
        if _is_half_squared_l2(reg) and piecewise_linear_along(oracle) and lam > 0.0:
            res = minimize_along(oracle, lam, wb, d, max_evals=self.max_evals)
            return res, res.n_evals
        calls = [0]

        def F(k):
            if k == 0.0:
                return context.best_upper  # known: no oracle call
            calls[0] += 1
            wk = wb + k * d
            return lam * float(reg(wk)) + float(oracle(wk).value)

        res = line_search(F, xtol=self.xtol, max_evals=self.max_evals)
        return res, calls[0]

    def next_query(self, solution, context: StepContext) -> StepOutcome:
        t0 = time.perf_counter()
        wt = np.asarray(solution.w, dtype=np.float64)
        wb = np.asarray(context.best_w, dtype=np.float64)
        d = wt - wb
        if not np.any(d):
            self.time_s += time.perf_counter() - t0
            return StepOutcome(wt, None, math.inf, 0.0, 0, False)
        res, calls = self._search(context, wb, d)
        k = float(res.k)
        candidate, value = None, math.inf
        if math.isfinite(k) and math.isfinite(res.value):  # an exact unbounded search has k = inf
            if k > 0.0:
                candidate, value = wb + k * d, float(res.value)
        else:
            k = 0.0
        # w^c = (1 - theta) w^b(k) + theta w_t = w^b + ((1 - theta) k + theta) d: written on the
        # searched line, as the candidate is, so that an oracle which kept its products along
        # the line (oracles.linear) answers without another pass over the data
        query = wb + ((1.0 - self.theta) * k + self.theta) * d
        self.time_s += time.perf_counter() - t0
        return StepOutcome(query, candidate, value, k, calls, True)
