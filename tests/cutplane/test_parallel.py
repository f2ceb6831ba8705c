"""Executors: threads, processes and Dask give the serial cuts and the serial optimum.

The sequence and parsing cuts are sums of integer counts, so they must agree with the serial
oracle exactly (allclose is asked only to allow for the summation order); the argmax outputs
and ``cutplane.minimize``'s final objective must match too.
"""

import os
import pickle
import signal
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.cuts import slope_to_dense
from cutplane.exceptions import ConvergenceWarning, CutplaneError, InputError
from cutplane.executors import (
    EXECUTORS,
    ExecutorError,
    ProcessExecutor,
    SerialExecutor,
    ThreadExecutor,
    available_executors,
    bind_tasks,
    get_executor,
)
from cutplane.regularizers import L2
from oracles.parse_oracle import ArcFeatures, ParseOracle
from oracles.sequence import SequenceHingeOracle


# -- small generated tasks -------------------------------------------------------------------------
def tagging_data(seed=0, n_train=120):
    from problems.sequence.feature_index import FeatureIndex, LabelAlphabet
    from problems.synthetic import make_tagging_task

    task = make_tagging_task(n_train=n_train, n_test=1, seed=seed)
    fi = FeatureIndex(task.templates)
    X = fi.fit_transform(task.X_train)
    labels = LabelAlphabet.fit(task.y_train)
    return dict(
        indptr=X.indptr,
        indices=X.indices,
        sentence_ptr=X.sentence_ptr,
        labels=labels.encode_corpus(task.y_train),
        n_features=X.n_features,
        n_labels=len(labels),
        transitions=fi.has_transitions,
    )


def seq_oracle(data, executor=None, n_chunks=None):
    d = dict(data)
    return SequenceHingeOracle(
        d.pop("indptr"),
        d.pop("indices"),
        d.pop("sentence_ptr"),
        d.pop("labels"),
        d.pop("n_features"),
        d.pop("n_labels"),
        executor=executor,
        n_chunks=n_chunks,
        **d,
    )


def parse_data(seed=0, n_sent=30, max_words=6, dim=40, per_arc=4):
    """Random binary arc features and random gold trees (each word's head drawn among earlier nodes)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, max_words + 1, size=n_sent)
    rows = []
    for n in lengths:
        for h in range(n + 1):
            for m in range(n + 1):
                k = 0 if (m == 0 or h == m) else rng.integers(0, per_arc + 1)
                rows.append(np.sort(rng.choice(dim, size=k, replace=False)).astype(np.int32))
    feats = ArcFeatures(
        lengths,
        np.concatenate(([0], np.cumsum((lengths + 1) ** 2))),
        np.concatenate(([0], np.cumsum([r.size for r in rows]))),
        np.concatenate(rows),
        dim,
    )
    heads = [np.concatenate(([-1], [rng.integers(0, m) for m in range(1, n + 1)])) for n in lengths]
    return feats, heads


@pytest.fixture(scope="module")
def tagging():
    return tagging_data()


@pytest.fixture(scope="module")
def parsing():
    return parse_data()


@pytest.fixture(scope="module", params=["threads", "processes", "dask-threads"])
def executor(request):
    if request.param == "dask-threads":
        pytest.importorskip("dask.distributed")
        from cutplane.executors import DaskExecutor

        ex = DaskExecutor(2, processes=False)
    else:
        ex = get_executor(request.param, 2)
    with ex:
        yield ex


def assert_same_result(res, ref):
    assert np.allclose(slope_to_dense(res.cut.slope), slope_to_dense(ref.cut.slope), rtol=1e-12, atol=1e-15)
    assert np.isclose(res.cut.offset, ref.cut.offset, rtol=1e-12)
    assert np.isclose(res.value, ref.value, rtol=1e-12)


def weights(dim, seed):
    rng = np.random.default_rng(seed)
    return [np.zeros(dim), rng.standard_normal(dim), 0.1 * rng.standard_normal(dim)]


# -- the acceptance: same cuts, same optimum ---------------------------------------------------------
def test_sequence_oracle_same_cuts_as_serial(executor, tagging):
    serial = seq_oracle(tagging)
    par = seq_oracle(tagging, executor, n_chunks=5)
    assert len(par.tasks) == 5
    for w in weights(serial.dim, 1):
        res, ref = par(w), serial(w)
        assert_same_result(res, ref)
        assert np.array_equal(res.argmax, ref.argmax)
        assert np.array_equal(par.decode(w), serial.decode(w))


def test_parse_oracle_same_cuts_as_serial(executor, parsing):
    feats, heads = parsing
    for projective in (False, True):
        serial = ParseOracle(feats, heads, projective=projective)
        par = ParseOracle(feats, heads, projective=projective, executor=executor, n_chunks=7)
        for w in weights(feats.dim, 2):
            res, ref = par(w), serial(w)
            assert_same_result(res, ref)
            assert all(np.array_equal(a, b) for a, b in zip(res.argmax, ref.argmax))
        assert all(np.array_equal(a, b) for a, b in zip(par.predict(w), serial.predict(w)))


def test_minimize_same_objective_as_serial(executor, tagging, parsing):
    for make in (
        lambda ex: seq_oracle(tagging, ex, n_chunks=3),
        lambda ex: ParseOracle(*parsing, executor=ex, n_chunks=3),
    ):
        ref = minimize(make(None), L2(), 0.1, eps=1e-3, max_iter=200)
        res = minimize(make(executor), L2(), 0.1, eps=1e-3, max_iter=200)
        assert ref.status == "converged" and res.status == "converged"
        assert res.n_iter == ref.n_iter
        assert np.isclose(res.objective, ref.objective, rtol=1e-9)
        assert np.allclose(res.w, ref.w, rtol=1e-7, atol=1e-9)


# Dask's scheduler serves HTTP on port 8787 even without a dashboard; another process holding it
# (a concurrent run's cluster) makes it warn and take another port: not what this test checks
@pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")
def test_dask_worker_processes_same_cuts_and_objective(tagging, parsing):
    """A LocalCluster of 2 real worker processes (chunks scattered once, w broadcast per call)."""
    pytest.importorskip("dask.distributed")
    with get_executor("dask", 2) as ex:
        assert ex.n_workers == 2
        seq_ser, seq_par = seq_oracle(tagging), seq_oracle(tagging, ex, n_chunks=4)
        feats, heads = parsing
        par_ser, par_par = ParseOracle(feats, heads), ParseOracle(feats, heads, executor=ex, n_chunks=4)
        for serial, par in ((seq_ser, seq_par), (par_ser, par_par)):
            w = np.random.default_rng(3).standard_normal(serial.dim)
            assert_same_result(par(w), serial(w))
        # ~0.1 s per call on a loaded machine: a short run, the same iterates as serial
        with pytest.warns(ConvergenceWarning):
            ref = minimize(seq_ser, L2(), 0.1, eps=1e-3, max_iter=15)
        with pytest.warns(ConvergenceWarning):
            res = minimize(seq_par, L2(), 0.1, eps=1e-3, max_iter=15)
        assert res.n_iter == ref.n_iter == 15
        assert np.isclose(res.objective, ref.objective, rtol=1e-9)
        assert np.isclose(res.lower_bound, ref.lower_bound, rtol=1e-9)
        assert ex.map(abs, [-1, 2, -3]) == [1, 2, 3]


# -- chunk tasks pickle only their chunk, and give the same partial sums ---------------------------
@settings(max_examples=25)
@given(seed=st.integers(0, 2**16), n_chunks=st.integers(1, 9))
def test_pickled_chunk_tasks_are_rebased_slices(tagging, parsing, seed, n_chunks):
    rng = np.random.default_rng(seed)
    oracle = seq_oracle(tagging, ThreadExecutor(2), n_chunks=n_chunks)
    w = rng.standard_normal(oracle.dim)
    for task in oracle.tasks:
        copy = pickle.loads(pickle.dumps(task))
        assert copy.labels.shape == (task.n_tokens,) and copy.indices.size <= task.indices.size
        a, b = task(w), copy(w)
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.values, b.values)
        assert a.loss == b.loss and np.array_equal(a.yhat, b.yhat)
    feats, heads = parsing
    po = ParseOracle(feats, heads, executor=ThreadExecutor(2), n_chunks=n_chunks)
    w = rng.standard_normal(feats.dim)
    for start, stop in po._chunks:
        task = po._task(start, stop)
        copy = pickle.loads(pickle.dumps(task))
        assert copy.lengths.shape == (stop - start,)
        for x, y in zip(task(w), copy(w)):
            assert np.array_equal(x, y)


# -- executor behaviour ----------------------------------------------------------------------------
class _Square:
    def __call__(self, w, power=2):
        return float(w) ** power


def test_map_and_bind_keep_order_for_every_local_executor():
    items = list(range(11))
    for name in ("serial", "threads", "processes"):
        with get_executor(name, 2) as ex:
            assert ex.map(abs, [-i for i in items]) == items
            offset = 3
            assert ex.map(lambda x: x + offset, items) == [i + 3 for i in items]  # closures too
            bound = ex.bind([_Square() for _ in items])
            assert bound.map(3.0) == [9.0] * 11 and bound.map(2.0, 3) == [8.0] * 11
            bound.close()


class _Fails:
    def __init__(self, exc):
        self.exc = exc

    def __call__(self, w):
        raise self.exc


def test_worker_errors_are_package_errors():
    with ProcessExecutor(2) as ex:
        bound = ex.bind([_Square(), _Fails(InputError("bad chunk", field="w"))])
        with pytest.raises(InputError, match="bad chunk"):
            bound.map(1.0)
        bound = ex.bind([_Fails(ZeroDivisionError("boom")), _Square()])
        with pytest.raises(ExecutorError, match="ZeroDivisionError: boom"):
            bound.map(1.0)
        assert ex.bind([_Square()]).map(4.0) == [16.0]  # the protocol stayed in step


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_dead_worker_is_reported():
    ex = ProcessExecutor(2)
    bound = ex.bind([_Square(), _Square()])
    assert bound.map(2.0) == [4.0, 4.0]
    os.kill(ex._workers[1][0].pid, signal.SIGKILL)
    ex._workers[1][0].join(5)
    with pytest.raises(ExecutorError, match="died"):
        bound.map(2.0)
    ex.close()
    assert ex._workers == []


def test_large_w_goes_through_the_shared_file_and_close_removes_it():
    w = np.arange(50_000, dtype=np.float64)
    ex = ProcessExecutor(2)
    bound = ex.bind([np.sum, np.max, np.min])
    assert bound.map(w) == [w.sum(), w.max(), w.min()]
    assert bound.map(w[::-1] * 2) == [2 * w.sum(), 2 * w.max(), 2 * w.min()]
    path = ex._state["path"]
    assert path is not None and os.path.exists(path)
    procs = [p for p, _ in ex._workers]
    with ex:
        pass
    assert not os.path.exists(path) and not any(p.is_alive() for p in procs)


def test_bound_tasks_survive_close_and_restart(tagging):
    """After close() the workers are gone; the next call starts new ones and ships the chunks again."""
    serial = seq_oracle(tagging)
    w = np.random.default_rng(9).standard_normal(serial.dim)
    ex = ProcessExecutor(2)
    par = seq_oracle(tagging, ex, n_chunks=3)
    assert_same_result(par(w), serial(w))
    old = [p for p, _ in ex._workers]
    ex.close()
    assert not any(p.is_alive() for p in old)
    assert_same_result(par(w), serial(w))
    assert ex._workers and not any(p in old for p, _ in ex._workers)
    ex.close()


def test_get_executor_resolution_and_errors(monkeypatch):
    assert isinstance(get_executor(), SerialExecutor)
    ex = ThreadExecutor(3)
    assert get_executor(ex) is ex and get_executor("threads", 3).n_workers == 3
    assert list(EXECUTORS)[:3] == ["serial", "threads", "processes"]
    assert available_executors()[:3] == ["serial", "threads", "processes"]
    with pytest.raises(InputError, match="unknown executor"):
        get_executor("gpu")
    with pytest.raises(InputError, match="scheduler"):
        get_executor("threads", 2, scheduler="tcp://localhost:8786")
    with pytest.raises(InputError):
        get_executor(42)
    for bad in (-1, 0, 2.0, True, "2"):
        with pytest.raises(InputError, match="n_workers"):
            get_executor("threads", bad)
    with pytest.raises(InputError, match="n_workers"):
        ProcessExecutor(0)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if dask were not installed
    with pytest.raises(ExecutorError, match=r"pip install cutplane\[dask\]") as info:
        get_executor("dask", 2)
    assert isinstance(info.value, CutplaneError)
    assert "dask" not in available_executors()


def test_map_only_executors_still_work(tagging):
    class MapOnly:
        n_workers = 2

        def map(self, fn, items):
            return [fn(x) for x in items]

    serial = seq_oracle(tagging)
    par = seq_oracle(tagging, MapOnly(), n_chunks=3)
    w = np.random.default_rng(5).standard_normal(serial.dim)
    assert_same_result(par(w), serial(w))
    assert bind_tasks(MapOnly(), [_Square()]).map(5.0) == [25.0]
