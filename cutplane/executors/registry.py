"""The executor registry (:data:`EXECUTORS`, :func:`get_executor`), :func:`bind_tasks`, :func:`chunk_bounds` and
:func:`default_n_chunks`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from ..exceptions import InputError
from .base import BoundTasks, Executor, ExecutorError, check_chunks_per_worker
from .dask_cluster import DaskExecutor, import_distributed
from .local import SerialExecutor, ThreadExecutor
from .processes import ProcessExecutor

__all__ = ["EXECUTORS", "get_executor", "available_executors", "bind_tasks", "chunk_bounds", "default_n_chunks"]


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
def _serial(n_workers=None, scheduler=None, **_):
    return SerialExecutor()


def _threads(n_workers=None, scheduler=None, **_):
    return ThreadExecutor(n_workers)


def _processes(n_workers=None, scheduler=None, **_):
    return ProcessExecutor(n_workers)


def _dask(n_workers=None, scheduler=None, *, client=None, chunks_per_worker=None):
    kw = {} if chunks_per_worker is None else {"chunks_per_worker": chunks_per_worker}
    return DaskExecutor(n_workers, scheduler=scheduler, client=client, **kw)


#: Executor factories by name: ``factory(n_workers=None, scheduler=None, **options)``; the
#: ``dask`` one also takes ``client=`` and ``chunks_per_worker=`` (:class:`DaskExecutor`).
EXECUTORS: dict[str, Callable[..., Executor]] = {
    "serial": _serial,
    "threads": _threads,
    "processes": _processes,
    "dask": _dask,
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


def get_executor(
    executor=None,
    n_workers: int | None = None,
    scheduler: str | None = None,
    *,
    client=None,
    chunks_per_worker: int | None = None,
) -> Executor:
    """Resolve ``None`` / a name in :data:`EXECUTORS` / an executor instance to an executor.

    Parameters
    ----------
    executor : None, str, executor or dask.distributed.Client
        ``None`` is the serial executor; an executor instance is returned as is; a
        ``dask.distributed.Client`` is wrapped in a :class:`DaskExecutor` that leaves the client
        open when it is closed (as ``get_executor("dask", client=client)``).
    n_workers : int, optional
        Workers of a named executor (default: the number of cores).
    scheduler : str, optional
        Dask scheduler address; only with ``executor="dask"``.
    client : dask.distributed.Client, optional
        An existing Dask client (the caller's, never closed here); only with
        ``executor="dask"``, not with ``scheduler``.
    chunks_per_worker : int, optional
        Chunks of an oracle's examples per worker (:func:`default_n_chunks`). The executor
        created keeps it as its ``chunks_per_worker`` attribute; None: the executor's default
        (for ``dask``, one per thread of a worker; the oracle's own rule for the others). Not
        with an executor instance (set it on that executor).

    Raises
    ------
    InputError
        An unknown name or an object that is not an executor, ``scheduler`` or ``client``
        without ``executor="dask"`` (or both), a bad ``n_workers`` or ``chunks_per_worker``.
    ExecutorError
        The executor could not be created (dask not installed, cluster unreachable).
    """
    if _is_dask_client(executor):
        executor, client = "dask", _same_client(client, executor)
    if scheduler is not None and executor != "dask":
        raise InputError(f"a scheduler address needs executor='dask', got executor={executor!r}", field="scheduler")
    if client is not None and executor != "dask":
        raise InputError(f"a Dask client needs executor='dask', got executor={executor!r}", field="client")
    if chunks_per_worker is not None:
        chunks_per_worker = check_chunks_per_worker(chunks_per_worker)
    if executor is None:
        executor = "serial"
    if isinstance(executor, str):
        try:
            factory = EXECUTORS[executor]
        except KeyError:
            raise InputError(
                f"unknown executor {executor!r}; expected one of {list(EXECUTORS)}", field="executor"
            ) from None
        if executor == "dask":
            return factory(n_workers=n_workers, scheduler=scheduler, client=client, chunks_per_worker=chunks_per_worker)
        made = factory(n_workers=n_workers, scheduler=scheduler)
        if chunks_per_worker is not None:
            made.chunks_per_worker = chunks_per_worker  # type: ignore[attr-defined]
        return made
    if isinstance(executor, Executor):
        if chunks_per_worker is not None:
            raise InputError(
                "chunks_per_worker applies to an executor created by name; set it on the executor instance "
                "(e.g. DaskExecutor(..., chunks_per_worker=4))",
                field="chunks_per_worker",
            )
        return executor
    raise InputError(
        f"executor must be a name or have a map(fn, items) method, got {type(executor).__name__}", field="executor"
    )


def _is_dask_client(obj) -> bool:
    """Whether ``obj`` is a ``dask.distributed.Client`` (without importing dask when it is not loaded)."""
    dd = sys.modules.get("distributed")
    return dd is not None and isinstance(obj, getattr(dd, "Client", ()))


def _same_client(client, executor):
    if client is not None and client is not executor:
        raise InputError("a Dask client was given twice (as executor= and as client=)", field="client")
    return executor


def default_n_chunks(executor, per_worker: int = 2) -> int:
    """How many chunks an oracle splits its examples into when it is not told (``n_chunks=None``).

    ``executor.chunks_per_worker * executor.n_workers`` when the executor has a
    ``chunks_per_worker`` attribute (:class:`DaskExecutor` always does; the executors
    :func:`get_executor` creates with ``chunks_per_worker=`` too); otherwise the oracle's own
    rule: 1 for one worker, ``per_worker * n_workers`` for more.

    Parameters
    ----------
    executor : executor
        Has ``n_workers``.
    per_worker : int, default=2
        The oracle's chunks per worker without the attribute (the parsing oracle uses 4).
    """
    n_workers = int(getattr(executor, "n_workers", 1) or 1)
    chunks_per_worker = getattr(executor, "chunks_per_worker", None)
    if chunks_per_worker is not None:
        return int(chunks_per_worker) * n_workers
    return 1 if n_workers == 1 else int(per_worker) * n_workers


def chunk_bounds(n: int, n_chunks: int) -> list[tuple[int, int]]:
    """Split ``range(n)`` into at most ``n_chunks`` contiguous (start, stop) pieces of near-equal size."""
    n_chunks = max(1, min(int(n_chunks), n)) if n > 0 else 1
    edges = [round(i * n / n_chunks) for i in range(n_chunks + 1)]
    return [(edges[i], edges[i + 1]) for i in range(n_chunks) if edges[i + 1] > edges[i]]
