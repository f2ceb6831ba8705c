r"""Kernelised SPOM (Martins et al. 2011, sec. 3.4): online MKL on precomputed per-group Gram matrices.

With implicit features the model of group ``m`` is a kernel expansion over the training
examples. For the multiclass hinge, ``phi_m(x, y) = e_y (x) psi_m(x)`` and

.. math:: \theta_m = \sum_{j=1}^n \sum_{y=1}^K A_m[j, y]\, \phi_m(x_j, y),
          \qquad f_m(x_i, y) = \langle \theta_m, \phi_m(x_i, y) \rangle = \sum_j K_m(x_i, x_j) A_m[j, y],

so the model is a table of coefficients over (example, output part) pairs, here the label of
one character. A round on example ``i`` with loss-augmented output ``y^`` adds ``-eta`` to
``A_m[i, y^]`` and ``+eta`` to ``A_m[i, y_i]`` (the gradient step of Alg. 3 line 7; the paper
writes the same thing as one coefficient ``alpha_{m,s}`` per stored pair ``(x_s, y^_s)``). The
binary hinge ``max(0, 1 - y_i f(x_i))`` has one coefficient per example (``K = 1``).

Group norms without features, eq. (17) of Martins et al. 2011:

.. math:: \|\theta_m - \eta g_m\|^2 = \|\theta_m\|^2 - 2\eta \langle \theta_m, g_m\rangle + \eta^2 \|g_m\|^2,

with ``<theta_m, g_m> = f_m(x_i, y^) - f_m(x_i, y_i)`` (scores already computed for decoding)
and ``||g_m||^2 = 2 K_m(x_i, x_i)`` (multiclass, ``y^ != y_i``) or ``K_m(x_i, x_i)`` (binary).
The proximal step and the projection only rescale groups (Prop. 1), so the coefficients are
kept in the same lazily scaled vector as the explicit case
(:class:`~cutplane.online.lazy_groups.LazyGroupVector`, one group per kernel, with the lazy
running average), and the squared norms are rescaled with them. Once per epoch the
norms are recomputed exactly, ``||theta_m||^2 = sum_y A_m[:, y]^T K_m A_m[:, y]``.

Sparse Gram matrices (scipy.sparse, e.g. the B1-spline kernel of sec. 4.1) are kept sparse:
a round reads only the coefficients of the examples ``j`` with ``K_m(x_i, x_j) != 0``, so
its cost is O(K * nnz of row i) per group instead of O(K n) (the remark of Martins et al. 2011 after eq. 17).

Everything else (epochs, step sizes, eta0 tuning, averaging, projection, J proximal steps,
history) is the explicit SPOM's (:func:`cutplane.online.epoch_loop.run_epochs`): on explicit
linear / quadratic kernels the iterates are those of :func:`cutplane.online.spom` on the
explicit feature maps (tested to 1e-8). The per-example protocol over the Gram matrices
(:class:`PrecomputedKernelExamples`, :class:`KernelSubgradient`) is the oracle
:mod:`oracles.kernel_examples`, re-exported here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from cutplane.exceptions import InputError
from cutplane.online.epoch_loop import run_epochs
from cutplane.online.group_terms import SquaredGroupNorm, as_group_terms
from cutplane.online.result import SPOMHistory
from cutplane.online.spom import OnlineProximal, check_run_params, projection_radius
from oracles.kernel_examples import KernelSubgradient, PrecomputedKernelExamples

__all__ = ["kernel_spom", "KernelSPOMResult", "PrecomputedKernelExamples", "KernelProximal", "KernelSubgradient"]


class KernelProximal(OnlineProximal):
    """Alg. 1 on a :class:`PrecomputedKernelExamples`: the explicit state with group norms by eq. (17).

    Parameters are those of :class:`~cutplane.online.spom.OnlineProximal` without the groups
    (one group per kernel, over its ``n * K`` coefficients).
    """

    def __init__(self, oracle, terms, lam, *, eta0=1.0, schedule="sqrt", gamma=None, averaged=True):
        M, nK = oracle.n_kernels, oracle.n_samples * oracle.n_outputs
        super().__init__(
            oracle,
            terms,
            lam,
            np.repeat(np.arange(M), nK),
            M,
            eta0=eta0,
            schedule=schedule,
            gamma=gamma,
            averaged=averaged,
        )
        self.sq = np.zeros(M)  # ||theta_m||^2 in the RKHS of kernel m

    def group_norms(self) -> np.ndarray:
        """``||theta_m||``, ndarray of shape (n_kernels,); O(M)."""
        return np.sqrt(np.maximum(self.sq, 0.0))

    def step(self, i: int) -> float:
        """One round on example ``i``; returns ``L_i`` before the update."""
        self.t += 1
        eta = self.eta(self.t)
        vec = self.vec
        vec.accumulate()
        sg = self.oracle.example_subgradient(i, vec.gather(self.oracle.example_support(i)))
        if sg.indices.size:
            vec.add(sg.indices, -eta * sg.values)
            self.sq = self.sq - 2.0 * eta * sg.inner + eta * eta * sg.sqnorm  # eq. (17)
        b = None
        for term, c in self.terms:
            if c > 0:
                b = self.group_norms() if b is None else b
                new = term.prox_norms(b, eta * self.lam * c)
                vec.set_group_norms(new, b)
                b = np.where(b > 0, new, 0.0)
                self.sq = b * b
        if self.gamma is not None:
            nrm = float(np.sqrt(np.sum(b * b))) if b is not None else float(np.sqrt(np.sum(self.group_norms() ** 2)))
            if nrm > self.gamma:
                f = self.gamma / nrm
                vec.scale(f)
                self.sq = self.sq * (f * f)
        return float(sg.value)

    def compact(self) -> None:
        """Fold the lazy bookkeeping and recompute the norms exactly (O(nnz(K) K)); once per epoch."""
        self.vec.compact()
        self.sq = self.oracle.group_sqnorms(self.vec.to_dense())

    def regularizer_value(self, coef) -> float:
        b = np.sqrt(self.oracle.group_sqnorms(coef))
        return float(sum(c * term.value(b) for term, c in self.terms))


@dataclass
class KernelSPOMResult:
    """The outcome of :func:`kernel_spom`.

    Attributes
    ----------
    coef : ndarray of shape (n_kernels, n, K)
        The returned model's coefficients ``A_m[j, y]`` (averaged or last iterate); ``K = 1``
        for the binary hinge (``f(x) = sum_m sum_j K_m(x, x_j) coef[m, j, 0]``).
    coef_last : ndarray of shape (n_kernels, n, K)
    classes : ndarray of shape (n_classes,)
    loss : str
    objective : float
        ``lam * Omega + mean hinge`` at ``coef``.
    group_norms : ndarray of shape (n_kernels,)
        ``||theta_m||`` of the returned model.
    kernel_weights : ndarray of shape (n_kernels,)
        ``beta_m = ||theta_m|| / sum_k ||theta_k||`` (Alg. 3 line 13).
    history : SPOMHistory
    n_rounds, epochs : int
    status : str
    eta0 : float
    schedule : str
    sigma : float
    gamma : float or None
    averaged : bool
    time_s, eval_time_s, tune_time_s : float
    tuning : dict of float to float
    """

    coef: np.ndarray
    coef_last: np.ndarray
    classes: np.ndarray
    loss: str
    objective: float
    group_norms: np.ndarray
    kernel_weights: np.ndarray
    history: SPOMHistory
    n_rounds: int
    epochs: int
    status: str
    eta0: float
    schedule: str
    sigma: float
    gamma: float | None
    averaged: bool
    time_s: float
    eval_time_s: float
    tune_time_s: float = 0.0
    tuning: dict = field(default_factory=dict)

    def decision_function(self, cross_grams) -> np.ndarray:
        """Scores of new points from ``K_m(X_new, X_train)``.

        Parameters
        ----------
        cross_grams : list of ndarray or sparse matrix, each of shape (n_new, n)

        Returns
        -------
        ndarray of shape (n_new,) (binary) or (n_new, n_classes)
        """
        if len(cross_grams) != self.coef.shape[0]:
            raise InputError(
                f"expected {self.coef.shape[0]} cross Gram matrices, got {len(cross_grams)}", field="cross_grams"
            )
        out = None
        for m, G in enumerate(cross_grams):
            if G.shape[1] != self.coef.shape[1]:
                raise InputError(
                    f"cross Gram matrix {m} has {G.shape[1]} columns, expected {self.coef.shape[1]}",
                    field="cross_grams",
                )
            part = np.asarray(G @ self.coef[m])
            out = part if out is None else out + part
        if out is None:  # a model of no kernel (coef of shape (0, ...)) scores nothing
            raise InputError("expected at least one cross Gram matrix, got none", field="cross_grams")
        return out[:, 0] if self.loss == "binary" else out

    def predict(self, cross_grams) -> np.ndarray:
        """Labels of new points (the classes of training), ndarray of shape (n_new,)."""
        s = self.decision_function(cross_grams)
        return self.classes[(s > 0).astype(int)] if self.loss == "binary" else self.classes[np.argmax(s, axis=1)]


def kernel_spom(
    grams,
    y,
    lam,
    *,
    loss=None,
    regularizer=None,
    epochs=20,
    eta0=None,
    schedule="sqrt",
    averaged=True,
    gamma=None,
    seed=0,
    eval_every=None,
    callback=None,
    time_limit=None,
    verbose=False,
    eta_grid=(0.01, 0.1, 1.0, 10.0),
    tune_samples=1000,
    tune_epochs=2,
) -> KernelSPOMResult:
    """Kernelised SPOM on precomputed Gram matrices (one group per kernel); see the module docstring.

    Minimises ``lam * Omega(theta) + (1/n) sum_i L_i(theta)`` with ``Omega`` a function of the
    group norms ``||theta_m||`` (default ``1/2 (sum_m ||theta_m||)^2``, sparse MKL).

    Parameters
    ----------
    grams : list of ndarray or scipy.sparse matrix, each of shape (n, n)
    y : array-like of shape (n,)
    lam : float > 0
    loss : {"binary", "multiclass"} or None
        None: binary for two classes.
    regularizer : group term, MixedNorm, L2 or list of (term, weight), optional
        Default :class:`~cutplane.online.group_terms.SquaredGroupNorm` ``(p=1)``.
    epochs, eta0, schedule, averaged, gamma, seed, eval_every, callback :
        As in :func:`cutplane.online.spom` (``callback`` receives ``SPOMInfo`` whose ``w`` is the
        flat coefficient vector).
    time_limit, verbose, eta_grid, tune_samples, tune_epochs :
        As in :func:`cutplane.online.spom`.

    Returns
    -------
    KernelSPOMResult
    """
    ex = PrecomputedKernelExamples(grams, y, loss=loss)
    lam = check_run_params(lam, epochs, schedule, eta0, eval_every)
    terms = as_group_terms(SquaredGroupNorm(1.0) if regularizer is None else regularizer)
    n = ex.n_samples

    def make(eta0_, gamma_):
        return KernelProximal(ex, terms, lam, eta0=eta0_, schedule=schedule, gamma=gamma_, averaged=averaged)

    def evaluate(coef):
        P = ex.products(coef)
        b = np.sqrt(ex.group_sqnorms(coef, P))
        reg = float(sum(c * term.value(b) for term, c in terms))
        return lam * reg + float(ex.losses(P.sum(axis=0)).mean()), b

    def objective(state):
        coef = state.model()
        return evaluate(coef)[0], coef

    t_start = time.perf_counter()
    risk0 = evaluate(np.zeros(ex.dim))[0]
    radius = projection_radius(gamma, terms, lam, risk0, ex.n_kernels)
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
        desc="kernel spom",
    )
    state = run.state
    coef = state.model()
    _, norms = evaluate(coef)
    total = float(norms.sum())
    return KernelSPOMResult(
        coef=ex.as_table(coef),
        coef_last=ex.as_table(state.w_last()),
        classes=ex.classes_,
        loss=ex.loss,
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
        time_s=run.train_time,
        eval_time_s=run.eval_time,
        tune_time_s=run.tune_time,
        tuning=run.tuning,
    )
