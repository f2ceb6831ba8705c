"""What the template-weighted structured estimators share (sequence tagger, dependency parser).

Both train ``F(w) = Omega(w) + C * mean structured hinge`` with ``Omega`` chosen by name:
``"ssvm"`` (``1/2 ||w||^2``), ``"mtl"`` (``MixedNorm(p=1)`` over template groups, seed 004
eq. 6-7) or ``"pmtl"`` (``MixedNorm(p)``, ``p > 1``), and report per-template weights.
Both take a solver object (:mod:`problems.solvers`): :class:`~problems.solvers.CuttingPlane`
(the engine, certified gap; the default) or :class:`~problems.solvers.SPOM` (the online
proximal baseline of seed 000, one example per round through the task's per-example oracle,
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
from problems.solvers import Param, SPOMOptions, check_params, checked_solver
from problems.validation import check_choice, check_int, check_positive

__all__ = ["TemplateLearnerMixin", "REGULARIZERS", "make_regularizer"]

REGULARIZERS = ("mtl", "ssvm", "pmtl")


def make_regularizer(name, p, groups, n_groups):
    """``L2()`` for ``"ssvm"``, else ``MixedNorm(groups, p)`` (``p = 1`` for ``"mtl"``)."""
    from cutplane.regularizers import L2, MixedNorm

    if name == "ssvm":
        return L2()
    return MixedNorm(groups, p=1.0 if name == "mtl" else p, n_groups=n_groups)


class TemplateLearnerMixin:
    """Parameter table, solver dispatch and template statistics of a structured estimator.

    The estimator stores ``C``, ``regularizer``, ``p``, ``min_count``, ``active_rtol`` and
    ``solver`` (a :class:`~problems.solvers.CuttingPlane`, a :class:`~problems.solvers.SPOM`
    or None for ``CuttingPlane()``).
    """

    #: Certified tolerance and iteration limit of a ``CuttingPlane`` that leaves them None.
    DEFAULT_EPS: ClassVar[float] = 0.1
    DEFAULT_MAX_ITER: ClassVar[int] = 500

    #: The declarative table of the shared parameters (checked at ``fit``).
    PARAMETERS: ClassVar[dict] = {
        "C": Param(lambda v, n: check_positive(v, n), "weight of the mean structured hinge"),
        "regularizer": Param(lambda v, n: check_choice(v, n, REGULARIZERS), "Omega by name"),
        "p": Param(lambda v, n: check_positive(v, n), "exponent of the p-block norm (pmtl)"),
        "min_count": Param(lambda v, n: check_int(v, n), "feature count threshold"),
        "active_rtol": Param(lambda v, n: check_positive(v, n, allow_zero=True), "active-template threshold"),
    }

    def _checked_params(self) -> dict:
        """The estimator's own parameters, checked against :data:`PARAMETERS` (a bad one raises
        :class:`~cutplane.exceptions.InputError` naming it; ``"pmtl"`` needs ``p > 1``)."""
        prm = check_params(self, type(self).PARAMETERS)
        if prm["regularizer"] == "pmtl" and not prm["p"] > 1.0:
            raise InputError(f"regularizer='pmtl' needs p > 1, got {prm['p']}", field="p")
        return prm

    def _checked_solver(self):
        """The checked options of ``solver`` (``CuttingPlaneOptions`` or ``SPOMOptions``)."""
        return checked_solver(
            self.solver, eps=self.DEFAULT_EPS, max_iter=self.DEFAULT_MAX_ITER, owner=type(self).__name__
        )

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
            The checked estimator parameters.
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
            res = self._run_spom(examples(), oracle, reg, groups, n_groups, C=C, options=options, callback=callback)
            mu = None
            if regularizer != "ssvm":  # w_j = mu_j v_j, mu_j = (||w_j|| / ||w||_p)^(2 - p); simplex for p = 1
                from cutplane.groups import group_norms

                q = 1.0 if regularizer == "mtl" else p
                norms = group_norms(self.coef_, groups, n_groups)
                total = float(np.sum(norms**q)) ** (1.0 / q)
                mu = (norms / total) ** (2.0 - q) if total > 0 else np.zeros(n_groups)
        else:
            res = self._run_cutting_plane(oracle, reg, C=C, options=options, callback=callback)
            mu = None if regularizer == "ssvm" else res.mu
        self._set_template_stats(names, groups, n_groups, mu, active_rtol)
        return reg

    def _run_cutting_plane(self, oracle, reg, *, C, options, callback=None):
        """:func:`cutplane.minimize` on ``F / C`` (``lam = 1/C``, ``eps / C``); sets ``coef_``,
        ``n_iter_``, ``result_`` and the bounds on the scale of ``F``.

        The engine's ``ConvergenceWarning`` (on its scale) is suppressed: call
        :meth:`_warn_uncertified` once the attributes are final.
        """
        from cutplane import minimize

        kwargs = options.minimize_kwargs(C)
        if options.risk_floor_cut:  # else the regulariser decides (cutplane.minimize's risk_lower_bound)
            kwargs["risk_lower_bound"] = float(oracle.risk_lower_bound)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(oracle, reg, 1.0 / C, callback=callback, **kwargs)
        self.result_ = res
        self.coef_ = np.asarray(res.w, dtype=np.float64).copy()
        self.n_iter_ = int(res.n_iter)
        self.objective_, self.lower_bound_, self.gap_ = C * res.objective, C * res.lower_bound, C * res.gap
        return res

    def _warn_uncertified(self):
        """``ConvergenceWarning`` (on the scale of ``F``) when a cutting-plane run stopped before
        convergence or its final gap exceeds ``eps`` (beyond round-off); nothing for SPOM."""
        options = self.solver_options_
        if isinstance(options, SPOMOptions):
            return
        res = self.result_
        if res.status != "converged" or self.gap_ > options.eps * (1.0 + 1e-9):
            warnings.warn(
                f"{type(self).__name__} stopped with status {res.status!r} after {res.n_iter} iterations; "
                f"certified gap {self.gap_:.4g} (eps {options.eps:.4g})",
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
        )
        self.result_ = res
        self.coef_ = np.asarray(res.w, dtype=np.float64).copy()
        self.n_iter_ = int(res.epochs)
        self.objective_, self.lower_bound_, self.gap_ = C * res.objective, None, None
        return res

    def _set_template_stats(self, names, groups, n_groups, mu, active_rtol):
        """``template_weights_`` (``mu``; all 1 when None), ``template_norms_`` (``||w_j||``),
        ``active_templates_`` (norm above ``active_rtol`` times the largest) and their count."""
        from cutplane.groups import group_norms

        norms = group_norms(self.coef_, groups, n_groups)
        mu = np.ones(n_groups) if mu is None else np.asarray(mu, dtype=np.float64)
        self.template_weights_ = {nm: float(m) for nm, m in zip(names, mu)}
        self.template_norms_ = {nm: float(v) for nm, v in zip(names, norms)}
        top = float(norms.max()) if norms.size else 0.0
        active = norms > active_rtol * top if top > 0 else np.zeros(n_groups, bool)
        self.active_templates_ = [nm for nm, a in zip(names, active) if a]
        self.n_active_templates_ = int(active.sum())
