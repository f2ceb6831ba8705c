"""The ``dask`` executor: oracle chunks scattered once to a ``dask.distributed`` cluster.

A ``LocalCluster`` of ``n_workers`` when no scheduler address is given; only ``w`` is
broadcast per call and the partial sums gathered. Registered in
:data:`cutplane.executors.EXECUTORS`; dask is imported only when this executor is created.
"""

from __future__ import annotations

import weakref

from ..exceptions import CutplaneError
from .base import BoundTasks, ClosingContext, ExecutorError, check_workers, wrap_error

__all__ = ["DaskExecutor", "import_distributed"]


def import_distributed():
    try:
        import dask.distributed as dd
    except ImportError as exc:
        raise ExecutorError(
            "the 'dask' executor needs dask.distributed, which is not installed: pip install cutplane[dask]"
        ) from exc
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
            raise wrap_error(exc, "dask task") from exc
        del wf, futs
        return out

    def close(self):
        self._futures = []


class DaskExecutor(ClosingContext):
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

    def __init__(
        self,
        n_workers: int | None = None,
        *,
        scheduler: str | None = None,
        processes: bool = True,
        timeout: float = 30.0,
    ):
        dd = import_distributed()
        self._cluster = None
        try:
            if scheduler is not None:
                self.client = dd.Client(scheduler, timeout=timeout, set_as_default=False)
                self.n_workers = max(1, len(self.client.scheduler_info().get("workers", {})))
            else:
                self.n_workers = check_workers(n_workers)
                self._cluster = dd.LocalCluster(
                    n_workers=self.n_workers, threads_per_worker=1, processes=bool(processes), dashboard_address=None
                )
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
            raise wrap_error(exc, "dask task") from exc

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
