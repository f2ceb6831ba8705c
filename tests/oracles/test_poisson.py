"""The Poisson risk (log link) of RegressionRisk: value, gradient and profiled intercept against direct evaluations."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from cutplane.exceptions import InputError
from oracles.regression import RegressionRisk


def half_deviance(X, y, s, w, b):
    """(1/n) sum_i s_i (mu_i - y_i - y_i log(mu_i / y_i)), one example at a time."""
    total = 0.0
    for i in range(len(y)):
        mu = np.exp(X[i] @ w + b)
        total += s[i] * (mu - y[i] - (y[i] * np.log(mu / y[i]) if y[i] > 0 else 0.0))
    return total / len(y)


@st.composite
def data(draw):
    n = draw(st.integers(1, 7))
    d = draw(st.integers(1, 3))
    X = np.array(draw(st.lists(st.floats(-1.5, 1.5), min_size=n * d, max_size=n * d))).reshape(n, d)
    w = np.array(draw(st.lists(st.floats(-1.5, 1.5), min_size=d, max_size=d)))
    y = np.array(draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), float)
    s = np.array(draw(st.lists(st.floats(0.1, 3.0), min_size=n, max_size=n)))
    return X, y, s, w


@settings(max_examples=200, deadline=None)
@given(case=data(), intercept=st.booleans(), sparse=st.booleans())
def test_value_gradient_and_intercept(case, intercept, sparse):
    X, y, s, w = case
    if intercept and not np.any(y > 0):
        with pytest.raises(InputError):
            RegressionRisk(X, y, "poisson", fit_intercept=True, sample_weight=s)
        return
    res = RegressionRisk(sp.csr_matrix(X) if sparse else X, y, "poisson", fit_intercept=intercept, sample_weight=s)(w)
    b = res.argmax
    if intercept:  # the profiled intercept is the minimiser over b
        best = minimize_scalar(lambda t: half_deviance(X, y, s, w, t), bounds=(b - 20, b + 20), method="bounded")
        assert half_deviance(X, y, s, w, b) <= best.fun + 1e-9
    else:
        assert b == 0.0
    assert res.value == pytest.approx(half_deviance(X, y, s, w, b), rel=1e-10, abs=1e-12)
    h = 1e-6

    def profiled(v):
        r = RegressionRisk(X, y, "poisson", fit_intercept=intercept, sample_weight=s)(v)
        return half_deviance(X, y, s, v, r.argmax)

    fd = [(profiled(w + h * e) - profiled(w - h * e)) / (2 * h) for e in np.eye(len(w))]
    np.testing.assert_allclose(res.cut.slope, fd, atol=1e-5, rtol=1e-5)


@settings(max_examples=100, deadline=None)
@given(case=data(), seed=st.integers(0, 10_000))
def test_cut_is_a_minorant_of_the_profiled_risk(case, seed):
    X, y, s, w = case
    if not np.any(y > 0):
        return
    oracle = RegressionRisk(X, y, "poisson", fit_intercept=True, sample_weight=s)
    cut = oracle(w).cut
    for v in np.random.default_rng(seed).standard_normal((8, len(w))):
        assert oracle(v).value >= cut.slope @ v + cut.offset - 1e-9


def test_negative_targets_are_refused():
    with pytest.raises(InputError) as err:
        RegressionRisk(np.eye(2), [1.0, -1.0], "poisson")
    assert err.value.field == "y"
