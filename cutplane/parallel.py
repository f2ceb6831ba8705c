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

import itertools
import numbers
import os
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Protocol, Sequence, runtime_checkable

from .exceptions import CutplaneError, InputError

__all__ = ["Executor", "ChunkTask", "BoundTasks", "SerialExecutor", "ThreadExecutor", "ProcessExecutor",
           "DaskExecutor", "ExecutorError", "get_executor", "bind_tasks", "available_executors", "EXECUTORS",
           "chunk_bounds"]


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
    its own chunk (not the whole dataset).
    """

    def __call__(self, w, *args) -> Any:  # pragma: no cover - protocol
        ...


class BoundTasks(Protocol):
    """Tasks shipped once to an executor's workers."""

    def map(self, w, *args) -> list:  # pragma: no cover - protocol
        """``[task(w, *args) for task in tasks]`` in task order."""

    def close(self) -> None:  # pragma: no cover - protocol
        """Release the tasks on the workers."""


def _check_workers(n_workers):
    """``None`` -> the number of cores; otherwise an int >= 1 (InputError naming ``n_workers``)."""
    if n_workers is None:
        return int(os.cpu_count() or 1)
    if isinstance(n_workers, bool) or not isinstance(n_workers, numbers.Integral) or n_workers < 1:
        raise InputError(f"n_workers must be an integer >= 1 or None, got {n_workers!r}", field="n_workers")
    return int(n_workers)


class _ContextMixin:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


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


def _wrap_error(exc, where):
    if isinstance(exc, CutplaneError):
        return exc
    return ExecutorError(f"{where} failed: {type(exc).__name__}: {exc}")


# -- processes ---------------------------------------------------------------------------------------
def _worker_main(conn):
    """Loop of a worker process: keeps bound tasks by key, answers one message at a time."""
    import pickle

    import numpy as np

    bound, w_maps = {}, {}
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        op = msg[0]
        if op == "close":
            return
        try:
            if op == "bind":
                bound[msg[1]] = msg[2]
                out = None
            elif op == "unbind":
                for key in msg[1]:
                    bound.pop(key, None)
                out = None
            elif op == "call":
                _, key, wspec, args = msg
                if wspec[0] == "file":
                    _, path, shape, dtype = wspec
                    if path not in w_maps:
                        w_maps.clear()
                        w_maps[path] = np.memmap(path, dtype=np.uint8, mode="r+")
                    w = np.frombuffer(w_maps[path], dtype=dtype, count=int(np.prod(shape))).reshape(shape)
                else:
                    w = wspec[1]
                out = [(j, task(w, *args)) for j, task in bound[key]]
            else:  # "map"
                fn = pickle.loads(msg[1])
                out = [(j, fn(item)) for j, item in msg[2]]
            conn.send(("ok", out))
        except Exception as exc:  # noqa: BLE001 - sent back to the parent
            try:
                conn.send(("err", _wrap_error(exc, "worker task")))
            except Exception:  # noqa: BLE001 - unpicklable error
                conn.send(("err", ExecutorError(f"worker task failed: {type(exc).__name__}: {exc}")))


def _dumps_fn(fn):
    import pickle

    try:
        return pickle.dumps(fn)
    except Exception:  # noqa: BLE001 - closures: cloudpickle when available
        try:
            import cloudpickle
        except ImportError:
            raise InputError(f"{fn!r} cannot be pickled for the 'processes' executor (install cloudpickle "
                             "or use bind() with picklable tasks)", field="fn") from None
        return cloudpickle.dumps(fn)


def _shutdown_workers(workers, state):
    for proc, conn in workers:
        try:
            conn.send(("close",))
        except (OSError, ValueError):
            pass
    for proc, conn in workers:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.terminate()
        conn.close()
    workers.clear()
    if state.get("path"):
        try:
            os.unlink(state["path"])
        except OSError:
            pass
        state["path"] = None


class _ProcessBinding:
    """Tasks kept by the worker processes under ``key``; bound again if the workers were restarted."""

    def __init__(self, executor, key, tasks):
        self._executor, self.key, self.tasks = executor, key, tasks
        self.generation = executor._bind(key, tasks)
        self._finalizer = weakref.finalize(self, executor._pending_unbind.append, key)

    def map(self, w, *args):
        return self._executor._call(self, w, args)

    def close(self):
        self._finalizer()
        self.tasks = []


class ProcessExecutor(_ContextMixin):
    """Worker processes that keep the chunks bound to them (task ``j`` on worker ``j % n_workers``).

    Parameters
    ----------
    n_workers : int, optional
        Number of processes (default: cores), started at the first use.
    start_method : {"fork", "spawn", "forkserver"}, optional
        Multiprocessing start method (default: the platform's).

    Notes
    -----
    Arrays ``w`` of 64 KiB or more go to the workers through one memory-mapped file (under
    ``/dev/shm`` when it exists), so a call copies ``w`` once whatever the number of workers.
    """

    _W_INLINE_BYTES = 1 << 16

    def __init__(self, n_workers: int | None = None, *, start_method: str | None = None):
        self.n_workers = _check_workers(n_workers)
        self.start_method = start_method
        self._workers: list = []
        self._state = {"path": None}
        self._wbuf = None
        self._lock = threading.RLock()
        self._keys = itertools.count()
        self._pending_unbind: list = []
        self._broken = False
        self._generation = 0  # incremented at every start of the worker processes
        self._finalizer = weakref.finalize(self, _shutdown_workers, self._workers, self._state)

    def _start(self):
        if self._broken:
            raise ExecutorError("a worker process died earlier; create a new executor")
        if self._workers:
            return
        import multiprocessing as mp

        ctx = mp.get_context(self.start_method)
        self._generation += 1
        for k in range(self.n_workers):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, args=(child,), daemon=True, name=f"cutplane-worker-{k}")
            proc.start()
            child.close()
            self._workers.append((proc, parent))
        if not self._finalizer.alive:  # restarted after close()
            self._finalizer = weakref.finalize(self, _shutdown_workers, self._workers, self._state)

    def _exchange(self, msgs):
        """Send ``msgs[k]`` to worker ``k`` (None: nothing), then collect every answer (in step)."""
        self._start()
        if self._pending_unbind:
            keys, self._pending_unbind[:] = list(self._pending_unbind), []
            self._round([("unbind", keys)] * len(self._workers))
        return self._round(msgs)

    def _round(self, msgs):
        sent, error = [], None
        for k, ((proc, conn), m) in enumerate(zip(self._workers, msgs)):
            try:
                if m is not None:
                    conn.send(m)
                sent.append(m is not None)
            except (OSError, ValueError):
                sent.append(False)
                error = error or self._died(k, proc)
        out = []
        for k, ((proc, conn), ok) in enumerate(zip(self._workers, sent)):
            out.append(None)
            if not ok:
                continue
            try:
                status, payload = conn.recv()
            except (EOFError, OSError):
                error = error or self._died(k, proc)
                continue
            if status == "err":
                error = error or payload
            else:
                out[k] = payload
        if error is not None:
            raise error
        return out

    def _died(self, k, proc):
        self._broken = True
        proc.join(timeout=1)
        return ExecutorError(f"worker process {k} died (exit code {proc.exitcode}); create a new executor")

    def map(self, fn, items):
        items = list(items)
        with self._lock:
            fn_bytes = _dumps_fn(fn)
            msgs = [("map", fn_bytes, [(j, x) for j, x in enumerate(items) if j % self.n_workers == k])
                    for k in range(self.n_workers)]
            return self._ordered(self._exchange(msgs), len(items))

    def bind(self, tasks) -> BoundTasks:
        with self._lock:
            return _ProcessBinding(self, next(self._keys), list(tasks))

    def _bind(self, key, tasks):
        """Ship ``tasks`` (task ``j`` to worker ``j % n_workers``); returns the workers' generation."""
        self._exchange([("bind", key, [(j, t) for j, t in enumerate(tasks) if j % self.n_workers == k])
                        for k in range(self.n_workers)])
        return self._generation

    def _call(self, binding, w, args):
        import numpy as np

        with self._lock:
            if binding.generation != self._generation or not self._workers:  # restarted after close()
                self._start()
                binding.generation = self._bind(binding.key, binding.tasks)
            key, n_tasks = binding.key, len(binding.tasks)
            wspec = ("inline", w)
            if isinstance(w, np.ndarray) and w.nbytes >= self._W_INLINE_BYTES:
                wspec = self._share(np.ascontiguousarray(w))
            msg = ("call", key, wspec, tuple(args))
            msgs = [msg if k < n_tasks else None for k in range(self.n_workers)]
            return self._ordered(self._exchange(msgs), n_tasks)

    def _share(self, w):
        import tempfile

        import numpy as np

        if self._wbuf is None or self._wbuf.size < w.nbytes:
            if self._state["path"]:
                self._wbuf = None
                os.unlink(self._state["path"])
            folder = "/dev/shm" if os.path.isdir("/dev/shm") else None
            fd, path = tempfile.mkstemp(prefix="cutplane-w-", dir=folder)
            os.close(fd)
            self._state["path"] = path
            self._wbuf = np.memmap(path, dtype=np.uint8, mode="w+", shape=(max(w.nbytes, 1),))
        np.copyto(np.frombuffer(self._wbuf, dtype=w.dtype, count=w.size), w.ravel())
        return ("file", self._state["path"], w.shape, w.dtype.str)

    @staticmethod
    def _ordered(per_worker, n):
        out = [None] * n
        for part in per_worker:
            for j, r in part or ():
                out[j] = r
        return out

    def close(self):
        with self._lock:
            self._wbuf = None
            self._finalizer()

    def __getstate__(self):
        return {"n_workers": self.n_workers, "start_method": self.start_method}

    def __setstate__(self, state):
        self.__init__(state["n_workers"], start_method=state["start_method"])


# -- dask --------------------------------------------------------------------------------------------
def _import_distributed():
    try:
        import dask.distributed as dd
    except ImportError as exc:
        raise ExecutorError("the 'dask' executor needs dask.distributed, which is not installed: "
                            "pip install cutplane[dask]") from exc
    return dd


def _apply(task, w, *args):
    return task(w, *args)


class _DaskBinding:
    def __init__(self, executor, futures):
        self._executor, self._futures = executor, futures

    def map(self, w, *args):
        client = self._executor.client
        try:
            wf = client.scatter(w, broadcast=True, hash=False)
            futs = [client.submit(_apply, f, wf, *args, pure=False) for f in self._futures]
            out = client.gather(futs)
        except Exception as exc:  # noqa: BLE001 - one clear error type
            raise _wrap_error(exc, "dask task") from exc
        del wf, futs
        return out

    def close(self):
        self._futures = []


class DaskExecutor(_ContextMixin):
    """Oracle chunks on a Dask cluster.

    Parameters
    ----------
    n_workers : int, optional
        Workers of the ``LocalCluster`` started when ``scheduler`` is None (default: cores).
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``); the cluster is then not ours to
        close, only the client is.
    processes : bool, default=True
        Worker processes (True) or threads of this process (False) in the ``LocalCluster``.
    timeout : float, default=30
        Seconds to wait for the scheduler.
    """

    def __init__(self, n_workers: int | None = None, *, scheduler: str | None = None, processes: bool = True,
                 timeout: float = 30.0):
        dd = _import_distributed()
        self._cluster = None
        try:
            if scheduler is not None:
                self.client = dd.Client(scheduler, timeout=timeout, set_as_default=False)
                self.n_workers = max(1, len(self.client.scheduler_info().get("workers", {})))
            else:
                self.n_workers = _check_workers(n_workers)
                self._cluster = dd.LocalCluster(n_workers=self.n_workers, threads_per_worker=1,
                                                processes=bool(processes), dashboard_address=None)
                self.client = dd.Client(self._cluster, set_as_default=False)
        except CutplaneError:
            raise
        except Exception as exc:  # noqa: BLE001
            if self._cluster is not None:
                self._cluster.close()
            where = f"scheduler {scheduler!r}" if scheduler else "local Dask cluster"
            raise ExecutorError(f"could not connect to the {where}: {type(exc).__name__}: {exc}") from exc
        self._finalizer = weakref.finalize(self, _close_dask, self.client, self._cluster)

    def map(self, fn, items):
        try:
            return self.client.gather(self.client.map(fn, list(items), pure=False))
        except Exception as exc:  # noqa: BLE001
            raise _wrap_error(exc, "dask task") from exc

    def bind(self, tasks) -> BoundTasks:
        tasks = list(tasks)
        futures = self.client.scatter(tasks, broadcast=False, hash=False) if tasks else []
        return _DaskBinding(self, futures)

    def close(self):
        self._finalizer()


def _close_dask(client, cluster):
    client.close()
    if cluster is not None:
        cluster.close()


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

