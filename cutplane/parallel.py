"""Executors for an oracle's map over chunks of examples.

An executor has one method, ``map(fn, items) -> list``, which returns
``[fn(item) for item in items]`` in order. Oracles that are sums over examples split
their data into chunks, map a partial-sum function over the chunks, and add the
partial results; the engine never sees the executor.

Implemented here: ``SerialExecutor`` (the default) and ``ThreadExecutor`` (for
numba kernels compiled with ``nogil=True``). Process and Dask executors plug in
through the same interface and the registry ``EXECUTORS``.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Protocol, runtime_checkable

from .exceptions import InputError

__all__ = ["Executor", "SerialExecutor", "ThreadExecutor", "get_executor", "EXECUTORS", "chunk_bounds"]


@runtime_checkable
class Executor(Protocol):
    """Maps a function over items, returning the results in order."""

    n_workers: int

    def map(self, fn: Callable, items: Iterable) -> list:  # pragma: no cover - protocol
        ...


class SerialExecutor:
    """Runs everything in the calling thread."""

    n_workers = 1

    def map(self, fn, items):
        return [fn(item) for item in items]

    def close(self):
        pass


class ThreadExecutor:
    """A thread pool; useful when ``fn`` releases the GIL (numba ``nogil`` kernels, BLAS)."""

    def __init__(self, n_workers: int | None = None):
        self.n_workers = int(n_workers or os.cpu_count() or 1)
        if self.n_workers < 1:
            raise InputError(f"n_workers must be >= 1, got {n_workers}", field="n_workers")
        self._pool = None

    def map(self, fn, items):
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n_workers)
        return list(self._pool.map(fn, items))

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def __getstate__(self):
        return {"n_workers": self.n_workers, "_pool": None}


EXECUTORS: dict[str, Callable[..., Executor]] = {
    "serial": lambda n_workers=None: SerialExecutor(),
    "threads": ThreadExecutor,
}


def get_executor(executor=None, n_workers: int | None = None) -> Executor:
    """Resolve ``None`` / a name in ``EXECUTORS`` / an executor instance to an executor."""
    if executor is None:
        return SerialExecutor()
    if isinstance(executor, str):
        try:
            factory = EXECUTORS[executor]
        except KeyError:
            raise InputError(
                f"unknown executor {executor!r}; expected one of {sorted(EXECUTORS)}", field="executor"
            ) from None
        return factory(n_workers=n_workers)
    if isinstance(executor, Executor):
        return executor
    raise InputError(f"executor must be a name or have a map(fn, items) method, got {type(executor).__name__}",
                     field="executor")


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``n_chunks`` contiguous (start, stop) pieces of near-equal size."""
    n_chunks = max(1, min(int(n_chunks), n)) if n > 0 else 1
    edges = [round(i * n / n_chunks) for i in range(n_chunks + 1)]
    return [(edges[i], edges[i + 1]) for i in range(n_chunks) if edges[i + 1] > edges[i]]
