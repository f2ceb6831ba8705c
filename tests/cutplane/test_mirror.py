"""Workers that rebuild ``w`` from the cuts they were sent (:mod:`cutplane.executors.mirror`).

The rebuild must be the engine's ``w`` bit for bit, through any sequence of added, pruned and
merged cuts; each cut travels once; a call whose rows are gone goes dense. On a Dask cluster the
run is the serial run (same iterates: the cuts are exact integer counts) and the bytes per
iteration after the first are a small fraction of ``w``'s.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.cuts import Cut
from cutplane.exceptions import ConvergenceWarning
from cutplane.executors.mirror import (
    CombinationQuery,
    MirrorMismatch,
    MirrorPlanner,
    RowMirror,
    combination_query,
    current_query,
    query_of,
)
from cutplane.reduced.base import dual_combination
from cutplane.regularizers import L1, L2
from cutplane.working_set import WorkingSet

from .test_parallel import seq_oracle


def _random_cut(rng, dim, kind):
    """A sparse cut: integer counts times a factor (as the structured oracles give), large counts
    (int32 storage) or arbitrary floats."""
    nnz = int(rng.integers(0, min(dim, 40) + 1))
    idx = np.sort(rng.choice(dim, size=nnz, replace=False))
    if kind == "counts":
        data = rng.integers(-5, 6, size=nnz) * (1.0 / 7.0)
    elif kind == "big":
        data = rng.integers(-70000, 70000, size=nnz) * 0.5
    else:
        data = rng.standard_normal(nnz)
    return Cut(sp.csr_matrix((data, idx, [0, nnz]), shape=(1, dim)), float(rng.standard_normal()))


def _alpha(rng, n):
    a = rng.random(n) * (rng.random(n) < 0.6)
    if not a.any():
        a[-1] = 1.0
    return a / a.sum()


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dim=st.integers(1, 300), steps=st.integers(1, 12))
def test_rebuilt_w_is_the_engines_bit_for_bit_through_adds_prunes_and_merges(seed, dim, steps):
    rng = np.random.default_rng(seed)
    ws = WorkingSet(dim)
    planner, mirror = MirrorPlanner(), RowMirror(dim)
    sent: set = set()
    for _ in range(steps):
        for _ in range(int(rng.integers(1, 4))):
            ws.add(_random_cut(rng, dim, rng.choice(["counts", "big", "float"])))
        alpha = _alpha(rng, ws.n_cuts)
        ws.record_duals(alpha)
        lam = float(10.0 ** rng.uniform(-3, 2))
        coef = dual_combination(alpha, lam)
        w = ws.combine(coef).copy()
        query = CombinationQuery(w, ws.row_ids.copy(), coef, ws)
        update = planner.update_for(query)
        assert update is not None
        new_ids = {row_id for row_id, *_ in update.new_rows}
        assert not new_ids & sent, "a row travels once"
        assert set(update.row_ids.tolist()) == set(ws.row_ids[coef != 0].tolist())
        got = mirror.apply(update)
        planner.commit(update)
        sent |= new_ids
        assert np.array_equal(got, w)  # bit for bit, not allclose
        assert mirror.apply(update) is got  # a repeated version is not rebuilt
        assert set(mirror.rows) <= set(ws.row_ids.tolist())  # rows gone from the set are forgotten...
        sent &= set(ws.row_ids.tolist())  # ... once an update says so
        # the working set moves on: prune idle cuts, or merge the oldest ones
        if rng.random() < 0.3 and ws.n_cuts > 2:
            ws.aggregate(int(rng.integers(1, ws.n_cuts)))
        elif rng.random() < 0.3:
            ws.prune(1)


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    nnz=st.integers(0, 400),
    span=st.sampled_from([300, 2000, 70_000, 2**31 - 1]),
    layout=st.sampled_from(["spread", "dense", "clustered", "repeated"]),
    kind=st.sampled_from(["int16", "int32", "float64", "int8-range", "outliers"]),
    index_dtype=st.sampled_from([np.int32, np.int64]),
)
def test_a_packed_row_unpacks_to_the_same_arrays_bit_for_bit(seed, nnz, span, layout, kind, index_dtype):
    """Every form (bitmap, one- or two-byte gaps with the large ones apart, raw; values narrowed
    with the wide ones apart) gives back the row bit for bit, in no more bytes than the row."""
    import pickle

    from cutplane.executors.mirror import PackedRow

    rng = np.random.default_rng(seed)
    nnz = min(nnz, span)
    if layout == "dense":  # most coordinates of a short span: the bitmap
        start = int(rng.integers(0, span - nnz + 1))
        idx = start + np.sort(rng.choice(min(span - start, 2 * nnz + 1), size=nnz, replace=False))
    elif layout == "clustered":  # runs of small gaps with a few large jumps
        steps = np.where(rng.random(nnz) < 0.05, rng.integers(256, 200_000, size=nnz), rng.integers(1, 30, size=nnz))
        idx = np.cumsum(steps) - steps[0] if nnz else np.zeros(0, np.int64)
    elif layout == "repeated":  # not strictly increasing: sent as they are
        idx = np.sort(rng.integers(0, span, size=nnz))
    else:
        idx = np.sort(rng.choice(span, size=nnz, replace=False))
    idx = idx.astype(index_dtype)
    if kind == "float64":
        values = rng.standard_normal(nnz)
    elif kind == "int8-range":
        values = rng.integers(-128, 128, size=nnz).astype(np.int16)
    elif kind == "outliers":  # small counts and a few large ones (a frequent feature's count)
        values = rng.integers(-5, 6, size=nnz).astype(np.int32)
        values[rng.random(nnz) < 0.02] = rng.integers(-(2**31) + 1, 2**31 - 1)
        values[: min(nnz, 1)] = -128
    else:
        top = 32767 if kind == "int16" else 2**31 - 1
        values = rng.integers(-top, top, size=nnz).astype(kind)
    scale = float(rng.uniform(0.01, 3))
    row = PackedRow(idx, values, scale)
    packed = pickle.loads(pickle.dumps(row))
    i2, v2, s2 = packed.unpack()
    assert i2.dtype == idx.dtype and v2.dtype == values.dtype and s2 == scale
    assert i2.tobytes() == idx.tobytes()
    assert v2.tobytes() == values.tobytes()
    assert packed.nbytes == row.nbytes <= idx.nbytes + values.nbytes + 40
    if layout == "dense" and nnz >= 64:
        assert row.form == "bitmap" and row.nbytes < idx.nbytes / 8 + values.nbytes + 40


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dim=st.integers(1, 300), steps=st.integers(1, 8))
def test_a_worker_sent_only_what_its_tasks_read_rebuilds_w_there_bit_for_bit(seed, dim, steps):
    """With a support (the coordinates a worker's chunks read) the worker gets only those entries
    of each new cut, and its rebuilt w equals the engine's there, bit for bit (0 elsewhere)."""
    rng = np.random.default_rng(seed)
    ws = WorkingSet(dim)
    support = rng.random(dim) < 0.5
    planner, mirror = MirrorPlanner(), RowMirror(dim)
    for _ in range(steps):
        for _ in range(int(rng.integers(1, 3))):
            ws.add(_random_cut(rng, dim, rng.choice(["counts", "big", "float"])))
        coef = dual_combination(_alpha(rng, ws.n_cuts), float(10.0 ** rng.uniform(-3, 2)))
        w = ws.combine(coef).copy()
        plan = planner.plan(CombinationQuery(w, ws.row_ids.copy(), coef, ws))
        update = planner.update(plan, support)
        assert all(support[row.unpack()[0]].all() for _, row in update.new_rows)
        assert all(support[update.probe_at])
        got = mirror.apply(update)
        planner.commit(plan)
        assert got[support].tobytes() == w[support].tobytes()
        assert not got[~support].any()
        if rng.random() < 0.3:
            ws.prune(1)


def test_a_row_gone_before_its_first_trip_sends_w_itself():
    rng = np.random.default_rng(0)
    ws = WorkingSet(50)
    for _ in range(3):
        ws.add(_random_cut(rng, 50, "counts"))
    coef = dual_combination(np.array([0.2, 0.3, 0.5]), 0.1)
    query = CombinationQuery(ws.combine(coef).copy(), ws.row_ids.copy(), coef, ws)
    ws.aggregate(1)  # the three rows become one before any was sent
    assert MirrorPlanner().update_for(query) is None


def test_a_tampered_probe_is_a_mismatch_and_a_missing_row_an_error():
    rng = np.random.default_rng(1)
    ws = WorkingSet(80)
    for _ in range(4):
        ws.add(_random_cut(rng, 80, "counts"))
    coef = dual_combination(_alpha(rng, 4), 0.5)
    w = ws.combine(coef).copy()
    update = MirrorPlanner().update_for(CombinationQuery(w, ws.row_ids.copy(), coef, ws))
    assert update.probe_at.size > 0
    bad = update._replace(probe_values=update.probe_values + 1.0)
    with pytest.raises(MirrorMismatch, match="differs"):
        RowMirror(80).apply(bad)
    from cutplane.executors import ExecutorError

    with pytest.raises(ExecutorError, match="lacks cut"):
        RowMirror(80).apply(update._replace(new_rows=()))


def test_current_query_matches_only_its_own_point():
    w = np.arange(5.0)
    q = CombinationQuery(w, np.zeros(0, np.int64), np.zeros(0), None)
    assert current_query(w) is None
    with combination_query(q):
        assert current_query(w) is q
        assert current_query(np.ascontiguousarray(w, dtype=np.float64)) is q
        assert current_query(w.copy()) is None
        assert current_query(w.view(np.int64)) is None  # the same memory read as other numbers
        assert current_query(w[::-1]) is None
    assert current_query(w) is None


def test_query_of_only_for_a_combination_of_sparse_cuts_under_a_self_conjugate_regulariser():
    rng = np.random.default_rng(2)
    ws = WorkingSet(30)
    for _ in range(3):
        ws.add(_random_cut(rng, 30, "counts"))
    from cutplane.reduced.registry import make_reduced_solver

    sol = make_reduced_solver(L2(), None).solve(ws, 0.1)
    assert sol.combination is not None
    np.testing.assert_array_equal(ws.combine(sol.combination), sol.w)
    assert query_of(sol.w, sol, ws.row_ids.copy(), ws, L2()) is not None
    assert query_of(sol.w.copy(), sol, ws.row_ids.copy(), ws, L2()) is None  # another point
    assert query_of(sol.w, sol, ws.row_ids.copy(), ws, L1()) is None  # not self-conjugate
    assert query_of(sol.w, None, ws.row_ids.copy(), ws, L2()) is None
    dense = WorkingSet(30)
    dense.add(Cut(np.ones(30), 0.0))
    assert query_of(sol.w, sol, ws.row_ids.copy(), dense, L2()) is None


def test_row_ids_are_never_given_twice():
    rng = np.random.default_rng(3)
    a, b = WorkingSet(20), WorkingSet(20)
    for _ in range(5):
        a.add(_random_cut(rng, 20, "counts"))
        b.add(_random_cut(rng, 20, "counts"))
    ids = set(a.row_ids.tolist())
    a.record_duals(np.full(5, 0.2))
    a.aggregate(2)
    assert len(set(a.row_ids.tolist()) - ids) == 1  # the merged cut is a new row
    assert not set(a.row_ids.tolist()) & set(b.row_ids.tolist())
    kept = a.row_ids[1:].copy()
    a.record_duals(np.array([1.0, 0.0]))
    a.prune(1)
    np.testing.assert_array_equal(a.row_ids, a.row_ids[: a.n_cuts])
    assert set(kept.tolist()) - set(a.row_ids.tolist())


# -- on a Dask cluster -----------------------------------------------------------------------------
def _wide_tagging(seed=4, n_sent=150, n_features=20000, n_labels=4):
    """Sentences of tokens with 4 features each among ``n_features`` (a wide model: ``w`` is
    large next to a cut, as on the real corpora); the label is read off the first feature."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(4, 11, size=n_sent)
    n_tok = int(lengths.sum())
    first = rng.zipf(1.3, size=n_tok) % n_features
    rest = rng.integers(0, n_features, size=(n_tok, 3))
    feats = np.sort(np.column_stack([first, rest]), axis=1)
    labels = (first % n_labels).astype(np.int32)
    flip = rng.random(n_tok) < 0.1
    labels[flip] = rng.integers(0, n_labels, size=int(flip.sum()))
    data = dict(
        indptr=np.arange(0, 4 * n_tok + 1, 4, dtype=np.int64),
        indices=feats.ravel().astype(np.int32),
        sentence_ptr=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        labels=labels,
        n_features=n_features,
        n_labels=n_labels,
    )

    def make(executor=None, n_chunks=None):
        return seq_oracle(data, executor, n_chunks)

    return make


@pytest.mark.parametrize(
    "processes, threads", [(False, 1), (True, 1), (True, 2)], ids=["dask-threads", "dask-processes", "2-threads-each"]
)
@pytest.mark.parametrize("cache_steps", [0, 2])
def test_dask_run_rebuilds_w_on_the_workers_and_gives_the_in_process_run(processes, threads, cache_steps):
    """Against threads on the same chunks (the partial values are summed in the same order), the
    run is the same bit for bit: every upper and lower bound. The serial oracle (one chunk) sums
    the values in another order, which can flip a borderline cache decision, hence the threads.
    With 2 threads per worker, each worker runs its 2 chunks at once on one rebuilt w."""
    pytest.importorskip("dask.distributed")
    from cutplane.executors import DaskExecutor, ThreadExecutor

    make = _wide_tagging()
    with pytest.warns(ConvergenceWarning):
        ref = minimize(make(ThreadExecutor(2), 4), L2(), 0.05, eps=1e-6, max_iter=25, cache_steps=cache_steps)
    with DaskExecutor(2, processes=processes, mirror=True, threads_per_worker=threads) as ex:
        oracle = make(ex, n_chunks=4)
        with pytest.warns(ConvergenceWarning):
            res = minimize(oracle, L2(), 0.05, eps=1e-6, max_iter=25, cache_steps=cache_steps)
        assert ex.mirrored_calls > 0 and ex.dense_calls >= 1  # the first point (w0 = 0) goes dense
        b = res.history.bytes_sent
        dense = oracle.dim * 8 * ex.n_workers
        assert b[0] >= dense  # w itself at the first call
        assert np.all(b[1:] < dense)  # then never more than w would have cost
        if cache_steps == 0:
            assert np.median(b[1:]) < dense / 10  # one new cut and the coefficients
        calls = list(ex.calls)
        assert sum(c.bytes_sent for c in calls) == ex.bytes_sent == np.sum(b)

        assert all(c.combined_rows >= 1 and c.combined_nnz > 0 and c.rebuild_s > 0 for c in calls if c.mirrored)
        assert sum(c.new_rows for c in calls) <= res.n_iter + res.n_cached_cuts  # each cut sent at most once
    assert res.n_iter == ref.n_iter and res.n_cached_cuts == ref.n_cached_cuts
    np.testing.assert_array_equal(res.history.upper, ref.history.upper)
    np.testing.assert_array_equal(res.history.lower, ref.history.lower)
    np.testing.assert_array_equal(res.w, ref.w)


def test_each_worker_gets_only_the_entries_its_chunks_read(monkeypatch):
    """Against the same run with every worker sent whole cuts: fewer bytes, the same run."""
    pytest.importorskip("dask.distributed")
    import cutplane.executors.dask_cluster as dc
    from cutplane.executors import DaskExecutor

    make = _wide_tagging(seed=7)
    runs = {}
    for restricted in (True, False):
        if not restricted:
            monkeypatch.setattr(dc, "_coordinates", lambda task: None)
        with DaskExecutor(2, processes=False, mirror=True, chunks_per_worker=1) as ex:
            with pytest.warns(ConvergenceWarning):
                res = minimize(make(ex), L2(), 0.05, eps=1e-9, max_iter=15)
            assert ex.mirrored_calls == res.n_iter - 1
        runs[restricted] = res
    assert np.sum(runs[True].history.bytes_sent[1:]) < 0.85 * np.sum(runs[False].history.bytes_sent[1:])
    np.testing.assert_array_equal(runs[True].history.upper, runs[False].history.upper)


def test_a_small_model_sends_w_when_it_is_the_smaller_message():
    pytest.importorskip("dask.distributed")
    from cutplane.executors import DaskExecutor

    make = _wide_tagging(n_features=30)  # w of 1 KB: early cuts and their coefficients are larger
    with DaskExecutor(2, processes=False, mirror=True) as ex:
        oracle = make(ex, n_chunks=2)
        with pytest.warns(ConvergenceWarning):
            res = minimize(oracle, L2(), 0.05, eps=1e-9, max_iter=12)
        dense = oracle.dim * 8 * ex.n_workers
        assert ex.dense_calls > 1  # not only the first point
        assert np.all(res.history.bytes_sent <= dense)


def test_mirror_default_is_on_for_worker_processes_only():
    pytest.importorskip("dask.distributed")
    from cutplane.executors import DaskExecutor

    with DaskExecutor(1, processes=False) as ex:
        assert ex.mirror is False  # threads of this process: w is handed over by reference


def test_dask_without_mirror_sends_w_every_call_and_ls_bmrm_goes_dense():
    pytest.importorskip("dask.distributed")
    from cutplane.executors import DaskExecutor, ThreadExecutor

    make = _wide_tagging(seed=5)
    with pytest.warns(ConvergenceWarning):
        ref = minimize(make(ThreadExecutor(2), 3), L2(), 0.05, eps=1e-6, max_iter=8, method="ls-bmrm")
    for mirror in (False, True):
        with DaskExecutor(2, processes=False, mirror=mirror) as ex:
            oracle = make(ex, n_chunks=3)
            with pytest.warns(ConvergenceWarning):
                res = minimize(oracle, L2(), 0.05, eps=1e-6, max_iter=8, method="ls-bmrm")
            assert ex.mirrored_calls == 0  # LS-BMRM's points are not the QP's minimisers
            assert res.history.bytes_sent.sum() == ex.dense_calls * oracle.dim * 8 * ex.n_workers
        np.testing.assert_array_equal(res.history.upper, ref.history.upper)
        assert res.objective == ref.objective


def test_dask_with_the_mirror_converges_to_the_serial_objective_within_eps():
    """The acceptance line: same final objective as serial within eps on a LocalCluster of worker
    processes, with every call after the first sending cuts and coefficients only."""
    pytest.importorskip("dask.distributed")
    from cutplane.executors import DaskExecutor

    make = _wide_tagging(seed=6, n_sent=120)
    eps = 1e-3
    ref = minimize(make(), L2(), 0.05, eps=eps, max_iter=500)
    assert ref.status == "converged"
    with DaskExecutor(2, processes=True) as ex:
        assert ex.mirror
        res = minimize(make(ex), L2(), 0.05, eps=eps, max_iter=500)
        assert ex.mirrored_calls == res.n_iter - 1
    assert res.status == "converged"
    assert abs(res.objective - ref.objective) <= eps
    assert res.lower_bound <= ref.objective + 1e-12 and ref.lower_bound <= res.objective + 1e-12


def test_a_call_that_ends_as_the_watch_times_out_is_not_an_error(monkeypatch):
    """The client waits for each actor in slices of ``_WATCH_S`` (checking the cluster between
    them). A call that finishes just as a slice times out must give its result, not a lost
    connection: with slices of 0.1 ms nearly every call ends at such a boundary."""
    pytest.importorskip("dask.distributed")
    import cutplane.executors.dask_cluster as dc
    from cutplane.executors import DaskExecutor, ThreadExecutor

    monkeypatch.setattr(dc, "_WATCH_S", 1e-4)
    make = _wide_tagging(seed=8)
    with pytest.warns(ConvergenceWarning):
        ref = minimize(make(ThreadExecutor(2), 2), L2(), 0.05, eps=1e-9, max_iter=12)
    with DaskExecutor(2, processes=False, mirror=True) as ex:
        with pytest.warns(ConvergenceWarning):
            res = minimize(make(ex, n_chunks=2), L2(), 0.05, eps=1e-9, max_iter=12)
        assert ex.mirrored_calls == res.n_iter - 1
    np.testing.assert_array_equal(res.history.upper, ref.history.upper)
