"""The in-process executors: ``serial`` (the calling thread) and ``threads`` (a thread pool)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from .base import BoundTasks, ClosingContext, check_workers

__all__ = ["SerialExecutor", "ThreadExecutor"]


class _LocalBinding:
    """Tasks kept in this process; ``runner`` maps a callable over them (in order)."""

    def __init__(self, tasks, runner):
        self.tasks = list(tasks)
        self._runner = runner

    def map(self, w, *args):
        return self._runner(lambda task: task(w, *args), self.tasks)

    def close(self):
        self.tasks = []


class SerialExecutor(ClosingContext):
    """Runs everything in the calling thread (``bytes_sent``: always 0, nothing is copied)."""

    n_workers = 1
    bytes_sent = 0

    def map(self, fn, items):
        return [fn(item) for item in items]

    def bind(self, tasks) -> BoundTasks:
        return _LocalBinding(tasks, self.map)

    def close(self):
        pass


class ThreadExecutor(ClosingContext):
    """A thread pool; useful when ``fn`` releases the GIL (numba ``nogil`` kernels, BLAS).
    ``bytes_sent`` is always 0: the threads read ``w`` where it is."""

    bytes_sent = 0

    def __init__(self, n_workers: int | None = None):
        self.n_workers = check_workers(n_workers)
        self._pool: ThreadPoolExecutor | None = None
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
        ThreadExecutor.__init__(self, state["n_workers"])
