"""cvxpy backends for the reduced problems: preference order, availability, fallback.

Preference: ACTIVESET (the native numpy active-set solver of the simplex QP, see
:mod:`cutplane.reduced.simplex_qp`; only for the ``"simplex_qp"`` kind), MOSEK (only when
installed *and* licensed), CLARABEL, ECOS, SCS, then HIGHS for LPs. Every cvxpy backend that
handles ``"qp"`` also handles ``"simplex_qp"``, so it is the native solver's fallback and
cross-check. ``cvxpy.installed_solvers()`` lists MOSEK even without a licence, and an
unlicensed MOSEK raises ``mosek.Error`` (not ``cvxpy.error.SolverError``), so availability
is decided by solving a tiny problem once per backend and caching the answer; a missing
licence is a quiet fallback.

:func:`solve_with_fallback` tries the backends in order. An exception of any kind, a
status other than ``"optimal"``, or ``"optimal_inaccurate"`` moves on to the next backend
and is recorded. If no backend gives an optimal answer but one gave an
``"optimal_inaccurate"`` one, that answer is used as a last resort (recorded as well; the
reduced solvers recompute the lower bound from a feasible dual point, so the certificate
stays valid). With nothing usable, :class:`~cutplane.exceptions.SolverError` lists every attempt.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..exceptions import InputError, SolverError

__all__ = [
    "Backend",
    "clarabel_direct",
    "BACKENDS",
    "register_backend",
    "backend_available",
    "quiet_highs_banner",
    "available_backends",
    "resolve_backends",
    "preferred_backends",
    "solve_with_fallback",
    "Attempt",
]

logger = logging.getLogger("cutplane")


@dataclass(frozen=True)
class Backend:
    """A cvxpy solver usable for reduced problems.

    Attributes
    ----------
    name : str
        Registry name (the cvxpy solver name for the built-ins).
    kinds : frozenset of str
        Problem classes it handles: ``"lp"``, ``"qp"``, ``"socp"``.
    options : dict
        Keyword arguments passed to ``Problem.solve``.
    solve : callable, optional
        ``solve(problem, **options)``; defaults to ``problem.solve(solver=name, **options)``.
        Lets tests and plug-ins inject a backend.
    native : callable, optional
        A solver that takes the problem data instead of a cvxpy problem; for the
        ``"simplex_qp"`` kind ``native(H, c, alpha0, **options) -> SimplexQPResult``.
    prepare : callable, optional
        ``prepare()`` before every cvxpy solve (cheap after the first call), e.g. to keep a
        solver library's start-up output off standard output (HiGHS).
    warm_factor : bool
        A native ``"simplex_qp"`` solver that takes ``factor=`` (a
        :class:`cutplane.reduced.simplex_qp.FaceFactor` from its last answer, renamed to this
        problem's coordinates) and returns one in its answer's ``factor``.
    """

    name: str
    kinds: frozenset
    options: dict = field(default_factory=dict)
    solve: Callable | None = None
    native: Callable | None = None
    prepare: Callable | None = None
    warm_factor: bool = False

    def handles(self, kind: str) -> bool:
        """True if the backend solves problems of ``kind`` (a QP backend solves the simplex QP)."""
        return kind in self.kinds or (kind == "simplex_qp" and "qp" in self.kinds and self.native is None)

    def run(self, problem, warm_start=False):
        if self.prepare is not None:
            self.prepare()
        if self.solve is not None:
            return self.solve(problem, **self.options)
        return problem.solve(solver=self.name, warm_start=warm_start, **self.options)


_ALL = frozenset({"lp", "qp", "socp"})
BACKENDS: dict = {}
_ORDER: list = []


def register_backend(backend: Backend, *, position: int | None = None) -> None:
    """Add or replace a backend; ``position`` in the preference order (default: last)."""
    if backend.name in _ORDER:
        _ORDER.remove(backend.name)
    BACKENDS[backend.name] = backend
    _ORDER.insert(len(_ORDER) if position is None else position, backend.name)
    if "backend_available" in globals():
        backend_available.cache_clear()


_HIGHS_LOCK = threading.Lock()
_HIGHS_QUIET = False


def quiet_highs_banner() -> None:
    """Keep HiGHS's banner off standard output (once per process; a no-op afterwards).

    HiGHS prints ``Running HiGHS ... Copyright ...`` from C++ on file descriptor 1 when the
    first ``highspy.Highs`` object of a process is made, before any option (``output_flag``,
    cvxpy's ``verbose=False``) can apply; later objects print nothing. This makes that first
    object with descriptor 1 pointing to a temporary file and logs what it printed at DEBUG
    level. Other threads writing to descriptor 1 during that moment (microseconds, once) are
    logged too instead of printed. Without highspy it does nothing.
    """
    global _HIGHS_QUIET
    with _HIGHS_LOCK:
        if _HIGHS_QUIET:
            return
        _HIGHS_QUIET = True
        try:
            import highspy
        except ImportError:
            return
        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):  # no usable descriptor 1: nothing to keep clean
            highspy.Highs()
            return
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 1)
            try:
                highspy.Highs()
            finally:
                os.dup2(saved, 1)
                os.close(saved)
            sink.seek(0)
            banner = sink.read().decode(errors="replace").strip()
        if banner:
            logger.debug("HiGHS start-up output (kept off stdout): %s", banner)


def _native_simplex_qp(H, c, alpha0=None, **options):
    from .simplex_qp import solve_simplex_qp

    return solve_simplex_qp(H, c, alpha0, **options)


for _b in (
    Backend("ACTIVESET", frozenset({"simplex_qp"}), native=_native_simplex_qp, warm_factor=True),
    Backend("MOSEK", _ALL),
    Backend("CLARABEL", _ALL),
    Backend("ECOS", _ALL, {"abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9, "max_iters": 200}),
    Backend("SCS", _ALL, {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 20000}),
    Backend("HIGHS", frozenset({"lp"}), prepare=quiet_highs_banner),
):
    register_backend(_b)


@functools.cache
def backend_available(name: str) -> bool:
    """True if the backend is registered, installed, and solves a tiny LP (cached).

    The tiny solve is what detects an installed but unlicensed MOSEK. A native backend
    solves a tiny simplex QP instead.
    """
    backend = BACKENDS.get(name)
    if backend is None:
        return False
    if backend.native is not None:
        import numpy as np

        try:
            res = backend.native(np.eye(2), np.array([1.0, 0.0]), None, **backend.options)
            return bool(res.converged) and abs(float(res.alpha[0]) - 1.0) < 1e-9
        except Exception as exc:
            logger.debug("backend %s unavailable: %s: %s", name, type(exc).__name__, exc)
            return False
    import cvxpy as cp

    if backend.solve is None and name not in cp.installed_solvers():
        return False
    x = cp.Variable(2)
    prob = cp.Problem(cp.Minimize(x[0] + x[1]), [x >= 1])
    try:
        backend.run(prob)
    except Exception as exc:  # mosek.Error without licence, anything else: unusable
        logger.debug("backend %s unavailable: %s: %s", name, type(exc).__name__, exc)
        return False
    ok = prob.status == "optimal" and abs(prob.value - 2.0) < 1e-6
    if not ok:
        logger.debug("backend %s unavailable: probe status %s", name, prob.status)
    return ok


def available_backends(kind: str = "qp") -> list:
    """Usable backends for a problem class, in preference order."""
    return [n for n in _ORDER if BACKENDS[n].handles(kind) and backend_available(n)]


def preferred_backends(kind: str = "qp") -> list:
    """The default backends of ``kind`` in preference order, the cvxpy ones probed when reached.

    Like ``resolve_backends(None, kind)``, except that when a native backend of ``kind`` is
    usable (``ACTIVESET`` for the simplex QP) the cvxpy backends are listed without probing
    them: :func:`backend_available` runs when a solve first falls back to them. A run that
    the native solver answers then never imports cvxpy, whose import takes longer than a
    small linear SVM's fit in a fresh process (``benchmarks/cold_start.py`` times a fresh
    process's import and fit). When no native backend is usable, every backend is probed
    now, as :func:`resolve_backends` does.
    """
    names = [n for n in _ORDER if BACKENDS[n].handles(kind)]
    native = [n for n in names if BACKENDS[n].native is not None and backend_available(n)]
    if not native:
        return resolve_backends(None, kind)
    return [n for n in names if BACKENDS[n].native is None or n in native]


def resolve_backends(solver=None, kind: str = "qp") -> list:
    """The ordered backend names to try.

    Parameters
    ----------
    solver : None, str or sequence of str
        None: every usable backend of ``kind`` in preference order. A name or a list of
        names: those, in that order (unknown names raise; known but unusable ones, such
        as an unlicensed MOSEK, are skipped quietly).
    kind : {"lp", "qp", "socp", "simplex_qp"}
        Problem class.
    """
    if solver is None:
        names = available_backends(kind)
    else:
        requested = [solver] if isinstance(solver, str) else list(solver)
        if not requested:
            raise InputError("solver list is empty", field="solver")
        names = []
        for raw in requested:
            if not isinstance(raw, str):
                raise InputError(f"solver names must be strings, got {raw!r}", field="solver")
            name = raw.upper()
            if name not in BACKENDS:
                raise InputError(f"unknown solver {raw!r}; known: {', '.join(_ORDER)}", field="solver")
            if not BACKENDS[name].handles(kind):
                logger.info("backend %s cannot solve %s problems; skipped", name, kind)
            elif not backend_available(name):
                logger.info("backend %s is not usable here (missing or unlicensed); skipped", name)
            else:
                names.append(name)
    if not names:
        raise InputError(f"no usable backend for {kind} reduced problems (asked for {solver!r})", field="solver")
    return names


@dataclass
class Attempt:
    """One backend try: its name and why it was not accepted (None when accepted)."""

    backend: str
    reason: str | None


def solve_with_fallback(problem, backends, extract, *, warm_start=False, unbounded_message=None):
    """Solve ``problem`` with the first backend that gives an optimal answer.

    Parameters
    ----------
    problem : cvxpy.Problem
    backends : sequence of str
        Names in preference order (see :func:`resolve_backends`).
    extract : callable
        ``extract(problem) -> payload``, called after each solve whose values are usable,
        so a last-resort inaccurate answer survives the following attempts.
    warm_start : bool
        Passed to cvxpy.
    unbounded_message : str, optional
        If a backend reports the problem unbounded, raise SolverError with this text at once
        (an unbounded reduced problem is a modelling issue, not a backend failure).

    Returns
    -------
    payload : object
        What ``extract`` returned for the accepted solve.
    backend : str
    status : str
    failures : tuple of (backend, reason)
    """
    failures = []
    fallback = None
    for name in backends:
        backend = BACKENDS[name]
        try:
            backend.run(problem, warm_start=warm_start)
            status = problem.status
        except Exception as exc:  # any backend error, including mosek.Error
            failures.append((name, f"{type(exc).__name__}: {exc}".strip()[:300]))
            continue
        if status == "optimal":
            return extract(problem), name, status, tuple(failures)
        if status in ("unbounded", "unbounded_inaccurate", "infeasible_or_unbounded") and unbounded_message:
            raise SolverError(f"{unbounded_message} (backend {name} reported {status})")
        failures.append((name, f"status {status}"))
        if status == "optimal_inaccurate" and fallback is None:
            fallback = (extract(problem), name, status)
    if fallback is not None:
        payload, name, status = fallback
        failures.append((name, "accepted optimal_inaccurate answer as last resort"))
        return payload, name, status, tuple(failures)
    detail = "; ".join(f"{n}: {r}" for n, r in failures) or "no backend tried"
    raise SolverError(f"every backend failed on the reduced problem: {detail}")


def clarabel_direct(P, q, A, b, cones, tol):
    """Solve a conic program with Clarabel's own API (no cvxpy compilation).

    ``min 1/2 x^T P x + q^T x  s.t.  A x + s = b, s in cones``. Returns ``(x, z)`` (primal point,
    cone multipliers), or None when Clarabel raises, does not report ``Solved`` /
    ``AlmostSolved``, or returns non-finite values: callers then take the cvxpy path.
    """
    import clarabel
    import numpy as np

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = float(tol)
    try:
        sol = clarabel.DefaultSolver(P, q, A, b, cones, settings).solve()
    except Exception:  # noqa: BLE001 - any failure inside the solver means: use the cvxpy path
        return None
    if str(sol.status) not in ("Solved", "AlmostSolved"):
        return None
    x, z = np.asarray(sol.x), np.asarray(sol.z)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(z))):
        return None
    return x, z
