"""DenseSequenceOracle against brute force on tiny chains and against SequenceHingeOracle on one-hot X."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.brute_force import sequence_argmax, sequence_score
from oracles.dense_sequence import DenseSequenceOracle
from oracles.sequence import SequenceHingeOracle


def _instance(seed, n_sent=3, max_len=4, D=3, K=3):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, size=n_sent)
    ptr = np.concatenate([[0], np.cumsum(lens)])
    X = rng.normal(size=(ptr[-1], D))
    y = rng.integers(0, K, size=ptr[-1])
    w = rng.normal(scale=2.0, size=D * K + K * K)
    return X, y, ptr, w


def _brute_risk(X, y, ptr, w, K):
    """R(w) and its subgradient by enumerating every label sequence of every sentence."""
    D = X.shape[1]
    W, T = w[: D * K].reshape(D, K), w[D * K :].reshape(K, K)
    total, grad = 0.0, np.zeros_like(w)
    for i in range(len(ptr) - 1):
        Xi, yi = X[ptr[i] : ptr[i + 1]], y[ptr[i] : ptr[i + 1]]
        U = Xi @ W
        yh = sequence_argmax(U, T, yi)
        total += sequence_score(U, T, yh, yi) - sequence_score(U, T, yi)
        for yy, sgn in ((yh, 1.0), (yi, -1.0)):
            E = np.zeros((len(yy), K))
            E[np.arange(len(yy)), yy] = 1
            grad[: D * K] += sgn * (Xi.T @ E).ravel()
            for a, b in zip(yy[:-1], yy[1:]):
                grad[D * K + a * K + b] += sgn
    n = len(ptr) - 1
    return total / n, grad / n


@settings(max_examples=30)
@given(seed=st.integers(0, 2**31 - 1), sparse=st.booleans())
def test_one_slack_cut_matches_brute_force(seed, sparse):
    X, y, ptr, w = _instance(seed)
    o = DenseSequenceOracle(sp.csr_matrix(X) if sparse else X, y, ptr, 3)
    res = o(w)
    val, grad = _brute_risk(X, y, ptr, w, 3)
    assert res.value == pytest.approx(val, rel=1e-10, abs=1e-10)
    np.testing.assert_allclose(res.cut.slope, grad, atol=1e-10)
    assert res.cut.offset + res.cut.slope @ w == pytest.approx(res.value, rel=1e-10, abs=1e-10)
    # the cut is a global minorant: check at random points against the brute-force risk
    rng = np.random.default_rng(seed)
    for _ in range(3):
        v = rng.normal(scale=2.0, size=w.size)
        assert _brute_risk(X, y, ptr, v, 3)[0] >= res.cut.slope @ v + res.cut.offset - 1e-9


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1))
def test_per_example_interface_matches_the_batch_cut(seed):
    X, y, ptr, w = _instance(seed)
    o = DenseSequenceOracle(X, y, ptr, 3)
    res = o(w)
    vals, slope = [], np.zeros(o.dim)
    for i in range(o.n_samples):
        sg = o.example_subgradient(i, w)
        g = np.zeros(o.dim)
        g[sg.indices] = sg.values
        r = o.example_oracle(w, i)
        np.testing.assert_allclose(r.cut.slope, g, atol=1e-12)
        assert r.value == pytest.approx(sg.value)
        yh = o.loss_augmented_argmax(w, i)
        np.testing.assert_allclose(-o.delta_phi(i, yh), g, atol=1e-12)
        assert sg.value == pytest.approx(o.loss(i, yh) - o.delta_phi(i, yh) @ w, abs=1e-10)
        vals.append(sg.value)
        slope += g
    assert np.mean(vals) == pytest.approx(res.value, abs=1e-10)
    np.testing.assert_allclose(slope / o.n_samples, res.cut.slope, atol=1e-12)
    np.testing.assert_array_equal(
        np.concatenate([o.loss_augmented_argmax(w, i) for i in range(o.n_samples)]), res.argmax
    )


@settings(max_examples=20)
@given(seed=st.integers(0, 2**31 - 1), transitions=st.booleans())
def test_one_hot_features_equal_the_sparse_sequence_oracle(seed, transitions):
    rng = np.random.default_rng(seed)
    n_feat, K = 6, 3
    lens = rng.integers(1, 5, size=4)
    ptr = np.concatenate([[0], np.cumsum(lens)])
    nt = ptr[-1]
    n_active = rng.integers(1, 3, size=nt)
    indices = np.concatenate([rng.choice(n_feat, size=k, replace=False) for k in n_active])
    indptr = np.concatenate([[0], np.cumsum(n_active)])
    X = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(nt, n_feat))
    y = rng.integers(0, K, size=nt)
    dense = DenseSequenceOracle(X.toarray(), y, ptr, K, transitions=transitions)
    ref = SequenceHingeOracle(indptr, indices, ptr, y, n_feat, K, transitions=transitions)
    assert dense.dim == ref.dim
    for _ in range(3):
        w = rng.normal(size=dense.dim)
        a, b = dense(w), ref(w)
        assert a.value == pytest.approx(b.value, abs=1e-10)
        np.testing.assert_allclose(a.cut.slope, b.cut.slope.toarray().ravel(), atol=1e-12)
        np.testing.assert_array_equal(a.argmax, b.argmax)
        np.testing.assert_array_equal(dense.decode(w), ref.decode(w))


def test_groups_layout_and_chunked_executor():
    X, y, ptr, w = _instance(7, n_sent=6, D=4)
    fg = np.array([0, 0, 1, 2])
    o = DenseSequenceOracle(X, y, ptr, 3, feature_groups=fg)
    assert o.n_groups == 4
    assert o.groups.shape == (o.dim,)
    np.testing.assert_array_equal(o.groups[:12], np.repeat(fg, 3))
    assert np.all(o.groups[12:] == 3)
    chunked = DenseSequenceOracle(X, y, ptr, 3, feature_groups=fg, executor="threads", n_chunks=3)
    assert len(chunked.chunks) > 1
    a, b = o(w), chunked(w)
    assert a.value == pytest.approx(b.value, abs=1e-12)
    np.testing.assert_allclose(a.cut.slope, b.cut.slope, atol=1e-12)


def test_bad_input_raises_input_error():
    X, y, ptr, w = _instance(1)
    with pytest.raises(InputError):
        DenseSequenceOracle(X, y[:-1], ptr, 3)
    with pytest.raises(InputError):
        DenseSequenceOracle(X, y, ptr[:-1], 3)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(InputError):
        DenseSequenceOracle(bad, y, ptr, 3)
    with pytest.raises(InputError):
        DenseSequenceOracle(X, y + 3, ptr, 3)
    o = DenseSequenceOracle(X, y, ptr, 3)
    with pytest.raises(InputError):
        o(w[:-1])
    with pytest.raises(InputError):
        o.example_subgradient(99, w)
