r"""SPOM: the online proximal subgradient method for block-norm regularised structured losses.

Martins et al. 2011, Alg. 1 and its structured instance Alg. 3. The problem is

.. math:: \min_w \; F(w) = \lambda\,\Omega(w) + \frac1n \sum_{i=1}^n L_i(w),
          \qquad \Omega = \sum_{k=1}^J c_k \Omega_k,

written per example as ``f_i(w) = lam * Omega(w) + L_i(w)``, whose average over the examples is
``F``. (The taggers of :mod:`problems` minimise ``Omega + C * mean L``, i.e. ``C`` times this
``F`` with ``lam = 1/C``; they multiply the objectives reported here by ``C``.)
``L_i`` is the structured hinge of example ``i`` through loss-augmented decoding
(:mod:`cutplane.online.example_oracles`). Round ``t`` with example ``i``:

1. ``w~ = w_t - eta_t g``, ``g`` a subgradient of ``L_i`` at ``w_t`` (sparse: O(nnz));
2. for ``k = 1..J``: ``w~ <- prox_{eta_t lam c_k Omega_k}(w~)`` -- by Prop. 1 a rescaling of
   the groups computed from the group norms (O(m), :mod:`cutplane.online.group_terms`);
3. ``w_{t+1} = w~ * min(1, gamma / ||w~||)`` (optional projection, Alg. 3 line 11).

Learning rates: ``eta_t = eta0 / sqrt(t)`` (``schedule="sqrt"``, Prop. 3.2) or
``eta_t = 1 / (sigma t)`` (``"inverse"``, Prop. 3.3) with ``sigma`` the strong convexity of
``lam * Omega`` (``lam`` for ``1/2 ||w||^2``; 0 for the MKL norm, where it is refused).
``t`` counts rounds over all epochs. Each epoch visits the examples in an order drawn from
``np.random.default_rng(seed)``. The returned model is the average of ``w_1..w_T`` (Alg. 1
line 11) or the last iterate.

Projection radius ``gamma="auto"`` (Martins et al. 2010, App. E, Prop. 8, for the SVM loss): at the
optimum ``lam * c_k * Omega_k(w*) <= F(w*) <= F(0) = R(0)`` (the mean of the largest costs,
since ``Omega(0) = 0`` and the losses are >= 0), so ``||w*|| <= min_k B_k(R(0) / (lam c_k))`` with
``B_k(b)`` the largest norm with ``Omega_k <= b``; for ``1/2 ||w||_{2,p}^2``, ``p <= 2``,
``gamma = sqrt(2 R(0) / lam)``. The projection is then vacuous at the optimum.

Storage: the weights are a :class:`~cutplane.online.lazy_groups.LazyGroupVector` (per group a
scale times an unnormalised vector), so a round costs O(nnz + m log m) when the oracle
exposes the support of each example; the averaged model is kept lazily as well and the
vector is compacted (O(dim)) once per epoch, when the objective is evaluated. The
kernelised form of sec. 3.4 (alpha coefficients, implicit features) is
:func:`problems.mkl.kernel_spom.kernel_spom`; it shares the epoch loop
(:func:`cutplane.online.epoch_loop.run_epochs`, re-exported here with :class:`EpochRun`).
"""

from __future__ import annotations

import time

import numpy as np

from cutplane.exceptions import InputError
from cutplane.progress import check_progress_scale, display_factor
from cutplane.protocols import Regularizer

from .epoch_loop import EpochRun, run_epochs
from .example_oracles import as_example_oracle
from .group_terms import as_group_terms
from .lazy_groups import LazyGroupVector
from .result import SPOMResult

__all__ = ["spom", "OnlineProximal", "run_epochs", "EpochRun", "check_run_params", "projection_radius"]

_SCHEDULES = ("sqrt", "inverse")


class OnlineProximal:
    """The state of Alg. 1 on a per-example oracle; :meth:`step` is one round.

    Parameters
    ----------
    oracle : ExampleOracle or an oracle :func:`as_example_oracle` can wrap
    terms : list of WeightedTerm
        From :func:`cutplane.online.group_terms.as_group_terms`.
    lam : float > 0
    groups : ndarray of int of shape (dim,)
    n_groups : int
    eta0 : float
        Constant of ``eta_t = eta0 / sqrt(t)`` (ignored by ``schedule="inverse"``).
    schedule : {"sqrt", "inverse"}
    gamma : float or None
        Projection radius.
    averaged : bool
        Keep the running average of the iterates.
    """

    def __init__(self, oracle, terms, lam, groups, n_groups, *, eta0=1.0, schedule="sqrt", gamma=None, averaged=True):
        self.oracle = as_example_oracle(oracle)
        self.terms = list(terms)
        self.lam = float(lam)
        self.schedule = schedule
        self.eta0 = float(eta0)
        self.gamma = None if gamma is None else float(gamma)
        self.averaged = bool(averaged)
        self.sigma = self.lam * sum(c * float(getattr(term, "strong_convexity", 0.0)) for term, c in self.terms)
        if schedule == "inverse" and not self.sigma > 0:
            raise InputError(
                "schedule='inverse' (eta_t = 1/(sigma t)) needs a strongly convex regulariser; "
                "the MKL norm 1/2 (sum_j ||w_j||)^2 is not: use schedule='sqrt'",
                field="schedule",
            )
        self.vec = LazyGroupVector(groups, n_groups, track_average=self.averaged)
        self.t = 0
        self._dense_buf = None

    def eta(self, t: int) -> float:
        """The learning rate of round ``t`` (1-based)."""
        if self.schedule == "inverse":
            return 1.0 / (self.sigma * t)
        return self.eta0 / np.sqrt(t)

    def step(self, i: int) -> float:
        """One round on example ``i``; returns ``L_i(w_t)`` (the loss before the update)."""
        self.t += 1
        eta = self.eta(self.t)
        vec = self.vec
        vec.accumulate()  # w_t enters the average (Alg. 1 line 11 averages w_1..w_T)
        support = self.oracle.example_support(i)
        if support is None:  # the oracle reads all of w: one reused buffer, not dim new floats per round
            if self._dense_buf is None:
                self._dense_buf = np.empty(vec.dim)
            w_sup = vec.to_dense(out=self._dense_buf)
        else:
            w_sup = vec.gather(support)
        sg = self.oracle.example_subgradient(i, w_sup)
        if sg.indices.size:
            vec.add(sg.indices, -eta * sg.values)
        b = None
        for term, c in self.terms:
            if c > 0:
                b = vec.norms() if b is None else b
                new = term.prox_norms(b, eta * self.lam * c)
                vec.set_group_norms(new, b)
                b = new
        if self.gamma is not None:
            nrm = float(np.sqrt(np.sum(b * b))) if b is not None else vec.norm()
            if nrm > self.gamma:
                vec.scale(self.gamma / nrm)
        return float(sg.value)

    def compact(self) -> None:
        """Fold the lazy bookkeeping (O(dim)); called once per epoch."""
        self.vec.compact()

    def w_last(self) -> np.ndarray:
        """The current iterate ``w_{t+1}``, ndarray of shape (dim,)."""
        return self.vec.to_dense()

    def w_average(self) -> np.ndarray:
        """``(1/t) sum_{r<=t} w_r``, ndarray of shape (dim,) (requires ``averaged=True``)."""
        return self.vec.average()

    def model(self) -> np.ndarray:
        """The model Alg. 1 would return now (average or last)."""
        return self.w_average() if self.averaged else self.w_last()

    def regularizer_value(self, w) -> float:
        """``Omega(w) = sum_k c_k Omega_k(w)``."""
        from cutplane.groups import group_norms

        b = group_norms(np.asarray(w, dtype=np.float64), self.vec.groups, self.vec.n_groups)
        return float(sum(c * term.value(b) for term, c in self.terms))


def _resolve_groups(regularizer, groups, n_groups, dim):
    if groups is None:
        items = regularizer if isinstance(regularizer, list) else [regularizer]
        for item in items:
            obj = item[0] if isinstance(item, tuple) else item
            if isinstance(obj, Regularizer) and obj.groups is not None:
                groups, n_groups = obj.groups, n_groups if n_groups is not None else obj.n_groups
                break
    if groups is None:
        return np.zeros(dim, dtype=np.intp), 1
    from cutplane.groups import as_group_ids

    ids = as_group_ids(groups, dim, n_groups)
    return ids, int(n_groups) if n_groups is not None else (int(ids.max()) + 1 if ids.size else 0)


def projection_radius(gamma, terms, lam, risk0, n_groups):
    """The radius of the ball SPOM projects onto: None (no projection), ``gamma``, or for
    ``gamma="auto"`` the smallest ``norm_bound`` of the weighted terms at the budget
    ``risk0 / (lam c)``."""
    if gamma is None:
        return None
    if isinstance(gamma, str):
        if gamma != "auto":
            raise InputError(f"gamma must be None, 'auto' or a positive number, got {gamma!r}", field="gamma")
        bounds = [term.norm_bound(risk0 / (lam * c), n_groups) for term, c in terms if c > 0]
        radius = min(bounds) if bounds else np.inf
        return None if not np.isfinite(radius) else max(float(radius), np.finfo(float).tiny)
    gamma = float(gamma)
    if not gamma > 0:
        raise InputError(f"gamma must be > 0, got {gamma}", field="gamma")
    return gamma


def spom(
    oracle,
    regularizer,
    lam,
    *,
    groups=None,
    n_groups=None,
    epochs=20,
    eta0=None,
    schedule="sqrt",
    averaged=True,
    gamma=None,
    seed=0,
    batch_oracle=None,
    eval_every=None,
    callback=None,
    time_limit=None,
    verbose=False,
    progress_scale="F",
    eta_grid=(0.01, 0.1, 1.0, 10.0),
    tune_samples=1000,
    tune_epochs=2,
) -> SPOMResult:
    """Run SPOM (Martins et al. 2011, Alg. 1 / 3) for ``epochs`` passes; see the module docstring.

    Parameters
    ----------
    oracle : ExampleOracle or SequenceHingeOracle / ParseOracle-like
        Per-example losses (wrapped by :func:`~cutplane.online.example_oracles.as_example_oracle`).
    regularizer : MixedNorm, L2, group term, or list of term or (term, weight)
        ``Omega`` (:func:`~cutplane.online.group_terms.as_group_terms`); J > 1 terms give J
        sequential proximal steps per round.
    lam : float > 0
        Weight of ``Omega`` in ``f_i = lam * Omega + L_i``.
    groups : array-like of int of shape (dim,), optional
        Group of every coordinate; default the regulariser's ``groups`` (one group otherwise).
    n_groups : int, optional
    epochs : int, default=20
    eta0 : float or None, default=None
        ``eta_t = eta0 / sqrt(t)``. None: the candidate of ``eta_grid`` whose run of
        ``tune_epochs`` passes over a random subsample of ``tune_samples`` examples gives the
        smallest objective on that subsample (the selection rule of Martins et al. 2011, Table 1, on a
        subsample); its time is reported as ``tune_time_s``.
    schedule : {"sqrt", "inverse"}, default="sqrt"
    averaged : bool, default=True
        Return the averaged model (else the last iterate).
    gamma : None, "auto" or float, default=None
        Projection radius (see the module docstring).
    seed : int or None, default=0
        Seed of ``np.random.default_rng`` for the epoch orders and the tuning subsample.
    batch_oracle : callable, optional
        ``batch_oracle(w).value`` is the mean loss ``R(w)``; default ``oracle`` itself when
        callable, else the mean of the per-example losses.
    eval_every : int, optional
        Also evaluate the objective every that many rounds (always at each epoch end).
    callback : callable, optional
        ``callback(SPOMInfo)`` at every evaluation; returning True stops.
    time_limit : float, optional
        Seconds of training (evaluations excluded).
    verbose : bool, default=False
        tqdm bar over epochs (every evaluation is logged at INFO on ``"cutplane.online"``).
    progress_scale : {"F", "F/lam"}, default="F"
        The scale of the objective the bar shows and the log records (as for
        :func:`cutplane.minimize`); the result and its history are on ``F`` either way.

    Returns
    -------
    SPOMResult
    """
    ex = as_example_oracle(oracle)
    n, dim = int(ex.n_samples), int(ex.dim)
    lam = check_run_params(lam, epochs, schedule, eta0, eval_every)
    scale = display_factor(check_progress_scale(progress_scale), lam)
    terms = as_group_terms(regularizer)
    ids, m = _resolve_groups(regularizer, groups, n_groups, dim)
    if batch_oracle is None and callable(oracle) and not hasattr(oracle, "example_subgradient"):
        batch_oracle = oracle

    def make(eta0_, gamma_):
        return OnlineProximal(ex, terms, lam, ids, m, eta0=eta0_, schedule=schedule, gamma=gamma_, averaged=averaged)

    def risk(w):
        if batch_oracle is not None:
            return float(batch_oracle(w).value)
        sup = [ex.example_support(i) for i in range(n)]
        return float(np.mean([ex.example_subgradient(i, w if s is None else w[s]).value for i, s in enumerate(sup)]))

    def objective(state):
        w = state.model()
        return lam * state.regularizer_value(w) + risk(w), w

    t_start = time.perf_counter()
    risk0 = risk(np.zeros(dim))
    radius = projection_radius(gamma, terms, lam, risk0, m)
    run = run_epochs(
        make,
        objective,
        n,
        risk0,
        radius,
        t_start,
        epochs=epochs,
        eta0=eta0,
        schedule=schedule,
        seed=seed,
        eval_every=eval_every,
        callback=callback,
        time_limit=time_limit,
        verbose=verbose,
        eta_grid=eta_grid,
        tune_samples=tune_samples,
        tune_epochs=tune_epochs,
        scale=scale,
    )
    state = run.state
    w = state.model()
    from cutplane.groups import group_norms

    norms = group_norms(w, ids, m)
    total = float(norms.sum())
    return SPOMResult(
        w=w,
        w_last=state.w_last(),
        objective=float(run.history.objective[-1]),
        group_norms=norms,
        kernel_weights=norms / total if total > 0 else np.zeros_like(norms),
        history=run.history,
        n_rounds=state.t,
        epochs=run.epochs,
        status=run.status,
        eta0=float(state.eta0),
        schedule=schedule,
        sigma=float(state.sigma),
        gamma=radius,
        averaged=bool(averaged),
        lazy=ex.example_support(0) is not None,
        time_s=run.train_time,
        eval_time_s=run.eval_time,
        tune_time_s=run.tune_time,
        tuning=run.tuning,
    )


def check_run_params(lam, epochs, schedule, eta0, eval_every) -> float:
    """Check the run parameters shared by SPOM and its kernel variant; returns ``lam`` as float."""
    lam = float(lam)
    if not (np.isfinite(lam) and lam > 0):
        raise InputError(f"lam must be finite and > 0, got {lam}", field="lam")
    if isinstance(epochs, bool) or int(epochs) != epochs or epochs < 1:
        raise InputError(f"epochs must be an integer >= 1, got {epochs!r}", field="epochs")
    if schedule not in _SCHEDULES:
        raise InputError(f"schedule must be one of {_SCHEDULES}, got {schedule!r}", field="schedule")
    if eta0 is not None and not (np.isfinite(float(eta0)) and float(eta0) > 0):
        raise InputError(f"eta0 must be finite and > 0, got {eta0!r}", field="eta0")
    if eval_every is not None and (int(eval_every) != eval_every or eval_every < 1):
        raise InputError(f"eval_every must be an integer >= 1, got {eval_every!r}", field="eval_every")
    return lam
