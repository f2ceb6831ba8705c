"""The ``dask`` executor: oracle chunks scattered once to a ``dask.distributed`` cluster.

A ``LocalCluster`` of ``n_workers`` when no scheduler address is given. Per call, ``w`` is
broadcast, or, when the engine says that ``w`` is a combination of its cuts, only the new cuts
and the coefficients, from which every worker rebuilds ``w`` bit for bit
(:mod:`cutplane.executors.mirror`); the partial sums are gathered. Registered in
:data:`cutplane.executors.EXECUTORS`; dask is imported only when this executor is created.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import time
import uuid
import weakref
from typing import NamedTuple

from ..exceptions import CutplaneError
from .base import BoundTasks, ClosingContext, ExecutorError, check_workers, wrap_error
from .mirror import MirrorMismatch, MirrorPlanner, RowMirror, current_query

logger = logging.getLogger(__name__)

__all__ = ["DaskExecutor", "DaskCall", "import_distributed"]


def import_distributed():
    try:
        import dask.distributed as dd
    except ImportError as exc:
        raise ExecutorError(
            "the 'dask' executor needs dask.distributed, which is not installed: pip install cutplane[dask]"
        ) from exc
    return dd


class DaskCall(NamedTuple):
    """One map of the chunk tasks on the cluster (:attr:`DaskExecutor.calls`).

    Attributes
    ----------
    mirrored : bool
        True when the workers rebuilt ``w`` from an update, False when ``w`` itself was sent.
    bytes_sent : int
        Bytes of ``w`` or of the update, times the workers that received it.
    new_rows, new_nnz : int
        Cuts the update carried, and their stored nonzeros (0 when ``w`` was sent).
    combined_rows, combined_nnz : int
        Cuts with a nonzero coefficient the workers combined, and their stored nonzeros.
    rebuild_s : float
        Seconds the slowest worker spent rebuilding ``w``.
    seconds : float
        Wall seconds of the whole map (sending, the tasks, gathering the partial sums).
    """

    mirrored: bool
    bytes_sent: int
    new_rows: int
    new_nnz: int
    combined_rows: int
    combined_nnz: int
    rebuild_s: float
    seconds: float


#: Calls kept in :attr:`DaskExecutor.calls` (the most recent).
CALLS_KEPT = 100_000


def _apply(task, w, *args):
    return task(w, *args)


def _worker_key(key):
    """The key of this worker's mirror for binding ``key`` (workers of a threaded cluster share
    one process, so the worker's address is part of it)."""
    from distributed import get_worker

    return key, get_worker().address


_MIRRORS: dict = {}  # on a worker: (binding key, worker address) -> RowMirror
_INLINE_MAX_BYTES = 8 << 20  # larger updates are scattered (a task's arguments go through the scheduler)


def _apply_mirrored(task, update, key, *args):
    """On a worker: rebuild ``w`` from the update (once per version), then run the chunk task.
    Returns ``(partial sums, seconds spent rebuilding)``."""
    t0 = time.perf_counter()
    mirror = _MIRRORS.get(_worker_key(key))
    if mirror is None:
        mirror = _MIRRORS[_worker_key(key)] = RowMirror(update.dim)
    w = mirror.apply(update)
    rebuild = time.perf_counter() - t0
    return task(w, *args), rebuild


def _forget_mirror(key, dask_worker=None):
    """On every worker (``Client.run``): drop the mirror of binding ``key``."""
    address = None if dask_worker is None else dask_worker.address
    _MIRRORS.pop((key, address), None)


class _DaskBinding:
    """Chunk tasks scattered to the workers, called with ``w`` or, when the engine says how ``w``
    was made (:mod:`cutplane.executors.mirror`), with the update that lets each worker rebuild it."""

    def __init__(self, executor, futures):
        self._executor, self._futures = executor, futures
        # each task runs where its chunk was scattered, never on a copy: a chunk keeps state
        # between calls (the outputs it caches), which a copy on another worker would fork
        who = executor.client.who_has(futures) if futures else {}
        self._where = [list(who.get(f.key, ())) or None for f in futures]
        placed = [at[0] for at in self._where if at]
        self._one_task_per_worker = len(placed) == len(futures) and len(set(placed)) == len(placed)
        self._key = uuid.uuid4().hex
        self._planner = MirrorPlanner()
        self._mirror = bool(executor.mirror)

    def map(self, w, *args):
        client = self._executor.client
        query = current_query(w) if self._mirror and self._futures else None
        update = None if query is None else self._planner.update_for(query)
        if update is not None and update.nbytes < int(getattr(w, "nbytes", 0)):  # else w is the smaller message
            try:
                return self._map_mirrored(client, update, args)
            except MirrorMismatch as exc:  # a bug, not the user's: say so once, send w from now on
                self._mirror = False
                logger.warning("the Dask workers' rebuild of w failed its check (%s); sending w from now on", exc)
        return self._map_dense(client, w, args)

    def _map_dense(self, client, w, args):
        ex = self._executor
        t0 = time.perf_counter()
        try:
            wf = client.scatter(w, broadcast=True, hash=False)
            futs = [self._submit(client, _apply, f, at, wf, *args) for f, at in zip(self._futures, self._where)]
            out = client.gather(futs)
        except Exception as exc:  # noqa: BLE001 - one clear error type
            raise wrap_error(exc, "dask task") from exc
        sent = int(getattr(w, "nbytes", 0)) * ex.n_workers
        ex.bytes_sent += sent
        ex.dense_calls += 1
        ex.calls.append(DaskCall(False, sent, 0, 0, 0, 0, 0.0, time.perf_counter() - t0))
        del wf, futs
        return out

    def _map_mirrored(self, client, update, args):
        ex = self._executor
        t0 = time.perf_counter()
        try:
            # one task per worker: the update rides along with it (no scatter round trip);
            # else it is scattered once to every worker and the tasks refer to it
            inline = self._one_task_per_worker and update.nbytes <= _INLINE_MAX_BYTES
            uf = update if inline else client.scatter(update, broadcast=True, hash=False)
            futs = [
                self._submit(client, _apply_mirrored, f, at, uf, self._key, *args)
                for f, at in zip(self._futures, self._where)
            ]
            out = client.gather(futs)
        except MirrorMismatch:
            self._planner.commit(update)  # the rows arrived; only the rebuild disagreed
            raise
        except Exception as exc:  # noqa: BLE001 - one clear error type
            raise wrap_error(exc, "dask task") from exc
        self._planner.commit(update)
        sent, rebuild = update.nbytes * ex.n_workers, max(r for _, r in out)
        ex.bytes_sent += sent
        ex.mirrored_calls += 1
        ex.rebuild_seconds += rebuild
        new_nnz = sum(len(idx) for _, idx, _, _ in update.new_rows)
        combined = (len(update.row_ids), self._planner.combined_nnz(update))
        ex.calls.append(
            DaskCall(True, sent, len(update.new_rows), new_nnz, *combined, rebuild, time.perf_counter() - t0)
        )
        del uf, futs
        return [part for part, _ in out]

    @staticmethod
    def _submit(client, fn, chunk, where, *args):
        return client.submit(fn, chunk, *args, pure=False, workers=where, allow_other_workers=where is None)

    def close(self):
        if self._futures and self._planner.held:
            with contextlib.suppress(Exception):  # the cluster may be gone already
                self._executor.client.run(_forget_mirror, self._key)
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
    mirror : bool, optional
        Let the workers rebuild ``w`` from the cuts they were sent when the engine says how ``w``
        was made (:mod:`cutplane.executors.mirror`): each call then sends the new cuts and the
        coefficients instead of ``w``. False: ``w`` itself at every call. Default: True for
        worker processes and a scheduler's workers, False for the threads of an in-process
        cluster (``processes=False``), which are handed ``w`` by reference.

    Attributes
    ----------
    bytes_sent : int
        Bytes of ``w`` or of the mirror updates handed to the cluster for its workers so far (the
        arrays, once per worker; the engine records them per iteration in
        ``History.bytes_sent``). An in-process cluster passes them by reference.
    dense_calls, mirrored_calls : int
        Calls that sent ``w`` itself / an update.
    rebuild_seconds : float
        Seconds the workers spent rebuilding ``w`` (the slowest worker of each call, summed).
    calls : collections.deque of DaskCall
        A record per map of chunk tasks (the last :data:`CALLS_KEPT`).
    """

    def __init__(
        self,
        n_workers: int | None = None,
        *,
        scheduler: str | None = None,
        processes: bool = True,
        timeout: float = 30.0,
        mirror: bool | None = None,
    ):
        dd = import_distributed()
        self.mirror = bool(processes or scheduler is not None) if mirror is None else bool(mirror)
        self.bytes_sent = 0
        self.dense_calls = self.mirrored_calls = 0
        self.rebuild_seconds = 0.0
        self.calls: collections.deque[DaskCall] = collections.deque(maxlen=CALLS_KEPT)
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
