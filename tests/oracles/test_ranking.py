"""The ranking and ROC-area hinges against the all-pairs brute force."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.ranking import PairwiseRankingHinge
from oracles.roc_area import ROCAreaHinge


def brute_pairs(X, y, qid, w):
    """Mean hinge over all pairs (i, j) of one query with y_i > y_j, and its subgradient."""
    X = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)
    s = X @ w
    value, grad, n_pairs = 0.0, np.zeros(X.shape[1]), 0
    for i in range(len(y)):
        for j in range(len(y)):
            if qid[i] == qid[j] and y[i] > y[j]:
                n_pairs += 1
                loss = 1.0 - (s[i] - s[j])
                if loss > 0:
                    value += loss
                    grad -= X[i] - X[j]
    return value / n_pairs, grad / n_pairs, n_pairs


@st.composite
def ranking_data(draw):
    n = draw(st.integers(2, 9))
    d = draw(st.integers(1, 4))
    integer = draw(st.booleans())  # integer data makes exact ties s_j = s_i - 1
    if integer:
        X = np.array(draw(st.lists(st.integers(-2, 2), min_size=n * d, max_size=n * d)), float).reshape(n, d)
        w = np.array(draw(st.lists(st.integers(-2, 2), min_size=d, max_size=d)), float)
    else:
        X = np.array(draw(st.lists(st.floats(-3, 3), min_size=n * d, max_size=n * d))).reshape(n, d)
        w = np.array(draw(st.lists(st.floats(-3, 3), min_size=d, max_size=d)))
    y = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    qid = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    return X, y, qid, w


@settings(max_examples=300)
@given(data=ranking_data(), sparse=st.booleans())
def test_ranking_equals_all_pairs(data, sparse):
    X, y, qid, w = data
    value, grad, n_pairs = brute_pairs(X, y, qid, w) if _has_pair(y, qid) else (None, None, 0)
    if n_pairs == 0:
        with pytest.raises(InputError, match="no two items"):
            PairwiseRankingHinge(X, y, qid)
        return
    oracle = PairwiseRankingHinge(sp.csr_matrix(X) if sparse else X, y, qid)
    res = oracle(w)
    assert oracle.n_pairs == n_pairs
    np.testing.assert_allclose(res.value, value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.cut.slope, grad, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.cut.offset + res.cut.slope @ w, res.value, atol=1e-12)


def _has_pair(y, qid):
    return any(qid[i] == qid[j] and y[i] > y[j] for i in range(len(y)) for j in range(len(y)))


@settings(max_examples=100)
@given(data=ranking_data(), seed=st.integers(0, 10_000))
def test_ranking_cut_is_a_minorant(data, seed):
    X, y, qid, w = data
    if not _has_pair(y, qid):
        return
    oracle = PairwiseRankingHinge(X, y, qid)
    cut = oracle(w).cut
    rng = np.random.default_rng(seed)
    for v in rng.standard_normal((10, X.shape[1])) * 3:
        assert brute_pairs(X, y, qid, v)[0] >= cut.slope @ v + cut.offset - 1e-10


def test_query_ids_of_any_type_and_order():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = rng.integers(0, 3, 30)
    qid = rng.choice(np.array(["q7", "a", "zz"]), 30)
    w = rng.standard_normal(3)
    value, grad, _ = brute_pairs(X, y, qid, w)
    res = PairwiseRankingHinge(X, y, qid)(w)
    np.testing.assert_allclose([res.value, *res.cut.slope], [value, *grad], rtol=1e-12)


def test_ranking_bad_input():
    X = np.eye(3)
    with pytest.raises(InputError, match="qid"):
        PairwiseRankingHinge(X, [0, 1, 2], qid=[0, 1])
    with pytest.raises(InputError, match="finite"):
        PairwiseRankingHinge(X, [0, np.nan, 2])
    with pytest.raises(InputError, match="no two items"):
        PairwiseRankingHinge(X, [0, 1, 2], qid=[0, 1, 2])


@settings(max_examples=200)
@given(data=ranking_data(), sparse=st.booleans())
def test_roc_area_equals_positive_negative_pairs(data, sparse):
    X, y, _, w = data
    y = np.where(y >= 2, 1, -1)
    if np.all(y == y[0]):
        with pytest.raises(InputError, match="both"):
            ROCAreaHinge(X, y)
        return
    value, grad, n_pairs = brute_pairs(X, y, np.zeros(len(y)), w)
    oracle = ROCAreaHinge(sp.csr_matrix(X) if sparse else X, y)
    res = oracle(w)
    assert oracle.n_pairs == n_pairs == np.sum(y == 1) * np.sum(y == -1)
    np.testing.assert_allclose(res.value, value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(res.cut.slope, grad, rtol=1e-12, atol=1e-12)


def test_roc_area_labels_refused():
    with pytest.raises(InputError, match="-1 or \\+1"):
        ROCAreaHinge(np.eye(2), [0, 1])


def test_a_pair_at_the_margin_to_rounding_counts_on_both_sides():
    """Both sweeps test ``s_j > s_i - 1`` (the up sweep tested ``s_i < s_j + 1``, which rounding can
    make disagree: the pair then counted for one item only, and the value was off by ``|s|``)."""
    X = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    w = np.array([-1.0, 0.0, -1.066406])  # s_1 - s_0 = 1 to rounding
    y = np.array([0, 1, 0, 0])
    oracle = PairwiseRankingHinge(X, y)
    a, b, _ = oracle.counts(w)
    assert a.sum() == b.sum()
    np.testing.assert_allclose(oracle(w).value, brute_pairs(X, y, np.zeros(4), w)[0], rtol=1e-12)


@pytest.mark.parametrize("sizes", [(700,), (300, 20, 500, 3)])
def test_large_queries_sorted_by_numpy_count_as_all_pairs(sizes):
    """Queries of _NUMPY_SORT_FROM items or more are sorted before the compiled sweeps: the same counts."""
    rng = np.random.default_rng(sum(sizes))
    n = sum(sizes)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.integers(0, 4, n)
    X = np.round(rng.standard_normal((n, 2)), 1)  # ties, and pairs at the margin
    w = np.array([1.0, -0.5])
    a, b, s = PairwiseRankingHinge(X, y, qid).counts(w)
    pref = (qid[:, None] == qid[None, :]) & (y[:, None] > y[None, :])  # (i, j): i preferred
    violated = pref & (s[None, :] > s[:, None] - 1.0)
    np.testing.assert_array_equal(a, violated.sum(axis=1))
    np.testing.assert_array_equal(b, violated.sum(axis=0))
