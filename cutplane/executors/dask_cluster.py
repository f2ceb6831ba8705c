"""The ``dask`` executor: oracle chunks scattered once to a ``dask.distributed`` cluster.

A ``LocalCluster`` of ``n_workers`` when neither a scheduler address nor a client is given.
Per call, ``w`` is broadcast to tasks, or, when the engine says that ``w`` is a combination of
its cuts, only the new cuts and the coefficients go to one actor per worker (straight from the
client, without the scheduler's round trip of a task), which rebuilds ``w`` bit for bit
(:mod:`cutplane.executors.mirror`) and runs the chunk tasks there on the worker's threads; the
partial sums come back. Registered in :data:`cutplane.executors.EXECUTORS`; dask is imported
only when this executor is created.

A worker that dies mid-run takes its scattered chunks with it: they cannot be recomputed, so
the call fails at once with one :class:`ExecutorError` (:func:`dask_failure`) that says so and
how to go on (resume from the checkpoint, on any executor).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import queue
import re
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from ..exceptions import CutplaneError, InputError
from .base import (
    BoundTasks,
    ClosingContext,
    ExecutorError,
    check_chunks_per_worker,
    check_count,
    check_workers,
    wrap_error,
)
from .mirror import MirrorMismatch, MirrorPlanner, RowMirror, current_query

logger = logging.getLogger(__name__)

__all__ = ["DaskExecutor", "DaskCall", "import_distributed", "dask_failure", "check_chunks_alive", "RESUME_ADVICE"]

#: What to do after the cluster went away mid-run: the last checkpoint holds the state, and
#: any executor can continue from it.
RESUME_ADVICE = (
    "resume from the last checkpoint on any executor: the same command with --resume (e.g. with "
    "--executor serial, or on a new Dask cluster), or resume=True with the same checkpoint in Python; "
    "without a checkpoint the run has to start again"
)

# Exception classes (by name, so that dask need not be imported to recognise them) of a worker
# that died with its data: futures cancelled by the scheduler, a task whose workers all died.
_WORKER_LOST = ("FutureCancelledError", "CancelledError", "KilledWorker")
# ... of a lost connection to the scheduler or a worker.
_COMM_LOST = ("CommClosedError", "StreamClosedError", "TimeoutError")
# Messages of dask's comms and scheduler that mean the same (an OSError of a task's own, e.g. a
# missing file, does not match).
_LOST_MESSAGES = re.compile(
    r"lost dependencies|scattered data|already forgotten|worker.{0,20}(died|lost|removed)|"
    r"timed out trying to connect|stream is closed|connection (lost|closed|refused|reset)|"
    r"scheduler.{0,20}(lost|closed|unreachable)",
    re.IGNORECASE,
)
# ... of an actor call to a worker that is gone (an OSError, or a RuntimeError once the
# scheduler knows): the worker, not only a connection, was lost.
_ACTOR_LOST = re.compile(r"contact actor's worker|worker holding actor was lost", re.IGNORECASE)


def _class_names(exc) -> set:
    return {cls.__name__ for cls in type(exc).__mro__}


def _detail(exc) -> str:
    """``Type: reason`` of ``exc`` on one line (a cancelled future's reason, not its key)."""
    reason = getattr(exc, "reason", None)
    text = reason if isinstance(reason, str) and reason else str(exc)
    text = " ".join(text.split())
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def dask_failure(exc: BaseException, where: str) -> CutplaneError:
    """The package's error for an exception raised by a Dask call.

    A worker lost with its data (a cancelled future: ``distributed.client.FutureCancelledError``,
    reasons such as "lost dependencies" or "already forgotten"; ``KilledWorker``; a message about
    lost or scattered data; an actor call that could not reach its worker) or a lost connection
    (a future cancelled for "scheduler-connection-lost", ``CommClosedError``, ``TimeoutError``,
    an ``OSError`` of dask's comms) becomes ONE :class:`ExecutorError` whose message says what
    happened in user terms and what to do (:data:`RESUME_ADVICE`), on one line.

    Parameters
    ----------
    exc : BaseException
        What the Dask call raised.
    where : str
        The call, named at the end of the message (``"dask task"``).

    Returns
    -------
    CutplaneError
        The :class:`ExecutorError` above; ``exc`` itself when it already is one of the package's
        errors (a task's :class:`~cutplane.exceptions.InputError` stays one); for any other
        exception an :class:`ExecutorError` naming ``where`` and the exception
        (:func:`cutplane.executors.base.wrap_error`).
    """
    if isinstance(exc, CutplaneError):
        return exc
    names = _class_names(exc)
    message = " ".join(str(exc).split())
    scheduler_lost = "scheduler" in str(getattr(exc, "reason", "")).lower()  # "scheduler-connection-lost"
    if not scheduler_lost and (
        names.intersection(_WORKER_LOST)
        or _ACTOR_LOST.search(message)
        or (not isinstance(exc, OSError) and _LOST_MESSAGES.search(message))
    ):
        what = "a Dask worker was lost mid-run (its chunks of the data went with it)"
    elif (
        scheduler_lost
        or names.intersection(_COMM_LOST)
        or (isinstance(exc, OSError) and _LOST_MESSAGES.search(message))
    ):
        what = (
            "the connection to the Dask cluster was lost mid-run (its scheduler or a worker went away, "
            "with the chunks of the data it held)"
        )
    else:
        return wrap_error(exc, where)
    return ExecutorError(f"{what}; {RESUME_ADVICE} ({where}: {_detail(exc)})")


def import_distributed():
    """``dask.distributed``, or an :class:`ExecutorError` saying how to install it."""
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
    new_rows, new_nnz, new_bytes : int
        Cuts the update carried, their stored nonzeros, and the bytes of their packed parts
        sent to the workers, summed over the workers (each gets the entries its tasks read:
        :class:`cutplane.executors.mirror.PackedRow`; 0 when ``w`` was sent).
    combined_rows, combined_nnz : int
        Cuts with a nonzero coefficient the workers combined, and their stored nonzeros.
    rebuild_s : float
        Seconds the slowest worker spent rebuilding ``w``.
    seconds : float
        Wall seconds of the whole map (sending, the tasks, gathering the partial sums).
    compute_s : float
        Seconds the slowest worker spent in its chunk tasks (after the rebuild; 0 when ``w`` was
        sent). ``seconds - rebuild_s - compute_s`` is about what the trip to the workers and
        back cost.
    """

    mirrored: bool
    bytes_sent: int
    new_rows: int
    new_nnz: int
    new_bytes: int
    combined_rows: int
    combined_nnz: int
    rebuild_s: float
    seconds: float
    compute_s: float = 0.0


#: Calls kept in :attr:`DaskExecutor.calls` (the most recent).
CALLS_KEPT = 100_000


def _apply(task, w, *args):
    return task(w, *args)


def _coordinates(task):
    """The task's ``coordinates()`` (:class:`cutplane.executors.ChunkTask`), or None (all)."""
    get = getattr(task, "coordinates", None)
    coords = get() if callable(get) else None
    return None if coords is None else np.asarray(coords, dtype=np.int64)


_WATCH_S = 0.5  # seconds between checks of the cluster while a call's tasks run


class _ChunkHost:
    """A Dask actor on one worker: the chunk tasks scattered there (the same objects, not
    copies) and the :class:`RowMirror` of ``w``, which the worker's threads share.

    A call (:meth:`run`) goes from the client to this worker and back directly, without the
    scheduler's round trip of a task; the update arrives with it. The tasks run on as many
    threads as the worker has (its ``nthreads``).
    """

    def __init__(self, *tasks):
        from distributed import get_worker

        self.tasks = tasks
        self.n_threads = max(1, min(len(tasks), int(get_worker().state.nthreads)))
        self.mirror: RowMirror | None = None
        threads = self.n_threads > 1
        self._pool = ThreadPoolExecutor(self.n_threads, thread_name_prefix="cutplane-chunks") if threads else None

    def run(self, update, *args):
        """Rebuild ``w`` from ``update``, then run every chunk task here on it.
        Returns ``(list of partial sums in task order, seconds spent rebuilding, seconds in the
        tasks)``."""
        t0 = time.perf_counter()
        if self.mirror is None:
            self.mirror = RowMirror(update.dim, self.n_threads)
        w = self.mirror.apply(update)
        t1 = time.perf_counter()
        if self._pool is None:
            parts = [task(w, *args) for task in self.tasks]
        else:
            parts = list(self._pool.map(lambda task: task(w, *args), self.tasks))
        return parts, t1 - t0, time.perf_counter() - t1


class _DaskBinding:
    """Chunk tasks scattered to the workers, called with ``w`` or, when the engine says how ``w``
    was made (:mod:`cutplane.executors.mirror`), with the update that lets each worker rebuild it
    (through one :class:`_ChunkHost` actor per worker)."""

    def __init__(self, executor, futures, coordinates=None):
        self._executor, self._futures = executor, futures
        # each task runs where its chunk was scattered, never on a copy: a chunk keeps state
        # between calls (the outputs it caches), which a copy on another worker would fork
        who = executor.client.who_has(futures) if futures else {}
        self._where = [list(who.get(f.key, ())) or None for f in futures]
        placed = [at[0] for at in self._where if at]
        # every task's worker, when every task has one (the mirror needs them: else w is sent)
        self._addresses: list[str] = placed if len(placed) == len(futures) else []
        self._planner = MirrorPlanner()
        self._mirror = bool(executor.mirror) and bool(self._addresses)
        # per worker, the coordinates of w its tasks read (None: all); a mask once dim is known
        self._reads: dict = {}
        for at, coords in zip(self._where, coordinates or [None] * len(futures)):
            if at is None:
                continue
            prev = self._reads.get(at[0], ())
            self._reads[at[0]] = None if coords is None or prev is None else (*prev, coords)
        self._masks: dict = {}
        # per worker, the positions of its tasks, and its actor (made at the first mirrored call)
        self._positions: dict[str, list[int]] = {}
        for j, address in enumerate(self._addresses):
            self._positions.setdefault(address, []).append(j)
        self._hosts: dict = {}
        self._host_futures: list = []
        self._update_pool: ThreadPoolExecutor | None = None

    def map(self, w, *args):
        client = self._executor.client
        query = current_query(w) if self._mirror and self._futures else None
        plan = None if query is None else self._planner.plan(query)
        if plan is not None:
            updates = self._updates(plan)
            dense = int(getattr(w, "nbytes", 0)) * len(updates)
            if not updates or sum(u.nbytes for u in updates.values()) >= dense:  # w is the smaller message
                plan = None
        if plan is not None:
            try:
                return self._map_mirrored(client, plan, updates, args)
            except MirrorMismatch as exc:  # a bug, not the user's: say so once, send w from now on
                self._mirror = False
                logger.warning("the Dask workers' rebuild of w failed its check (%s); sending w from now on", exc)
        return self._map_dense(client, w, args)

    def _map_dense(self, client, w, args):
        ex = self._executor
        t0 = time.perf_counter()
        self._check_workers(client)  # a broadcast to a worker that died waits for the connect timeout
        try:
            wf = client.scatter(w, broadcast=True, hash=False, timeout=self._executor.timeout)
            futs = [self._submit(client, _apply, f, at, wf, *args) for f, at in zip(self._futures, self._where)]
            out = self._gather(client, futs)
        except Exception as exc:  # noqa: BLE001 - one clear error type
            raise dask_failure(exc, "dask task") from exc
        sent = int(getattr(w, "nbytes", 0)) * ex.n_workers
        ex.bytes_sent += sent
        ex.dense_calls += 1
        ex.calls.append(DaskCall(False, sent, 0, 0, 0, 0, 0, 0.0, time.perf_counter() - t0))
        del wf, futs
        return out

    def _map_mirrored(self, client, plan, updates, args):
        ex = self._executor
        t0 = time.perf_counter()
        check_chunks_alive(self._futures)  # a call after the scheduler saw a worker die fails at once
        try:
            hosts = self._actors(client)
            # each worker's actor gets its update with the call, straight from this client (an
            # actor call is no task graph: dask's "large graph" warning does not arise)
            calls = {at: hosts[at].run(updates[at], *args) for at in self._workers()}
            done = self._gather_actors(client, calls)
        except MirrorMismatch:
            self._planner.commit(plan)  # the rows arrived; only the rebuild disagreed
            raise
        except Exception as exc:  # noqa: BLE001 - one clear error type
            raise dask_failure(exc, "dask task") from exc
        self._planner.commit(plan)
        out: list = [None] * len(self._futures)
        for at, (parts, _, _) in done.items():
            for j, part in zip(self._positions[at], parts):
                out[j] = part
        sent = sum(u.nbytes for u in updates.values())
        rebuild, compute = max(r for _, r, _ in done.values()), max(c for _, _, c in done.values())
        ex.bytes_sent += sent
        ex.mirrored_calls += 1
        ex.rebuild_seconds += rebuild
        packed = sum(r.nbytes for u in updates.values() for _, r in u.new_rows)
        new = (len(plan.new_rows), sum(len(idx) for _, idx, _, _ in plan.new_rows), packed)
        combined = (len(plan.row_ids), self._planner.combined_nnz(plan))
        ex.calls.append(DaskCall(True, sent, *new, *combined, rebuild, time.perf_counter() - t0, compute))
        return out

    def _updates(self, plan):
        """Worker address -> its update of ``plan``, made on threads (the workers wait for them:
        the client's cores are free)."""
        workers = self._workers()

        def update(at):
            return self._planner.update(plan, self._support(at, plan))

        if len(workers) < 2 or (os.cpu_count() or 1) < 2:
            return {at: update(at) for at in workers}
        if self._update_pool is None:
            self._update_pool = ThreadPoolExecutor(min(len(workers), os.cpu_count() or 1), "cutplane-updates")
        return dict(zip(workers, self._update_pool.map(update, workers)))

    def _actors(self, client):
        """Worker address -> the :class:`_ChunkHost` actor holding that worker's chunk tasks
        (made once, on the worker, from the scattered chunks there)."""
        if not self._hosts:
            futs = {
                at: client.submit(
                    _ChunkHost,
                    *[self._futures[j] for j in self._positions[at]],
                    workers=[at],
                    allow_other_workers=False,
                    actor=True,
                    pure=False,
                )
                for at in self._workers()
            }
            self._host_futures = list(futs.values())
            with client.as_current():  # the actor handles bind to the client current at their making
                self._hosts = {at: f.result(timeout=self._executor.timeout) for at, f in futs.items()}
        return self._hosts

    def _gather_actors(self, client, calls):
        """The actors' results (worker address -> result), watching the cluster meanwhile: every
        :data:`_WATCH_S` seconds without an answer, the chunks and their workers are checked."""
        out = {}
        for at, call in calls.items():
            while True:
                try:
                    out[at] = call.result(timeout=_WATCH_S)
                    break
                except TimeoutError:
                    if call.done():  # it finished as the wait timed out: its result, or its own error
                        out[at] = call.result()
                        break
                    self._check_workers(client)
        return out

    def _workers(self):
        """The addresses of the workers that hold chunks."""
        return sorted(self._positions)

    def _support(self, at, plan):
        """The coordinates worker ``at`` reads, as a boolean mask of shape (dim,), or None (all)."""
        reads = self._reads.get(at)
        if reads is None:
            return None
        if at not in self._masks:
            mask = np.zeros(int(plan.query.w.shape[0]), dtype=bool)
            for coords in reads:
                mask[coords] = True
            self._masks[at] = mask
        return self._masks[at]

    def _gather(self, client, futs):
        """The tasks' results in task order, each fetched as soon as its task is done (while the
        others still run), watching the cluster meanwhile: a task is pinned to its chunk's
        worker, so if that worker dies the scheduler would wait for it for ever (no other worker
        may run the task); every :data:`_WATCH_S` seconds without news the chunks and their
        workers are checked, and a loss raises the lost-worker error."""
        finished: queue.SimpleQueue = queue.SimpleQueue()
        for j, f in enumerate(futs):
            f.add_done_callback(lambda _f, j=j: finished.put(j))
        out: list = [None] * len(futs)
        for _ in futs:
            while True:
                try:
                    j = finished.get(timeout=_WATCH_S)
                    break
                except queue.Empty:
                    self._check_workers(client)
            out[j] = client.gather(futs[j])  # raises the task's own error, if it failed
        return out

    def _check_workers(self, client):
        """The lost-worker error if a chunk's future was cancelled or its worker left the cluster."""
        check_chunks_alive(self._futures)
        gone = {at[0] for at in self._where if at} - set(client.nthreads())
        if gone:
            raise ExecutorError(
                f"a Dask worker was lost mid-run (its chunks of the data went with it); "
                f"{RESUME_ADVICE} (dask task: worker {sorted(gone)[0]} left the cluster)"
            )

    @staticmethod
    def _submit(client, fn, chunk, where, *args):
        return client.submit(fn, chunk, *args, pure=False, workers=where, allow_other_workers=where is None)

    def close(self):
        self._hosts, self._host_futures = {}, []  # the actors (and their rows) go with their futures
        self._futures = []
        if self._update_pool is not None:
            self._update_pool.shutdown(wait=False)
            self._update_pool = None


def check_chunks_alive(futures) -> None:
    """Raise the :func:`dask_failure` error of a lost worker when a scattered chunk's future is no
    longer held by the cluster (its worker died: the scheduler cancels it within milliseconds).

    Checked before each call: a call that starts after the scheduler has noticed fails at once,
    instead of first shipping ``w`` to a worker that is gone.
    """
    for f in futures:
        status = getattr(f, "status", "finished")
        if status != "finished":
            raise ExecutorError(
                "a Dask worker was lost mid-run (its chunks of the data went with it); "
                f"{RESUME_ADVICE} (dask task: a scattered chunk is {status})"
            )


class DaskExecutor(ClosingContext):
    """Oracle chunks on a Dask cluster.

    Parameters
    ----------
    n_workers : int, optional
        Workers of the ``LocalCluster`` started when neither ``scheduler`` nor ``client`` is
        given (default: cores). With a scheduler or a client, the number of workers the chunks
        are planned for (default: the workers connected at creation).
    scheduler : str, optional
        Address of a running scheduler (``tcp://host:8786``); the cluster is then not ours to
        close, only the client we connect is.
    client : dask.distributed.Client, optional
        An existing client (of any cluster); it stays the caller's: :meth:`close` leaves it
        open. Not together with ``scheduler``.
    processes : bool, default=True
        Worker processes (True) or threads of this process (False) in the ``LocalCluster``.
    threads_per_worker : int, default=1
        Threads of each worker of the ``LocalCluster``. A worker runs its chunk tasks on its
        threads, which share one rebuilt ``w``; give ``chunks_per_worker`` at least as large.
        (The workers of a scheduler or a client have the threads they were started with.)
    timeout : float, default=30
        Seconds to wait for the scheduler, and for a broadcast of ``w`` (or of a mirror update)
        to reach every worker.
    chunks_per_worker : int, optional
        Chunks of an oracle's examples per worker: an oracle built on this executor without
        its own ``n_chunks`` splits its data into ``chunks_per_worker * n_workers`` chunks
        (:func:`cutplane.executors.default_n_chunks`). Default: one per thread of a worker
        (``threads_per_worker`` for a ``LocalCluster``; the most threads of a connected worker
        otherwise). A chunk stays on its worker (it keeps state between calls), so more chunks
        than threads do not balance the workers; they add partial sums to send back and merge.
    mirror : bool, optional
        Let the workers rebuild ``w`` from the cuts they were sent when the engine says how ``w``
        was made (:mod:`cutplane.executors.mirror`): each call then sends the new cuts and the
        coefficients instead of ``w``. False: ``w`` itself at every call. Default: True for
        worker processes and the workers of a scheduler or a client, False for the threads of an in-process
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

    Raises
    ------
    InputError
        ``scheduler`` and ``client`` together, a ``client`` that is not a
        ``dask.distributed.Client``, a bad ``n_workers`` or ``chunks_per_worker``.
    ExecutorError
        dask is not installed, or the cluster could not be started or reached.

    Notes
    -----
    The chunks are scattered once to the workers (``bind``); a worker that dies takes its
    chunks with it. The call then fails at once with one :class:`ExecutorError`
    (:func:`dask_failure`); the engine's checkpoint of the last boundary is unaffected, so the
    run resumes from it on any executor (``resume=True``, ``cutplane train ... --resume``).

    Examples
    --------
    A client of the caller's, kept open after the executor is closed::

        from dask.distributed import Client
        client = Client("tcp://scheduler:8786")
        with DaskExecutor(client=client, chunks_per_worker=4) as ex:
            oracle = SequenceHingeOracle(..., executor=ex)
            ...
        client.submit(...)  # still usable
    """

    def __init__(
        self,
        n_workers: int | None = None,
        *,
        scheduler: str | None = None,
        client=None,
        processes: bool = True,
        threads_per_worker: int = 1,
        timeout: float = 30.0,
        chunks_per_worker: int | None = None,
        mirror: bool | None = None,
    ):
        if scheduler is not None and client is not None:
            raise InputError(
                "give a scheduler address or a client, not both (the client already knows its scheduler)",
                field="client",
            )
        self.chunks_per_worker = None if chunks_per_worker is None else check_chunks_per_worker(chunks_per_worker)
        self.threads_per_worker = check_count(threads_per_worker, "threads_per_worker")
        self.timeout = float(timeout)
        if n_workers is not None:
            n_workers = check_workers(n_workers)
        dd = import_distributed()
        if client is not None and not isinstance(client, dd.Client):
            raise InputError(f"client must be a dask.distributed.Client, got {type(client).__name__}", field="client")
        self.mirror = bool(processes or scheduler is not None or client is not None) if mirror is None else bool(mirror)
        self.bytes_sent = 0
        self.dense_calls = self.mirrored_calls = 0
        self.rebuild_seconds = 0.0
        self.calls: collections.deque[DaskCall] = collections.deque(maxlen=CALLS_KEPT)
        self._cluster = None
        self._owns_client = client is None
        try:
            if client is not None:
                self.client = client
            elif scheduler is not None:
                self.client = dd.Client(scheduler, timeout=timeout, set_as_default=False)
            else:
                n_workers = check_workers(n_workers)
                with _worker_environ():
                    self._cluster = dd.LocalCluster(
                        n_workers=n_workers,
                        threads_per_worker=self.threads_per_worker,
                        processes=bool(processes),
                        dashboard_address=None,
                    )
                self.client = dd.Client(self._cluster, set_as_default=False)
            self.n_workers = (
                n_workers if n_workers is not None else max(1, len(self.client.scheduler_info().get("workers", {})))
            )
            if self.chunks_per_worker is None:  # one chunk per thread of a worker
                threads = (
                    self.threads_per_worker
                    if self._cluster is not None
                    else max(self.client.nthreads().values(), default=1)
                )
                self.chunks_per_worker = max(1, int(threads))
        except CutplaneError:
            raise
        except Exception as exc:  # noqa: BLE001
            if self._cluster is not None:
                self._cluster.close()
            where = (
                "the client's scheduler"
                if client is not None
                else f"scheduler {scheduler!r}"
                if scheduler
                else "local Dask cluster"
            )
            raise ExecutorError(f"could not connect to {where}: {type(exc).__name__}: {exc}") from exc
        self._finalizer = weakref.finalize(self, _close_dask, self.client if self._owns_client else None, self._cluster)

    def map(self, fn, items):
        try:
            return self.client.gather(self.client.map(fn, list(items), pure=False))
        except Exception as exc:  # noqa: BLE001
            raise dask_failure(exc, "dask task") from exc

    def bind(self, tasks) -> BoundTasks:
        tasks = list(tasks)
        coordinates = [_coordinates(t) for t in tasks] if self.mirror else None
        try:
            futures = self.client.scatter(tasks, broadcast=False, hash=False) if tasks else []
        except Exception as exc:  # noqa: BLE001
            raise dask_failure(exc, "dask scatter of the chunks") from exc
        return _DaskBinding(self, futures, coordinates)

    def close(self):
        """Close the client and the ``LocalCluster`` this executor started; a client passed as
        ``client=`` (the caller's) and a cluster reached by its address stay up."""
        self._finalizer()


#: Variables of Dask's ``distributed.nanny.pre-spawn-environ`` left out of the environment of
#: the workers of a ``LocalCluster`` this executor starts. Dask sets ``MALLOC_TRIM_THRESHOLD_``
#: (64 KiB) to hand freed memory back to the system at once; setting it also turns off glibc's
#: adaptive mmap threshold, so every large temporary array of an oracle call is mapped afresh
#: and its pages faulted in again, at every call. Without it the oracle's own seconds on a
#: worker come close to the same work in this process (docs/results/dask_scaling.md).
WORKER_ENV_DROPPED = ("MALLOC_TRIM_THRESHOLD_",)


@contextlib.contextmanager
def _worker_environ():
    """Dask's config for the nannies started in the block, without :data:`WORKER_ENV_DROPPED`."""
    import dask

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    kept = {k: v for k, v in environ.items() if k not in WORKER_ENV_DROPPED}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": kept}):
        yield


def _close_dask(client, cluster):
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()
