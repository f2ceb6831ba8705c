"""Executors for an oracle's map over chunks of examples.

A risk that is a sum over examples is evaluated as a sum of partial sums over chunks of
examples (chapter sec. 1.2.3). Two ways to run such a map share one executor:

``executor.map(fn, items) -> list``
    ``[fn(item) for item in items]`` in order (the simple route, anything picklable);
``executor.bind(tasks) -> BoundTasks``, then ``bound.map(w, *args) -> list``
    the route of the oracles. Each task is a :class:`ChunkTask`: a picklable object that
    holds its chunk of the data and returns that chunk's partial sums from ``task(w, *args)``.
    ``bind`` ships the tasks to the workers ONCE; each later call sends only ``w`` (and a few
    flags) and gets the partial sums back, in task order.

Implementations, registered in :data:`EXECUTORS` in order of preference:

- ``serial`` (default): everything in the calling thread;
- ``threads``: a thread pool, for numba kernels compiled with ``nogil=True``;
- ``processes``: worker processes that keep their bound chunks in memory; ``w`` goes out
  through a memory-mapped file (one copy per call, not one per worker);
- ``dask``: a ``dask.distributed.Client`` (a ``LocalCluster`` of ``n_workers`` when no
  scheduler address is given); the chunks are scattered once (``broadcast=False``) and their
  futures kept, ``w`` is broadcast once per call.

Every executor can be closed and used as a context manager; one created from a name (as the
estimators do with ``get_executor(self.executor, self.n_workers)``) is also closed when it is
garbage collected.
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Sequence

from ._executor_base import BoundTasks, ChunkTask, Executor, ExecutorError, _check_workers, _ContextMixin
from .dask_executor import DaskExecutor, _import_distributed
from .exceptions import InputError
from .process_executor import ProcessExecutor

__all__ = ["Executor", "ChunkTask", "BoundTasks", "SerialExecutor", "ThreadExecutor", "ProcessExecutor",
           "DaskExecutor", "ExecutorError", "get_executor", "bind_tasks", "available_executors", "EXECUTORS",
           "chunk_bounds"]


class _LocalBinding:
    """Tasks kept in this process; ``runner`` maps a callable over them (in order)."""

    def __init__(self, tasks, runner):
        self.tasks = list(tasks)
        self._runner = runner

    def map(self, w, *args):
        return self._runner(lambda task: task(w, *args), self.tasks)

    def close(self):
        self.tasks = []


class SerialExecutor(_ContextMixin):
    """Runs everything in the calling thread."""

    n_workers = 1

    def map(self, fn, items):
        return [fn(item) for item in items]

    def bind(self, tasks) -> BoundTasks:
        return _LocalBinding(tasks, self.map)

    def close(self):
        pass


class ThreadExecutor(_ContextMixin):
    """A thread pool; useful when ``fn`` releases the GIL (numba ``nogil`` kernels, BLAS)."""

    def __init__(self, n_workers: int | None = None):
        self.n_workers = _check_workers(n_workers)
        self._pool = None
        self._lock = threading.Lock()

    def map(self, fn, items):
        items = list(items)
        if len(items) <= 1:
            return [fn(item) for item in items]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.n_workers, thread_name_prefix="cutplane")
            pool = self._pool
        return list(pool.map(fn, items))

    def bind(self, tasks) -> BoundTasks:
        return _LocalBinding(tasks, self.map)

    def close(self):
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def __getstate__(self):
        return {"n_workers": self.n_workers}

    def __setstate__(self, state):
        self.__init__(state["n_workers"])


class _MapBinding:
    """Fallback for executors with only ``map``: tasks travel with every call."""

    def __init__(self, executor, tasks):
        self.executor, self.tasks = executor, list(tasks)

    def map(self, w, *args):
        return self.executor.map(_CallTask(w, args), self.tasks)

    def close(self):
        self.tasks = []


class _CallTask:
    """Picklable ``task -> task(w, *args)``."""

    def __init__(self, w, args):
        self.w, self.args = w, args

    def __call__(self, task):
        return task(self.w, *self.args)


def bind_tasks(executor, tasks: Sequence) -> BoundTasks:
    """``executor.bind(tasks)``, or a map-based binding for executors without ``bind``."""
    if hasattr(executor, "bind"):
        return executor.bind(tasks)
    return _MapBinding(executor, tasks)


# -- registry ----------------------------------------------------------------------------------------
EXECUTORS: dict[str, Callable[..., Executor]] = {
    "serial": lambda n_workers=None, scheduler=None: SerialExecutor(),
    "threads": lambda n_workers=None, scheduler=None: ThreadExecutor(n_workers),
    "processes": lambda n_workers=None, scheduler=None: ProcessExecutor(n_workers),
    "dask": lambda n_workers=None, scheduler=None: DaskExecutor(n_workers, scheduler=scheduler),
}


def available_executors() -> list[str]:
    """Names in :data:`EXECUTORS` whose dependencies are installed, in order of preference."""
    names = []
    for name in EXECUTORS:
        if name == "dask":
            try:
                _import_distributed()
            except ExecutorError:
                continue
        names.append(name)
    return names


def get_executor(executor=None, n_workers: int | None = None, scheduler: str | None = None) -> Executor:
    """Resolve ``None`` / a name in :data:`EXECUTORS` / an executor instance to an executor.

    Parameters
    ----------
    executor : None, str or executor
        ``None`` is the serial executor; an instance is returned as is.
    n_workers : int, optional
        Workers of a named executor (default: the number of cores).
    scheduler : str, optional
        Dask scheduler address; only with ``executor="dask"``.
    """
    if scheduler is not None and executor != "dask":
        raise InputError(f"a scheduler address needs executor='dask', got executor={executor!r}",
                         field="scheduler")
    if executor is None:
        return SerialExecutor()
    if isinstance(executor, str):
        try:
            factory = EXECUTORS[executor]
        except KeyError:
            raise InputError(
                f"unknown executor {executor!r}; expected one of {list(EXECUTORS)}", field="executor"
            ) from None
        return factory(n_workers=n_workers, scheduler=scheduler)
    if isinstance(executor, Executor):
        return executor
    raise InputError(f"executor must be a name or have a map(fn, items) method, got {type(executor).__name__}",
                     field="executor")


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``n_chunks`` contiguous (start, stop) pieces of near-equal size."""
    n_chunks = max(1, min(int(n_chunks), n)) if n > 0 else 1
    edges = [round(i * n / n_chunks) for i in range(n_chunks + 1)]
    return [(edges[i], edges[i + 1]) for i in range(n_chunks) if edges[i + 1] > edges[i]]

