"""A chunk's partial cut travels back from worker processes compactly, and arrives unchanged."""

import pickle
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cutplane.executors import ThreadExecutor
from oracles.sequence_chunk import ChunkPartial
from tests.cutplane.test_parallel import seq_oracle, tagging_data

_indices = arrays(np.int64, st.integers(0, 50), elements=st.integers(0, 2**40))
_values = arrays(
    np.float64,
    st.integers(0, 50),
    elements=st.one_of(st.integers(-(2**33), 2**33).map(float), st.floats(-1e6, 1e6, allow_nan=False)),
)
_labels = arrays(np.int32, st.integers(0, 50), elements=st.integers(0, 300))


@given(idx=_indices, val=_values, yhat=_labels, loss=st.floats(0, 1e6), value=st.floats(-1e6, 1e6))
def test_pickled_partial_is_the_same_partial_with_the_same_dtypes(idx, val, yhat, loss, value):
    p = ChunkPartial(idx, val, loss, value, yhat)
    q = pickle.loads(pickle.dumps(p))
    assert q.indices.dtype == np.int64 and q.values.dtype == np.float64 and q.yhat.dtype == np.int32
    np.testing.assert_array_equal(q.indices, idx)
    np.testing.assert_array_equal(q.values, val)
    assert np.array_equal(np.signbit(q.values), np.signbit(val))
    np.testing.assert_array_equal(q.yhat, yhat)
    assert (q.loss, q.value) == (loss, value)


def test_integer_counts_travel_in_fewer_bytes():
    n = 100_000
    p = ChunkPartial(np.arange(n, dtype=np.int64) * 3, np.ones(n) * -2.0, 5.0, 1.0, np.zeros(n, dtype=np.int32))
    assert len(pickle.dumps(p)) < 0.5 * (p.indices.nbytes + p.values.nbytes + p.yhat.nbytes)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_chunks=st.integers(1, 4))
def test_a_chunk_reads_only_the_coordinates_it_lists(seed, n_chunks):
    """Changing ``w`` outside ``coordinates()`` changes nothing a chunk returns (what lets a Dask
    worker be sent only those entries of each cut)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = tagging_data(seed=seed % 5, n_train=40)
    rng = np.random.default_rng(seed)
    oracle = seq_oracle(data, ThreadExecutor(1), n_chunks=n_chunks)
    for task in oracle.tasks:
        coords = task.coordinates()
        assert np.all(np.diff(coords) > 0) and coords.max() < oracle.dim
        # no more than it reads: the label weights of the features its tokens have, and the transitions
        t0, t1 = task.sentence_ptr[task.s0], task.sentence_ptr[task.s1]
        feats = np.unique(task.indices[task.indptr[t0] : task.indptr[t1]]).astype(np.int64)
        K, nf = task.n_labels, task.n_features
        read = (feats[:, None] * K + np.arange(K)).ravel()
        np.testing.assert_array_equal(coords[: read.size], read)
        transitions = np.arange(nf * K, nf * K + K * K) if task.transitions else []
        np.testing.assert_array_equal(coords[read.size :], transitions)
        w = rng.standard_normal(oracle.dim)
        other = w + 5 * rng.standard_normal(oracle.dim)
        other[coords] = w[coords]
        for cached in (False, True):
            a, b = task(w, True, True, cached), task(other, True, True, cached)
            np.testing.assert_array_equal(a.yhat, b.yhat)
            np.testing.assert_array_equal(a.indices, b.indices)
            np.testing.assert_array_equal(a.values, b.values)
            assert (a.loss, a.value) == (b.loss, b.value)
