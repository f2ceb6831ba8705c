"""The ``dask`` executor: oracle chunks scattered once to a ``dask.distributed`` cluster.

A ``LocalCluster`` of ``n_workers`` when neither a scheduler address nor a client is given;
only ``w`` is broadcast per call and the partial sums gathered. Registered in
:data:`cutplane.executors.EXECUTORS`; dask is imported only when this executor is created.

A worker that dies mid-run takes its scattered chunks with it: they cannot be recomputed, so
the call fails at once with one :class:`ExecutorError` (:func:`dask_failure`) that says so and
how to go on (resume from the checkpoint, on any executor).
"""

from __future__ import annotations

import re
import weakref

from ..exceptions import CutplaneError, InputError
from .base import BoundTasks, ClosingContext, ExecutorError, check_chunks_per_worker, check_workers, wrap_error

__all__ = ["DaskExecutor", "import_distributed", "dask_failure", "check_chunks_alive", "RESUME_ADVICE"]

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
    lost or scattered data) or a lost connection (a future cancelled for
    "scheduler-connection-lost", ``CommClosedError``, ``TimeoutError``, an ``OSError`` of dask's
    comms) becomes ONE :class:`ExecutorError` whose message says what
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
        names.intersection(_WORKER_LOST) or (not isinstance(exc, OSError) and _LOST_MESSAGES.search(message))
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


def _apply(task, w, *args):
    return task(w, *args)


class _DaskBinding:
    def __init__(self, executor, futures):
        self._executor, self._futures = executor, futures

    def map(self, w, *args):
        client = self._executor.client
        check_chunks_alive(self._futures)
        try:
            wf = client.scatter(w, broadcast=True, hash=False)
            futs = [client.submit(_apply, f, wf, *args, pure=False) for f in self._futures]
            out = client.gather(futs)
        except Exception as exc:  # noqa: BLE001 - one clear error type
            raise dask_failure(exc, "dask task") from exc
        del wf, futs
        return out

    def close(self):
        self._futures = []


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
    timeout : float, default=30
        Seconds to wait for the scheduler.
    chunks_per_worker : int, default=2
        Chunks of an oracle's examples per worker: an oracle built on this executor without
        its own ``n_chunks`` splits its data into ``chunks_per_worker * n_workers`` chunks
        (:func:`cutplane.executors.default_n_chunks`). More chunks balance uneven workers
        better; fewer send fewer tasks per call.

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
        timeout: float = 30.0,
        chunks_per_worker: int = 2,
    ):
        if scheduler is not None and client is not None:
            raise InputError(
                "give a scheduler address or a client, not both (the client already knows its scheduler)",
                field="client",
            )
        self.chunks_per_worker = check_chunks_per_worker(chunks_per_worker)
        if n_workers is not None:
            n_workers = check_workers(n_workers)
        dd = import_distributed()
        if client is not None and not isinstance(client, dd.Client):
            raise InputError(f"client must be a dask.distributed.Client, got {type(client).__name__}", field="client")
        self._cluster = None
        self._owns_client = client is None
        try:
            if client is not None:
                self.client = client
            elif scheduler is not None:
                self.client = dd.Client(scheduler, timeout=timeout, set_as_default=False)
            else:
                n_workers = check_workers(n_workers)
                self._cluster = dd.LocalCluster(
                    n_workers=n_workers, threads_per_worker=1, processes=bool(processes), dashboard_address=None
                )
                self.client = dd.Client(self._cluster, set_as_default=False)
            self.n_workers = (
                n_workers if n_workers is not None else max(1, len(self.client.scheduler_info().get("workers", {})))
            )
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
        try:
            futures = self.client.scatter(tasks, broadcast=False, hash=False) if tasks else []
        except Exception as exc:  # noqa: BLE001
            raise dask_failure(exc, "dask scatter of the chunks") from exc
        return _DaskBinding(self, futures)

    def close(self):
        """Close the client and the ``LocalCluster`` this executor started; a client passed as
        ``client=`` (the caller's) and a cluster reached by its address stay up."""
        self._finalizer()


def _close_dask(client, cluster):
    if client is not None:
        client.close()
    if cluster is not None:
        cluster.close()
