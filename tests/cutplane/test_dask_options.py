"""Issue 24's Dask options: a caller's ``Client`` (left open), a scheduler address or a client (not
both), ``chunks_per_worker`` (checked, and the number of chunks the oracles make), and one clear
error (:func:`cutplane.executors.dask_failure`) when a worker or the scheduler goes away."""

import os
import signal
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

from cutplane.exceptions import InputError
from cutplane.executors import (
    DaskExecutor,
    ExecutorError,
    SerialExecutor,
    ThreadExecutor,
    dask_failure,
    default_n_chunks,
    get_executor,
)
from problems.solvers import SPOM, CuttingPlane, make_executor
from tests.cutplane.test_parallel import assert_same_result, seq_oracle, tagging_data

dd = pytest.importorskip("dask.distributed")

BAD_COUNTS = (0, -1, 1.5, True, "2", np.float64(2.0))
#: Dask's scheduler serves HTTP on port 8787 even without a dashboard; when another process holds
#: the port (a concurrent run's cluster) it warns and takes another port: not what these tests check.
pytestmark = pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")


@pytest.fixture(scope="module")
def client():
    """A client of the caller's: a LocalCluster of 2 worker threads (cheap to start)."""
    cluster = dd.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    c = dd.Client(cluster, set_as_default=False)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def tagging():
    return tagging_data()


# -- client= and scheduler= ------------------------------------------------------------------------
def test_callers_client_stays_open_after_close(client):
    with DaskExecutor(client=client) as ex:
        assert ex.client is client and ex.n_workers == 2 and ex.chunks_per_worker == 1  # one per worker thread
        assert ex.map(abs, [-1, 2, -3]) == [1, 2, 3]
        assert ex.bind([np.sum, np.max]).map(np.arange(4.0)) == [6.0, 3.0]
    assert client.status == "running" and client.submit(abs, -5).result() == 5
    for ex in (get_executor("dask", client=client), get_executor(client)):  # a Client as the executor
        assert isinstance(ex, DaskExecutor) and ex.client is client
        ex.close()
    assert client.status == "running" and client.submit(abs, -6).result() == 6
    ex = DaskExecutor(client=client, n_workers=5)  # the workers the chunks are planned for
    assert ex.n_workers == 5 and default_n_chunks(ex) == 5
    ex.close()


def test_default_chunks_are_one_per_worker_thread():
    """A worker's chunks stay on it: the default gives each of its threads one."""
    with DaskExecutor(2, processes=False, threads_per_worker=3) as ex:
        assert ex.chunks_per_worker == 3 and default_n_chunks(ex) == 6
        cluster = dd.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
        with dd.Client(cluster, set_as_default=False) as two_threads, DaskExecutor(client=two_threads) as ex2:
            assert ex2.chunks_per_worker == 2 and default_n_chunks(ex2) == 2
        cluster.close()
    with DaskExecutor(1, processes=False, threads_per_worker=2, chunks_per_worker=5) as ex:
        assert ex.chunks_per_worker == 5  # given: kept


def test_own_local_cluster_workers_start_without_dasks_malloc_trim_threshold():
    """Dask's MALLOC_TRIM_THRESHOLD_ turns off glibc's adaptive mmap threshold (every large
    temporary of an oracle call is then mapped and faulted in afresh); the executor's own
    LocalCluster leaves it out, keeps Dask's other variables, and leaves Dask's config as it was."""
    import dask

    before = dask.config.get("distributed.nanny.pre-spawn-environ")
    assert "MALLOC_TRIM_THRESHOLD_" in before  # what Dask sets (else this test checks nothing)
    with DaskExecutor(1) as ex:
        env = ex.client.run(lambda: (os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("OMP_NUM_THREADS")))
    assert list(env.values()) == [(None, str(before["OMP_NUM_THREADS"]))]
    assert dask.config.get("distributed.nanny.pre-spawn-environ") == before


def test_own_client_is_closed():
    ex = DaskExecutor(1, processes=False)
    own = ex.client
    assert ex.map(abs, [-2]) == [2]
    ex.close()
    assert own.status == "closed"


def test_scheduler_and_client_together_and_misplaced_clients_are_refused(client):
    with pytest.raises(InputError, match="not both") as info:
        DaskExecutor(scheduler="tcp://127.0.0.1:1", client=client)
    assert info.value.field == "client"
    with pytest.raises(InputError, match="not both"):
        get_executor("dask", scheduler="tcp://127.0.0.1:1", client=client)
    with pytest.raises(InputError, match="dask.distributed.Client") as info:
        DaskExecutor(client="tcp://127.0.0.1:1")
    assert info.value.field == "client"
    for name in ("serial", "threads", "processes", None):
        with pytest.raises(InputError, match="executor='dask'") as info:
            get_executor(name, 2, client=client)
        assert info.value.field == "client"
    with pytest.raises(InputError, match="twice"):
        get_executor(client, client=object())


# -- chunks_per_worker -----------------------------------------------------------------------------
@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_chunks_per_worker_is_checked(client, bad):
    with pytest.raises(InputError, match="chunks_per_worker") as info:
        DaskExecutor(client=client, chunks_per_worker=bad)
    assert info.value.field == "chunks_per_worker"
    with pytest.raises(InputError) as info:
        get_executor("threads", 2, chunks_per_worker=bad)
    assert info.value.field == "chunks_per_worker"
    with pytest.raises(InputError) as info:
        CuttingPlane(executor="threads", chunks_per_worker=bad).checked(eps=0.1, max_iter=10)
    assert info.value.field == "chunks_per_worker"


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_threads_per_worker_is_checked(client, bad):
    with pytest.raises(InputError, match="threads_per_worker") as info:
        DaskExecutor(client=client, threads_per_worker=bad)
    assert info.value.field == "threads_per_worker"


def test_chunks_per_worker_sets_the_oracles_chunk_count(client, tagging):
    assert default_n_chunks(SerialExecutor()) == 1 and default_n_chunks(ThreadExecutor(3)) == 6  # today's
    assert default_n_chunks(ThreadExecutor(3), per_worker=4) == 12  # the parsing oracle's default
    serial = seq_oracle(tagging)
    w = np.random.default_rng(0).standard_normal(serial.dim)
    for k in (1, 3):
        with DaskExecutor(client=client, chunks_per_worker=k) as ex:
            assert default_n_chunks(ex) == default_n_chunks(ex, per_worker=4) == 2 * k
            par = seq_oracle(tagging, ex)
            assert len(par.chunks) == 2 * k
            assert_same_result(par(w), serial(w))
            assert len(seq_oracle(tagging, ex, n_chunks=5).chunks) == 5  # an explicit n_chunks wins
    with DaskExecutor(client=client) as ex:
        assert len(seq_oracle(tagging, ex).chunks) == 2  # default: one per worker thread
    with get_executor("threads", 2, chunks_per_worker=3) as ex:
        assert ex.chunks_per_worker == 3 and len(seq_oracle(tagging, ex).chunks) == 6
    ser = get_executor("serial", chunks_per_worker=2)
    assert len(seq_oracle(tagging, ser).chunks) == 2
    with pytest.raises(InputError, match="executor instance") as info:
        get_executor(ThreadExecutor(2), chunks_per_worker=3)
    assert info.value.field == "chunks_per_worker"


def test_solver_objects_pass_chunks_per_worker_to_the_executor(client):
    opts = CuttingPlane(executor="threads", n_workers=2, chunks_per_worker=3).checked(eps=0.1, max_iter=10)
    ex = make_executor(opts)
    assert isinstance(ex, ThreadExecutor) and default_n_chunks(ex) == 6
    ex.close()
    opts = SPOM(executor=client, chunks_per_worker=4).checked()  # a Client: wrapped, left open
    ex = make_executor(opts)
    assert isinstance(ex, DaskExecutor) and ex.client is client and ex.chunks_per_worker == 4
    ex.close()
    assert client.status == "running"
    with pytest.raises(InputError, match="executor instance") as info:
        CuttingPlane(executor=ThreadExecutor(2), chunks_per_worker=2).checked(eps=0.1, max_iter=10)
    assert info.value.field == "chunks_per_worker"
    assert "chunks_per_worker" in CuttingPlane().get_params() and CuttingPlane().chunks_per_worker is None


# -- the error when the cluster goes away ----------------------------------------------------------
def _lost_worker_errors():
    from distributed.client import FutureCancelledError
    from distributed.scheduler import KilledWorker

    return [
        FutureCancelledError("apply-1234", "lost dependencies"),  # a call after the worker died
        FutureCancelledError("apply-1234", "already forgotten"),  # the worker died during the call
        KilledWorker("apply-1234", SimpleNamespace(address="tcp://127.0.0.1:4000"), 3),
        RuntimeError("Removing worker caused the cluster to lose scattered data, which can't be recovered"),
        OSError("Unable to contact Actor's worker"),  # an actor call to a worker that is gone
        RuntimeError("Worker holding Actor was lost.  Status: cancelled"),  # ... once the scheduler knows
    ]


def _lost_connection_errors():
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    return [
        FutureCancelledError(
            "apply-1234",
            "scheduler-connection-lost",
            "Client lost the connection to the scheduler. Please check your connection and re-run your work.",
        ),
        CommClosedError("in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:1>: Stream is closed"),
        OSError("Timed out trying to connect to tcp://127.0.0.1:8786 after 30 s"),
        TimeoutError(),
    ]


def _assert_advice(err):
    assert isinstance(err, ExecutorError)
    text = str(err)
    assert "\n" not in text
    assert "resume from the last checkpoint on any executor" in text
    assert "--resume" in text and "resume=True" in text
    assert text.endswith(")") and "(dask task: " in text


@pytest.mark.parametrize("i", range(6))
def test_dask_failure_of_a_lost_worker(i):
    exc = _lost_worker_errors()[i]
    err = dask_failure(exc, "dask task")
    _assert_advice(err)
    assert str(err).startswith("a Dask worker was lost mid-run (its chunks of the data went with it)")
    assert type(exc).__name__ in str(err) and "apply-1234" not in str(err).split("(dask task:")[0]


@pytest.mark.parametrize("i", range(4))
def test_dask_failure_of_a_lost_connection(i):
    err = dask_failure(_lost_connection_errors()[i], "dask task")
    _assert_advice(err)
    assert str(err).startswith("the connection to the Dask cluster was lost mid-run")


def test_dask_failure_leaves_other_errors_as_before():
    bad = InputError("bad chunk", field="w")
    assert dask_failure(bad, "dask task") is bad  # the package's own errors pass through
    for exc in (ZeroDivisionError("boom"), OSError(2, "No such file or directory"), ValueError("nan in w")):
        err = dask_failure(exc, "dask task")
        assert isinstance(err, ExecutorError) and str(err).startswith(f"dask task failed: {type(exc).__name__}")
        assert "--resume" not in str(err)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_killed_worker_process_fails_the_next_call_at_once(tagging):
    """A LocalCluster of 2 worker processes: SIGKILL one (its nanny starts a new, empty one); the
    chunks it held are gone, and the next call fails within seconds with the one clear error."""
    serial = seq_oracle(tagging)
    w = np.zeros(serial.dim)
    with DaskExecutor(2, chunks_per_worker=1) as ex:
        par = seq_oracle(tagging, ex)
        assert_same_result(par(w), serial(w))
        pids = sorted(ex.client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids
        os.kill(pids[0], signal.SIGKILL)
        time.sleep(1.0)  # the scheduler notices within milliseconds (a call in that window: see the CHANGELOG)
        t0 = time.monotonic()
        with pytest.raises(ExecutorError, match="Dask worker was lost") as info:
            par(w)
        assert time.monotonic() - t0 < 5
        _assert_advice(info.value)
        with pytest.raises(ExecutorError, match="Dask worker was lost"):  # and again: the data stays lost
            par(w)
