"""The executors' shared interface: protocols, the error type, worker-count checks.

Used by every executor: :mod:`cutplane.executors.local` (serial, threads),
:mod:`cutplane.executors.processes` and :mod:`cutplane.executors.dask_cluster`.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from ..exceptions import CutplaneError, InputError

__all__ = [
    "ExecutorError",
    "Executor",
    "ChunkTask",
    "BoundTasks",
    "check_workers",
    "check_chunks_per_worker",
    "check_count",
    "ClosingContext",
    "wrap_error",
]


class ExecutorError(CutplaneError, RuntimeError):
    """An executor could not be created or a worker failed (the message says which and why)."""


@runtime_checkable
class Executor(Protocol):
    """Maps a function over items, returning the results in order."""

    n_workers: int

    def map(self, fn: Callable, items: Iterable) -> list:  # pragma: no cover - protocol
        ...


class ChunkTask(Protocol):
    """One chunk of an oracle's data: ``task(w, *args)`` returns the chunk's partial sums.

    It must be picklable for the ``processes`` and ``dask`` executors, and should pickle only
    its own chunk (not the whole dataset). A task may also have ``coordinates()``: the sorted
    coordinates of ``w`` it reads (ndarray of int64), or None for all of them; an executor that
    rebuilds ``w`` on its workers (:mod:`cutplane.executors.mirror`) then sends each worker
    only the parts of the cuts its tasks read.
    """

    def __call__(self, w, *args) -> Any:  # pragma: no cover - protocol
        ...


class BoundTasks(Protocol):
    """Tasks shipped once to an executor's workers."""

    def map(self, w, *args) -> list:  # pragma: no cover - protocol
        """``[task(w, *args) for task in tasks]`` in task order."""

    def close(self) -> None:  # pragma: no cover - protocol
        """Release the tasks on the workers."""


def check_workers(n_workers):
    """``None`` -> the number of cores; otherwise an int >= 1 (InputError naming ``n_workers``)."""
    if n_workers is None:
        return int(os.cpu_count() or 1)
    if isinstance(n_workers, bool) or not isinstance(n_workers, numbers.Integral) or n_workers < 1:
        raise InputError(f"n_workers must be an integer >= 1 or None, got {n_workers!r}", field="n_workers")
    return int(n_workers)


def check_count(value, field: str) -> int:
    """``value`` as an int >= 1 (:class:`InputError` naming ``field`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(f"{field} must be an integer >= 1, got {value!r}", field=field)
    return int(value)


def check_chunks_per_worker(value) -> int:
    """``chunks_per_worker`` as an int >= 1 (:class:`InputError` naming it otherwise)."""
    return check_count(value, "chunks_per_worker")


class ClosingContext:
    """Makes an executor a context manager that calls its ``close()`` on exit."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Release the executor's resources (workers, pools); every executor defines it."""
        raise NotImplementedError


def wrap_error(exc, where):
    """``exc`` as the package's error: itself when it is one, else an :class:`ExecutorError` naming ``where``."""
    if isinstance(exc, CutplaneError):
        return exc
    return ExecutorError(f"{where} failed: {type(exc).__name__}: {exc}")
