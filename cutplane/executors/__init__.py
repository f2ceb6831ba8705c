"""Executors for an oracle's map over chunks of examples.

A risk that is a sum over examples is evaluated as a sum of partial sums over chunks of
examples (Franc et al. 2012, sec. 1.2.3). Two ways to run such a map share one executor:

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
- ``dask``: a ``dask.distributed.Client`` (the caller's ``client=``, one connected to a
  scheduler address, or a ``LocalCluster`` of ``n_workers``); the chunks are scattered once
  (``broadcast=False``) and their futures kept, ``w`` is broadcast once per call. A worker
  lost mid-run ends the call with one :class:`ExecutorError` (:func:`dask_failure`) that says
  to resume from the checkpoint on any executor.

An oracle told no ``n_chunks`` splits its examples into :func:`default_n_chunks` chunks: the
executor's ``chunks_per_worker`` times its workers when it has that attribute
(``DaskExecutor(chunks_per_worker=2)``, ``get_executor(name, chunks_per_worker=k)``).

Every executor can be closed and used as a context manager; one created from a name (as the
estimators do with ``get_executor(self.executor, self.n_workers)``) is also closed when it is
garbage collected.
"""

from __future__ import annotations

from .base import BoundTasks, ChunkTask, Executor, ExecutorError
from .dask_cluster import DaskExecutor, dask_failure
from .local import SerialExecutor, ThreadExecutor
from .processes import ProcessExecutor
from .registry import EXECUTORS, available_executors, bind_tasks, chunk_bounds, default_n_chunks, get_executor

__all__ = [
    "Executor",
    "ChunkTask",
    "BoundTasks",
    "SerialExecutor",
    "ThreadExecutor",
    "ProcessExecutor",
    "DaskExecutor",
    "ExecutorError",
    "get_executor",
    "bind_tasks",
    "available_executors",
    "EXECUTORS",
    "chunk_bounds",
    "default_n_chunks",
    "dask_failure",
]
