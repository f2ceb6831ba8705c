"""What :func:`cutplane.minimize` returns: the certified result and its bound history.

The certificate is ``objective - lower_bound``: ``objective`` is the smallest value of
``F(w) = lam * Omega(w) + R(w)`` the oracle has evaluated (at the returned ``w``) and
``lower_bound`` the running maximum of the reduced-problem values, a lower bound on
``min F``. Both are measured, never estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = [
    "History",
    "HistoryRow",
    "FallbackRecord",
    "IterationInfo",
    "Result",
    "STATUSES",
    "gap_tolerance",
    "make_result",
]

STATUSES = ("converged", "max_iter", "time_limit", "interrupted", "callback")


class FallbackRecord(NamedTuple):
    """One reduced-problem solve that did not give a usable answer on a backend.

    Attributes
    ----------
    iteration : int
        1-based engine iteration (0 when recorded outside the loop).
    backend : str
        The cvxpy solver name that was tried.
    reason : str
        The exception or the solver status, e.g. ``"status optimal_inaccurate"``.
    """

    iteration: int
    backend: str
    reason: str


class IterationInfo(NamedTuple):
    """The per-iteration record passed to ``callback`` and logged at INFO level.

    Attributes
    ----------
    iteration : int
        1-based iteration number.
    upper : float
        ``F`` at this iteration's query point.
    best_upper : float
        Smallest ``F`` seen so far (the objective of the returned ``w``).
    lower : float
        Running maximum of the reduced-problem values.
    gap : float
        ``best_upper - lower``.
    n_cuts : int
        Cuts in the working set when the reduced problem was solved.
    elapsed : float
        Seconds since the start of :func:`cutplane.minimize`.
    w : ndarray of shape (dim,)
        This iteration's query point (do not modify).
    lam : float or None
        The ``lam`` of the run (:func:`cutplane.minimize` fills it in; on a
        :func:`cutplane.regularization_path`, the point that is running). None by default.
    """

    iteration: int
    upper: float
    best_upper: float
    lower: float
    gap: float
    n_cuts: int
    elapsed: float
    w: np.ndarray
    lam: float | None = None


class HistoryRow(NamedTuple):
    """One iteration of the history, the columns of :class:`History` (see there)."""

    upper: float
    best_upper: float
    lower: float
    gap: float
    oracle_time: float
    solver_time: float
    n_cuts: int
    step_time: float = 0.0
    line_search_value: float = np.nan
    step_length: float = np.nan
    wall_time: float = np.nan
    cpu_time: float = np.nan
    bytes_sent: float = np.nan


def gap_tolerance(eps: float, rtol: float | None, upper: float) -> float:
    """The certified gap a run stops at: ``eps``, or ``max(eps, rtol * |upper|)`` with a relative
    tolerance (``upper``: the best upper bound, ``F`` at the best point)."""
    if rtol is None or not np.isfinite(upper):
        return eps
    return max(eps, rtol * abs(upper))


@dataclass
class History:
    """Per-iteration arrays, each of shape (n_iter,).

    Attributes
    ----------
    upper : ndarray of shape (n_iter,)
        ``F(w_t)`` at the query point of iteration t.
    best_upper : ndarray of shape (n_iter,)
        Running minimum of ``upper`` (non-increasing).
    lower : ndarray of shape (n_iter,)
        Certified lower bound after iteration t (non-decreasing).
    gap : ndarray of shape (n_iter,)
        ``best_upper - lower``.
    oracle_time : ndarray of shape (n_iter,)
        Seconds in the oracle.
    solver_time : ndarray of shape (n_iter,)
        Seconds in the reduced-problem solver (all backends tried).
    n_cuts : ndarray of shape (n_iter,)
        Cuts in the working set at the reduced solve.
    step_time : ndarray of shape (n_iter,)
        Seconds in the step strategy (the line search of LS-BMRM; ~0 for BMRM).
    line_search_value : ndarray of shape (n_iter,)
        ``F`` at the line-search point (an upper bound, already folded into ``best_upper``);
        NaN when the line search did not move (``k = 0``), for BMRM / Kelley, and when the
        iteration had converged before the step.
    step_length : ndarray of shape (n_iter,)
        The line-search step ``k_t``; NaN without a line search.
    wall_time : ndarray of shape (n_iter,)
        Wall-clock seconds since the run started, at the end of iteration t (over resumed
        runs: counted from the first start); with ``best_upper`` it gives the time to any
        target objective. NaN for rows of a checkpoint written before this column existed.
    cpu_time : ndarray of shape (n_iter,)
        CPU seconds of the process (all threads, :func:`time.process_time`) since the run
        started, at the end of iteration t; NaN as ``wall_time``.
    bytes_sent : ndarray of shape (n_iter,)
        Bytes the oracle's executor sent its workers during iteration t (its ``bytes_sent``
        counter: ``w``, or the cuts and coefficients from which the workers rebuild ``w``,
        :mod:`cutplane.executors.mirror`); 0 for in-process executors; NaN without an executor
        that counts, and for rows of older checkpoints.

    Notes
    -----
    ``upper`` holds only the oracle's query points, so ``best_upper`` can lie below
    ``min(upper)`` for LS-BMRM: it is the running minimum of ``upper`` and ``line_search_value``.
    """

    upper: np.ndarray
    best_upper: np.ndarray
    lower: np.ndarray
    gap: np.ndarray
    oracle_time: np.ndarray
    solver_time: np.ndarray
    n_cuts: np.ndarray
    step_time: np.ndarray | None = None  # None: filled by __post_init__ (zeros)
    line_search_value: np.ndarray | None = None  # None: filled by __post_init__ (NaN)
    step_length: np.ndarray | None = None  # None: filled by __post_init__ (NaN)
    wall_time: np.ndarray | None = None  # None: filled by __post_init__ (NaN)
    cpu_time: np.ndarray | None = None  # None: filled by __post_init__ (NaN)
    bytes_sent: np.ndarray | None = None  # None: filled by __post_init__ (NaN)

    _NAMES = HistoryRow._fields

    def __post_init__(self):
        n = int(np.shape(self.upper)[0])
        for name in ("step_time", "line_search_value", "step_length", "wall_time", "cpu_time", "bytes_sent"):
            if getattr(self, name) is None:
                setattr(self, name, np.full(n, 0.0 if name == "step_time" else np.nan))

    @classmethod
    def from_rows(cls, rows) -> History:
        """Build from :class:`HistoryRow` records (or tuples ordered as its fields, the last six
        optional; a row shorter than another is padded with NaN)."""
        names: tuple[str, ...] = cls._NAMES
        if not rows:
            return cls(*(np.zeros(0, dtype=np.int64 if n == "n_cuts" else np.float64) for n in names))
        width = max(len(r) for r in rows)
        cols = list(zip(*(tuple(r) + (np.nan,) * (width - len(r)) for r in rows)))
        names = names[: len(cols)]
        arrays = [np.asarray(c, dtype=np.int64 if n == "n_cuts" else np.float64) for n, c in zip(names, cols)]
        return cls(*arrays)

    def __len__(self) -> int:
        return int(self.upper.shape[0])

    def __repr__(self) -> str:
        return f"History(n_iter={len(self)})"


@dataclass
class Result:
    """The outcome of :func:`cutplane.minimize`.

    Attributes
    ----------
    w : ndarray of shape (dim,)
        Best point seen (smallest evaluated ``F``).
    objective : float
        ``F(w)``, the best upper bound on ``min F``.
    lower_bound : float
        Certified lower bound on ``min F``.
    gap : float
        ``objective - lower_bound``; ``status == "converged"`` iff ``gap <= tolerance``
        (``eps``, or ``max(eps, rtol * |objective|)`` when ``rtol`` was given).
    n_iter : int
        Oracle calls made.
    status : str
        One of ``"converged"``, ``"max_iter"``, ``"time_limit"``, ``"interrupted"``, ``"callback"``.
    history : History
        Per-iteration bounds and timings.
    backend : str or None
        Backend that solved the last reduced problem.
    fallbacks : list of FallbackRecord
        Every reduced solve that failed or was inaccurate on a backend.
    exact : bool
        False if any cut was approximate: the certificate is then relative to the approximation.
    alpha : ndarray of shape (n_cuts,) or None
        Duals of the last reduced problem (one per cut of the final working set).
    mu : ndarray of shape (n_groups,) or None
        Group weights of the last reduced problem (mixed-norm regularisers), else None.
    time_s, oracle_time_s, solver_time_s : float
        Wall-clock seconds in total, in the oracle, in reduced solves.
    peak_working_set_bytes : int
        Largest memory held by the working set (slopes and Gram blocks).
    method : str
        The method that produced this result.
    eps : float
        The requested gap.
    rtol : float or None
        The requested relative gap (None: none).
    n_cached_cuts : int
        Cuts taken from the oracle's cache (``cache_steps``; not counted in ``n_iter``).
    cache_time_s : float
        Seconds building cached cuts and checking their violation (their reduced solves count
        in ``solver_time_s``).
    n_oracle_calls : int
        Oracle evaluations: one per iteration, plus those of the generic line search.
    n_line_searches : int
        Line searches run (LS-BMRM; 0 for BMRM and Kelley).
    step_time_s : float
        Seconds in the step strategy (the line searches).
    """

    w: np.ndarray
    objective: float
    lower_bound: float
    gap: float
    n_iter: int
    status: str
    history: History
    backend: str | None = None
    fallbacks: list = field(default_factory=list)
    exact: bool = True
    alpha: np.ndarray | None = None
    mu: np.ndarray | None = None
    time_s: float = 0.0
    oracle_time_s: float = 0.0
    solver_time_s: float = 0.0
    peak_working_set_bytes: int = 0
    method: str = "bmrm"
    eps: float = float("nan")
    n_oracle_calls: int = 0
    n_line_searches: int = 0
    step_time_s: float = 0.0
    rtol: float | None = None
    n_cached_cuts: int = 0
    cache_time_s: float = 0.0

    @property
    def tolerance(self) -> float:
        """The gap this run had to reach: ``eps``, or ``max(eps, rtol * |objective|)``."""
        return gap_tolerance(self.eps, self.rtol, self.objective)

    @property
    def converged(self) -> bool:
        """True when the certified gap reached ``eps``."""
        return self.status == "converged"

    def summary(self) -> str:
        """A few lines describing the run, for logs and reports."""
        lines = [
            f"cutplane {self.method}: {self.status} after {self.n_iter} iterations in {self.time_s:.3g} s",
            f"  objective   {self.objective:.10g}",
            f"  lower bound {self.lower_bound:.10g}",
            f"  gap         {self.gap:.3g} (eps {self.eps:.3g}"
            f"{'' if self.rtol is None else f', rtol {self.rtol:.3g}'})"
            f"{'' if self.exact else ' [relative to inexact cuts]'}",
            f"  time        oracle {self.oracle_time_s:.3g} s, reduced solver {self.solver_time_s:.3g} s"
            f" ({self.backend or 'no backend'}), line search {self.step_time_s:.3g} s",
            f"  calls       {self.n_oracle_calls} oracle, {self.n_line_searches} line searches"
            + (f", {self.n_cached_cuts} cached cuts ({self.cache_time_s:.3g} s)" if self.n_cached_cuts else ""),
            f"  working set peak {self.peak_working_set_bytes / 2**20:.3g} MiB",
        ]
        if self.fallbacks:
            lines.append(f"  fallbacks   {len(self.fallbacks)} (first: {self.fallbacks[0]})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Result(status={self.status!r}, objective={self.objective:.8g}, "
            f"lower_bound={self.lower_bound:.8g}, gap={self.gap:.3g}, n_iter={self.n_iter}, "
            f"dim={np.shape(self.w)[0] if self.w is not None else None}, backend={self.backend!r}, "
            f"exact={self.exact}, fallbacks={len(self.fallbacks)}, time_s={self.time_s:.3g})"
        )

    __str__ = summary


def make_result(state, *, status: str, method: str, eps: float, rtol: float | None, time_s: float) -> Result:
    """The :class:`Result` of a run from its state: the one place results are built.

    ``state`` has ``best_w``, ``best_upper``, ``lower``, ``rows`` (:class:`HistoryRow` records)
    and the counters of :class:`cutplane.checkpoint.EngineState`; those a method does not keep
    (an n-slack run has no backend, fallbacks or line searches) take the defaults of
    :class:`Result`.
    """
    history = History.from_rows(state.rows)
    return Result(
        w=np.array(state.best_w, dtype=np.float64),
        objective=float(state.best_upper),
        lower_bound=float(state.lower),
        gap=float(state.best_upper - state.lower),
        n_iter=len(state.rows),
        status=status,
        history=history,
        backend=getattr(state, "backend", None),
        fallbacks=list(getattr(state, "fallbacks", ())),
        exact=bool(getattr(state, "exact", True)),
        alpha=getattr(state, "alpha", None),
        mu=getattr(state, "mu", None),
        time_s=float(time_s),
        oracle_time_s=float(state.oracle_time),
        solver_time_s=float(state.solver_time),
        peak_working_set_bytes=int(state.peak_bytes),
        method=method,
        eps=eps,
        rtol=rtol,
        n_cached_cuts=int(getattr(state, "n_cached_cuts", 0)),
        cache_time_s=float(getattr(state, "cache_time", 0.0)),
        n_oracle_calls=int(state.n_calls),
        n_line_searches=int(getattr(state, "n_searches", 0)),
        step_time_s=0.0 if history.step_time is None else float(history.step_time.sum()),
    )
