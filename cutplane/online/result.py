"""What :func:`cutplane.online.spom` returns: the model, its objective curve and timings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = ["SPOMHistory", "SPOMInfo", "SPOMResult"]

SPOM_STATUSES = ("completed", "time_limit", "callback", "interrupted")


class SPOMInfo(NamedTuple):
    """One evaluation point, passed to ``callback`` and logged at INFO level.

    Attributes
    ----------
    rounds : int
        Examples processed so far (rounds of Alg. 1).
    passes : float
        ``rounds / n_samples``.
    objective : float
        ``lam * Omega(w) + R(w)`` at the model SPOM would return now (averaged or last).
    train_time : float
        Seconds spent in SPOM's rounds so far (evaluations excluded).
    wall_time : float
        Seconds since the start, evaluations included.
    w : ndarray of shape (dim,)
        The model evaluated (do not modify).
    """

    rounds: int
    passes: float
    objective: float
    train_time: float
    wall_time: float
    w: np.ndarray


@dataclass
class SPOMHistory:
    """Evaluation points, each array of shape (n_points,); the first point is ``w = 0``.

    Attributes
    ----------
    rounds : ndarray of int
    passes : ndarray of float
    objective : ndarray of float
        ``lam * Omega + R`` of the returned model (scale ``F / C`` for the taggers).
    train_time : ndarray of float
        Cumulative seconds in SPOM's rounds, evaluations excluded.
    wall_time : ndarray of float
        Seconds since the start, evaluations included.
    online_loss : ndarray of float
        Mean ``L_i(w_t)`` over the rounds since the previous point (the online loss SPOM
        sees; NaN at the first point).
    """

    rounds: np.ndarray
    passes: np.ndarray
    objective: np.ndarray
    train_time: np.ndarray
    wall_time: np.ndarray
    online_loss: np.ndarray

    @classmethod
    def from_rows(cls, rows) -> SPOMHistory:
        cols = list(zip(*rows)) if rows else [()] * 6
        return cls(np.asarray(cols[0], dtype=np.int64), *(np.asarray(c, dtype=np.float64) for c in cols[1:]))

    def __len__(self) -> int:
        return int(self.rounds.shape[0])


@dataclass
class SPOMResult:
    """The outcome of :func:`cutplane.online.spom`.

    Attributes
    ----------
    w : ndarray of shape (dim,)
        The returned model: the average of the iterates ``w_1..w_T`` (``averaged=True``,
        Martins et al. 2011, Alg. 1 line 11) or the last iterate ``w_{T+1}``.
    w_last : ndarray of shape (dim,)
        The last iterate.
    objective : float
        ``lam * Omega(w) + R(w)`` at ``w`` (from the last evaluation).
    group_norms : ndarray of shape (n_groups,)
        ``||w_j||``.
    kernel_weights : ndarray of shape (n_groups,)
        ``beta_j = ||w_j|| / sum_k ||w_k||`` (Alg. 3 line 13); zeros when ``w = 0``.
    history : SPOMHistory
    n_rounds : int
    epochs : int
        Completed passes over the data.
    status : str
        ``"completed"``, ``"time_limit"``, ``"callback"`` or ``"interrupted"``.
    eta0 : float
        The step-size constant used (tuned when requested).
    schedule : str
        ``"sqrt"`` (``eta_t = eta0 / sqrt(t)``) or ``"inverse"`` (``eta_t = 1 / (sigma t)``).
    sigma : float
        Strong convexity of ``lam * Omega`` w.r.t. ``||.||_2`` (0 when not strongly convex).
    gamma : float or None
        Projection radius (None: no projection).
    averaged : bool
    lazy : bool
        False when the oracle gives no support and ``w`` was materialised every round.
    time_s : float
        Seconds in SPOM's rounds (the training time).
    eval_time_s : float
        Seconds in objective evaluations and callbacks.
    tune_time_s : float
        Seconds spent choosing ``eta0`` (0 when given).
    tuning : dict of float to float
        Candidate ``eta0`` -> objective on the tuning subsample (empty when not tuned).
    """

    w: np.ndarray
    w_last: np.ndarray
    objective: float
    group_norms: np.ndarray
    kernel_weights: np.ndarray
    history: SPOMHistory
    n_rounds: int
    epochs: int
    status: str
    eta0: float
    schedule: str
    sigma: float
    gamma: float | None
    averaged: bool
    lazy: bool
    time_s: float
    eval_time_s: float
    tune_time_s: float = 0.0
    tuning: dict = field(default_factory=dict)

    def summary(self) -> str:
        """A few lines for logs and reports."""
        return "\n".join(
            [
                f"SPOM ({'averaged' if self.averaged else 'last'} model): {self.status} after {self.epochs} epochs "
                f"({self.n_rounds} rounds), {self.time_s:.3g} s training, {self.eval_time_s:.3g} s evaluating",
                f"  objective {self.objective:.10g}",
                f"  eta0 {self.eta0:.3g} ({self.schedule}), gamma {self.gamma}, sigma {self.sigma:.3g}",
                f"  active groups {int(np.count_nonzero(self.group_norms))}/{self.group_norms.size}",
            ]
        )

    def __repr__(self) -> str:
        return (
            f"SPOMResult(status={self.status!r}, objective={self.objective:.8g}, epochs={self.epochs}, "
            f"time_s={self.time_s:.3g})"
        )
