"""The F1 and precision@k multivariate hinges against the enumeration of every labelling (n <= 8)."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.multivariate import MultivariateHinge


def delta(y, yp, measure, k):
    tp = int(np.sum((y == 1) & (yp == 1)))
    if measure == "precision_at_k":
        return 1.0 - tp / k
    fp = int(np.sum((y == -1) & (yp == 1)))
    fn = int(np.sum((y == 1) & (yp == -1)))
    return 1.0 if tp == 0 else 1.0 - 2.0 * tp / (2 * tp + fp + fn)


def labellings(n, measure, k):
    for bits in itertools.product((-1.0, 1.0), repeat=n):
        yp = np.array(bits)
        if measure == "f1" or int(np.sum(yp == 1)) == k:
            yield yp


def brute(X, y, w, measure, k):
    """max over labellings y' of Delta + (1/(2n)) sum_i (y'_i - y_i) <w, x_i>: value and the set of maximisers."""
    s = X @ w
    n = len(y)
    terms = [(delta(y, yp, measure, k) + (yp - y) @ s / (2 * n), yp) for yp in labellings(n, measure, k)]
    best = max(t for t, _ in terms)
    return best, [yp for t, yp in terms if t >= best - 1e-9]


@st.composite
def data(draw):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 3))
    integer = draw(st.booleans())  # integer data makes ties between labellings
    elems = st.integers(-2, 2) if integer else st.floats(-3, 3)
    X = np.array(draw(st.lists(elems, min_size=n * d, max_size=n * d)), float).reshape(n, d)
    w = np.array(draw(st.lists(elems, min_size=d, max_size=d)), float)
    y = np.array(draw(st.lists(st.sampled_from([-1, 1]), min_size=n, max_size=n)))
    if not np.any(y == 1):
        y[draw(st.integers(0, n - 1))] = 1
    measure = draw(st.sampled_from(["f1", "precision_at_k"]))
    k = draw(st.integers(1, n)) if measure == "precision_at_k" else None
    return X, y, w, measure, k


@settings(max_examples=400, deadline=None)
@given(case=data(), sparse=st.booleans())
def test_value_and_subgradient_equal_the_enumeration(case, sparse):
    X, y, w, measure, k = case
    oracle = MultivariateHinge(sp.csr_matrix(X) if sparse else X, y, measure, k)
    res = oracle(w)
    value, maximisers = brute(X, y, w, measure, k)
    np.testing.assert_allclose(res.value, value, rtol=1e-12, atol=1e-12)
    # the labelling returned is one of the maximisers, and the slope is its Psi difference
    assert any(np.array_equal(res.argmax, yp) for yp in maximisers)
    np.testing.assert_allclose(res.cut.slope, X.T @ (res.argmax - y) / (2 * len(y)), atol=1e-12)
    np.testing.assert_allclose(res.cut.slope @ w + res.cut.offset, res.value, atol=1e-12)


@settings(max_examples=150, deadline=None)
@given(case=data(), seed=st.integers(0, 10_000))
def test_cut_is_a_minorant(case, seed):
    X, y, w, measure, k = case
    cut = MultivariateHinge(X, y, measure, k)(w).cut
    for v in np.random.default_rng(seed).standard_normal((8, X.shape[1])) * 3:
        assert brute(X, y, v, measure, k)[0] >= cut.slope @ v + cut.offset - 1e-10


@settings(max_examples=100, deadline=None)
@given(case=data())
def test_declared_lower_bound_holds(case):
    X, y, w, measure, k = case
    oracle = MultivariateHinge(X, y, measure, k)
    if measure == "f1" or int(np.sum(y == 1)) == k:
        assert oracle.risk_lower_bound == 0.0
        assert oracle(w).value >= 0.0
    else:
        assert oracle.risk_lower_bound is None


def test_precision_at_k_is_unbounded_below_when_k_differs_from_the_positives():
    X = np.ones((4, 1))  # a constant feature
    oracle = MultivariateHinge(X, np.array([1, 1, -1, -1]), "precision_at_k", 1)
    assert oracle(np.array([100.0])).value < oracle(np.array([10.0])).value < 0


def test_bad_input_is_refused_naming_the_field():
    X = np.eye(3)
    for kwargs, field in [
        (dict(y=[1, 0, -1], measure="f1"), "y"),
        (dict(y=[-1, -1, -1], measure="f1"), "y"),
        (dict(y=[1, -1, -1], measure="roc_auc"), "measure"),
        (dict(y=[1, -1, -1], measure="f1", k=2), "k"),
        (dict(y=[1, -1, -1], measure="precision_at_k"), "k"),
        (dict(y=[1, -1, -1], measure="precision_at_k", k=4), "k"),
        (dict(y=[1, -1, -1], measure="precision_at_k", k=True), "k"),
    ]:
        with pytest.raises(InputError) as err:
            MultivariateHinge(X, **kwargs)
        assert err.value.field == field


def test_f1_search_at_larger_n_matches_a_vectorised_search():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = np.where(rng.random(300) < 0.3, 1, -1)
    w = rng.standard_normal(5)
    s = X @ w
    sp_, sn = np.sort(s[y == 1])[::-1], np.sort(s[y == -1])[::-1]
    cp_, cn = np.r_[0, np.cumsum(sp_)], np.r_[0, np.cumsum(sn)]
    a, b = np.meshgrid(np.arange(len(sp_) + 1), np.arange(len(sn) + 1), indexing="ij")
    f1 = np.where(a == 0, 0.0, 2 * a / np.maximum(a + b + len(sp_), 1))
    values = 1 - f1 + (cn[b] - (cp_[-1] - cp_[a])) / 300
    assert MultivariateHinge(X, y, "f1")(w).value == pytest.approx(values.max(), rel=1e-12)
