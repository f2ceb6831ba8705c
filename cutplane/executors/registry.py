"""The executor registry (:data:`EXECUTORS`, :func:`get_executor`), :func:`bind_tasks` and :func:`chunk_bounds`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..exceptions import InputError
from .base import BoundTasks, Executor, ExecutorError
from .dask_cluster import DaskExecutor, import_distributed
from .local import SerialExecutor, ThreadExecutor
from .processes import ProcessExecutor

__all__ = ["EXECUTORS", "get_executor", "available_executors", "bind_tasks", "chunk_bounds"]


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
                import_distributed()
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
        raise InputError(f"a scheduler address needs executor='dask', got executor={executor!r}", field="scheduler")
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
    raise InputError(
        f"executor must be a name or have a map(fn, items) method, got {type(executor).__name__}", field="executor"
    )


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``n_chunks`` contiguous (start, stop) pieces of near-equal size."""
    n_chunks = max(1, min(int(n_chunks), n)) if n > 0 else 1
    edges = [round(i * n / n_chunks) for i in range(n_chunks + 1)]
    return [(edges[i], edges[i + 1]) for i in range(n_chunks) if edges[i + 1] > edges[i]]
