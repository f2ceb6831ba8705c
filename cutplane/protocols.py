"""The engine's contracts in one place: oracles, regularisers and reduced solvers.

- :class:`Oracle`: a first-order oracle of the risk ``R`` (what :func:`cutplane.minimize` calls).
- :class:`ExampleOracle`: the per-example oracle SPOM calls once per round
  (:func:`cutplane.online.spom`).
- :class:`Regularizer`: ``Omega`` with its value, conjugate, prox and its *capabilities*,
  declared as attributes (``kind``, ``is_indicator``, ``self_conjugate``, ``risk_floor_cut``,
  ``groups``, ...). The engine and the reduced solvers read these attributes; they never probe
  for them. :class:`cutplane.regularizers.RegularizerBase` gives every capability its default.
- :class:`ReducedSolver`: solves the reduced problem of a working set. The solver of a
  regulariser is looked up by the regulariser's ``kind`` in the registry
  :mod:`cutplane.reduced.registry`, so regularisers and reduced solvers do not import each other.

All protocols are :func:`~typing.runtime_checkable`: ``isinstance(x, Oracle)`` checks that the
members exist (not their signatures).

Optional oracle capabilities are protocols too: :class:`RiskFloorOracle` (a declared floor
``R >= r0`` the engine may add as a cut) and :class:`LineSearchOracle` (the pieces of the exact
line search of LS-BMRM). Checkpoints also save an oracle's ``rng`` and call its
``checkpoint_fingerprint()`` when it has them (:mod:`cutplane.checkpoint`,
:mod:`cutplane.fingerprint`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .cuts import CachedCut, ExampleCuts, ExampleSubgradient, OracleResult

if TYPE_CHECKING:  # pragma: no cover - types only
    from collections.abc import Callable

    from .reduced.base import ReducedSolution
    from .working_set import WorkingSet

__all__ = [
    "Oracle",
    "RiskFloorOracle",
    "LineSearchOracle",
    "PiecewiseLinearOracle",
    "CachingOracle",
    "ExampleCutsOracle",
    "supports_line_search",
    "piecewise_linear_along",
    "risk_floor",
    "ExampleOracle",
    "Regularizer",
    "ReducedSolver",
    "REGULARIZER_CAPABILITIES",
    "REGULARIZER_METHODS",
]

#: The capability attributes every regulariser declares (checked by the tests).
REGULARIZER_CAPABILITIES = ("kind", "dim", "is_indicator", "self_conjugate", "risk_floor_cut", "groups", "n_groups")
#: The methods of :class:`Regularizer`.
REGULARIZER_METHODS = (
    "__call__",
    "conjugate",
    "grad_conjugate",
    "prox",
    "initial_point",
    "contains",
    "repair",
    "feasible_dual",
    "cvx_term",
    "cvx_constraints",
)


@runtime_checkable
class Oracle(Protocol):
    """A first-order oracle of a convex risk ``R`` on R^dim.

    Attributes
    ----------
    dim : int
        Length of ``w``.
    """

    dim: int

    def __call__(self, w: np.ndarray) -> OracleResult:  # pragma: no cover - protocol
        """``OracleResult(value=R(w), cut=Cut(slope, offset), exact, argmax)`` at ``w`` (read-only)."""
        ...


@runtime_checkable
class RiskFloorOracle(Protocol):
    """An oracle that declares a lower bound of its risk.

    Attributes
    ----------
    risk_lower_bound : float or None
        ``R(w) >= risk_lower_bound`` for every ``w`` (0 for non-negative losses); None: unknown.
        :func:`cutplane.minimize` adds it as a cut when the regulariser's ``risk_floor_cut``
        says so.
    """

    risk_lower_bound: float | None


@runtime_checkable
class LineSearchOracle(Protocol):
    """An oracle whose risk along a line is a known maximum of affine pieces (LS-BMRM's exact search).

    Attributes
    ----------
    supports_line_search : bool
        Whether :meth:`line_search_pieces` may be used (a wrapper may switch it off).
    """

    supports_line_search: bool

    def line_search_pieces(self, w: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
        """``(offsets, slopes)`` of the pieces with ``R(w + k d) = sum_i max_j (offsets + k slopes)``."""
        ...


@runtime_checkable
class PiecewiseLinearOracle(Protocol):
    """An oracle whose risk is convex piecewise linear along every line, too many pieces to list.

    LS-BMRM's exact search (:func:`cutplane.linesearch.piecewise_linear_search`) locates the
    minimiser's linear piece from values and right derivatives along the line, one pass over the
    data each (the pairwise hinges, whose breakpoints are the pairs; risks with a profiled offset
    or thresholds, not of form (16)).

    Attributes
    ----------
    piecewise_linear : bool
        Whether :meth:`line_function` may be used.
    """

    piecewise_linear: bool

    def line_function(self, w: np.ndarray, d: np.ndarray) -> Callable[[float], tuple[float, float]]:  # pragma: no cover
        """``phi(k) -> (R(w + k d), the right derivative of k -> R(w + k d) at k)`` for ``k >= 0``."""
        ...


@runtime_checkable
class CachingOracle(Protocol):
    """An oracle that keeps the outputs of its earlier calls and builds cuts from them cheaply.

    :func:`cutplane.minimize` (``cache_steps > 0``) calls :meth:`cached_cut` at the reduced
    minimiser after each exact call and adds the cut while it is violated by more than ``eps``
    (the 1-slack solver's constraint cache, Joachims, Finley & Yu 2009): every such cut is a
    valid minorant of ``R``, so the lower bound stays certified, and the upper bounds still come
    from exact calls only.
    """

    def cached_cut(self, w: np.ndarray) -> CachedCut:  # pragma: no cover - protocol
        """The best cut over the cached outputs at ``w`` (read-only): for each example the cached
        output of largest ``Delta + <w, dPhi>`` (the gold output, value 0, included)."""
        ...


@runtime_checkable
class ExampleCutsOracle(Protocol):
    """An oracle of a mean risk ``R(w) = (1/n) sum_i R_i(w)`` that gives one cut per example.

    :func:`cutplane.minimize` with ``method="n-slack"`` keeps a working set per example
    (:mod:`cutplane.nslack`) and needs this instead of the 1-slack cut.

    Attributes
    ----------
    n_samples : int
        ``n``.
    dim : int
        Length of ``w``.
    example_lower_bound : float
        ``R_i(w) >= example_lower_bound`` for every ``i`` and ``w`` (0 for the hinge losses):
        the cut every example's working set starts from.
    """

    n_samples: int
    dim: int
    example_lower_bound: float

    def example_cuts(self, w: np.ndarray) -> ExampleCuts:  # pragma: no cover - protocol
        """``R_i(w)`` and a cut of every ``R_i`` at ``w`` (read-only)."""
        ...


def supports_line_search(oracle: object) -> bool:
    """Whether ``oracle`` is a :class:`LineSearchOracle` with ``supports_line_search`` set."""
    return isinstance(oracle, LineSearchOracle) and bool(oracle.supports_line_search)


def piecewise_linear_along(oracle: object) -> bool:
    """Whether ``oracle`` is a :class:`PiecewiseLinearOracle` with ``piecewise_linear`` set."""
    return isinstance(oracle, PiecewiseLinearOracle) and bool(oracle.piecewise_linear)


def risk_floor(oracle: object) -> float | None:
    """The declared ``risk_lower_bound`` of a :class:`RiskFloorOracle`, else None."""
    return oracle.risk_lower_bound if isinstance(oracle, RiskFloorOracle) else None


@runtime_checkable
class ExampleOracle(Protocol):
    """The per-example oracle SPOM calls once per round (Martins et al. 2011, Alg. 3 lines 4-7).

    Attributes
    ----------
    n_samples : int
        Number of training examples.
    dim : int
        Length of ``w``.
    """

    n_samples: int
    dim: int

    def example_support(self, i: int) -> np.ndarray | None:  # pragma: no cover - protocol
        """The coordinates of ``w`` that example ``i``'s decoding reads (sorted, unique), or
        None for all of ``w``."""
        ...

    def example_subgradient(self, i: int, w_support: np.ndarray) -> ExampleSubgradient:  # pragma: no cover
        """``L_i(w)`` and a subgradient, given ``w`` restricted to ``example_support(i)``."""
        ...


@runtime_checkable
class Regularizer(Protocol):
    """What the engine and the reduced solvers need from ``Omega``.

    Attributes
    ----------
    kind : str
        Key of the reduced-solver registry (:mod:`cutplane.reduced.registry`): ``"l2"``,
        ``"l1"``, ``"indicator"``, ``"mixed-norm-1"``, ``"mixed-norm-2"``, ``"mixed-norm-p"``.
    dim : int or None
        Length of ``w`` when the regulariser fixes it (sets, group partitions), else None.
    is_indicator : bool
        ``Omega`` is the indicator of a set (Kelley's method; ``lam`` plays no role).
    self_conjugate : bool
        ``Omega^* = Omega`` and ``grad Omega^*(v) = v``: a reduced solver may use ``v`` as ``w``.
    risk_floor_cut : bool
        Whether the engine adds an oracle's declared floor ``R >= r0`` as a cut (an explicit
        ``risk_lower_bound=`` always is).
    strong_convexity : float or None, optional
        Not required (read with the default None): ``mu > 0`` when ``Omega`` is ``mu``-strongly
        convex in the Euclidean norm, which lets the engine round large dense cuts to float32
        (:mod:`cutplane.rounded_cuts`).
    groups : ndarray of int of shape (dim,) or None
        Group id of every coordinate: the working set then keeps per-group Gram blocks.
    n_groups : int or None
        Number of groups when ``groups`` is set.
    """

    kind: str
    dim: int | None
    is_indicator: bool
    self_conjugate: bool
    risk_floor_cut: bool
    groups: np.ndarray | None
    n_groups: int | None

    def __call__(self, w: np.ndarray) -> float:  # pragma: no cover - protocol
        """``Omega(w)`` (``inf`` outside the domain)."""
        ...

    def conjugate(self, v: np.ndarray) -> float:  # pragma: no cover - protocol
        """``Omega^*(v)``."""
        ...

    def grad_conjugate(self, v: np.ndarray) -> np.ndarray:  # pragma: no cover - protocol
        """An element of the subdifferential of ``Omega^*`` at ``v`` (the primal point)."""
        ...

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:  # pragma: no cover - protocol
        """``argmin_x step * Omega(x) + 1/2 ||x - v||^2``."""
        ...

    def initial_point(self, dim: int | None = None) -> np.ndarray:  # pragma: no cover - protocol
        """The engine's default start ``w0``."""
        ...

    def contains(self, w: np.ndarray) -> bool:  # pragma: no cover - protocol
        """Whether ``w`` is in the domain (always True for norms)."""
        ...

    def repair(self, w: np.ndarray) -> np.ndarray:  # pragma: no cover - protocol
        """Snap a solver point with round-off violations into the domain."""
        ...

    def feasible_dual(self, alpha: np.ndarray, working_set: WorkingSet, lam: float) -> np.ndarray:  # pragma: no cover
        """Move duals with round-off violations into the domain of the conjugate."""
        ...

    def cvx_term(self, w: Any) -> Any:  # pragma: no cover - protocol
        """``Omega`` as a cvxpy expression of the variable ``w``, or None for an indicator."""
        ...

    def cvx_constraints(self, w: Any) -> list:  # pragma: no cover - protocol
        """cvxpy constraints describing the domain of ``Omega``."""
        ...


@runtime_checkable
class ReducedSolver(Protocol):
    """Solves the reduced problem of a working set (Franc et al. 2012, eq. 14); never sees an oracle."""

    def solve(
        self, working_set: WorkingSet, lam: float, warm_start: np.ndarray | None = None
    ) -> ReducedSolution:  # pragma: no cover - protocol
        """The minimiser of the reduced problem, its certified dual value and the duals."""
        ...
