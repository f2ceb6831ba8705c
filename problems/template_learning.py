"""What the template-weighted structured estimators share (sequence tagger, dependency parser).

Both train ``F(w) = Omega(w) + C * mean structured hinge`` with ``Omega`` chosen by name:
``"ssvm"`` (``1/2 ||w||^2``), ``"mtl"`` (``MixedNorm(p=1)`` over template groups, seed 004
eq. 6-7) or ``"pmtl"`` (``MixedNorm(p)``, ``p > 1``), and report per-template weights.
Both offer two solvers of the same ``F``: ``solver="cutting-plane"`` (the engine, certified
gap) and ``solver="spom"`` (the online proximal baseline of seed 000, one example per round,
no certificate; :meth:`TemplateLearnerMixin._run_spom`). The cutting-plane solver takes the
engine options every estimator shares (checkpoint / resume, memory budget, executor:
:mod:`problems.estimator_options`); SPOM refuses the checkpoint and memory options rather than
ignoring them.
"""
from __future__ import annotations

import warnings

import numpy as np

from cutplane.exceptions import ConvergenceWarning, InputError

from problems.estimator_options import check_checkpoint_params, uses_engine_options
from problems.validation import check_bool, check_choice, check_int, check_positive

__all__ = ["TemplateLearnerMixin", "REGULARIZERS", "SOLVERS"]

REGULARIZERS = ("mtl", "ssvm", "pmtl")
SOLVERS = ("cutting-plane", "spom")


class TemplateLearnerMixin:
    """Hyper-parameter checks, the regulariser and the template statistics of a structured estimator.

    The estimator stores ``C``, ``regularizer``, ``p``, ``eps``, ``max_iter``, ``time_limit``,
    ``min_count``, ``max_cuts``, ``prune_after``, ``risk_floor_cut``, ``active_rtol`` and ``verbose``; the solver
    options ``solver``, ``backend``, ``epochs``, ``eta0``, ``averaged`` and ``seed``; the engine
    options ``checkpoint``, ``checkpoint_every``, ``resume`` and ``memory_limit``.
    """

    def _check_common_params(self) -> dict:
        reg = check_choice(self.regularizer, "regularizer", REGULARIZERS)
        p = check_positive(self.p, "p")
        if reg == "pmtl" and not p > 1.0:
            raise InputError(f"regularizer='pmtl' needs p > 1, got {p}", field="p")
        return dict(
            C=check_positive(self.C, "C"), regularizer=reg, p=p, eps=check_positive(self.eps, "eps"),
            max_iter=check_int(self.max_iter, "max_iter"),
            time_limit=None if self.time_limit is None else check_positive(self.time_limit, "time_limit"),
            min_count=check_int(self.min_count, "min_count"),
            max_cuts=check_int(self.max_cuts, "max_cuts", min_value=2, allow_none=True),
            prune_after=check_int(self.prune_after, "prune_after"),
            # models saved before the option have none: the default
            risk_floor_cut=check_bool(getattr(self, "risk_floor_cut", False), "risk_floor_cut"),
            active_rtol=check_positive(self.active_rtol, "active_rtol", allow_zero=True),
            verbose=check_bool(self.verbose, "verbose"),
        )

    def _check_spom_params(self) -> dict:
        """``solver`` (None, from models saved before the option, means cutting planes),
        ``epochs``, ``eta0`` (None: tuned) and ``averaged``."""
        solver = "cutting-plane" if self.solver is None else self.solver
        if solver not in SOLVERS:
            raise InputError(f"solver must be one of {SOLVERS}, got {solver!r} (the reduced-problem backend "
                             "of the cutting-plane solver is the 'backend' parameter)", field="solver")
        return dict(solver=solver, epochs=check_int(self.epochs, "epochs"),
                    eta0=None if self.eta0 is None else check_positive(self.eta0, "eta0"),
                    averaged=check_bool(self.averaged, "averaged"))

    def _check_solver_params(self) -> dict:
        """:meth:`_check_spom_params` and the engine's checkpoint and memory options
        (:func:`~problems.estimator_options.check_checkpoint_params`); with ``solver="spom"``
        any of the latter set to a non-default value is refused (SPOM keeps no working set and
        writes no checkpoint)."""
        prm = self._check_spom_params()
        engine = check_checkpoint_params(self)
        used = uses_engine_options(engine) if prm["solver"] == "spom" else []
        if prm["solver"] == "spom" and getattr(self, "risk_floor_cut", False) is True:
            used.append("risk_floor_cut")
        if used:
            raise InputError(f"{', '.join(used)} apply to solver='cutting-plane' only (SPOM keeps no working set "
                             "and writes no checkpoint)", field=used[0])
        return dict(prm, **engine)

    def _run_cutting_plane(self, oracle, reg, groups, n_groups, names, prm, callback=None):
        """:func:`cutplane.minimize` on ``F / C`` (``lam = 1/C``, ``eps / C``) with the engine
        options; sets the fitted attributes on the scale of ``F`` (template weights: the reduced
        problem's ``mu``, all 1 for ``"ssvm"``).

        Parameters
        ----------
        oracle : Oracle
            The 1-slack oracle of the training set.
        reg : Regularizer
            From :meth:`_make_regularizer`.
        groups : ndarray of int of shape (dim,)
        n_groups : int
        names : list of str
            Template names, one per group.
        prm : dict
            The checked parameters (:meth:`_check_common_params` and :meth:`_check_solver_params`).
        callback : callable, optional
            ``callback(IterationInfo)`` per iteration; returning True stops.

        Returns
        -------
        cutplane.Result
            Its ``ConvergenceWarning`` (on the engine's scale) is suppressed: call
            :meth:`_warn_uncertified` once the attributes are final.
        """
        from cutplane import minimize

        C = prm["C"]
        kwargs = dict(eps=prm["eps"] / C, max_iter=prm["max_iter"], time_limit=prm["time_limit"],
                      max_cuts=prm["max_cuts"], prune_after=prm["prune_after"], verbose=prm["verbose"],
                      checkpoint=prm["checkpoint"], checkpoint_every=prm["checkpoint_every"],
                      resume=prm["resume"], memory_limit=prm["memory_limit"])
        if self.backend is not None:
            kwargs["solver"] = self.backend
        if prm["risk_floor_cut"]:  # else the regulariser decides (cutplane.minimize's risk_lower_bound)
            kwargs["risk_lower_bound"] = float(oracle.risk_lower_bound)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=ConvergenceWarning)
            res = minimize(oracle, reg, 1.0 / C, callback=callback, **kwargs)
        self.result_ = res
        self.coef_ = np.asarray(res.w, dtype=np.float64).copy()
        self.n_iter_ = int(res.n_iter)
        self.objective_, self.lower_bound_, self.gap_ = C * res.objective, C * res.lower_bound, C * res.gap
        self._set_template_stats(names, groups, n_groups, None if prm["regularizer"] == "ssvm" else res.mu,
                                 prm["active_rtol"])
        return res

    def _warn_uncertified(self, prm):
        """``ConvergenceWarning`` (on the scale of ``F``) when the cutting-plane run stopped
        before convergence or its final gap exceeds ``eps`` (beyond round-off)."""
        res = self.result_
        if res.status != "converged" or self.gap_ > prm["eps"] * (1.0 + 1e-9):
            warnings.warn(f"{type(self).__name__} stopped with status {res.status!r} after {res.n_iter} iterations; "
                          f"certified gap {self.gap_:.4g} (eps {prm['eps']:.4g})", ConvergenceWarning, stacklevel=3)

    def _run_spom(self, examples, batch_oracle, reg, groups, n_groups, names, prm, callback=None):
        """SPOM on ``f_i = Omega / C + L_i`` (mean over examples: ``F / C``); sets the fitted
        attributes on the scale of ``F`` (``lower_bound_`` and ``gap_`` None: no certificate).

        Parameters
        ----------
        examples : ExampleOracle
            Per-example losses (:mod:`cutplane.online.example_oracles`).
        batch_oracle : Oracle
            ``R(w)`` for the objective evaluations (once per epoch).
        reg : Regularizer
            From :meth:`_make_regularizer`.
        groups : ndarray of int of shape (dim,)
        n_groups : int
        names : list of str
            Template names, one per group.
        prm : dict
            The checked parameters (``C``, ``regularizer``, ``p``, ``epochs``, ``eta0``,
            ``averaged``, ``time_limit``, ``verbose``, ``active_rtol``).
        callback : callable, optional
            ``callback(SPOMInfo)`` per evaluation; returning True stops.

        Returns
        -------
        cutplane.online.SPOMResult
        """
        from cutplane.groups import group_norms
        from cutplane.online import spom

        C = prm["C"]
        res = spom(examples, reg, 1.0 / C, groups=groups, n_groups=n_groups, epochs=prm["epochs"],
                   eta0=prm["eta0"], averaged=prm["averaged"], seed=self.seed, batch_oracle=batch_oracle,
                   callback=callback, time_limit=prm["time_limit"], verbose=prm["verbose"])
        self.result_ = res
        self.coef_ = np.asarray(res.w, dtype=np.float64).copy()
        self.n_iter_ = int(res.epochs)
        self.objective_, self.lower_bound_, self.gap_ = C * res.objective, None, None
        mu = None
        if prm["regularizer"] != "ssvm":  # w_j = mu_j v_j, mu_j = (||w_j|| / ||w||_p)^(2 - p); simplex for p = 1
            p = 1.0 if prm["regularizer"] == "mtl" else prm["p"]
            norms = group_norms(self.coef_, groups, n_groups)
            total = float(np.sum(norms ** p)) ** (1.0 / p)
            mu = (norms / total) ** (2.0 - p) if total > 0 else np.zeros(n_groups)
        self._set_template_stats(names, groups, n_groups, mu, prm["active_rtol"])
        return res

    @staticmethod
    def _make_regularizer(name, p, groups, n_groups):
        """``L2()`` for ``"ssvm"``, else ``MixedNorm(groups, p)`` (``p = 1`` for ``"mtl"``)."""
        from cutplane.mixed_norm import MixedNorm
        from cutplane.regularizers import L2

        if name == "ssvm":
            return L2()
        return MixedNorm(groups, p=1.0 if name == "mtl" else p, n_groups=n_groups)

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
