"""The all-threshold ordinal hinge against a brute-force minimum over the thresholds."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.ordinal import OrdinalHinge


def phi(s, r, j, t):
    z = np.where(r > j, 1.0, -1.0)
    return np.maximum(0.0, 1.0 - z * (s - t)).sum()


def brute(X, r, w):
    """min over theta of the all-threshold hinge: each phi_j is piecewise linear, so its minimum is at a breakpoint."""
    s = X @ w
    total, argmins = 0.0, []
    for j in range(r.max()):
        candidates = np.r_[s - 1.0, s + 1.0]
        values = np.array([phi(s, r, j, t) for t in candidates])
        total += values.min()
        argmins.append(candidates[values <= values.min() + 1e-9])
    return total / len(r), argmins


@st.composite
def data(draw):
    n = draw(st.integers(2, 9))
    d = draw(st.integers(1, 3))
    elems = st.integers(-2, 2) if draw(st.booleans()) else st.floats(-3, 3)  # integers: ties at kinks
    X = np.array(draw(st.lists(elems, min_size=n * d, max_size=n * d)), float).reshape(n, d)
    w = np.array(draw(st.lists(elems, min_size=d, max_size=d)), float)
    k = draw(st.integers(2, min(n, 4)))
    r = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    r[:k] = np.arange(k)  # every rank present
    return X, r, w


@settings(max_examples=300, deadline=None)
@given(case=data(), sparse=st.booleans())
def test_value_and_thresholds_equal_brute_force(case, sparse):
    X, r, w = case
    oracle = OrdinalHinge(sp.csr_matrix(X) if sparse else X, r)
    res = oracle(w)
    value, argmins = brute(X, r, w)
    np.testing.assert_allclose(res.value, value, rtol=1e-12, atol=1e-12)
    theta = res.argmax
    assert np.all(np.diff(theta) >= 0)  # the profiled thresholds are ordered
    for j, t in enumerate(theta):
        assert phi(X @ w, r, j, t) == pytest.approx(phi(X @ w, r, j, argmins[j][0]), abs=1e-9)
    np.testing.assert_allclose(res.cut.slope @ w + res.cut.offset, res.value, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(case=data(), seed=st.integers(0, 10_000))
def test_cut_is_a_minorant_of_the_profiled_risk(case, seed):
    X, r, w = case
    cut = OrdinalHinge(X, r)(w).cut
    for v in np.random.default_rng(seed).standard_normal((8, X.shape[1])) * 3:
        assert brute(X, r, v)[0] >= cut.slope @ v + cut.offset - 1e-10


@settings(max_examples=100, deadline=None)
@given(case=data())
def test_slope_is_a_gradient_where_the_risk_is_smooth(case):
    X, r, w = case
    slope = OrdinalHinge(X, r)(w).cut.slope
    h = 1e-6
    for e in np.eye(X.shape[1]):
        up, down = brute(X, r, w + h * e)[0], brute(X, r, w - h * e)[0]
        if abs(up + down - 2 * brute(X, r, w)[0]) < 1e-12:  # no kink crossed along e
            assert slope @ e == pytest.approx((up - down) / (2 * h), abs=1e-5)


def test_bad_ranks_are_refused():
    for r in ([0, 0, 0], [0, 2, 2], [0.0, 1.0, 1.0], [-1, 0, 1], [0, 1]):
        with pytest.raises(InputError) as err:
            OrdinalHinge(np.eye(3), np.array(r))
        assert err.value.field == "y"
