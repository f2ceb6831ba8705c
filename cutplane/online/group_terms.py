r"""Regulariser terms that depend on ``w`` only through its group norms, for SPOM.

SPOM's proximal steps (Martins et al. 2011, Alg. 1 line 7 and Alg. 3 lines 8-10) act on the vector of
group norms ``b = (||w_1||, ..., ||w_m||)`` and then rescale each group (Prop. 1), which is
what makes the lazily scaled weight vector (:mod:`cutplane.online.lazy_groups`) O(m) per step.
Each term here gives, on group norms:

- ``value(b)``: ``Omega_k(w)``;
- ``prox_norms(b, tau)``: the group norms of ``prox_{tau Omega_k}(w)`` (the functions of
  :mod:`cutplane.prox` applied to ``b``);
- ``strong_convexity``: ``sigma_k`` with ``Omega_k`` sigma_k-strongly convex w.r.t. ``||.||_2``
  (0 when it is not), for the step ``eta_t = 1 / (sigma t)``;
- ``norm_bound(budget)``: the largest ``||w||_2`` with ``Omega_k(w) <= budget`` (inf when
  unbounded), for the projection radius of Martins et al. 2010, App. E.

A composite regulariser ``Omega = sum_k c_k Omega_k`` is a list of ``(term, c_k)`` pairs
(:func:`as_group_terms`); SPOM applies the J proximal steps in the order given.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["SquaredGroupNorm", "GroupLasso", "GroupPower", "WeightedTerm", "as_group_terms"]


def _squared_l1_on_norms(b: np.ndarray, tau: float) -> np.ndarray:
    """Alg. 2 of Martins et al. 2011 on a non-negative vector (once per SPOM round, so without the input
    checks of :func:`cutplane.prox.prox_squared_l1`, which it equals; tested against it)."""
    y = -np.sort(-b)
    cums = np.cumsum(y)
    j = np.arange(1, y.size + 1)
    active = np.flatnonzero(y * (1.0 + j * tau) > tau * cums)
    if active.size == 0:
        return np.zeros_like(b)
    rho = active[-1] + 1
    return np.maximum(b - tau / (1.0 + rho * tau) * cums[rho - 1], 0.0)


class SquaredGroupNorm:
    r"""``Omega(w) = 1/2 (sum_j ||w_j||^p)^(2/p) = 1/2 ||b||_p^2``, ``1 <= p <= inf``.

    ``p = 1``: sparse MKL / MTL^struct (prox: Alg. 2 of Martins et al. 2011 on ``b``); ``p = 2``:
    ``1/2 ||w||^2`` (prox ``b / (1 + tau)``); other ``p``: :func:`cutplane.prox.prox_squared_lp`.
    For ``1 < p <= 2`` it is ``(p - 1)``-strongly convex w.r.t. ``||.||_2`` (``||.||_p >= ||.||_2``
    and ``1/2 ||.||_p^2`` is ``(p-1)``-strongly convex w.r.t. ``||.||_p``); for ``p = 1`` and
    ``p > 2`` SPOM uses 0 (no ``1/(sigma t)`` schedule).
    """

    def __init__(self, p=1.0):
        p = float(p)
        if not p >= 1.0:
            raise InputError(f"p must be >= 1, got {p}", field="p")
        self.p = p

    def value(self, b) -> float:
        b = np.asarray(b, dtype=np.float64)
        top = float(b.max()) if b.size else 0.0
        if top == 0.0:
            return 0.0
        if np.isinf(self.p):
            return 0.5 * top * top
        return 0.5 * (top * float(np.sum((b / top) ** self.p)) ** (1.0 / self.p)) ** 2

    def prox_norms(self, b, tau) -> np.ndarray:
        from cutplane.prox import prox_squared_lp

        if self.p == 1.0:
            return _squared_l1_on_norms(np.asarray(b, dtype=np.float64), float(tau))
        if self.p == 2.0:
            return np.asarray(b, dtype=np.float64) / (1.0 + float(tau))
        return prox_squared_lp(b, tau, self.p)

    @property
    def strong_convexity(self) -> float:
        return self.p - 1.0 if 1.0 < self.p <= 2.0 else 0.0

    def norm_bound(self, budget: float, n_groups: int) -> float:
        """``||w||_2 <= sqrt(2 budget / kappa)`` with ``Omega >= kappa/2 ||w||^2``:
        ``kappa = 1`` for ``p <= 2``, ``m^(2/p - 1)`` for ``p > 2`` (``||b||_2 <= m^(1/2-1/p) ||b||_p``)."""
        kappa = 1.0 if self.p <= 2.0 else float(max(n_groups, 1)) ** (2.0 / self.p - 1.0)
        return float(np.sqrt(2.0 * max(budget, 0.0) / kappa))

    def __repr__(self):
        return f"SquaredGroupNorm(p={self.p:g})"


class GroupLasso:
    r"""``Omega(w) = sum_j d_j ||w_j||`` (soft threshold ``max(0, b_j - tau d_j)``; Martins et al. 2011, eq. 11)."""

    strong_convexity = 0.0

    def __init__(self, weights=None):
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float64)
        if self.weights is not None and (
            self.weights.ndim != 1 or np.any(self.weights < 0) or not np.all(np.isfinite(self.weights))
        ):
            raise InputError("weights must be a 1-D array of finite numbers >= 0", field="weights")

    def _d(self, b):
        if self.weights is None:
            return 1.0
        if self.weights.shape != np.shape(b):
            raise InputError(f"weights have shape {self.weights.shape}, expected {np.shape(b)}", field="weights")
        return self.weights

    def value(self, b) -> float:
        return float(np.sum(self._d(b) * np.asarray(b, dtype=np.float64)))

    def prox_norms(self, b, tau) -> np.ndarray:
        b = np.asarray(b, dtype=np.float64)
        return np.maximum(b - float(tau) * self._d(b), 0.0)

    def norm_bound(self, budget: float, n_groups: int) -> float:
        """``||w||_2 <= sum_j ||w_j|| <= budget / min_j d_j``."""
        dmin = 1.0 if self.weights is None else float(self.weights.min()) if self.weights.size else 0.0
        return np.inf if dmin <= 0 else max(budget, 0.0) / dmin

    def __repr__(self):
        return "GroupLasso()" if self.weights is None else f"GroupLasso(weights of shape {self.weights.shape})"


class GroupPower:
    r"""``Omega(w) = sum_j ||w_j||^q``, ``q > 1`` (the l_{2,q}^q term; prox by Newton, Martins et al. 2011, sec. 3.2).

    For ``q = 2`` it is ``||w||^2``, 2-strongly convex; otherwise SPOM uses 0.
    """

    def __init__(self, q=2.0):
        q = float(q)
        if not (q > 1.0 and np.isfinite(q)):
            raise InputError(f"q must be finite and > 1, got {q}", field="q")
        self.q = q

    def value(self, b) -> float:
        return float(np.sum(np.asarray(b, dtype=np.float64) ** self.q))

    def prox_norms(self, b, tau) -> np.ndarray:
        from cutplane.prox import prox_group_l2q

        b = np.asarray(b, dtype=np.float64)
        return prox_group_l2q(b, tau, np.arange(b.size), self.q)

    @property
    def strong_convexity(self) -> float:
        return 2.0 if self.q == 2.0 else 0.0

    def norm_bound(self, budget: float, n_groups: int) -> float:
        """``||w||_2 <= m^(1/2 - 1/q) ||b||_q <= m^(1/2-1/q) budget^(1/q)`` (``q >= 2``); for
        ``q < 2``, ``||b||_2 <= ||b||_q``."""
        base = max(budget, 0.0) ** (1.0 / self.q)
        return base * (float(max(n_groups, 1)) ** (0.5 - 1.0 / self.q) if self.q > 2.0 else 1.0)

    def __repr__(self):
        return f"GroupPower(q={self.q:g})"


class WeightedTerm(NamedTuple):
    """One term ``weight * term`` of a composite regulariser."""

    term: object
    weight: float


def _convert(reg):
    """A regulariser object of the package (or a term) as a group term."""
    from cutplane.regularizers import L2, MixedNorm

    if isinstance(reg, (SquaredGroupNorm, GroupLasso, GroupPower)):
        return reg
    if isinstance(reg, MixedNorm):
        return SquaredGroupNorm(reg.p)
    if isinstance(reg, L2):
        return SquaredGroupNorm(2.0)
    if all(hasattr(reg, a) for a in ("value", "prox_norms", "norm_bound")):
        return reg
    raise InputError(
        f"{reg!r} is not a group-norm regulariser SPOM can apply lazily; use MixedNorm, L2, "
        "SquaredGroupNorm, GroupLasso, GroupPower or a list of (term, weight)",
        field="regularizer",
    )


def as_group_terms(regularizer) -> list:
    """Normalise a regulariser specification to a list of :class:`WeightedTerm`.

    Parameters
    ----------
    regularizer : term, MixedNorm, L2, or list of term or (term, weight)
        A single term means weight 1. A list is the composite ``sum_k c_k Omega_k``
        (e.g. ``[(GroupLasso(), 0.1), (SquaredGroupNorm(2), 1.0)]``: elastic-net MKL).

    Returns
    -------
    terms : list of WeightedTerm
    """
    items = regularizer if isinstance(regularizer, list) else [regularizer]
    if not items:
        raise InputError("empty regulariser list", field="regularizer")
    out = []
    for item in items:
        if isinstance(item, tuple):
            if len(item) != 2:
                raise InputError(f"expected (term, weight), got {item!r}", field="regularizer")
            term, weight = item
        else:
            term, weight = item, 1.0
        if (
            isinstance(weight, bool)
            or not isinstance(weight, numbers.Real)
            or not (np.isfinite(float(weight)) and float(weight) >= 0)
        ):
            raise InputError(f"term weight must be a finite number >= 0, got {weight!r}", field="regularizer")
        out.append(WeightedTerm(_convert(term), float(weight)))
    return out
