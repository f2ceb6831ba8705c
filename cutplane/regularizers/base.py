"""The common base of the regularisers: every capability of the protocol with its default.

:class:`~cutplane.protocols.Regularizer` lists what the engine and the reduced solvers read
from ``Omega``. :class:`RegularizerBase` declares each capability attribute with the value
that fits a norm on all of R^dim (no fixed ``dim``, no groups, not an indicator, the domain is
everything), and the optional methods (``contains``, ``repair``, ``feasible_dual``,
``initial_point``, ``cvx_constraints``) as their neutral versions. A regulariser subclasses it,
sets its ``kind`` (the key of :mod:`cutplane.reduced.registry`) and overrides what differs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..working_set import WorkingSet

__all__ = ["RegularizerBase", "as_vector"]


def as_vector(v) -> np.ndarray:
    """``v`` as a flat float64 array (no copy when it already is one)."""
    return np.asarray(v, dtype=np.float64).ravel()


class RegularizerBase:
    """Defaults of every capability of :class:`cutplane.protocols.Regularizer`.

    Attributes
    ----------
    kind : str
        Registry key of the reduced solver; every subclass sets it.
    dim : int or None
        None: the regulariser works in any dimension.
    is_indicator : bool, default=False
    self_conjugate : bool, default=False
    risk_floor_cut : bool, default=True
    strong_convexity : float or None, default=None
        ``mu > 0`` when ``Omega`` is ``mu``-strongly convex in the Euclidean norm: the engine may
        then store large dense cuts rounded to float32 (:mod:`cutplane.rounded_cuts`). None: not
        known to be (the engine keeps every cut exact).
    groups : None
        No group structure (the working set keeps one Gram matrix).
    n_groups : None
    """

    kind: str
    dim: int | None = None
    is_indicator: bool = False
    self_conjugate: bool = False
    risk_floor_cut: bool = True
    strong_convexity: float | None = None
    groups: np.ndarray | None = None
    n_groups: int | None = None

    def __call__(self, w) -> float:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def conjugate(self, v) -> float:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def grad_conjugate(self, v) -> np.ndarray:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def prox(self, v, step) -> np.ndarray:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def initial_point(self, dim: int | None = None) -> np.ndarray:
        """The zero vector of length ``dim`` (``self.dim`` when not given)."""
        n = self.dim if dim is None else dim
        if n is None:
            raise ValueError("initial_point needs dim for a regulariser without a fixed dimension")
        return np.zeros(int(n))

    def contains(self, w) -> bool:
        """Whether ``w`` is in the domain: always True for a norm."""
        return True

    def repair(self, w) -> np.ndarray:
        """``w`` unchanged (a norm's domain is everything)."""
        return w

    def feasible_dual(self, alpha: np.ndarray, working_set: WorkingSet, lam: float) -> np.ndarray:
        """``alpha`` unchanged (the conjugate is finite everywhere)."""
        return alpha

    def cvx_term(self, w: Any) -> Any:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def cvx_constraints(self, w: Any) -> list:
        """No constraint: the domain is everything."""
        return []
