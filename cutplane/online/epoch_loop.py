"""The epoch loop of SPOM, shared by the explicit and the kernelised forms.

:func:`run_epochs` runs the rounds of :func:`cutplane.online.spom.spom` and
:func:`problems.mkl.kernel_spom.kernel_spom`: the optional choice of ``eta0`` on a
subsample (:func:`cutplane.online.learning_rates.tune_eta0`), one permutation of the examples
per epoch drawn from ``np.random.default_rng(seed)``, a step per example, the objective
evaluated at every epoch end (and every ``eval_every`` rounds), the callback, the time limit,
Ctrl-C, and the tqdm bar; it hands back an :class:`EpochRun`. Each evaluation is logged at INFO
on the ``"cutplane.online"`` logger.
"""

from __future__ import annotations

import logging
import time
from typing import Any, NamedTuple

import numpy as np

from .result import SPOMHistory, SPOMInfo

__all__ = ["run_epochs", "EpochRun"]

logger = logging.getLogger("cutplane.online")


class EpochRun(NamedTuple):
    """What :func:`run_epochs` hands back to the function that builds the result."""

    state: Any
    history: SPOMHistory
    status: str
    epochs: int
    train_time: float
    eval_time: float
    tune_time: float
    tuning: dict


def run_epochs(
    make,
    objective,
    n,
    risk0,
    radius,
    t_start,
    *,
    epochs,
    eta0,
    schedule,
    seed,
    eval_every,
    callback,
    time_limit,
    verbose,
    eta_grid,
    tune_samples,
    tune_epochs,
    desc="spom",
    scale=1.0,
) -> EpochRun:
    """The epoch loop shared by :func:`spom` and :func:`problems.mkl.kernel_spom.kernel_spom`.

    Parameters
    ----------
    make : callable
        ``make(eta0, gamma) -> state`` (an :class:`OnlineProximal` or subclass at ``w = 0``).
    objective : callable
        ``objective(state) -> (value, model)`` at the model the state would return now.
    n : int
        Number of examples.
    risk0 : float
        ``R(0)``, the first history point.
    radius : float or None
        Projection radius.
    t_start : float
        ``time.perf_counter()`` at the start of the run.
    scale : float, default=1.0
        Factor of the objective the bar shows and the log records (``1 / lam`` for
        :func:`spom`'s ``progress_scale="F/lam"``, :func:`cutplane.progress.display_factor`);
        the history is unscaled.
    (others) : as in :func:`spom`.

    Returns
    -------
    EpochRun
    """
    from .learning_rates import tune_eta0

    rng = np.random.default_rng(seed)
    tune_time, tuning = 0.0, {}
    if eta0 is None and schedule == "sqrt":
        t0 = time.perf_counter()
        eta0, tuning = tune_eta0(lambda e: make(e, radius), n, eta_grid, tune_samples, tune_epochs, rng)
        tune_time = time.perf_counter() - t0
    state = make(1.0 if eta0 is None else float(eta0), radius)
    rows = [(0, 0.0, risk0, 0.0, time.perf_counter() - t_start, np.nan)]
    train_time = 0.0
    eval_time = time.perf_counter() - t_start - tune_time
    status, epochs_done, loss_sum, loss_count = "completed", 0, 0.0, 0
    bar = None
    if verbose:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(epochs), desc=desc, unit="epoch", dynamic_ncols=True)

    def evaluate():
        nonlocal eval_time, loss_sum, loss_count
        e0 = time.perf_counter()
        obj, w = objective(state)
        rows.append(
            (
                state.t,
                state.t / n,
                obj,
                train_time,
                time.perf_counter() - t_start,
                loss_sum / loss_count if loss_count else np.nan,
            )
        )
        loss_sum, loss_count = 0.0, 0
        info = SPOMInfo(state.t, state.t / n, obj, train_time, time.perf_counter() - t_start, w)
        logger.info(
            "%s round %d (%.3g passes): objective %.10g, train %.3g s",
            desc,
            info.rounds,
            info.passes,
            scale * obj,
            train_time,
        )
        stop = bool(callback(info)) if callback is not None else False
        eval_time += time.perf_counter() - e0
        return stop

    try:
        for _ in range(int(epochs)):
            order = rng.permutation(n)
            tic = time.perf_counter()
            stop = False
            for k, i in enumerate(order):
                loss_sum += state.step(int(i))
                loss_count += 1
                if time_limit is not None and train_time + time.perf_counter() - tic > time_limit:
                    status, stop = "time_limit", True
                    break
                if eval_every is not None and state.t % int(eval_every) == 0 and k + 1 < n:
                    train_time += time.perf_counter() - tic
                    if evaluate():
                        status, stop = "callback", True
                        break
                    tic = time.perf_counter()
            else:
                epochs_done += 1
            state.compact()  # O(dim), once per epoch: exact norms, no drift in the lazy sums
            train_time += time.perf_counter() - tic
            if bar is not None:
                bar.update(1)
            if status == "completed":
                if evaluate():
                    status, stop = "callback", True
            elif status == "time_limit":
                evaluate()
            if bar is not None:
                bar.set_postfix(objective=f"{scale * rows[-1][2]:.6g}")
            if stop:
                break
    except KeyboardInterrupt:
        status = "interrupted"
        evaluate()
    finally:
        if bar is not None:
            bar.close()
    return EpochRun(state, SPOMHistory.from_rows(rows), status, epochs_done, train_time, eval_time, tune_time, tuning)
