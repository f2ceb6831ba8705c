"""The registry of reduced solvers, keyed by the regulariser's ``kind``.

A regulariser declares its ``kind`` (:class:`cutplane.protocols.Regularizer`); the engine asks
:func:`make_reduced_solver` for the solver of the dual reduced problem (Franc et al. 2012, eq. 14), which
takes the first available entry registered for that kind, in preference order (as cvxpy's
solver registry picks the first installed solver for a problem class). Regularisers and reduced
solvers thus never import each other.

=================  ===============================================================
kind               reduced solver (first available)
=================  ===============================================================
``l2``             ``QPReducedSolver``: QP over the simplex (:mod:`~cutplane.reduced.qp`)
``mixed-norm-2``   ``QPReducedSolver`` (``1/2 ||w||^2`` written as a mixed norm)
``l1``             ``LPReducedSolver``: LP in the epigraph form (:mod:`~cutplane.reduced.lp`)
``indicator``      ``LPReducedSolver`` (Kelley's method over a simple set)
``mixed-norm-1``   ``QCQPReducedSolver`` (:mod:`cutplane.reduced.qcqp`)
``mixed-norm-p``   ``SmoothDualReducedSolver`` (:mod:`~cutplane.reduced.smooth_dual`)
=================  ===============================================================

A new regulariser kind (or a better solver for an existing one) is added with
:func:`register_reduced_solver`. The solver modules are imported when a solver is built (cvxpy
is heavy).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..exceptions import InputError

if TYPE_CHECKING:  # pragma: no cover - types only
    from ..protocols import ReducedSolver, Regularizer

__all__ = [
    "ReducedSolverEntry",
    "register_reduced_solver",
    "reduced_solvers_for",
    "registered_kinds",
    "make_reduced_solver",
]


@dataclass(frozen=True)
class ReducedSolverEntry:
    """One reduced solver of the registry.

    Attributes
    ----------
    name : str
        Name of the entry (unique).
    kinds : tuple of str
        The regulariser kinds it solves.
    factory : callable
        ``factory(regularizer, backends, **options) -> ReducedSolver``.
    available : callable
        ``available() -> bool``: whether it can run here (installed dependencies, licences).
    """

    name: str
    kinds: tuple[str, ...]
    factory: Callable[..., Any]
    available: Callable[[], bool] = lambda: True


def _qp(regularizer, backends=None, **options):
    from .qp import QPReducedSolver

    return QPReducedSolver(regularizer, backends, **options)


def _lp(regularizer, backends=None, **options):
    from .lp import LPReducedSolver

    return LPReducedSolver(regularizer, backends, **options)


def _qcqp(regularizer, backends=None, **options):
    from .qcqp import QCQPReducedSolver

    return QCQPReducedSolver(regularizer, backends, **options)


def _smooth_dual(regularizer, backends=None, **options):
    from .smooth_dual import SmoothDualReducedSolver

    return SmoothDualReducedSolver(regularizer, backends, **options)


_REGISTRY: list[ReducedSolverEntry] = [
    ReducedSolverEntry("simplex-qp", ("l2", "mixed-norm-2"), _qp),
    ReducedSolverEntry("lp", ("l1", "indicator"), _lp),
    ReducedSolverEntry("qcqp", ("mixed-norm-1",), _qcqp),
    ReducedSolverEntry("smooth-dual", ("mixed-norm-p",), _smooth_dual),
]


def register_reduced_solver(entry: ReducedSolverEntry, *, position: int | None = None) -> None:
    """Add ``entry`` to the registry (replacing an entry of the same name).

    Parameters
    ----------
    entry : ReducedSolverEntry
    position : int, optional
        Index in the preference order (default: last, i.e. tried after the existing entries of
        its kinds).
    """
    if not isinstance(entry, ReducedSolverEntry):
        raise InputError(f"expected a ReducedSolverEntry, got {type(entry).__name__}", field="entry")
    _REGISTRY[:] = [e for e in _REGISTRY if e.name != entry.name]
    _REGISTRY.insert(len(_REGISTRY) if position is None else int(position), entry)


def reduced_solvers_for(kind: str) -> list[ReducedSolverEntry]:
    """The entries registered for ``kind``, in preference order (available or not)."""
    return [e for e in _REGISTRY if kind in e.kinds]


def registered_kinds() -> set[str]:
    """Every regulariser kind some entry solves."""
    return {k for e in _REGISTRY for k in e.kinds}


def make_reduced_solver(regularizer: Regularizer, backends=None, **options) -> ReducedSolver:
    """The reduced solver for ``regularizer``: the first available entry of its ``kind``.

    Parameters
    ----------
    regularizer : Regularizer
        Declares ``kind``.
    backends : None, str or list of str
        Backend preference passed to the solver
        (:func:`cutplane.reduced.backends.resolve_backends`).
    **options
        Keyword options of the solver's constructor (e.g. ``formulation=`` of the QP solver).

    Returns
    -------
    ReducedSolver

    Raises
    ------
    InputError
        When no available solver is registered for the regulariser's kind.
    """
    kind = regularizer.kind
    entries = reduced_solvers_for(kind)
    for entry in entries:
        if entry.available():
            return entry.factory(regularizer, backends, **options)
    what = "no available reduced solver" if entries else "no reduced solver registered"
    raise InputError(
        f"{what} for regulariser kind {kind!r} of {regularizer!r}; known kinds: "
        f"{', '.join(sorted(registered_kinds()))} (see cutplane.reduced.registry)",
        field="regularizer",
    )
