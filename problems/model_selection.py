"""C chosen on held-out data: the grid of C, the validation split, the path table.

What the estimators share when ``C`` is a sequence of values (or ``"auto"``, the default
grid of the structured estimators):

- :func:`check_C` reads the ``C`` parameter: one value, a sequence of values or ``"auto"``;
- :func:`plan_validation` decides where the validation data come from (``validation_data``
  given to ``fit``, or ``validation_fraction`` of the training examples held out by
  :func:`holdout_split`, seeded by ``validation_seed``), and refuses a grid without any;
- :func:`path_eps` gives the certified tolerance of each point on the engine's scale;
- :func:`run_cutting_plane_path` trains along the grid with one
  :func:`cutplane.regularization_path` call (each point warm-started from the working set
  of the previous one, each point certified to its own gap);
- :func:`choose_best` picks the point of the best validation score and :func:`path_table`
  turns the per-point rows into the estimators' ``path_`` attribute: a dict of lists, one
  entry per C in the order given, as scikit-learn's ``cv_results_`` (so
  ``pandas.DataFrame(est.path_)`` is the table).

Validation scores are in [0, 1], larger is better: chunk F1 (conlleval semantics) for
BIO / IOB / IOBES tagging, token accuracy for other tag sets, UAS without punctuation for
parsing, accuracy for :class:`~problems.linear.LinearSVM`. Ties go to the smaller C (the
more regularised model).
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from cutplane.exceptions import InputError
from problems.validation import check_fraction, check_int, check_positive

__all__ = [
    "AUTO",
    "CGrid",
    "ValidationPlan",
    "check_C",
    "plan_validation",
    "holdout_split",
    "take",
    "path_eps",
    "run_cutting_plane_path",
    "choose_best",
    "GridExtension",
    "RefitBudget",
    "extended_direction",
    "path_table",
    "warn_path",
    "not_run_row",
    "selection_meta",
    "load_selection",
    "PathProgress",
    "PATH_COLUMNS",
    "SELECTION_META",
    "SELECTION_ATTRIBUTES",
    "refit_at_chosen",
    "is_single_C",
    "cv_params_of_grid_file",
]

logger = logging.getLogger("problems.model_selection")

#: The value of ``C`` that asks for the estimator's default grid.
AUTO = "auto"

#: The columns of ``path_`` shared by every estimator (the structured ones add
#: ``n_active_templates`` and ``active_templates``).
PATH_COLUMNS = (
    "C",
    "eps",
    "objective",
    "lower_bound",
    "gap",
    "status",
    "n_iter",
    "seconds",
    "validation_score",
)


class CGrid(NamedTuple):
    """The checked ``C`` parameter.

    Attributes
    ----------
    values : tuple of float
        The values of C, in the order given (one value for a single C).
    kind : {"single", "grid", "auto"}
        ``"single"``: one number (or a sequence of one); ``"grid"``: a sequence of two or more;
        ``"auto"``: the estimator's default grid.
    """

    values: tuple
    kind: str

    @property
    def is_path(self) -> bool:
        """More than one value: the estimator trains along the path and chooses on held-out data."""
        return len(self.values) > 1


def check_C(value, name="C", *, auto_grid: Sequence[float] | None = None) -> CGrid:
    """The ``C`` parameter: a number > 0, a sequence of distinct numbers > 0, or ``"auto"``.

    Parameters
    ----------
    value : float, sequence of float or "auto"
    name : str
        Parameter name in errors.
    auto_grid : sequence of float, optional
        The grid ``"auto"`` stands for; None: ``"auto"`` is refused (the estimator has no
        default grid).

    Returns
    -------
    CGrid

    Raises
    ------
    InputError
        ``field=name``: an empty sequence, a value that is not a finite number > 0 (strings,
        booleans, None), duplicate values, or ``"auto"`` where there is no default grid.
    """
    if isinstance(value, str):
        if value != AUTO:
            raise InputError(f"must be a number > 0, a sequence of them or {AUTO!r}, got {value!r}", field=name)
        if auto_grid is None:
            raise InputError(f"{AUTO!r} is not available here: give a number or a sequence of numbers", field=name)
        return CGrid(tuple(float(c) for c in auto_grid), "auto")
    if isinstance(value, (Sequence, np.ndarray)) and not isinstance(value, (bytes, bytearray)):
        values = list(np.asarray(value).ravel()) if isinstance(value, np.ndarray) else list(value)
        if not values:
            raise InputError("the grid of C is empty: give at least one value", field=name)
        out = tuple(check_positive(v, f"{name}[{i}]") for i, v in enumerate(values))
        if len(set(out)) != len(out):
            dup = sorted({c for c in out if out.count(c) > 1})
            raise InputError(f"the grid of C has duplicate values {dup}", field=name)
        return CGrid(out, "single" if len(out) == 1 else "grid")
    return CGrid((check_positive(value, name),), "single")


def is_single_C(value) -> bool:
    """Whether ``value`` has the form of one C (a number, not a string, sequence or array)."""
    return not isinstance(value, (str, bytes, list, tuple, np.ndarray)) and np.ndim(value) == 0


def cv_params_of_grid_file(params: dict, validation) -> dict:
    """The constructor keywords of a ``...CV`` estimator from those stored by its single-C twin
    when it still took a grid of C (model files written before the CV estimators): ``C`` (a
    sequence or ``"auto"``) becomes ``Cs``, and a held-out fraction with its seed, read from the
    file's ``validation`` record, becomes ``validation_fraction`` / ``validation_seed``."""
    out = {k: v for k, v in params.items() if k != "C"}
    out["Cs"] = params["C"]
    if isinstance(validation, dict) and validation.get("source") == "fraction":
        out["validation_fraction"] = validation.get("fraction")
        out["validation_seed"] = validation.get("seed") or 0
    return out


class ValidationPlan(NamedTuple):
    """Where the validation data come from.

    Attributes
    ----------
    source : {None, "data", "fraction"}
        None: no validation (one C, nothing given); ``"data"``: ``validation_data``;
        ``"fraction"``: ``fraction`` of the training examples held out.
    fraction : float or None
    seed : int
    """

    source: str | None
    fraction: float | None
    seed: int


def plan_validation(
    grid: CGrid,
    validation_data,
    validation_fraction,
    validation_seed,
    *,
    default_fraction: float | None,
    owner: str,
) -> ValidationPlan:
    """Decide the validation data of a ``fit``.

    ``validation_data`` and ``validation_fraction`` exclude each other. A grid of C needs one
    of them, except ``C="auto"``, which holds out ``default_fraction`` when neither is given.
    With a single C either is optional: the model is scored on it (``path_``'s
    ``validation_score``), a fraction being held out of training.

    Raises
    ------
    InputError
        Both given (``field="validation_fraction"``), a fraction outside (0, 1), a seed that
        is not an integer >= 0, or a grid without validation data (``field="validation_data"``).
    """
    seed = check_int(validation_seed, "validation_seed", min_value=0)
    if validation_data is not None and validation_fraction is not None:
        raise InputError("give validation_data or validation_fraction, not both", field="validation_fraction")
    if validation_fraction is not None:
        return ValidationPlan(
            "fraction", check_fraction(validation_fraction, "validation_fraction", allow_one=False), seed
        )
    if validation_data is not None:
        return ValidationPlan("data", None, seed)
    if grid.kind == "auto" and default_fraction is not None:
        return ValidationPlan("fraction", float(default_fraction), seed)
    if grid.is_path:
        raise InputError(
            f"{owner} got {len(grid.values)} values of C but no validation data to choose among them: "
            "pass validation_data=(X_dev, y_dev) or validation_fraction=0.1 to fit, or give one C",
            field="validation_data",
        )
    return ValidationPlan(None, None, seed)


def holdout_split(n: int, fraction: float, seed: int, *, unit: str = "examples") -> tuple:
    """Indices of the examples kept for training and of those held out, seeded.

    ``max(1, round(fraction * n))`` whole examples (sentences, trees, samples) are held out,
    chosen by ``np.random.default_rng(seed).permutation(n)``; at least one stays for
    training. Both index arrays are sorted (the examples keep their order).

    Raises
    ------
    InputError
        Fewer than two examples: nothing can be held out (``field="validation_fraction"``).
    """
    if n < 2:
        raise InputError(
            f"needs at least 2 {unit} to hold some out for validation, got {n}: give validation_data, "
            f"or one value of C (C='auto' holds out a share of the {unit} to choose C)",
            field="validation_fraction",
        )
    n_val = min(n - 1, max(1, int(round(fraction * n))))
    perm = np.random.default_rng(seed).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def take(seq, idx):
    """The items of a list (or the rows of an array / sparse matrix) at ``idx``."""
    if hasattr(seq, "shape"):
        return seq[idx]
    return [seq[int(i)] for i in idx]


def path_eps(options, values, *, user_eps: bool, default_eps: float) -> list:
    """The certified tolerance of each point of a grid, on the engine's scale ``F / C``.

    A tolerance the user gave (``solver=CuttingPlane(eps=...)``) is absolute on ``F`` at every
    point: the engine gets ``eps / C``. Without one, every point gets ``default_eps`` on the
    engine's scale (``default_eps * C`` on ``F``): a fixed tolerance on ``F`` would be far
    tighter at the large C of a grid than at its small ones.
    """
    if user_eps:
        return [float(options.eps) / C for C in values]
    return [float(default_eps)] * len(values)


def run_cutting_plane_path(
    oracle,
    reg,
    values,
    options,
    eps: list,
    *,
    on_point: Callable,
    callback=None,
    risk_lower_bound=None,
    extend: Callable | None = None,
    keep: Callable | None = None,
):
    """Train along the grid: one :func:`cutplane.regularization_path` call with ``lam = 1/C``.

    Parameters
    ----------
    oracle, reg
        The risk oracle and the regulariser.
    values : tuple of float
        The grid of C.
    options : CuttingPlaneOptions
        The engine's options (:meth:`CuttingPlaneOptions.engine_kwargs`): ``max_iter`` per
        point, ``time_limit`` for the whole path.
    eps : list of float
        Per point, on the engine's scale (:func:`path_eps`).
    on_point : callable
        ``on_point(index, C, result)`` after each point (``result`` on the scale ``F / C``);
        returning True ends the path (the points after it are not run).
    callback : callable, optional
        ``callback(IterationInfo)`` per iteration (``info.lam`` is ``1 / C``); True stops.
    risk_lower_bound : float, optional
    extend : callable, optional
        ``extend() -> (C, eps) or None`` (``eps`` on the engine's scale): once the grid ran,
        one more point past it, warm from the path's cuts (the engine's ``extend``,
        :class:`GridExtension`), again after each such point until it gives None. The points
        it adds follow the grid's (``on_point`` gets index ``len(values)``, then the next).
    keep : callable, optional
        ``keep(index) -> bool``: whether the path keeps the ``w`` of that earlier point (the
        engine's ``keep_w``); None keeps every ``w``.

    Returns
    -------
    cutplane.PathResult
    """
    from cutplane import regularization_path

    if options.checkpoint is not None or options.resume:
        raise InputError(
            "checkpoint / resume apply to one C: give a single C, or drop the checkpoint", field="checkpoint"
        )
    values = list(values)  # extend appends to it
    n = len(values)
    progress = PathProgress(values, eps) if options.verbose else None

    def per_iteration(info):
        if progress is not None:
            progress.update(info)
        return bool(callback(info)) if callback is not None else False

    def point_done(index, lam, result):
        C = values[index]
        if progress is not None:
            progress.close(result.status, result)  # its last iteration: the engine's callback skips it
        logger.info(
            "C=%g (%d of %d) %s after %d iterations: objective %.6g, lower bound %.6g, gap %.3g",
            C,
            index + 1,
            n,
            result.status,
            result.n_iter,
            C * result.objective,
            C * result.lower_bound,
            C * result.gap,
        )
        return bool(on_point(index, C, result))

    def more(lams, results):
        nxt = extend() if extend is not None else None
        if nxt is None:
            return None
        C, e = float(nxt[0]), float(nxt[1])
        values.append(C)
        if progress is not None:
            progress.add(C, e)
        logger.info("the best validation score is at an edge of the grid: the path goes on to C=%g", C)
        return 1.0 / C, e

    kwargs = options.engine_kwargs(oracle)  # every engine option of the method, at every point
    kwargs.update(
        eps=list(eps),
        verbose=False,  # the path's own bar (PathProgress) names the running C
        progress_scale="F/lam",  # the engine's log lines on F = Omega + C * loss, as the bar
        callback=per_iteration if (progress is not None or callback is not None) else None,
        on_point=point_done,
        extend=more if extend is not None else None,
        keep_w=keep,
    )
    if risk_lower_bound is not None:
        kwargs["risk_lower_bound"] = float(risk_lower_bound)
    try:
        return regularization_path(oracle, reg, [1.0 / C for C in values], **kwargs)
    finally:
        if progress is not None:
            progress.close()


class PathProgress:
    """A tqdm counter per point of a path (``verbose=True``): which C is running (``C=1000
    (2 of 3)``), its iterations and time so far, and its bounds, gap and ``eps`` on the scale of
    ``F`` (:class:`cutplane.progress.ProgressReporter`; the engine logs the iterations).

    Parameters
    ----------
    values : sequence of float
        The grid of C.
    eps : sequence of float
        Per point, on the engine's scale ``F / C`` (as passed to the path).
    """

    def __init__(self, values, eps):
        self._index = {1.0 / C: i for i, C in enumerate(values)}
        self._values = tuple(values)
        self._eps = tuple(eps)
        self._reporter = None
        self._lam = None
        self._done = 0

    def update(self, info) -> None:
        """Show one iteration (``info.lam`` tells the point)."""
        from cutplane.progress import ProgressReporter

        lam = getattr(info, "lam", None)
        if self._reporter is None or lam != self._lam:
            self.close()
            i = self._index.get(lam)
            C = self._values[i] if i is not None else (1.0 / lam if lam else float("nan"))
            self._done += 1
            self._reporter = ProgressReporter(
                True,
                f"C={C:g} ({self._done} of {len(self._values)})",
                scale=C,
                eps=None if i is None else self._eps[i],
                log=False,
            )
            self._lam = lam
        self._reporter.update(info)

    def add(self, C: float, eps: float) -> None:
        """One more point (past the grid's edge: :class:`GridExtension`), at ``C`` with
        ``eps`` on the engine's scale."""
        self._values = (*self._values, float(C))
        self._eps = (*self._eps, float(eps))
        self._index[1.0 / C] = len(self._values) - 1

    def close(self, status=None, result=None) -> None:
        """Close the running point's counter (idempotent), showing ``result``'s bounds when given."""
        if self._reporter is not None:
            self._reporter.close(status, result)
            self._reporter = None


def choose_best(scores: Sequence, values: Sequence[float]) -> int:
    """Index of the best validation score (ties: the smaller C); points without a score
    (not run) are skipped.

    Raises
    ------
    InputError
        No point has a score (``field="C"``).
    """
    cand = [i for i, s in enumerate(scores) if s is not None and np.isfinite(s)]
    if not cand:
        raise InputError("no point of the grid of C was trained and scored (time limit too short?)", field="C")
    return min(cand, key=lambda i: (-float(scores[i]), float(values[i])))


#: Statuses of a point that reached what its solver promises (a certificate, or SPOM's epochs).
_FINISHED = ("converged", "completed")


class GridExtension:
    """Where a path goes on past the edge of its grid of C: the ``extend`` of
    :func:`run_cutting_plane_path` (scikit-learn's ``...CV`` estimators stop at the edge given).

    The rule. When every point of the grid has run and the best validation score
    (:func:`choose_best`), above every other point's, is at its largest C (``"above"``) or its
    smallest (``"below"``), the
    path goes on past that edge by the grid's own ratio there (the edge over its neighbour:
    10 for 100, 1000, 10000), one point at a time, each warm from the path's cuts and certified
    as the others. It goes on while each new point's score is strictly above every score
    before it and that point reached its certificate (a larger C would cost more than the one
    that could not), up to ``limit`` points, and while ``allow()`` (the time budget:
    :class:`RefitBudget`) says a new point may start. A grid of one C never extends.

    Parameters
    ----------
    values : sequence of float
        The grid of C (any order).
    limit : int
        Most points added; 0 turns the extension off.
    eps_of : callable
        ``eps_of(C) -> float or None``: the tolerance of a point at ``C`` on the engine's
        scale, as the grid's points (:func:`path_eps`; None for a solver without a
        certificate).
    allow : callable, optional
        ``allow() -> bool``: whether a new point may start (None: always).

    Attributes
    ----------
    added : list of float
        The values of C added, in order.
    direction : {"above", "below", None}
        Where the path went on; None while nothing was added.
    """

    def __init__(self, values, limit: int, *, eps_of: Callable, allow: Callable | None = None):
        self.values = tuple(float(c) for c in values)
        self.limit = int(limit)
        self.eps_of = eps_of
        self.allow = allow
        self.added: list = []
        self.direction: str | None = None
        self._ratio = 1.0
        self._seen: dict = {}

    def record(self, C: float, score, status: str) -> None:
        """The validation score and status of the point at ``C`` (grid or added)."""
        self._seen[float(C)] = (score, str(status))

    def _edge(self):
        """The direction and ratio from the grid's scores; None when the best is inside."""
        if len(self.values) < 2 or any(c not in self._seen for c in self.values):
            return None
        scores = [self._seen[c][0] for c in self.values]
        best = self.values[choose_best(scores, self.values)]
        if sum(s == self._seen[best][0] for s in scores) > 1:
            return None  # a tie (a flat score) is no direction to go
        grid = sorted(self.values)
        if best == grid[-1]:
            return "above", grid[-1] / grid[-2], best
        if best == grid[0]:
            return "below", grid[1] / grid[0], best
        return None

    def __call__(self):
        """The next point past the edge, ``(C, eps)``, or None: the path ends here."""
        if self.limit <= 0 or len(self.added) >= self.limit:
            return None
        if not self.added:
            edge = self._edge()
            if edge is None:
                return None
            direction, ratio, last = edge
        else:
            direction, ratio, last = self.direction, self._ratio, self.added[-1]
            score = self._seen[last][0]
            before = [v for c, (v, _) in self._seen.items() if c != last and v is not None]
            if score is None or (before and not score > max(before)):
                return None  # the score turned down or stopped rising
        if self._seen[last][1] not in _FINISHED:
            return None
        if self.allow is not None and not self.allow():
            return None
        C = last * ratio if direction == "above" else last / ratio
        if not np.isfinite(C) or C <= 0 or C in self._seen:
            return None
        self.direction, self._ratio = direction, ratio
        self.added.append(C)
        eps = self.eps_of(C)
        return C, None if eps is None else float(eps)


class RefitBudget:
    """The share of a CV fit's time limit kept for the refit at the chosen C.

    The rule. With a time limit and a refit to follow (the validation examples held out of the
    training ones), the refit is expected to cost ``margin * (n_all / n_train)`` times the
    seconds of the point it refits (:attr:`MARGIN`: a cold run on all ``n_all`` examples
    against the warm-started point on the ``n_train`` kept for training). At each moment of the
    path the time left, ``time_limit`` minus the seconds since ``fit`` started, must cover that
    reserve for the best point so far, and for the running point too (it may become the best):
    a point is stopped when it does not (``path_`` status ``"time_limit"``), and no new point,
    of the grid or past its edge, starts when the time left is below the reserve of the best
    point so far. The refit then runs with what remains.

    Parameters
    ----------
    started : float
        ``time.perf_counter()`` when ``fit`` started.
    time_limit : float
        Seconds for the whole fit (path and refit).
    scale : float
        ``n_all / n_train``.
    margin : float, optional
        :attr:`MARGIN` by default.
    """

    #: The refit's expected cost over the chosen point's seconds, before scaling by the examples.
    MARGIN = 2.0

    def __init__(self, started: float, time_limit: float, scale: float, margin: float | None = None):
        import time

        self.started = float(started)
        self.time_limit = float(time_limit)
        self.scale = float(scale)
        self.margin = self.MARGIN if margin is None else float(margin)
        self.best_seconds = 0.0
        self.point_started = time.perf_counter()
        self.stopped = False

    def left(self) -> float:
        """Seconds left of the time limit."""
        import time

        return self.time_limit - (time.perf_counter() - self.started)

    def reserve(self, seconds: float) -> float:
        """The refit's expected cost for a point that took ``seconds``."""
        return self.margin * self.scale * float(seconds)

    def point_done(self, best_seconds: float) -> None:
        """A point has finished; ``best_seconds`` are those of the best point so far."""
        import time

        self.best_seconds = float(best_seconds)
        self.point_started = time.perf_counter()

    def allows_new_point(self) -> bool:
        """Whether a new point may start: the time left covers the best point's refit."""
        return self.left() >= self.reserve(self.best_seconds)

    def running_point_over(self) -> bool:
        """Whether the running point must stop: the time left no longer covers the refit of
        the best point so far or of the running point (sets :attr:`stopped`)."""
        import time

        running = time.perf_counter() - self.point_started
        if self.left() < self.reserve(max(self.best_seconds, running)):
            self.stopped = True
        return self.stopped

    def callback(self, callback=None) -> Callable:
        """A per-iteration callback that stops the running point when it is over budget
        (:meth:`running_point_over`), else calls ``callback``."""

        def check(info):
            if self.running_point_over():
                return True
            return bool(callback(info)) if callback is not None else False

        return check


def extended_direction(path: dict | None) -> str | None:
    """Where a ``path_`` table went on past its grid (its ``extension`` column): ``"above"``,
    ``"below"`` or None (no point added, or a table without the column)."""
    table = path or {}
    flags = table.get("extension")
    if not flags or not any(flags):
        return None
    grid = [c for c, f in zip(table["C"], flags) if not f]
    added = [c for c, f in zip(table["C"], flags) if f]
    return "above" if not grid or min(added) > max(grid) else "below"


def path_table(rows: Sequence[dict], columns: Sequence[str]) -> dict:
    """The rows (one dict per C) as a dict of lists, one list per column (``cv_results_``'s form)."""
    return {col: [row.get(col) for row in rows] for col in columns}


def not_run_row(C: float, eps_F: float | None) -> dict:
    """The row of a point the path did not reach (its time limit ran out first)."""
    return dict(
        C=float(C),
        eps=eps_F,
        objective=None,
        lower_bound=None,
        gap=None,
        status="not_run",
        n_iter=0,
        seconds=0.0,
        validation_score=None,
    )


def warn_path(owner: str, path: dict, best: int, *, category) -> None:
    """One warning naming the points of the path that were not run or stopped uncertified
    (the chosen point's own warning is the estimator's)."""
    bad = [
        f"C={c:g} ({s})"
        for i, (c, s) in enumerate(zip(path["C"], path["status"]))
        if i != best and s not in ("converged", "completed")
    ]
    if bad:
        warnings.warn(
            f"{owner}: points of the path not certified: {', '.join(bad)}; see path_ (status)",
            category,
            stacklevel=3,
        )


#: What :func:`selection_meta` adds to a model file's metadata (optional on load: files
#: written before C grids lack them).
SELECTION_META = {"C_": (float,), "path": (dict,), "validation": (dict, type(None))}


def selection_meta(est) -> dict:
    """``C_``, ``path`` (the ``path_`` table) and ``validation`` of a fitted estimator, for its
    model file (JSON)."""
    out: dict[str, Any] = {}
    if getattr(est, "C_", None) is not None:
        out["C_"] = float(est.C_)
    if getattr(est, "path_", None) is not None:
        out["path"] = {k: list(v) for k, v in est.path_.items()}
    if hasattr(est, "validation_"):
        out["validation"] = est.validation_
    return out


def load_selection(est, meta, path) -> None:
    """Set ``C_``, ``best_index_``, ``path_`` and ``validation_`` of a loaded estimator from its
    model file's metadata. Files written before C grids hold none of them: ``C_`` is then the
    stored ``C`` (a number), ``path_`` and ``validation_`` are None.

    Raises
    ------
    ModelFormatError
        A ``path`` that is not a table (lists of one length holding ``C``) or a ``C_`` not in it.
    """
    from cutplane.exceptions import ModelFormatError

    table = meta.get("path")
    C = meta.get("C_")
    if C is None:
        stored = est.get_params(deep=False).get("C")
        C = float(stored) if isinstance(stored, (int, float)) and not isinstance(stored, bool) else None
    best = None
    if table is not None:
        lengths = {len(v) for v in table.values() if isinstance(v, list)}
        if (
            not all(isinstance(v, list) for v in table.values())
            or len(lengths) != 1
            or not isinstance(table.get("C"), list)
            or C not in table["C"]
        ):
            raise ModelFormatError(
                "path must map column names to lists of one length, with a column C holding C_",
                path=path,
                field="path",
            )
        best = table["C"].index(C)
    est.C_ = C
    est.best_index_ = best
    est.path_ = table
    est.extended_ = extended_direction(table)
    est.validation_ = meta.get("validation")


#: The attributes of a grid fit that describe the selection (kept when the model is refitted).
SELECTION_ATTRIBUTES = ("C_", "best_index_", "path_", "path_result_", "validation_", "solver_options_", "extended_")


def refit_at_chosen(
    est, X, y, *, started: float, time_limit: float | None, estimator=None, warm_start=None, prepared=None
) -> bool:
    """Train ``est`` again at its chosen ``C_`` on all the training examples (scikit-learn's
    ``refit``), after a grid scored on examples held out of them.

    The held-out examples chose ``C``; the model kept is then trained on every example, as
    :class:`sklearn.model_selection.GridSearchCV` does with ``refit=True``. The refit is one
    run at ``C_`` with the tolerance that point had on the path (``path_["eps"]``), certified on
    its own: from ``warm_start`` when given (the path's cuts, scaled to be cuts of the risk of
    all the examples, and the chosen ``w``), else cold. The selection attributes
    (:data:`SELECTION_ATTRIBUTES`) stay those of the grid; the model attributes (``coef_``, the
    bounds, the features, the template weights, ``result_``) become the refit's, and
    ``validation_["refit"]`` says so (``refit_seconds``, ``n_examples_refit``).

    Parameters
    ----------
    est : estimator
        Fitted on a grid of C with a validation fraction.
    X, y
        All the training examples, as given to ``fit``.
    started : float
        ``time.perf_counter()`` when ``fit`` started.
    time_limit : float or None
        The solver's time limit for the whole ``fit``: the refit gets what remains.
    estimator : callable, optional
        ``estimator(C, solver)``: the unfitted estimator the refit trains (a CV estimator's
        single-C twin); None: ``est``'s class with ``C`` and ``solver`` replaced.
    warm_start : cutplane.WarmStart, optional
        Cuts of the risk of all the training examples and a start point, handed to the refit's
        single run (used when its coordinates are the refit's; ``validation_["refit_warm"]`` says
        whether it was).

    Returns
    -------
    bool
        Whether the refit ran; without time left, a ``ConvergenceWarning`` says the model is
        the one trained without the held-out examples.
    """
    import time

    from cutplane.exceptions import ConvergenceWarning

    remaining = None
    if time_limit is not None:
        remaining = time_limit - (time.perf_counter() - started)
        if remaining <= 0:
            warnings.warn(
                f"{type(est).__name__}: no time left to refit at C = {est.C_:g} on all the training examples; "
                "the model is the one trained without the held-out examples",
                ConvergenceWarning,
                stacklevel=3,
            )
            est.validation_ = dict(est.validation_, refit=False)
            return False
    eps = est.path_["eps"][est.best_index_]
    # a shallow copy (not sklearn's clone, which deep-copies parameters): an executor instance the
    # user passed in the solver stays the user's and is used as given
    solver = est.solver_options_.refit_solver(est.solver, eps=eps, time_limit=remaining)
    if estimator is None:
        single = type(est)(**dict(est.get_params(deep=False), C=float(est.C_), solver=solver))
    else:
        single = estimator(float(est.C_), solver)
    start = None if warm_start is None else warm_start.w
    if start is not None and start.flags.owndata:
        # read-only: the refit starts from this array itself, not from a copy of it
        # (cutplane.run_inputs.check_start); est's model attributes become the refit's after
        start.flags.writeable = False
    t0 = time.perf_counter()
    single._warm_start, single._prepared = warm_start, prepared
    try:
        single.fit(X, y)
    finally:
        del single._warm_start, single._prepared
    seconds = time.perf_counter() - t0
    n_all = int(len(y) if y is not None else X.shape[0] if hasattr(X, "shape") else len(X))  # a sparse X has no len
    kept = {name: getattr(est, name) for name in SELECTION_ATTRIBUTES if hasattr(est, name)}
    for name, value in vars(single).items():
        if name.endswith("_") and not name.startswith("_"):
            setattr(est, name, value)
    for name, value in kept.items():
        setattr(est, name, value)
    est.validation_ = dict(
        est.validation_,
        refit=True,
        refit_seconds=seconds,
        n_examples_refit=n_all,
        refit_warm=bool(getattr(single, "_refit_was_warm", False)),
    )
    logger.info("refitted at C=%g on all %d training examples in %.1f s", est.C_, n_all, seconds)
    return True
