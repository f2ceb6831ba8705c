"""What the template-weighted structured estimators share (sequence tagger, dependency parser).

Both train ``F(w) = Omega(w) + C * mean structured hinge`` with ``Omega`` chosen by name:
``"ssvm"`` (``1/2 ||w||^2``), ``"mtl"`` (``MixedNorm(p=1)`` over template groups, Mao and
Tsang 2013, eq. 6-7) or ``"pmtl"`` (``MixedNorm(p)``, ``p > 1``), and report per-template weights.
Both take a solver object (:mod:`problems.solvers`): :class:`~problems.solvers.CuttingPlane`
(the engine, certified gap; the default) or :class:`~problems.solvers.SPOM` (the online
proximal baseline of Martins et al. 2011, one example per round through the task's per-example oracle,
no certificate).

:data:`TemplateLearnerMixin.PARAMETERS` is the declarative table of the parameters both
estimators share; each estimator extends it with its own and checks the whole table at
``fit`` (:meth:`TemplateLearnerMixin._checked_params`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from cutplane.exceptions import ConvergenceWarning, InputError
from problems import model_selection as ms
from problems.solvers import CuttingPlane, Param, SPOMOptions, check_params, checked_solver
from problems.validation import check_choice, check_int, check_positive

__all__ = ["TemplateLearnerMixin", "REGULARIZERS", "DEFAULT_C_GRIDS", "DEFAULT_MIN_COUNTS", "make_regularizer"]

REGULARIZERS = ("mtl", "ssvm", "pmtl")

#: The grid ``C="auto"`` stands for, by regulariser. MTL^struct's penalty
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


#: The ``path_`` columns of the structured estimators.
PATH_COLUMNS = (*ms.PATH_COLUMNS, "n_active_templates", "active_templates")


def _opt_float(v):
    return None if v is None else float(v)


def _check_C(value, name):
    """``C`` as a :class:`problems.model_selection.CGrid` (``"auto"``: resolved at ``fit``,
    where the regulariser is known)."""
    if isinstance(value, str) and value == ms.AUTO:
        return ms.CGrid((), "auto")
    return ms.check_C(value, name)


def make_regularizer(name, p, groups, n_groups):
    """``L2()`` for ``"ssvm"``, else ``MixedNorm(groups, p)`` (``p = 1`` for ``"mtl"``)."""
    from cutplane.regularizers import L2, MixedNorm

    if name == "ssvm":
        return L2()
    return MixedNorm(groups, p=1.0 if name == "mtl" else p, n_groups=n_groups)


class TemplateLearnerMixin:
    """Parameter table, solver dispatch, C grid and template statistics of a structured estimator.

    The estimator stores ``C``, ``regularizer``, ``p``, ``min_count``, ``active_rtol`` and
    ``solver`` (a :class:`~problems.solvers.CuttingPlane`, a :class:`~problems.solvers.SPOM`
    or None for ``CuttingPlane()``). ``C`` is one value (one run, as before), a sequence of
    values or ``"auto"`` (:data:`DEFAULT_C_GRIDS`): the estimator then trains along the grid
    and keeps the point of the best validation score (:mod:`problems.model_selection`).
    """

    #: Certified tolerance and iteration limit of a ``CuttingPlane`` that leaves them None
    #: (one C).
    DEFAULT_EPS: ClassVar[float] = 0.1
    DEFAULT_MAX_ITER: ClassVar[int] = 500
    #: With a grid of C and a ``CuttingPlane`` that leaves them None: the tolerance of each
    #: point on the engine's scale ``F / C`` (``DEFAULT_PATH_EPS * C`` on ``F``) and the
    #: iteration limit of each point.
    DEFAULT_PATH_EPS: ClassVar[float] = 0.01
    DEFAULT_PATH_MAX_ITER: ClassVar[int] = 1000
    #: Share of the training sentences / trees held out to choose C when ``C="auto"`` and
    #: ``fit`` is given no validation data.
    DEFAULT_VALIDATION_FRACTION: ClassVar[float] = 0.1

    #: The declarative table of the shared parameters (checked at ``fit``).
    PARAMETERS: ClassVar[dict] = {
        "C": Param(_check_C, "weight of the mean structured hinge: a number, a sequence or 'auto'"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "Omega by name"),
        "p": Param(lambda v, n: check_positive(v, n), "exponent of the p-block norm (pmtl)"),
        "min_count": Param(_check_min_count, "feature count threshold: an integer or 'auto'"),
        "active_rtol": Param(lambda v, n: check_positive(v, n, allow_zero=True), "active-template threshold"),
    }

    def _checked_params(self) -> dict:
        """The estimator's own parameters, checked against :data:`PARAMETERS` (a bad one raises
        :class:`~cutplane.exceptions.InputError` naming it; ``"pmtl"`` needs ``p > 1``).
        ``prm["C"]`` is a :class:`~problems.model_selection.CGrid`, ``"auto"`` resolved to the
        regulariser's grid."""
        prm = check_params(self, type(self).PARAMETERS)
        if prm["regularizer"] == "pmtl" and not prm["p"] > 1.0:
            raise InputError(f"regularizer='pmtl' needs p > 1, got {prm['p']}", field="p")
        if prm["C"].kind == "auto":
            prm["C"] = ms.check_C(ms.AUTO, auto_grid=DEFAULT_C_GRIDS[prm["regularizer"]])
        prm["min_count"] = _resolve_min_count(prm["min_count"], prm["regularizer"])
        return prm

    def _resolved_min_count(self) -> int:
        """``min_count`` as an integer: ``"auto"`` is :data:`DEFAULT_MIN_COUNTS` of the
        regulariser (both checked as :meth:`_checked_params` checks them)."""
        value = _check_min_count(self.min_count, "min_count")
        if value != "auto":
            return value
        return _resolve_min_count(value, check_choice(self.regularizer, "regularizer", REGULARIZERS))

    def _checked_solver(self, *, path=False):
        """The checked options of ``solver`` (``CuttingPlaneOptions`` or ``SPOMOptions``); with
        ``path``, a ``max_iter`` left None is :data:`DEFAULT_PATH_MAX_ITER` (per point)."""
        return checked_solver(
            self.solver,
            eps=self.DEFAULT_EPS,
            max_iter=self.DEFAULT_PATH_MAX_ITER if path else self.DEFAULT_MAX_ITER,
            owner=type(self).__name__,
        )

    def _validation_plan(self, grid, validation_data, validation_fraction, validation_seed):
        """Where ``fit``'s validation data come from (:func:`problems.model_selection.plan_validation`)."""
        return ms.plan_validation(
            grid,
            validation_data,
            validation_fraction,
            validation_seed,
            default_fraction=self.DEFAULT_VALIDATION_FRACTION,
            owner=type(self).__name__,
        )

    def _train(self, oracle, examples: Callable, groups, names, *, prm, options, scorer=None, callback=None):
        """One run at a single C (:meth:`_solve`) or a path over a grid (:meth:`_solve_grid`);
        sets ``C_``, ``path_``, ``best_index_`` and the model at ``C_``.

        Parameters
        ----------
        scorer : callable, optional
            ``scorer() -> float`` in [0, 1]: the validation score of the model the estimator's
            attributes hold (its ``predict`` on the validation data). Needed for a grid.

        Returns
        -------
        Regularizer
            The ``Omega`` that was minimised.
        """
        grid = prm["C"]
        kw = dict(regularizer=prm["regularizer"], p=prm["p"], active_rtol=prm["active_rtol"], options=options)
        if grid.is_path:
            return self._solve_grid(
                oracle, examples, groups, names, values=grid.values, scorer=scorer, callback=callback, **kw
            )
        C = grid.values[0]
        reg = self._solve(oracle, examples, groups, names, C=C, callback=callback, **kw)
        eps_F = None if isinstance(options, SPOMOptions) else float(options.eps)
        row = self._current_row(C, eps_F, None if scorer is None else float(scorer()))
        self.C_, self.best_index_, self.path_result_ = float(C), 0, None
        self.path_ = ms.path_table([row], PATH_COLUMNS)
        return reg

    def _solve(
        self, oracle, examples: Callable, groups, names, *, C, regularizer, p, active_rtol, options, callback=None
    ):
        """Minimise ``F`` with the chosen solver; sets the fitted attributes on the scale of ``F``.

        Parameters
        ----------
        oracle : Oracle
            The 1-slack oracle of the training set.
        examples : callable
            ``examples() -> ExampleOracle``: SPOM's per-example view (built only for SPOM).
        groups : ndarray of int of shape (dim,)
        names : list of str
            Template names, one per group.
        C, regularizer, p, active_rtol
            The checked estimator parameters (one C).
        options : CuttingPlaneOptions or SPOMOptions
        callback : callable, optional

        Returns
        -------
        Regularizer
            The ``Omega`` that was minimised.
        """
        n_groups = len(names)
        reg = make_regularizer(regularizer, p, groups, n_groups)
        self.solver_options_ = options
        if isinstance(options, SPOMOptions):
            self._run_spom(examples(), oracle, reg, groups, n_groups, C=C, options=options, callback=callback)
            mu = self._spom_mu(regularizer, p, groups, n_groups)
        else:
            res = self._run_cutting_plane(oracle, reg, C=C, options=options, callback=callback)
            mu = None if regularizer == "ssvm" else res.mu
        self._set_template_stats(names, groups, n_groups, mu, active_rtol)
        return reg

    def _spom_mu(self, regularizer, p, groups, n_groups):
        """SPOM's template weights from ``coef_``: ``mu_j = (||w_j|| / ||w||_p)^(2 - p)`` (the
        simplex for p = 1); None for ``"ssvm"``."""
        if regularizer == "ssvm":
            return None
        from cutplane.groups import group_norms, group_runs

        q = 1.0 if regularizer == "mtl" else p
        norms = group_norms(self.coef_, groups, n_groups, runs=group_runs(groups, n_groups))
        total = float(np.sum(norms**q)) ** (1.0 / q)
        return (norms / total) ** (2.0 - q) if total > 0 else np.zeros(n_groups)

    def _solve_grid(
        self,
        oracle,
        examples: Callable,
        groups,
        names,
        *,
        values,
        regularizer,
        p,
        active_rtol,
        options,
        scorer,
        callback,
    ):
        """Train along the grid ``values`` of C, score each point, keep the best.

        The cutting-plane solver runs one :func:`cutplane.regularization_path` (each point
        warm-started from the working set of the previous one and certified on its own; ``eps``
        per point from :func:`problems.model_selection.path_eps`, ``max_iter`` per point,
        ``time_limit`` for the whole path). SPOM keeps no working set: it runs once per C,
        cold, each run with the time that remains.

        Returns
        -------
        Regularizer
        """
        if scorer is None:  # plan_validation refuses a grid without validation data first
            raise InputError("a grid of C needs validation data", field="validation_data")
        n_groups = len(names)
        reg = make_regularizer(regularizer, p, groups, n_groups)
        self.solver_options_ = options
        if isinstance(options, SPOMOptions):
            rows, states = self._spom_grid(
                oracle,
                examples,
                reg,
                groups,
                names,
                values=values,
                regularizer=regularizer,
                p=p,
                active_rtol=active_rtol,
                options=options,
                scorer=scorer,
                callback=callback,
            )
            table = ms.path_table(rows, PATH_COLUMNS)
            best = ms.choose_best(table["validation_score"], values)
            res, coef, mu = states[best]
            self.result_, self.coef_, self.n_iter_ = res, coef, int(res.epochs)
            self.objective_, self.lower_bound_, self.gap_ = values[best] * res.objective, None, None
            self._set_template_stats(names, groups, n_groups, mu, active_rtol)
            self.path_result_ = None
        else:
            user_eps = isinstance(self.solver, CuttingPlane) and self.solver.eps is not None
            eps = ms.path_eps(options, values, user_eps=user_eps, default_eps=self.DEFAULT_PATH_EPS)
            rows = [ms.not_run_row(C, e * C) for C, e in zip(values, eps)]

            def on_point(i, C, res):
                self._adopt_result(res, C)
                self._set_template_stats(
                    names, groups, n_groups, None if regularizer == "ssvm" else res.mu, active_rtol
                )
                rows[i] = self._current_row(C, eps[i] * C, float(scorer()))

            rlb = float(oracle.risk_lower_bound) if options.risk_floor_cut else None
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", category=ConvergenceWarning)
                path = ms.run_cutting_plane_path(
                    oracle, reg, values, options, eps, on_point=on_point, callback=callback, risk_lower_bound=rlb
                )
            table = ms.path_table(rows, PATH_COLUMNS)
            best = ms.choose_best(table["validation_score"], values)
            res = path.results[best]
            self._adopt_result(res, values[best])
            self._set_template_stats(names, groups, n_groups, None if regularizer == "ssvm" else res.mu, active_rtol)
            self.path_result_ = path
        self.C_, self.best_index_, self.path_ = float(values[best]), int(best), table
        ms.warn_path(type(self).__name__, table, best, category=ConvergenceWarning)
        return reg

    def _spom_grid(
        self, oracle, examples, reg, groups, names, *, values, regularizer, p, active_rtol, options, scorer, callback
    ):
        """SPOM once per C (cold), the time limit shared by the whole grid; the rows and the
        ``(result, coef, mu)`` of each point (None where the time ran out)."""
        import dataclasses
        import time

        n_groups = len(names)
        rows = [ms.not_run_row(C, None) for C in values]
        states: list = [None] * len(values)
        t0 = time.perf_counter()
        for i, C in enumerate(values):
            run = options
            if options.time_limit is not None:
                remaining = options.time_limit - (time.perf_counter() - t0)
                if remaining <= 0:
                    break
                run = dataclasses.replace(options, time_limit=remaining)
            res = self._run_spom(examples(), oracle, reg, groups, n_groups, C=C, options=run, callback=callback)
            mu = self._spom_mu(regularizer, p, groups, n_groups)
            self._set_template_stats(names, groups, n_groups, mu, active_rtol)
            rows[i] = self._current_row(C, None, float(scorer()))
            states[i] = (res, self.coef_.copy(), mu)
            ms.logger.info(
                "C=%g (%d of %d) SPOM %s after %d epochs: objective %.6g, validation score %.4f",
                C,
                i + 1,
                len(values),
                res.status,
                self.n_iter_,
                self.objective_,
                rows[i]["validation_score"],
            )
        return rows, states

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

    def _run_cutting_plane(self, oracle, reg, *, C, options, callback=None):
        """:func:`cutplane.minimize` on ``F / C`` (``lam = 1/C``, ``eps / C``); sets ``coef_``,
        ``n_iter_``, ``result_`` and the bounds on the scale of ``F``.

        The engine's ``ConvergenceWarning`` (on its scale) is suppressed: call
        :meth:`_warn_uncertified` once the attributes are final.
        """
        from cutplane import minimize

        kwargs = options.minimize_kwargs(C, oracle)
        if options.risk_floor_cut:  # else the regulariser decides (cutplane.minimize's risk_lower_bound)
            kwargs["risk_lower_bound"] = float(oracle.risk_lower_bound)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(oracle, reg, 1.0 / C, callback=callback, **kwargs)
        self._adopt_result(res, C)
        return res

    def _adopt_result(self, res, C):
        """Set ``result_``, ``coef_``, ``n_iter_`` and the bounds (scale ``F``) from an engine
        result at ``C``."""
        self.result_ = res
        self.coef_ = np.asarray(res.w, dtype=np.float64).copy()
        self.n_iter_ = int(res.n_iter)
        self.objective_, self.lower_bound_, self.gap_ = C * res.objective, C * res.lower_bound, C * res.gap

    def _warn_uncertified(self):
        """``ConvergenceWarning`` (on the scale of ``F``) when the cutting-plane run of the
        chosen C stopped before convergence or its final gap exceeds its ``eps`` (beyond
        round-off); nothing for SPOM."""
        options = self.solver_options_
        if isinstance(options, SPOMOptions):
            return
        res = self.result_
        eps = self.path_["eps"][self.best_index_]
        if options.rtol is not None:  # the run's own tolerance: max(eps, rtol |F|)
            eps = max(eps, options.rtol * abs(self.objective_))
        if res.status != "converged" or self.gap_ > eps * (1.0 + 1e-9):
            where = f" at C={self.C_:g}" if len(self.path_["C"]) > 1 else ""
            warnings.warn(
                f"{type(self).__name__} stopped with status {res.status!r} after {res.n_iter} iterations{where}; "
                f"certified gap {self.gap_:.4g} (eps {eps:.4g})",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _run_spom(self, examples, batch_oracle, reg, groups, n_groups, *, C, options, callback=None):
        """SPOM on ``f_i = Omega / C + L_i`` (mean over examples: ``F / C``); sets ``coef_``,
        ``n_iter_`` (epochs), ``result_`` and ``objective_`` on the scale of ``F``
        (``lower_bound_`` and ``gap_`` None: no certificate).

        Parameters
        ----------
        examples : ExampleOracle
            Per-example losses (:class:`cutplane.protocols.ExampleOracle`).
        batch_oracle : Oracle
            ``R(w)`` for the objective evaluations (once per epoch).
        """
        from cutplane.online import spom

        res = spom(
            examples,
            reg,
            1.0 / C,
            groups=groups,
            n_groups=n_groups,
            epochs=options.epochs,
            eta0=options.eta0,
            averaged=options.averaged,
            seed=options.seed,
            batch_oracle=batch_oracle,
            callback=callback,
            time_limit=options.time_limit,
            verbose=options.verbose,
            progress_scale="F/lam",  # the bar and the log on F = Omega + C * loss
        )
        self.result_ = res
        self.coef_ = np.asarray(res.w, dtype=np.float64).copy()
        self.n_iter_ = int(res.epochs)
        self.objective_, self.lower_bound_, self.gap_ = C * res.objective, None, None
        return res

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
