"""What the template-weighted structured estimators share (sequence tagger, dependency parser, and
the structural SVM of a user's model, :class:`problems.structured.StructuredSVM`, whose feature
groups play the templates' part).

They train ``F(w) = Omega(w) + C * mean structured hinge`` with ``Omega`` chosen by name:
``"ssvm"`` (``1/2 ||w||^2``), ``"mtl"`` (``MixedNorm(p=1)`` over template groups, Mao and
Tsang 2013, eq. 6-7) or ``"pmtl"`` (``MixedNorm(p)``, ``p > 1``), and report per-template weights.
They take a solver object (:mod:`problems.solvers`): :class:`~problems.solvers.CuttingPlane`
(the engine, certified gap; the default) or :class:`~problems.solvers.SPOM` (the online
proximal baseline of Martins et al. 2011, one example per round through the task's per-example oracle,
no certificate). The solver object trains the estimator's
:class:`~problems.solvers.TrainingProblem` (its ``train`` at one C, its ``train_path`` along a
grid): the estimators never ask which solver they hold.

A plain estimator (:class:`TemplateLearnerMixin`) trains one model at one number ``C``; its
``...CV`` twin (:class:`TemplateLearnerCVMixin`, scikit-learn's ``LogisticRegressionCV``
convention) trains the certified path over a grid ``Cs``, chooses C on held-out data and
refits. :data:`TemplateLearnerMixin.PARAMETERS` is the declarative table of the parameters
both estimators share; each estimator extends it with its own and checks the whole table at
``fit`` (:meth:`TemplateLearnerMixin._checked_params`).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from cutplane.exceptions import ConvergenceWarning, InputError
from problems import model_selection as ms
from problems.solvers import Param, TrainingProblem, check_params, checked_solver
from problems.validation import check_bool, check_choice, check_int, check_positive

__all__ = [
    "TemplateLearnerMixin",
    "TemplateLearnerCVMixin",
    "REGULARIZERS",
    "DEFAULT_C_GRIDS",
    "DEFAULT_MIN_COUNTS",
    "DEFAULT_METHOD",
    "make_regularizer",
]

logger = logging.getLogger(__name__)

REGULARIZERS = ("mtl", "ssvm", "pmtl")

#: The grid ``Cs="auto"`` of the CV estimators stands for, by regulariser. MTL^struct's penalty
#: ``(sum_j ||w_j||)^2 / 2`` is up to m (the number of templates) times the SSVM's
#: ``||w||^2 / 2`` at equal C, so its best C is larger: one to two decades above the SSVM's
#: on the measured tasks (``docs/results/conll2000_chunking.md``,
#: ``docs/results/conll2002_ner_table5a.md``, ``docs/results/danish_parsing.md``). pMTL's
#: penalty lies between the two; it takes MTL's grid.
DEFAULT_C_GRIDS = {
    "ssvm": (10.0, 100.0, 1000.0),
    "mtl": (100.0, 1000.0, 10000.0),
    "pmtl": (100.0, 1000.0, 10000.0),
}

#: The feature cutoff ``min_count="auto"`` stands for, by regulariser (features seen fewer
#: times in training are dropped, CRF++'s ``-f``). MTL^struct and pMTL^struct charge a template
#: by the norm of its whole block, so at the large C they need, features seen once (a word
#: pair is mostly unique) let them fit the training set through the few templates that hold
#: most of them and memorise; dropping them removes that route. The structural SVM charges
#: every weight alike and keeps every feature. Measured in
#: ``docs/results/conll2000_summary.md`` (section "singleton features") and
#: ``docs/results/default_models.md``.
DEFAULT_MIN_COUNTS = {"ssvm": 1, "mtl": 2, "pmtl": 2}

#: The engine's method when the solver leaves it None (``CuttingPlane(method=None)``, the
#: default): BMRM querying between the best point and the reduced minimiser
#: (:class:`cutplane.steps.InOutStep`). At the large C the structured tasks need, BMRM's reduced
#: minimiser oscillates and the in-out queries take fewer iterations to the same certificate
#: (``docs/results/in_out.md``, from ``python -m benchmarks.in_out``).
DEFAULT_METHOD = "in-out"


def _check_min_count(value, name):
    """``min_count``: an integer >= 1 or ``"auto"`` (resolved by regulariser at ``fit``)."""
    if isinstance(value, str) and value == "auto":
        return value
    try:
        return check_int(value, name)
    except InputError:
        raise InputError(f"must be an integer >= 1 or 'auto', got {value!r:.40}", field=name) from None


def _resolve_min_count(value, regularizer):
    """A checked ``min_count`` with ``"auto"`` replaced by :data:`DEFAULT_MIN_COUNTS` of ``regularizer``."""
    return DEFAULT_MIN_COUNTS[regularizer] if value == "auto" else value


#: The ``path_`` columns of the structured estimators (``extension``: True for a point the
#: path added past the grid's edge, :class:`problems.model_selection.GridExtension`).
PATH_COLUMNS = (*ms.PATH_COLUMNS, "n_active_templates", "active_templates", "extension", "tolerance")


def _opt_float(v):
    return None if v is None else float(v)


def _check_C(value, name):
    """``C`` / ``Cs`` as a :class:`problems.model_selection.CGrid` (``"auto"``: resolved at
    ``fit``, where the regulariser is known)."""
    if isinstance(value, str) and value == ms.AUTO:
        return ms.CGrid((), "auto")
    return ms.check_C(value, name)


def _group_weights(coef, regularizer, p, groups, n_groups):
    """The template weights of a model trained without the reduced problem's duals (SPOM):
    ``mu_j = (||w_j|| / ||w||_p)^(2 - p)`` (the simplex for p = 1); None for ``"ssvm"``."""
    if regularizer == "ssvm":
        return None
    from cutplane.groups import group_norms, group_runs

    q = 1.0 if regularizer == "mtl" else p
    norms = group_norms(coef, groups, n_groups, runs=group_runs(groups, n_groups))
    total = float(np.sum(norms**q)) ** (1.0 / q)
    return (norms / total) ** (2.0 - q) if total > 0 else np.zeros(n_groups)


def make_regularizer(name, p, groups, n_groups):
    """``L2()`` for ``"ssvm"``, else ``MixedNorm(groups, p)`` (``p = 1`` for ``"mtl"``)."""
    from cutplane.regularizers import L2, MixedNorm

    if name == "ssvm":
        return L2()
    return MixedNorm(groups, p=1.0 if name == "mtl" else p, n_groups=n_groups)


class TemplateLearnerMixin:
    """Parameter table, C, solver run and template statistics of a structured estimator.

    The estimator stores ``C`` (one number), ``regularizer``, ``p``, ``min_count``,
    ``active_rtol`` and ``solver`` (a :class:`~problems.solvers.CuttingPlane`, a
    :class:`~problems.solvers.SPOM` or None for ``CuttingPlane()``) and trains one model at ``C``;
    its ``...CV`` twin (:class:`TemplateLearnerCVMixin`) takes a grid ``Cs`` instead. The solver
    object trains (:class:`~problems.solvers.TrainingProblem`): the estimator never asks which
    one it holds.
    """

    #: A ``CuttingPlane`` that leaves ``eps`` / ``max_iter`` None: the certified tolerance of one
    #: run on the engine's scale ``F / C`` (``DEFAULT_PATH_EPS * C`` on ``F``) and its iteration
    #: limit, at one C and at each point of a grid of C alike (a plain fit at C is the CV path's
    #: point at C): the tolerance of the measured default models, ``docs/results/default_models.md``.
    DEFAULT_PATH_EPS: ClassVar[float] = 0.01
    DEFAULT_PATH_MAX_ITER: ClassVar[int] = 1000
    #: The engine's method of a ``CuttingPlane`` that leaves ``method`` None:
    #: :data:`DEFAULT_METHOD`.
    DEFAULT_METHOD: ClassVar[str] = DEFAULT_METHOD
    #: Share of the training sentences / trees a CV estimator holds out to choose C when
    #: ``validation_fraction`` is None and ``fit`` is given no validation data.
    DEFAULT_VALIDATION_FRACTION: ClassVar[float] = 0.1
    #: The class that trains a grid of C (named when a grid is given to this one).
    CV_NAME: ClassVar[str] = ""
    #: The active-group threshold (relative to the largest group norm) of an estimator that
    #: has no ``active_rtol`` parameter.
    ACTIVE_RTOL: ClassVar[float] = 1e-5

    # What the mixin reads of the estimator: its constructor's parameters and its task's
    # training step (declared for the type checker; each estimator sets or defines them).
    C: Any
    regularizer: str
    min_count: int | str
    solver: Any
    _fit_task: Callable[..., Any]
    extended_: str | None

    #: The declarative table of the shared parameters (checked at ``fit``).
    PARAMETERS: ClassVar[dict] = {
        "C": Param(_check_C, "weight of the mean structured hinge: a number > 0"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "Omega by name"),
        "p": Param(lambda v, n: check_positive(v, n), "exponent of the p-block norm (pmtl)"),
        "min_count": Param(_check_min_count, "feature count threshold: an integer or 'auto'"),
        "active_rtol": Param(lambda v, n: check_positive(v, n, allow_zero=True), "active-template threshold"),
    }

    def _checked_params(self) -> dict:
        """The estimator's own parameters, checked against :data:`PARAMETERS` (a bad one raises
        :class:`~cutplane.exceptions.InputError` naming it; ``"pmtl"`` needs ``p > 1``).
        ``prm["C"]`` is a :class:`~problems.model_selection.CGrid` (:meth:`_C_grid`)."""
        prm = check_params(self, type(self).PARAMETERS)
        if prm["regularizer"] == "pmtl" and not prm["p"] > 1.0:
            raise InputError(f"regularizer='pmtl' needs p > 1, got {prm['p']}", field="p")
        prm["C"] = self._C_grid(prm)
        if "min_count" in prm:  # a task with a feature cutoff (not the user's model of StructuredSVM)
            prm["min_count"] = _resolve_min_count(prm["min_count"], prm["regularizer"])
        return prm

    def _C_grid(self, prm) -> ms.CGrid:
        """One C: a number > 0; a grid (``"auto"`` or a sequence) is refused, naming
        :attr:`CV_NAME`."""
        grid = prm["C"]
        if grid.kind != "single" or not ms.is_single_C(self.C):
            owner = type(self).__name__
            raise InputError(
                f"{owner} trains one model at one C: give a number > 0, got C={self.C!r:.60}; a grid of C "
                f"('auto' or a list of values) is {self.CV_NAME or owner + 'CV'}(Cs=...)'s, which trains the "
                "certified path and chooses C on held-out data",
                field="C",
            )
        return grid

    def _resolved_min_count(self) -> int:
        """``min_count`` as an integer: ``"auto"`` is :data:`DEFAULT_MIN_COUNTS` of the
        regulariser (both checked as :meth:`_checked_params` checks them)."""
        value = _check_min_count(self.min_count, "min_count")
        if value != "auto":
            return value
        return _resolve_min_count(value, check_choice(self.regularizer, "regularizer", REGULARIZERS))

    def _checked_solver(self, *, C: float = 1.0):
        """The checked options of ``solver`` (``CuttingPlaneOptions`` or ``SPOMOptions``); an
        ``eps`` left None is :data:`DEFAULT_PATH_EPS` ``* C`` on ``F``, a ``max_iter`` left None
        :data:`DEFAULT_PATH_MAX_ITER`, a ``method`` left None :data:`DEFAULT_METHOD`."""
        return checked_solver(
            self.solver,
            eps=self.DEFAULT_PATH_EPS * C,
            max_iter=self.DEFAULT_PATH_MAX_ITER,
            owner=type(self).__name__,
            method=self.DEFAULT_METHOD,
        )

    def _fit_one(self, X, y, *, callback=None):
        """The single-C ``fit``: one model at ``C`` on all of ``X`` (no validation)."""
        prm = self._checked_params()
        options = self._checked_solver(C=prm["C"].values[0])
        self.validation_ = None
        plan = ms.ValidationPlan(None, None, 0)  # no validation data: the model is trained on all of X
        self._fit_task(X, y, prm=prm, options=options, plan=plan, validation_data=None, callback=callback)
        return self

    def _train(self, oracle, examples: Callable, groups, names, *, prm, options, scorer=None, callback=None):
        """One run at a single C or a path over a grid (:meth:`_train_grid`), by the solver
        (:meth:`~problems.solvers.CuttingPlaneOptions.train` / ``train_path``); sets ``C_``,
        ``path_``, ``best_index_`` and the model at ``C_``.

        Parameters
        ----------
        oracle : Oracle
            The 1-slack oracle of the training set.
        examples : callable
            ``examples() -> ExampleOracle``: SPOM's per-example view (built only for SPOM).
        groups : ndarray of int of shape (dim,), or callable
            The coordinates' groups, or ``groups() -> ndarray``: then made only when needed
            (MTL^struct's regulariser, SPOM, the template statistics of the trained model),
            so that an SSVM run by the cutting plane does not hold an array the size of ``w``
            beside its working sets.
        names : list of str
            Template names, one per group.
        prm : dict
            The checked parameters (:meth:`_checked_params`).
        options : CuttingPlaneOptions or SPOMOptions
        scorer : callable, optional
            ``scorer() -> float`` in [0, 1]: the validation score of the model the estimator's
            attributes hold (its ``predict`` on the validation data). Needed for a grid.
        callback : callable, optional

        Returns
        -------
        Regularizer
            The ``Omega`` that was minimised.
        """
        grid = prm["C"]
        regularizer, p = prm["regularizer"], prm["p"]
        active_rtol = prm.get("active_rtol", self.ACTIVE_RTOL)
        n_groups = len(names)
        groups = functools.cache(groups if callable(groups) else (lambda ids=groups: ids))  # made once, if at all
        reg = make_regularizer(regularizer, p, None if regularizer == "ssvm" else groups(), n_groups)
        if isinstance(getattr(reg, "groups", None), np.ndarray):
            # one array of coordinate groups for the fit (dim entries: on a large model the size of w)
            groups = functools.cache(lambda ids=reg.groups: ids)
        problem = TrainingProblem(
            oracle,
            reg,
            examples=examples,
            groups=groups,
            n_groups=n_groups,
            group_weights=lambda coef: _group_weights(coef, regularizer, p, groups(), n_groups),
        )
        self.solver_options_ = options

        def adopt(point):
            self._adopt_point(point, names, groups(), None if regularizer == "ssvm" else point.mu, active_rtol)

        if grid.is_path:
            self._train_grid(
                problem,
                grid.values,
                options=options,
                adopt=adopt,
                scorer=scorer,
                callback=callback,
                extend=prm.get("extend", 0),
            )
            return reg
        C = grid.values[0]
        warm = self._usable_warm_start(getattr(self, "_warm_start", None), oracle, reg.groups)
        if warm is not None:
            self._refit_was_warm = True  # read by problems.model_selection.refit_at_chosen
        point = options.train(problem, C, callback=callback, **({} if warm is None else {"warm_start": warm}))
        adopt(point)
        row = self._current_row(C, point.eps, None if scorer is None else float(scorer()))
        self.C_, self.best_index_, self.path_result_ = float(C), 0, None
        self.path_ = ms.path_table([row], PATH_COLUMNS)
        self.extended_ = None
        return reg

    @staticmethod
    def _usable_warm_start(warm, oracle, groups):
        """``warm`` (a :class:`cutplane.WarmStart` a CV fit hands its refit) when its cuts have
        the oracle's coordinates and the regulariser's ``groups``, else None (the refit starts cold)."""
        if warm is None:
            return None
        ws = warm.working_set
        if ws.dim != oracle.dim or not ws.same_groups(groups):
            logger.info(
                "refit: the path's cuts have other coordinates (dim %d, the refit's %d): cold", ws.dim, oracle.dim
            )
            return None
        return warm

    def _train_grid(self, problem, values, *, options, adopt, scorer, callback, extend=0):
        """Train along the grid ``values`` of C (the solver's ``train_path``: the cutting plane's
        certified warm-started path, or SPOM once per C), score each point, keep the best.

        ``eps`` per point from the solver's ``path_eps`` (a tolerance the user gave is absolute
        on ``F``; else :data:`DEFAULT_PATH_EPS` on the engine's scale), ``max_iter`` per point,
        ``time_limit`` for the whole path. When the best score sits at an edge of the grid,
        the path goes on past it for at most ``extend`` points
        (:class:`~problems.model_selection.GridExtension`; ``extended_`` says where). A CV
        ``fit`` that refits sets ``_refit_budget`` (:class:`~problems.model_selection.RefitBudget`):
        the path then keeps the refit's time.
        """
        if scorer is None:  # plan_validation refuses a grid without validation data first
            raise InputError("a grid of C needs validation data", field="validation_data")
        user_eps = getattr(self.solver, "eps", None) is not None
        eps = options.path_eps(values, user_eps=user_eps, default_eps=self.DEFAULT_PATH_EPS)
        rows = [
            dict(ms.not_run_row(C, None if e is None else e * C), extension=False, tolerance=None)
            for C, e in zip(values, eps)
        ]
        budget = getattr(self, "_refit_budget", None)

        def eps_of(C):
            (e,) = options.path_eps([C], user_eps=user_eps, default_eps=self.DEFAULT_PATH_EPS)
            return e

        growth = ms.GridExtension(
            values, extend, eps_of=eps_of, allow=None if budget is None else budget.allows_new_point
        )

        scoring_rtol = getattr(self, "_scoring_rtol", None)
        if scoring_rtol is not None:  # a refit certifies the chosen C: the scoring points stop at a relative gap
            options = options.for_scoring(scoring_rtol)

        best_so_far = [0]

        def on_point(i, C, point):
            adopt(point)
            row = dict(self._current_row(C, point.eps, float(scorer())), extension=i >= len(values))
            row["tolerance"] = _opt_float(options.certified_tolerance(point.eps, point.objective))
            if budget is not None and budget.stopped:
                row["status"] = "time_limit"  # stopped to keep the refit's time (RefitBudget)
            rows[i : i + 1] = [row]  # a point past the grid is appended
            growth.record(C, row["validation_score"], row["status"])
            best_so_far[0] = ms.choose_best([r["validation_score"] for r in rows], [r["C"] for r in rows])
            if budget is None:
                return False
            budget.point_done(rows[best_so_far[0]]["seconds"])
            return budget.stopped or not budget.allows_new_point()

        if budget is not None:
            callback = budget.callback(callback)
        run = options.train_path(
            problem,
            values,
            eps=eps,
            on_point=on_point,
            callback=callback,
            extend=growth if extend else None,
            keep=lambda j: j == best_so_far[0],  # one model besides the running point's (memory)
        )

        table = ms.path_table(rows, PATH_COLUMNS)
        best = ms.choose_best(table["validation_score"], table["C"])
        adopt(run.points[best])
        run.keep_only(best)  # the other points' models are not used again (memory: during the refit)
        self.path_result_ = run.path_result
        self.C_, self.best_index_, self.path_ = float(table["C"][best]), int(best), table
        self.extended_ = ms.extended_direction(table)
        ms.warn_path(type(self).__name__, table, best, category=ConvergenceWarning)

    def _adopt_point(self, point, names, groups, mu, active_rtol):
        """Set ``result_``, ``coef_``, ``n_iter_``, the bounds (scale ``F``) and the template
        statistics from a :class:`~problems.solvers.TrainedPoint`."""
        self.result_ = point.result
        self.coef_ = point.coef
        self.n_iter_ = point.n_iter
        self.objective_, self.lower_bound_, self.gap_ = point.objective, point.lower_bound, point.gap
        self._set_template_stats(names, groups, len(names), mu, active_rtol)

    def _current_row(self, C, eps_F, score) -> dict:
        """The ``path_`` row of the model the estimator's attributes hold (trained at ``C``)."""
        res = self.result_
        return dict(
            C=float(C),
            eps=_opt_float(eps_F),
            objective=_opt_float(self.objective_),
            lower_bound=_opt_float(self.lower_bound_),
            gap=_opt_float(self.gap_),
            status=str(res.status),
            n_iter=int(self.n_iter_),
            seconds=float(res.time_s),
            validation_score=score,
            n_active_templates=int(self.n_active_templates_),
            active_templates=list(self.active_templates_),
        )

    def _warn_uncertified(self):
        """``ConvergenceWarning`` (on the scale of ``F``) when the run of the chosen C stopped
        before convergence or its final gap exceeds the tolerance it was given (beyond
        round-off; the solver's ``certified_tolerance``); nothing for a solver that certifies
        nothing (SPOM)."""
        eps = self.solver_options_.certified_tolerance(self.path_["eps"][self.best_index_], self.objective_)
        if eps is None:
            return
        res = self.result_
        if res.status != "converged" or self.gap_ > eps * (1.0 + 1e-9):
            where = f" at C={self.C_:g}" if len(self.path_["C"]) > 1 else ""
            warnings.warn(
                f"{type(self).__name__} stopped with status {res.status!r} after {res.n_iter} iterations{where}; "
                f"certified gap {self.gap_:.4g} (eps {eps:.4g})",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _set_template_stats(self, names, groups, n_groups, mu, active_rtol):
        """``template_weights_`` (``mu``; all 1 when None), ``template_norms_`` (``||w_j||``),
        ``active_templates_`` (norm above ``active_rtol`` times the largest) and their count."""
        from cutplane.groups import group_norms, group_runs

        # run by run, as the regulariser does in the fit: one compiled loop for both
        norms = group_norms(self.coef_, groups, n_groups, runs=group_runs(groups, n_groups))
        mu = np.ones(n_groups) if mu is None else np.asarray(mu, dtype=np.float64)
        self.template_weights_ = {nm: float(m) for nm, m in zip(names, mu)}
        self.template_norms_ = {nm: float(v) for nm, v in zip(names, norms)}
        top = float(norms.max()) if norms.size else 0.0
        active = norms > active_rtol * top if top > 0 else np.zeros(n_groups, bool)
        self.active_templates_ = [nm for nm, a in zip(names, active) if a]
        self.n_active_templates_ = int(active.sum())


def _check_validation_fraction(value, name):
    from problems.validation import check_fraction

    return check_fraction(value, name, allow_one=False)


class TemplateLearnerCVMixin:
    """A structured estimator's ``...CV`` twin: the certified path over a grid of C, C chosen on
    held-out data (scikit-learn's ``LogisticRegressionCV`` convention).

    Put before the single-C estimator in the bases (``class SequenceTaggerCV(
    TemplateLearnerCVMixin, SequenceTagger)``); the estimator stores ``Cs`` instead of ``C``
    and ``validation_fraction``, ``validation_seed``, ``refit`` besides, and sets
    :attr:`SINGLE` to the single-C class (the refit trains one of those at ``C_``).
    ``fit(X, y, *, validation_data=None, callback=None)`` trains along the grid with the
    estimator's solver (the cutting plane's warm-started path, each point certified; SPOM once
    per C), scores every point on the validation data, keeps the best and, when the validation
    data were held out of the training examples, refits at ``C_`` on all of them.

    When the best score sits at the largest C of the grid, or at its smallest, the path goes on
    past that edge by the grid's ratio there, warm and certified as the other points, while the
    score keeps rising, for at most ``extend`` points (:class:`~problems.model_selection.GridExtension`;
    ``extend=0`` stops at the edge given, as scikit-learn's ``...CV`` estimators do); the points
    added have ``path_["extension"]`` True, ``extended_`` is ``"above"`` / ``"below"`` / None,
    and ``C_`` may be one of them. With the solver's ``time_limit`` and a refit to follow, the
    path keeps the refit's expected time (:class:`~problems.model_selection.RefitBudget`): it
    stops a point, and starts no new one, when what is left would not pay for it. The refit
    starts from the path's cuts (scaled to be cuts of the risk of all the examples: when a refit
    follows, the tagger fits its features and labels on the whole training set, held-out part
    included, observations only, so that the path has the refit's coordinates; with a feature
    cutoff above 1 its path may then differ slightly from a ``refit=False`` one) and the chosen
    ``w``, and is certified on its own; ``validation_["refit_warm"]`` says whether it did.
    """

    #: The single-C estimator class (set by each CV class).
    SINGLE: ClassVar[type]
    # set by fit (the single-C estimator's attributes; declared for the type checker)
    path_result_: Any
    result_: Any
    validation_: Any
    #: The relative gap of the scoring points of a path followed by a refit (the refit certifies
    #: the chosen C to its ``eps``; the scoring points need only what the choice of C needs),
    #: unless the solver was given an ``eps`` or an ``rtol``. Measured on
    #: ``docs/results/scoring_tolerance.md`` (``python -m benchmarks.scoring_tolerance``). None:
    #: every point to its ``eps``.
    SCORING_RTOL: ClassVar[float | None] = 0.02
    #: Whether the refit starts from the path's cuts (:meth:`_refit_warm_start`); False: cold
    #: (``benchmarks/warm_refit.py`` measures what the warm start buys, ``docs/results/warm_refit.md``).
    WARM_REFIT: ClassVar[bool] = True
    #: The grid ``Cs="auto"`` stands for, by regulariser.
    AUTO_C_GRIDS: ClassVar[dict] = DEFAULT_C_GRIDS

    # What the mixin uses of the single-C estimator it is put before (its TemplateLearnerMixin
    # and scikit-learn's BaseEstimator); declared for the type checker.
    DEFAULT_VALIDATION_FRACTION: ClassVar[float]
    _checked_params: Callable[[], dict]
    _checked_solver: Callable[..., Any]
    _fit_task: Callable[..., Any]
    _warn_uncertified: Callable[[], None]
    get_params: Callable[..., dict]
    solver: Any
    #: The parameters of the CV estimator that the single-C one has not.
    CV_PARAMETERS: ClassVar[dict] = {
        "Cs": Param(_check_C, "the grid of C: 'auto' (the regulariser's grid) or a sequence of numbers > 0"),
        "validation_fraction": Param(
            _check_validation_fraction, "share of the training examples held out", allow_none=True
        ),
        "validation_seed": Param(lambda v, n: check_int(v, n, min_value=0), "seed of the held-out examples"),
        "refit": Param(check_bool, "train again at C_ on all the training examples"),
        "extend": Param(
            lambda v, n: check_int(v, n, min_value=0), "most points past the grid's edge where the best score sits"
        ),
    }
    #: The default of ``extend``: at most this many points past the edge of the grid.
    DEFAULT_EXTEND: ClassVar[int] = 2

    def _C_grid(self, prm) -> ms.CGrid:
        """``Cs`` as a :class:`~problems.model_selection.CGrid`, ``"auto"`` resolved to the
        regulariser's grid (:attr:`AUTO_C_GRIDS`: :data:`DEFAULT_C_GRIDS` unless the estimator
        sets its own)."""
        grid = prm.pop("Cs")
        if grid.kind == "auto":
            grid = ms.check_C(ms.AUTO, auto_grid=self.AUTO_C_GRIDS[prm["regularizer"]])
        return grid

    def fit(self, X, y=None, *, validation_data=None, callback=None):
        """Train along the grid ``Cs``, choose C on validation data, refit at ``C_``.

        Parameters
        ----------
        X, y
            The training examples, as the single-C estimator's ``fit`` takes them.
        validation_data : optional
            Labelled examples to choose C on (the task's form: ``(X_dev, y_dev)`` sentences
            and labels for the tagger, sentences with gold heads for the parser). None: hold
            out ``validation_fraction`` of the training examples (None:
            :data:`DEFAULT_VALIDATION_FRACTION`), seeded by ``validation_seed``.
        callback : callable, optional
            Passed to the solver: ``callback(IterationInfo)`` per engine iteration
            (``info.lam`` is ``1 / C`` of the running point), ``callback(SPOMInfo)`` per SPOM
            evaluation; returning True stops.

        Returns
        -------
        self

        Raises
        ------
        InputError
            Both ``validation_data`` and ``validation_fraction``, a fraction with fewer than
            two examples, malformed validation data, or a bad parameter.
        """
        import time

        started = time.perf_counter()
        prm = self._checked_params()
        options = self._checked_solver(C=prm["C"].values[0])  # its eps: of one C (a path's is per point)
        self.validation_ = None
        fraction = prm["validation_fraction"]
        if fraction is None and validation_data is None:
            fraction = self.DEFAULT_VALIDATION_FRACTION
        plan = ms.plan_validation(
            prm["C"],
            validation_data,
            fraction,
            prm["validation_seed"],
            default_fraction=None,
            owner=type(self).__name__,
        )
        refits = prm["refit"] and plan.source == "fraction" and prm["C"].is_path
        user_tolerance = getattr(self.solver, "eps", None) is not None or getattr(self.solver, "rtol", None) is not None
        self._scoring_rtol = self.SCORING_RTOL if (refits and not user_tolerance) else None
        self._refit_budget = None
        self._refit_follows = refits  # the tagger then fits its features on all the training sentences
        if refits and options.time_limit is not None:
            n_all = len(y if y is not None else X)
            n_val = int(round((plan.fraction or 0.0) * n_all))
            n_train = n_all - min(n_all - 1, max(1, n_val))  # as holdout_split holds out
            self._refit_budget = ms.RefitBudget(started, options.time_limit, n_all / max(1, n_train))
        try:
            self._fit_task(
                X, y, prm=prm, options=options, plan=plan, validation_data=validation_data, callback=callback
            )
        finally:
            del self._refit_budget, self._scoring_rtol, self._refit_follows
            # what the path prepared of all the examples for the refit (the tagger's features)
            prepared = self.__dict__.pop("_refit_features", None)
        warm = self._refit_warm_start(len(y if y is not None else X)) if refits and self.WARM_REFIT else None
        if refits:
            ms.refit_at_chosen(
                self,
                X,
                y,
                started=started,
                time_limit=options.time_limit,
                estimator=self._single_estimator,
                warm_start=warm,
                prepared=prepared,
            )
        self._warn_uncertified()
        return self

    def _refit_warm_start(self, n_all: int):
        """The refit's start: the path's cuts, of the risk of the ``n_train`` examples it was
        trained on, scaled by ``n_train / n_all`` (cuts of the risk of all ``n_all``: the held-out
        examples' mean risk is ``>= 0``), and the chosen point's ``w``; None when the path kept
        no working set (SPOM, n-slack). The path result lets go of its working set (memory)."""
        from cutplane.path import WarmStart

        run = getattr(self, "path_result_", None)
        if run is None or run.working_set is None:
            return None
        ws = run.working_set
        self.path_result_ = dataclasses.replace(run, working_set=None)
        n_train = n_all - int(self.validation_["n_examples"])
        ws.scale(n_train / n_all)
        return WarmStart(ws, self.result_.w)  # read-only during the refit (refit_at_chosen)

    def _single_estimator(self, C: float, solver):
        """The single-C estimator with this one's parameters, at ``C`` with ``solver`` (the refit)."""
        params = {k: v for k, v in self.get_params(deep=False).items() if k not in self.CV_PARAMETERS}
        return self.SINGLE(**dict(params, C=C, solver=solver))
