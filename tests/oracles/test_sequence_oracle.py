"""The 1-slack sequence cut against brute force and a dense recomputation from Phi."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_to_dense
from cutplane.exceptions import InputError
from cutplane.executors import ThreadExecutor
from cutplane.protocols import Oracle
from oracles.sequence import SequenceHingeOracle, viterbi_decode


def random_data(rng, n, max_len, n_features, K, max_feats=3):
    lengths = rng.integers(1, max_len + 1, size=n)
    sentence_ptr = np.concatenate([[0], np.cumsum(lengths)])
    n_tokens = int(sentence_ptr[-1])
    feats = [
        np.sort(rng.choice(n_features, size=rng.integers(0, min(max_feats, n_features) + 1), replace=False))
        for _ in range(n_tokens)
    ]
    indptr = np.concatenate([[0], np.cumsum([len(f) for f in feats])])
    indices = np.concatenate(feats + [np.zeros(0, int)]).astype(np.int32)
    labels = rng.integers(0, K, size=n_tokens)
    return indptr, indices, sentence_ptr, labels


def dense_phi(indptr, indices, t0, y, n_features, K, transitions=True):
    """Phi(x, y) written out directly from its definition, as a dense vector."""
    phi_w = np.zeros((n_features, K))
    for t, k in enumerate(y):
        for f in indices[indptr[t0 + t] : indptr[t0 + t + 1]]:
            phi_w[f, k] += 1
    parts = [phi_w.ravel()]
    if transitions:
        phi_t = np.zeros((K, K))
        for a, b in zip(y[:-1], y[1:]):
            phi_t[a, b] += 1
        parts.append(phi_t.ravel())
    return np.concatenate(parts)


def brute_force_risk(data, w, n_features, K, transitions=True):
    """(1/n) sum_i max_y [Delta + <w, Phi(y) - Phi(y_i)>] by enumerating every output."""
    indptr, indices, sentence_ptr, labels = data
    total = 0.0
    n = len(sentence_ptr) - 1
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi = labels[t0:t1]
        phi_i = dense_phi(indptr, indices, t0, yi, n_features, K, transitions)
        best = max(
            np.sum(np.array(y) != yi) + w @ (dense_phi(indptr, indices, t0, y, n_features, K, transitions) - phi_i)
            for y in itertools.product(range(K), repeat=t1 - t0)
        )
        total += best
    return total / n


@st.composite
def instance(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, 4))
    K = draw(st.integers(1, 3))
    nf = draw(st.integers(1, 5))
    transitions = draw(st.booleans())
    integer_w = draw(st.booleans())
    return seed, n, K, nf, transitions, integer_w


@settings(max_examples=150)
@given(instance())
def test_cut_matches_brute_force_and_dense_phi(inst):
    seed, n, K, nf, transitions, integer_w = inst
    rng = np.random.default_rng(seed)
    data = random_data(rng, n, 4, nf, K)
    oracle = SequenceHingeOracle(*data, nf, K, transitions=transitions)
    assert isinstance(oracle, Oracle)
    w = (rng.integers(-2, 3, oracle.dim) if integer_w else rng.standard_normal(oracle.dim)).astype(float)
    res = oracle(w)
    # value = (1/n) sum of brute-force maxima, and = <a, w> + b
    assert res.value == pytest.approx(brute_force_risk(data, w, nf, K, transitions), abs=1e-9)
    assert res.value >= oracle.risk_lower_bound - 1e-12  # the floor the engine adds as a cut
    a = slope_to_dense(res.cut.slope, oracle.dim)
    assert res.value == pytest.approx(a @ w + res.cut.offset, abs=1e-12)
    # a = -(1/n) sum_i dPhi_i(y^_i) and b = (1/n) sum_i Delta, recomputed densely from y^
    indptr, indices, sentence_ptr, labels = data
    yhat = res.argmax
    a_ref = np.zeros(oracle.dim)
    b_ref = 0.0
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        a_ref -= (
            dense_phi(indptr, indices, t0, labels[t0:t1], nf, K, transitions)
            - dense_phi(indptr, indices, t0, yhat[t0:t1], nf, K, transitions)
        ) / n
        b_ref += np.sum(labels[t0:t1] != yhat[t0:t1]) / n
    np.testing.assert_allclose(a, a_ref, atol=1e-12)
    assert res.cut.offset == pytest.approx(b_ref, abs=1e-12)
    # subgradient inequality R(v) >= <a, v> + b at random points
    for _ in range(3):
        v = rng.standard_normal(oracle.dim) * 2
        assert oracle(v).value >= a @ v + res.cut.offset - 1e-9


def test_threads_give_the_same_cut_as_serial():
    rng = np.random.default_rng(7)
    nf, K = 300, 5
    data = random_data(rng, 400, 30, nf, K, max_feats=8)
    serial = SequenceHingeOracle(*data, nf, K)
    ex = ThreadExecutor(2)
    try:
        threaded = SequenceHingeOracle(*data, nf, K, executor=ex, n_chunks=7)
        assert len(threaded.chunks) == 7
        for _ in range(3):
            w = rng.standard_normal(serial.dim)
            r1, r2 = serial(w), threaded(w)
            assert np.array_equal(r1.argmax, r2.argmax)
            assert r1.cut.offset == r2.cut.offset
            np.testing.assert_array_equal(slope_to_dense(r1.cut.slope), slope_to_dense(r2.cut.slope))
            assert r1.value == pytest.approx(r2.value, rel=1e-12, abs=1e-12)
    finally:
        ex.close()


def test_slope_is_sparse_row_without_explicit_zeros():
    rng = np.random.default_rng(3)
    nf, K = 50, 4
    data = random_data(rng, 20, 6, nf, K)
    oracle = SequenceHingeOracle(*data, nf, K)
    res = oracle(rng.standard_normal(oracle.dim))
    assert res.cut.slope.shape == (1, oracle.dim)
    assert res.cut.slope.format == "csr"
    assert np.all(res.cut.slope.data != 0)
    # at w = 0 every token is wrong (K >= 2): value = b = mean sentence length
    res0 = oracle(np.zeros(oracle.dim))
    lengths = np.diff(data[2])
    assert res0.value == pytest.approx(lengths.mean())


def test_per_example_methods_agree_with_the_batch_cut():
    rng = np.random.default_rng(11)
    nf, K = 12, 3
    data = random_data(rng, 6, 5, nf, K)
    indptr, indices, sentence_ptr, labels = data
    oracle = SequenceHingeOracle(*data, nf, K)
    w = rng.standard_normal(oracle.dim)
    res = oracle(w)
    total_slope = np.zeros(oracle.dim)
    total_value = 0.0
    for i in range(oracle.n_samples):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yhat = oracle.loss_augmented_argmax(w, i)
        assert np.array_equal(yhat, res.argmax[t0:t1])
        dphi = oracle.delta_phi(i, yhat)
        ref = dense_phi(indptr, indices, t0, labels[t0:t1], nf, K) - dense_phi(indptr, indices, t0, yhat, nf, K)
        np.testing.assert_array_equal(slope_to_dense(dphi), ref)
        ex = oracle.example_oracle(w, i)
        total_slope += slope_to_dense(ex.cut.slope)
        total_value += ex.value
        # plain decoding maximises <w, Phi> (brute force)
        y_plain = oracle.decode(w, i)
        best = max(w @ dense_phi(indptr, indices, t0, y, nf, K) for y in itertools.product(range(K), repeat=t1 - t0))
        assert w @ dense_phi(indptr, indices, t0, y_plain, nf, K) == pytest.approx(best, abs=1e-9)
    np.testing.assert_allclose(total_slope / oracle.n_samples, slope_to_dense(res.cut.slope), atol=1e-12)
    assert total_value / oracle.n_samples == pytest.approx(res.value, abs=1e-9)
    # decoding unlabelled data gives the same as per-example decode
    all_pred = viterbi_decode(w, indptr, indices, sentence_ptr, nf, K)
    assert np.array_equal(all_pred, np.concatenate([oracle.decode(w, i) for i in range(oracle.n_samples)]))


def test_unary_scores_are_row_sums_of_W():
    rng = np.random.default_rng(5)
    nf, K = 9, 3
    data = random_data(rng, 3, 4, nf, K)
    oracle = SequenceHingeOracle(*data, nf, K)
    w = rng.standard_normal(oracle.dim)
    W = w[: nf * K].reshape(nf, K)
    X = np.zeros((data[0].size - 1, nf))
    for t in range(X.shape[0]):
        X[t, data[1][data[0][t] : data[0][t + 1]]] = 1
    np.testing.assert_allclose(oracle.unary_scores(w, 1), (X @ W)[data[2][1] : data[2][2]])


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda d: (d[0], d[1], d[2], d[3] + 5), "labels"),
        (lambda d: (d[0], d[1] + 100, d[2], d[3]), "indices"),
        (lambda d: (d[0], d[1], d[2][:-1], d[3]), "sentence_ptr"),
        (lambda d: (d[0] + 1, d[1], d[2], d[3]), "indptr"),
    ],
)
def test_bad_arrays_raise_input_error(change, field):
    rng = np.random.default_rng(0)
    data = random_data(rng, 3, 4, 5, 3)
    with pytest.raises(InputError) as err:
        SequenceHingeOracle(*change(data), 5, 3)
    assert err.value.field == field


def test_bad_weights_raise_input_error():
    rng = np.random.default_rng(0)
    oracle = SequenceHingeOracle(*random_data(rng, 3, 4, 5, 3), 5, 3)
    with pytest.raises(InputError):
        oracle(np.zeros(oracle.dim + 1))
    w = np.zeros(oracle.dim)
    w[0] = np.nan
    with pytest.raises(InputError):
        oracle(w)


@settings(max_examples=60)
@given(
    st.lists(st.dictionaries(st.integers(0, 40), st.integers(-3, 3).filter(bool), max_size=25), min_size=1, max_size=6)
)
def test_merge_of_partial_cuts_equals_the_dense_sum(parts):
    """The chunks' partial cuts (sorted, no zeros) are merged in O(nnz): same as summing them densely."""
    from oracles.sequence import _merge_counts  # noqa: PLC2701 (the merge under test)

    idx = [np.array(sorted(p), dtype=np.int64) for p in parts]
    val = [np.array([float(p[i]) for i in sorted(p)]) for p in parts]
    got_idx, got_val = _merge_counts(idx, val)
    dense = np.zeros(41)
    for i, v in zip(idx, val):
        np.add.at(dense, i, v)
    assert np.all(got_val != 0)
    assert np.all(np.diff(got_idx) > 0)
    out = np.zeros(41)
    out[got_idx] = got_val
    np.testing.assert_array_equal(out, dense)


@settings(max_examples=20)
@given(seed=st.integers(0, 2**16), n_chunks=st.integers(1, 12))
def test_any_chunking_gives_the_serial_cut_and_decode(seed, n_chunks):
    """Chunk tasks (as shipped to workers: pickled, rebased) reproduce the one-chunk oracle."""
    import pickle

    from cutplane.executors import SerialExecutor

    rng = np.random.default_rng(seed)
    nf, K = 50, 4
    data = random_data(rng, 25, 8, nf, K, max_feats=4)
    one = SequenceHingeOracle(*data, nf, K)

    class PicklingExecutor(SerialExecutor):
        def bind(self, tasks):
            return super().bind([pickle.loads(pickle.dumps(t)) for t in tasks])

    many = SequenceHingeOracle(*data, nf, K, executor=PicklingExecutor(), n_chunks=n_chunks)
    w = rng.standard_normal(one.dim)
    r1, r2 = one(w), many(w)
    assert np.array_equal(r1.argmax, r2.argmax) and r1.cut.offset == r2.cut.offset
    np.testing.assert_array_equal(slope_to_dense(r1.cut.slope), slope_to_dense(r2.cut.slope))
    np.testing.assert_array_equal(one.decode(w), many.decode(w))


def _dense_cut_of_outputs(data, outputs, nf, K, transitions):
    """(a, b) of the 1-slack cut for one chosen output per sentence (concatenated labels)."""
    indptr, indices, sentence_ptr, labels = data
    n = len(sentence_ptr) - 1
    a, b = np.zeros(nf * K + (K * K if transitions else 0)), 0.0
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi, yo = labels[t0:t1], outputs[t0:t1]
        a -= (
            dense_phi(indptr, indices, t0, yi, nf, K, transitions)
            - dense_phi(indptr, indices, t0, yo, nf, K, transitions)
        ) / n
        b += np.sum(yi != yo) / n
    return a, b


@settings(max_examples=80, deadline=None)
@given(instance(), st.integers(1, 5), st.integers(1, 3))
def test_cached_cut_is_the_best_cached_output_per_sentence(inst, m, n_chunks):
    """After m <= CACHE_SIZE exact calls, the cached cut at w is, per sentence, the best of the
    gold output and the m argmax outputs seen (written out densely), a minorant of R (brute
    force), and R(w) itself right after an exact call at w."""
    from oracles.sequence_chunk import CACHE_SIZE

    assert m <= CACHE_SIZE
    seed, n, K, nf, transitions, _ = inst
    rng = np.random.default_rng(seed)
    data = random_data(rng, n, 4, nf, K)
    indptr, indices, sentence_ptr, labels = data
    ex = ThreadExecutor(2) if n_chunks > 1 else None
    try:
        oracle = SequenceHingeOracle(*data, nf, K, transitions=transitions, executor=ex, n_chunks=n_chunks)
        empty = oracle.cached_cut(rng.standard_normal(oracle.dim))
        assert empty.value == 0.0 and empty.cut.offset == 0.0 and slope_to_dense(empty.cut.slope, oracle.dim).sum() == 0
        seen = [oracle(rng.standard_normal(oracle.dim) * 2).argmax for _ in range(m)]
        w = rng.standard_normal(oracle.dim) * 2
        cc = oracle.cached_cut(w)
        a = slope_to_dense(cc.cut.slope, oracle.dim)
        assert cc.value == pytest.approx(a @ w + cc.cut.offset, abs=1e-12)
        # the reference: per sentence, max over gold and the seen outputs
        ref_value = 0.0
        for i in range(n):
            t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
            yi = labels[t0:t1]
            phi_i = dense_phi(indptr, indices, t0, yi, nf, K, transitions)
            cands = [0.0] + [
                np.sum(s[t0:t1] != yi) + w @ (dense_phi(indptr, indices, t0, s[t0:t1], nf, K, transitions) - phi_i)
                for s in seen
            ]
            ref_value += max(cands) / n
        assert cc.value == pytest.approx(ref_value, abs=1e-9)
        # a valid minorant of R everywhere (brute force), the value a lower bound at w
        assert cc.value <= brute_force_risk(data, w, nf, K, transitions) + 1e-9
        for _ in range(2):
            v = rng.standard_normal(oracle.dim) * 2
            assert a @ v + cc.cut.offset <= brute_force_risk(data, v, nf, K, transitions) + 1e-9
        # right after an exact call at w the cache holds its argmax: the cached value is R(w)
        exact = oracle(w)
        again = oracle.cached_cut(w)
        assert again.value == pytest.approx(exact.value, abs=1e-9)
    finally:
        if ex is not None:
            ex.close()


def test_cache_keeps_the_last_distinct_outputs():
    """More exact calls than CACHE_SIZE: the cached value right after an exact call is still R(w)
    (the newest output is kept), and repeated calls at one w do not fill the cache with copies."""
    from oracles.sequence_chunk import CACHE_SIZE

    rng = np.random.default_rng(3)
    nf, K = 20, 4
    data = random_data(rng, 30, 6, nf, K, max_feats=4)
    oracle = SequenceHingeOracle(*data, nf, K)
    w0 = rng.standard_normal(oracle.dim)
    for _ in range(3):
        oracle(w0)
    chunk = oracle.tasks[0]
    assert chunk.n_cached == 1
    for _ in range(2 * CACHE_SIZE + 1):
        w = rng.standard_normal(oracle.dim) * 3
        exact = oracle(w)
        assert oracle.cached_cut(w).value == pytest.approx(exact.value, abs=1e-10)
    assert chunk.n_cached == CACHE_SIZE


@pytest.mark.parametrize("threads", [False, True])
def test_clear_cache_forgets_the_outputs(threads):
    rng = np.random.default_rng(11)
    nf, K = 10, 3
    data = random_data(rng, 20, 5, nf, K)
    ex = ThreadExecutor(2) if threads else None
    try:
        oracle = SequenceHingeOracle(*data, nf, K, executor=ex, n_chunks=3 if threads else None)
        w = rng.standard_normal(oracle.dim)
        exact = oracle(w)
        assert exact.value > 0 and oracle.cached_cut(w).value == pytest.approx(exact.value, abs=1e-12)
        oracle.clear_cache()
        assert oracle.cached_cut(w).value == 0.0
        assert oracle(w).value == pytest.approx(exact.value, abs=1e-12)  # the oracle itself unchanged
    finally:
        if ex is not None:
            ex.close()


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_chunks=st.integers(1, 3),
    transitions=st.booleans(),
    calls=st.lists(st.sampled_from(["exact", "cached", "decode"]), min_size=1, max_size=12),
    scale=st.sampled_from([0.1, 1.0, 5.0]),
)
def test_cuts_updated_from_the_last_cut_equal_cuts_built_afresh(seed, n_chunks, transitions, calls, scale):
    """A chunk builds its next cut from its last one when few outputs changed (the change merged
    into the last sums): over any sequence of exact, cached and decoding calls, every cut equals
    the one written out densely from its outputs, and the oracle's value is ``<a, w> + b``
    (the size threshold of the update lowered to 1 token, so that these tiny chunks use it)."""
    import oracles.sequence_chunk as chunk_module

    saved = chunk_module.INCREMENTAL_MIN_TOKENS
    chunk_module.INCREMENTAL_MIN_TOKENS = 1
    try:
        _check_incremental_cuts(seed, n_chunks, transitions, calls, scale)
    finally:
        chunk_module.INCREMENTAL_MIN_TOKENS = saved


def _check_incremental_cuts(seed, n_chunks, transitions, calls, scale):
    rng = np.random.default_rng(seed)
    nf, K = 6, 3
    data = random_data(rng, 9, 5, nf, K, max_feats=3)
    ex = ThreadExecutor(2) if n_chunks > 1 else None
    try:
        oracle = SequenceHingeOracle(*data, nf, K, transitions=transitions, executor=ex, n_chunks=n_chunks)
        w = rng.standard_normal(oracle.dim) * scale
        for call in calls:
            w = w + rng.standard_normal(oracle.dim) * scale * 0.2 * (rng.random(oracle.dim) < 0.3)  # small moves
            if call == "decode":
                oracle.decode(w)
                continue
            res = oracle(w) if call == "exact" else oracle.cached_cut(w)
            outputs = res.argmax if call == "exact" else None
            if outputs is None:  # the cached cut's outputs: read back through the chunks' last cut
                outputs = np.concatenate([t._last_cut[0] for t in oracle.tasks])
            a_ref, b_ref = _dense_cut_of_outputs(data, outputs, nf, K, transitions)
            np.testing.assert_allclose(slope_to_dense(res.cut.slope, oracle.dim), a_ref, rtol=0, atol=1e-12)
            assert res.cut.offset == pytest.approx(b_ref, abs=1e-12)
            assert res.value == pytest.approx(a_ref @ w + b_ref, abs=1e-9)
    finally:
        if ex is not None:
            ex.close()
