"""The engine options every estimator shares: checkpoint / resume, memory budget, executor.

:class:`~problems.linear.svm.LinearSVM`, :class:`~problems.sequence.tagger.SequenceTagger`
and :class:`~problems.parsing.parser.DependencyParser` store the constructor parameters
``checkpoint=None, checkpoint_every=10, resume=False, memory_limit=None`` (and, for the
structured ones, ``executor``, ``n_workers``, ``scheduler``) untouched, as scikit-learn
requires; at ``fit`` they are validated here, once for all estimators, and handed to
:func:`cutplane.minimize` (:func:`check_checkpoint_params`) and to the oracle
(:func:`make_executor`).
"""
from __future__ import annotations

import os

from cutplane.exceptions import InputError

from problems.validation import check_bool, check_int

__all__ = ["check_checkpoint_params", "make_executor", "release_executor", "uses_engine_options", "CHECKPOINT_DEFAULTS"]

#: The constructor defaults of the checkpoint and memory options (the CLI's too).
CHECKPOINT_DEFAULTS = {"checkpoint": None, "checkpoint_every": 10, "resume": False, "memory_limit": None}


def check_checkpoint_params(est) -> dict:
    """The engine's checkpoint and memory options of an estimator, validated.

    Parameters
    ----------
    est : estimator
        Has ``checkpoint`` (str, os.PathLike or None), ``checkpoint_every`` (int >= 1),
        ``resume`` (bool; True needs a checkpoint path) and ``memory_limit`` (int bytes or None).

    Returns
    -------
    dict
        The keywords ``checkpoint``, ``checkpoint_every``, ``resume`` and ``memory_limit`` of
        :func:`cutplane.minimize`.

    Raises
    ------
    InputError
        A bad value, named by its ``field``.
    """
    path = est.checkpoint
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InputError(f"must be a file path or None, got {type(path).__name__}", field="checkpoint")
    resume = check_bool(est.resume, "resume")
    if resume and path is None:
        raise InputError("resume=True needs a checkpoint path", field="resume")
    return dict(checkpoint=path, checkpoint_every=check_int(est.checkpoint_every, "checkpoint_every"),
                resume=resume, memory_limit=check_int(est.memory_limit, "memory_limit", allow_none=True))


def uses_engine_options(params: dict) -> list:
    """Names of the checkpoint and memory options of ``params`` (from
    :func:`check_checkpoint_params`) that differ from :data:`CHECKPOINT_DEFAULTS`.

    A solver that does not run the engine (SPOM) refuses these rather than ignoring them.
    """
    return [k for k, v in CHECKPOINT_DEFAULTS.items() if params.get(k, v) != v]


def make_executor(est):
    """The executor of an estimator's oracle.

    Parameters
    ----------
    est : estimator
        Has ``executor`` (None, a name of :data:`cutplane.parallel.EXECUTORS` or an executor
        instance), ``n_workers`` (int or None) and optionally ``scheduler`` (a Dask scheduler
        address, with ``executor="dask"`` only).

    Returns
    -------
    cutplane.parallel.Executor
        From :func:`cutplane.parallel.get_executor`.
    """
    from cutplane.parallel import get_executor

    n_workers = check_int(est.n_workers, "n_workers", allow_none=True)
    scheduler = getattr(est, "scheduler", None)
    if scheduler is not None and not isinstance(scheduler, str):
        raise InputError(f"must be a scheduler address (str) or None, got {type(scheduler).__name__}",
                         field="scheduler")
    if scheduler is None:
        return get_executor(est.executor, n_workers)
    return get_executor(est.executor, n_workers, scheduler=scheduler)


def release_executor(est, executor) -> None:
    """Close an executor that :func:`make_executor` built from a name, once fit or predict is done.

    Its thread pool, worker processes (with the data chunks they hold) or Dask client go with
    it; an executor instance the user passed as ``est.executor`` is theirs and stays open.

    Parameters
    ----------
    est : estimator
    executor : cutplane.parallel.Executor or None
    """
    if executor is not None and executor is not est.executor:
        executor.close()
