r"""Wrapper MKL baselines of SPOM's Fig. 2: Gauss-Seidel alternation and SimpleMKL, PEGASOS inside.

Both minimise the l1 MKL problem that SPOM and MTL^struct solve,

.. math:: F(w) = \lambda\, \frac12 \Big(\sum_k \|w_k\|\Big)^2 + R(w)
          \qquad (= \texttt{lam * MixedNorm(groups, p=1)(w) + R(w)}),

through its wrapper form ``min_{beta in simplex} J(beta)`` (:mod:`cutplane.mkl_steps`): an outer
loop on the kernel weights ``beta`` around an inner SVM with features of group ``k`` scaled by
``sqrt(beta_k)``, solved by structured PEGASOS (:mod:`cutplane.online.pegasos`). Outer iteration:

1. PEGASOS on ``lam/2 ||u||^2 + R(sqrt(beta) o u)``: ``first_epochs`` epochs in the first call,
   ``later_epochs`` in the later ones (20 and 3 in SPOM's Fig. 2), warm-started from the
   previous ``u`` and continuing its step-size schedule;
2. the block norms ``||v_k||`` of the predictor ``v = sqrt(beta) o u``;
3. the kernel-weight update: ``"gauss-seidel"``: ``beta_k = ||v_k|| / sum_j ||v_j||``;
   ``"simplemkl"``: one reduced-gradient step with the exact line search of
   :func:`cutplane.mkl_steps.simplemkl_step`;
4. warm start for the next SVM: ``u_k = v_k / sqrt(beta_k)`` (0 where ``beta_k = 0``), so the
   predictor ``v``, hence ``F``, is unchanged by the update of ``beta``.

The objective recorded after every PEGASOS epoch is ``F`` at the current predictor ``w = v``
(``F(w) <= lam/2 ||u||^2 + R(w)``, the inner objective, by Cauchy-Schwarz): the same
function, on the same ``lam`` scale, as :func:`cutplane.online.spom` and
``cutplane.minimize(oracle, MixedNorm(groups, p=1), lam)``. Passes count PEGASOS epochs
(objective evaluations are not counted, as in SPOM's history).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np

from cutplane.exceptions import InputError

from .example_oracles import as_example_oracle
from .pegasos import pegasos, pegasos_radius

__all__ = ["wrapper_mkl", "gauss_seidel_mkl", "simple_mkl", "WrapperMKLHistory", "WrapperMKLResult"]

logger = logging.getLogger("cutplane.online")

_METHODS = ("gauss-seidel", "simplemkl")


@dataclass
class WrapperMKLHistory:
    """One point per PEGASOS epoch (the first point is ``w = 0``); arrays of shape (n_points,).

    Attributes
    ----------
    passes : ndarray of float
        PEGASOS epochs so far.
    objective : ndarray of float
        ``F(w) = lam * 1/2 (sum_k ||w_k||)^2 + R(w)`` at the current predictor.
    train_time : ndarray of float
        Seconds in PEGASOS and the beta updates (evaluations excluded).
    wall_time : ndarray of float
        Seconds since the start, evaluations included.
    outer : ndarray of int
        Outer iteration (SVM call) of the point, 0-based (-1 at the start).
    """

    passes: np.ndarray
    objective: np.ndarray
    train_time: np.ndarray
    wall_time: np.ndarray
    outer: np.ndarray

    def __len__(self) -> int:
        return int(self.passes.shape[0])


@dataclass
class WrapperMKLResult:
    """What :func:`wrapper_mkl` returns.

    Attributes
    ----------
    w : ndarray of shape (dim,)
        The predictor ``sqrt(beta) o u`` (original feature space).
    beta : ndarray of shape (n_groups,)
        Kernel weights of the last inner SVM.
    beta_history : ndarray of shape (n_outer + 1, n_groups)
        ``beta`` before every SVM call, and the final one.
    objective : float
        ``F(w)`` at the returned ``w``.
    history : WrapperMKLHistory
    method : str
    n_outer : int
        SVM calls made.
    passes : int
        PEGASOS epochs in total.
    time_s : float
        Training seconds (evaluations excluded).
    status : str
        ``"max_passes"``, ``"max_outer"``, ``"time_limit"`` or ``"callback"``.
    """

    w: np.ndarray
    beta: np.ndarray
    beta_history: np.ndarray
    objective: float
    history: WrapperMKLHistory
    method: str
    n_outer: int
    passes: int
    time_s: float
    status: str


def _mkl_objective(w, lam, groups, n_groups, risk):
    from cutplane.groups import group_norms

    return lam * 0.5 * float(group_norms(w, groups, n_groups).sum()) ** 2 + float(risk(w))


def wrapper_mkl(oracle, lam, groups, *, n_groups=None, method="gauss-seidel", beta0=None, first_epochs=20,
                later_epochs=3, max_passes=100, max_outer=None, time_limit=None, seed=0, batch_oracle=None,
                project=True, callback=None) -> WrapperMKLResult:
    """Wrapper MKL (Gauss-Seidel or SimpleMKL) with structured PEGASOS inside; see the module docstring.

    Parameters
    ----------
    oracle : ExampleOracle or an oracle with ``example_oracle`` / ``loss_augmented``
        Per-example losses.
    lam : float > 0
        Weight of the MKL regulariser (``lam = 1/C`` on the scale ``Omega + C * mean loss``).
    groups : array-like of int of shape (dim,)
        Kernel (group) of every coordinate.
    n_groups : int, optional
    method : {"gauss-seidel", "simplemkl"}
    beta0 : array-like of shape (n_groups,), optional
        Initial kernel weights on the simplex (default uniform).
    first_epochs, later_epochs : int, default=20, 3
        PEGASOS epochs of the first and of each later SVM call.
    max_passes : int, default=100
        Budget of PEGASOS epochs in total (the last call is cut to fit).
    max_outer : int, optional
        Budget of SVM calls.
    time_limit : float, optional
        Training seconds; checked after every epoch.
    seed : int or None, default=0
        ``np.random.default_rng(seed)`` draws every PEGASOS epoch order.
    batch_oracle : callable, optional
        ``batch_oracle(w).value = R(w)`` for the objective; default ``oracle`` when callable.
    project : bool, default=True
        PEGASOS projection onto ``||u|| <= sqrt(2 R(0) / lam)``.
    callback : callable, optional
        ``callback(passes, objective, w)`` after every epoch; returning True stops.

    Returns
    -------
    WrapperMKLResult
    """
    from cutplane.groups import as_group_ids, group_norms
    from cutplane.mkl_steps import check_simplex, gauss_seidel_weights, simplemkl_step

    if method not in _METHODS:
        raise InputError(f"method must be one of {_METHODS}, got {method!r}", field="method")
    ex = as_example_oracle(oracle)
    dim = int(ex.dim)
    ids = as_group_ids(groups, dim, n_groups)
    m = int(n_groups) if n_groups is not None else int(ids.max()) + 1
    lam = float(lam)
    if not (np.isfinite(lam) and lam > 0):
        raise InputError(f"lam must be finite and > 0, got {lam}", field="lam")
    for name, val in (("first_epochs", first_epochs), ("later_epochs", later_epochs), ("max_passes", max_passes)):
        if isinstance(val, bool) or int(val) != val or val < 1:
            raise InputError(f"{name} must be an integer >= 1, got {val!r}", field=name)
    beta = np.full(m, 1.0 / m) if beta0 is None else check_simplex(beta0, m)
    if batch_oracle is None:
        if not callable(oracle):
            raise InputError("need batch_oracle(w).value = R(w) for the objective", field="batch_oracle")
        batch_oracle = oracle

    def risk(w):
        return batch_oracle(w).value

    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    risk0 = float(risk(np.zeros(dim)))
    radius = pegasos_radius(risk0, lam) if project and risk0 > 0 else None
    rows = [(0, risk0, 0.0, time.perf_counter() - start, -1)]
    u = np.zeros(dim)
    t, passes, outer, train = 0, 0, 0, 0.0
    betas = [beta.copy()]
    status = "max_passes"
    w = np.zeros(dim)
    stop = False
    while passes < max_passes and not stop:
        if max_outer is not None and outer >= int(max_outer):
            status = "max_outer"
            break
        scale = np.sqrt(beta)[ids]
        n_ep = min(int(first_epochs if outer == 0 else later_epochs), int(max_passes) - passes)
        epoch_start = [time.perf_counter()]

        def after_epoch(epoch, t_now, u_now, scale=scale):
            nonlocal passes, train, stop, status
            train += time.perf_counter() - epoch_start[0]
            passes += 1
            w_now = scale * u_now
            obj = _mkl_objective(w_now, lam, ids, m, risk)
            rows.append((passes, obj, train, time.perf_counter() - start, outer))
            logger.info("%s: pass %d (SVM call %d): objective %.10g", method, passes, outer, obj)
            if callback is not None and callback(passes, obj, w_now):
                status, stop = "callback", True
            elif time_limit is not None and train > float(time_limit):
                status, stop = "time_limit", True
            epoch_start[0] = time.perf_counter()
            return stop

        res = pegasos(ex, lam, epochs=n_ep, scale=scale, u0=u, t0=t, radius=radius, seed=rng,
                      callback=after_epoch)
        tic = time.perf_counter()
        t = res.t
        w = res.w
        outer += 1
        norms = group_norms(w, ids, m)
        if method == "gauss-seidel":
            beta = gauss_seidel_weights(norms)
        else:
            beta = simplemkl_step(norms ** 2, beta, lam).beta
        betas.append(beta.copy())
        inv = np.zeros(m)
        inv[beta > 0] = 1.0 / np.sqrt(beta[beta > 0])
        u = w * inv[ids]  # v = sqrt(beta) o u unchanged where beta > 0
        train += time.perf_counter() - tic
    cols = list(zip(*rows))
    history = WrapperMKLHistory(np.asarray(cols[0], float), np.asarray(cols[1], float), np.asarray(cols[2], float),
                                np.asarray(cols[3], float), np.asarray(cols[4], np.int64))
    return WrapperMKLResult(w=w, beta=betas[-2] if len(betas) > 1 else beta, beta_history=np.asarray(betas),
                            objective=float(history.objective[-1]), history=history, method=method,
                            n_outer=outer, passes=passes, time_s=train, status=status)


def gauss_seidel_mkl(oracle, lam, groups, **kwargs) -> WrapperMKLResult:
    """:func:`wrapper_mkl` with ``method="gauss-seidel"`` (closed-form beta update)."""
    return wrapper_mkl(oracle, lam, groups, method="gauss-seidel", **kwargs)


def simple_mkl(oracle, lam, groups, **kwargs) -> WrapperMKLResult:
    """:func:`wrapper_mkl` with ``method="simplemkl"`` (reduced gradient with line search)."""
    return wrapper_mkl(oracle, lam, groups, method="simplemkl", **kwargs)
