"""The one-class risk (offset profiled out) against a brute-force minimum over the offset."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.novelty import OneClassHinge


def inner(s, nu, rho):
    return np.maximum(0.0, rho - s).mean() - nu * rho


def brute(s, nu):
    """min over rho: the inner function is piecewise linear with kinks at the scores."""
    values = np.array([inner(s, nu, r) for r in s])
    return values.min(), s[values <= values.min() + 1e-9]


@st.composite
def data(draw):
    n = draw(st.integers(1, 9))
    d = draw(st.integers(1, 3))
    floats = st.floats(-3, 3, allow_subnormal=False).map(lambda v: round(v, 6))  # kinks not within h of k
    elems = st.integers(-2, 2) if draw(st.booleans()) else floats  # integers: ties
    X = np.array(draw(st.lists(elems, min_size=n * d, max_size=n * d)), float).reshape(n, d)
    w = np.array(draw(st.lists(elems, min_size=d, max_size=d)), float)
    nu = draw(st.sampled_from([1.0, 0.5, 0.25, 0.1]) | st.floats(0.01, 1.0))
    return X, w, nu


@settings(max_examples=300, deadline=None)
@given(case=data(), sparse=st.booleans())
def test_value_and_offset_equal_brute_force(case, sparse):
    X, w, nu = case
    oracle = OneClassHinge(sp.csr_matrix(X) if sparse else X, nu)
    res = oracle(w)
    s = X @ w
    value, argmins = brute(s, nu)
    np.testing.assert_allclose(res.value, value, rtol=1e-12, atol=1e-12)
    assert inner(s, nu, oracle.offset(w)) == pytest.approx(value, abs=1e-9)  # a minimiser
    np.testing.assert_allclose(res.cut.slope @ w + res.cut.offset, res.value, atol=1e-12)
    assert res.cut.offset == pytest.approx(0.0, abs=1e-12)  # positively homogeneous


@settings(max_examples=200, deadline=None)
@given(case=data(), seed=st.integers(0, 10_000))
def test_cut_is_a_minorant_of_the_profiled_risk(case, seed):
    X, w, nu = case
    oracle = OneClassHinge(X, nu)
    cut = oracle(w).cut
    rng = np.random.default_rng(seed)
    for v in rng.uniform(-3, 3, size=(20, X.shape[1])):
        assert cut.slope @ v + cut.offset <= brute(X @ v, nu)[0] + 1e-9


@settings(max_examples=200, deadline=None)
@given(case=data(), seed=st.integers(0, 10_000), k=st.floats(0.0, 3.0))
def test_line_function_value_and_right_derivative(case, seed, k):
    X, w, nu = case
    d = np.random.default_rng(seed).integers(-2, 3, size=X.shape[1]).astype(float)
    oracle = OneClassHinge(X, nu)
    value, slope = oracle.line_function(w, d)(k)
    np.testing.assert_allclose(value, brute(X @ (w + k * d), nu)[0], rtol=1e-10, atol=1e-10)
    here = brute(X @ (w + k * d), nu)[0]

    def right(h):
        return (brute(X @ (w + (k + h) * d), nu)[0] - here) / h

    assert slope <= right(1e-6) + 1e-5  # convexity: the right derivative is below every right quotient
    if right(1e-6) == pytest.approx(right(1e-7), abs=1e-5):  # no kink just right of k: linear there
        assert slope == pytest.approx(right(1e-7), abs=1e-5)  # the right derivative, not the left


def test_refusals():
    for nu in (0.0, 1.5, -0.1, "a", True):
        with pytest.raises(InputError) as err:
            OneClassHinge(np.eye(2), nu)
        assert err.value.field == "nu"
    with pytest.raises(InputError):
        OneClassHinge(np.eye(2), 0.5)(np.zeros(3))
