"""One cut per example (``example_cuts``, the n-slack method's oracle) against brute force.

For every oracle with ``example_cuts``: each row's value is the example's own maximum over every
output (enumerated), the row's cut is tight at ``w`` and below ``R_i`` elsewhere, the mean of the
values is the 1-slack oracle's value, and the mean of the rows is its slope.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_to_dense
from cutplane.executors import ThreadExecutor
from cutplane.protocols import ExampleCutsOracle
from oracles.linear import BinaryHinge, MulticlassHinge
from oracles.sequence import SequenceHingeOracle

from .test_sequence_bigram_oracle import dense_phi as bigram_phi
from .test_sequence_bigram_oracle import random_bigram
from .test_sequence_oracle import dense_phi, random_data


def _check_rows(oracle, ex, w, brute_values, rng):
    """The common properties of an ExampleCuts at ``w``."""
    n = oracle.n_samples
    assert isinstance(oracle, ExampleCutsOracle)
    assert ex.values.shape == ex.offsets.shape == (n,)
    assert ex.slopes.shape == (n, oracle.dim)
    np.testing.assert_allclose(ex.values, brute_values, atol=1e-9)
    assert np.all(ex.values >= oracle.example_lower_bound - 1e-12)
    A = ex.slopes.toarray()
    np.testing.assert_allclose(A @ w + ex.offsets, ex.values, atol=1e-9)  # tight at w
    assert np.all(ex.slopes.data != 0)  # no stored zeros
    res = oracle(w)  # the 1-slack cut is the mean of the rows
    assert res.value == pytest.approx(ex.values.mean(), abs=1e-9)
    np.testing.assert_allclose(slope_to_dense(res.cut.slope, oracle.dim), A.mean(axis=0), atol=1e-12)
    assert res.cut.offset == pytest.approx(ex.offsets.mean(), abs=1e-12)
    for _ in range(3):  # each row is a minorant of its own example's risk
        v = 2 * rng.standard_normal(oracle.dim)
        np.testing.assert_array_less(A @ v + ex.offsets, oracle.example_cuts(v).values + 1e-9)


def _brute_sequence(data, w, nf, K, transitions, phi):
    _, _, sentence_ptr, labels = data
    out = []
    for i in range(len(sentence_ptr) - 1):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi = labels[t0:t1]
        phi_i = phi(i, yi)
        out.append(
            max(
                np.sum(np.array(y) != yi) + w @ (phi(i, np.array(y)) - phi_i)
                for y in itertools.product(range(K), repeat=t1 - t0)
            )
        )
    return np.array(out)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 5),
    K=st.integers(1, 3),
    nf=st.integers(1, 5),
    transitions=st.booleans(),
    n_chunks=st.integers(1, 3),
    integer_w=st.booleans(),
)
def test_sequence_rows_match_brute_force(seed, n, K, nf, transitions, n_chunks, integer_w):
    rng = np.random.default_rng(seed)
    data = random_data(rng, n, 4, nf, K, max_feats=4)
    oracle = SequenceHingeOracle(*data, nf, K, transitions=transitions, n_chunks=n_chunks)
    w = (rng.integers(-2, 3, oracle.dim) if integer_w else rng.standard_normal(oracle.dim)).astype(float)
    ex = oracle.example_cuts(w)
    indptr, indices, sentence_ptr, labels = data

    def phi(i, y):
        return dense_phi(indptr, indices, sentence_ptr[i], y, nf, K, transitions)

    _check_rows(oracle, ex, w, _brute_sequence(data, w, nf, K, transitions, phi), rng)
    # counts of a few tokens: int8, whichever chunks are empty (an all-correct chunk)
    assert ex.slopes.dtype == np.int8
    # row i is Phi(x_i, y^_i) - Phi(x_i, y_i), offset Delta, for the outputs of argmax
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yhat = ex.argmax[t0:t1]
        np.testing.assert_allclose(ex.slopes[i].toarray().ravel(), phi(i, yhat) - phi(i, labels[t0:t1]), atol=0)
        assert ex.offsets[i] == np.sum(yhat != labels[t0:t1])


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 4),
    K=st.integers(1, 3),
    nbf=st.integers(0, 3),
    transitions=st.booleans(),
)
def test_sequence_rows_with_bigram_features_match_brute_force(seed, n, K, nbf, transitions):
    rng = np.random.default_rng(seed)
    nf = 3
    data = random_data(rng, n, 4, nf, K)
    bigram = random_bigram(rng, data[2], nbf)
    oracle = SequenceHingeOracle(*data, nf, K, transitions=transitions, bigram_features=bigram)
    w = rng.standard_normal(oracle.dim)

    def phi(i, y):
        return bigram_phi(data, bigram, i, y, nf, K, transitions)

    _check_rows(oracle, oracle.example_cuts(w), w, _brute_sequence(data, w, nf, K, transitions, phi), rng)


def test_sequence_rows_through_threads_equal_serial():
    rng = np.random.default_rng(3)
    data = random_data(rng, 40, 6, 9, 4)
    serial = SequenceHingeOracle(*data, 9, 4)
    threads = SequenceHingeOracle(*data, 9, 4, executor=ThreadExecutor(2), n_chunks=5)
    w = rng.standard_normal(serial.dim)
    a, b = serial.example_cuts(w), threads.example_cuts(w)
    assert (a.slopes != b.slopes).nnz == 0
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_allclose(a.values, b.values, rtol=1e-14)


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 12), d=st.integers(1, 4), k=st.integers(2, 4), sparse=st.booleans()
)
def test_linear_rows_match_brute_force(seed, n, d, k, sparse):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = rng.integers(-2, 3, size=(n, d)).astype(float)
    Xin = sp.csr_matrix(X) if sparse else X
    y = rng.choice([-1, 1], size=n)
    binary = BinaryHinge(Xin, y)
    w = rng.standard_normal(d)
    _check_rows(binary, binary.example_cuts(w), w, np.maximum(0.0, 1.0 - y * (X @ w)), rng)
    labels = rng.integers(0, k, size=n)
    multi = MulticlassHinge(Xin, labels, n_classes=k)
    W = rng.standard_normal(k * d)
    scores = X @ W.reshape(k, d).T
    brute = np.array([max((c != labels[i]) + scores[i, c] - scores[i, labels[i]] for c in range(k)) for i in range(n)])
    _check_rows(multi, multi.example_cuts(W), W, brute, rng)
