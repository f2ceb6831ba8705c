"""The ``processes`` executor: worker processes that keep the chunks bound to them.

``w`` goes out through one memory-mapped file (one copy per call, not one per worker); task
``j`` lives on worker ``j % n_workers``. Registered in :data:`cutplane.executors.EXECUTORS`.
"""

from __future__ import annotations

import itertools
import os
import threading
import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

from ..exceptions import InputError
from .base import BoundTasks, ClosingContext, ExecutorError, check_workers, wrap_error

__all__ = ["ProcessExecutor"]


def _worker_main(conn):
    """Loop of a worker process: keeps bound tasks by key, answers one message at a time."""
    import pickle

    import numpy as np

    bound: dict[Any, list] = {}  # key -> [(j, task)]
    w_maps: dict[str, np.memmap] = {}  # path -> the mapped file of w
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
                conn.send(("err", wrap_error(exc, "worker task")))
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
            raise InputError(
                f"{fn!r} cannot be pickled for the 'processes' executor (install cloudpickle "
                "or use bind() with picklable tasks)",
                field="fn",
            ) from None
        return cloudpickle.dumps(fn)


def _shutdown_workers(workers, state):
    for _proc, conn in workers:
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


class ProcessExecutor(ClosingContext):
    """Worker processes that keep the chunks bound to them (task ``j`` on worker ``j % n_workers``).

    Parameters
    ----------
    n_workers : int, optional
        Number of processes (default: cores), started at the first use.
    start_method : {"fork", "spawn", "forkserver"}, optional
        Multiprocessing start method (default: the platform's).

    Attributes
    ----------
    bytes_sent : int
        Bytes of ``w`` passed to the workers so far (one copy per call through the shared file).

    Notes
    -----
    Arrays ``w`` of 64 KiB or more go to the workers through one memory-mapped file (under
    ``/dev/shm`` when it exists), so a call copies ``w`` once whatever the number of workers.
    """

    _W_INLINE_BYTES = 1 << 16

    def __init__(self, n_workers: int | None = None, *, start_method: str | None = None):
        self.n_workers = check_workers(n_workers)
        self.start_method = start_method
        self._workers: list = []
        self._state: dict[str, str | None] = {"path": None}
        self._wbuf: np.memmap | None = None
        self._lock = threading.RLock()
        self._keys = itertools.count()
        self._pending_unbind: list = []
        self._broken = False
        self.bytes_sent = 0
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
            # typeshed types get_context(str) as BaseContext, which lacks Process; every concrete
            # context (fork, spawn, forkserver) has it
            proc = ctx.Process(  # type: ignore[attr-defined]
                target=_worker_main, args=(child,), daemon=True, name=f"cutplane-worker-{k}"
            )
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
        out: list[Any] = []
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
            msgs = [
                ("map", fn_bytes, [(j, x) for j, x in enumerate(items) if j % self.n_workers == k])
                for k in range(self.n_workers)
            ]
            return self._ordered(self._exchange(msgs), len(items))

    def bind(self, tasks) -> BoundTasks:
        with self._lock:
            return _ProcessBinding(self, next(self._keys), list(tasks))

    def _bind(self, key, tasks):
        """Ship ``tasks`` (task ``j`` to worker ``j % n_workers``); returns the workers' generation."""
        self._exchange(
            [
                ("bind", key, [(j, t) for j, t in enumerate(tasks) if j % self.n_workers == k])
                for k in range(self.n_workers)
            ]
        )
        return self._generation

    def _call(self, binding, w, args):
        import numpy as np

        with self._lock:
            if binding.generation != self._generation or not self._workers:  # restarted after close()
                self._start()
                binding.generation = self._bind(binding.key, binding.tasks)
            key, n_tasks = binding.key, len(binding.tasks)
            wspec = ("inline", w)
            n_receive = min(n_tasks, self.n_workers)
            if isinstance(w, np.ndarray) and w.nbytes >= self._W_INLINE_BYTES:
                wspec = self._share(np.ascontiguousarray(w))
                self.bytes_sent += int(w.nbytes)  # one copy into shared memory, read by every worker
            else:
                self.bytes_sent += int(getattr(w, "nbytes", 0)) * n_receive
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
        ProcessExecutor.__init__(self, state["n_workers"], start_method=state["start_method"])
