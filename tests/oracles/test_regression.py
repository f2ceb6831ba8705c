"""Regression risks against brute force: per-example sums, the intercept by a fine 1-D search."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar

from cutplane.exceptions import InputError
from oracles.regression import REGRESSION_LOSSES, RegressionRisk


def loss_of(name, r, epsilon=0.3, quantile=0.3, delta=0.7):
    if name == "absolute":
        return abs(r)
    if name == "quantile":
        return max(quantile * r, (quantile - 1) * r)
    if name == "epsilon_insensitive":
        return max(0.0, abs(r) - epsilon)
    if name == "squared":
        return 0.5 * r * r
    return 0.5 * r * r if abs(r) <= delta else delta * (abs(r) - 0.5 * delta)


def brute_value(X, y, s, w, name, b=0.0):
    return sum(s[i] * loss_of(name, y[i] - X[i] @ w - b) for i in range(len(y))) / len(y)


def brute_profiled(X, y, s, w, name):
    """min over b by checking every breakpoint candidate and a bounded scalar search."""
    z = y - X @ w
    cands = list(z) + list(z - 0.3) + list(z + 0.3) + list(z - 0.7) + list(z + 0.7)
    best = min(brute_value(X, y, s, w, name, b) for b in cands)
    res = minimize_scalar(
        lambda b: brute_value(X, y, s, w, name, b),
        bounds=(z.min() - 1, z.max() + 1),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return min(best, res.fun)


@st.composite
def regression_data(draw):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 3))
    fl = st.floats(-3, 3)
    X = np.array(draw(st.lists(fl, min_size=n * d, max_size=n * d))).reshape(n, d)
    y = np.array(draw(st.lists(fl, min_size=n, max_size=n)))
    w = np.array(draw(st.lists(fl, min_size=d, max_size=d)))
    weighted = draw(st.booleans())
    s = np.array(draw(st.lists(st.floats(0.1, 3), min_size=n, max_size=n))) if weighted else None
    return X, y, w, s


KW = dict(epsilon=0.3, quantile=0.3, delta=0.7)


@settings(max_examples=150)
@given(data=regression_data(), loss=st.sampled_from(REGRESSION_LOSSES), sparse=st.booleans())
def test_no_intercept_equals_per_example_sum(data, loss, sparse):
    X, y, w, s = data
    oracle = RegressionRisk(sp.csr_matrix(X) if sparse else X, y, loss, sample_weight=s, **KW)
    s1 = np.ones(len(y)) if s is None else s
    res = oracle(w)
    np.testing.assert_allclose(res.value, brute_value(X, y, s1, w, loss), rtol=1e-12, atol=1e-12)
    # subgradient: the cut is below R everywhere and equal at w
    rng = np.random.default_rng(0)
    for v in rng.standard_normal((8, X.shape[1])) * 2:
        assert brute_value(X, y, s1, v, loss) >= res.cut.slope @ v + res.cut.offset - 1e-9
    if loss in ("squared", "huber"):  # smooth: the gradient itself, by central differences
        h = 1e-6
        num = [
            (brute_value(X, y, s1, w + h * e, loss) - brute_value(X, y, s1, w - h * e, loss)) / (2 * h)
            for e in np.eye(X.shape[1])
        ]
        np.testing.assert_allclose(res.cut.slope, num, atol=1e-5)


@settings(max_examples=150)
@given(data=regression_data(), loss=st.sampled_from(REGRESSION_LOSSES), seed=st.integers(0, 1000))
def test_intercept_profiled_exactly(data, loss, seed):
    X, y, w, s = data
    oracle = RegressionRisk(X, y, loss, fit_intercept=True, sample_weight=s, **KW)
    s1 = np.ones(len(y)) if s is None else s
    res = oracle(w)
    # the value is the minimum over b: equal to the brute-force minimum, attained at the returned b
    np.testing.assert_allclose(res.value, brute_profiled(X, y, s1, w, loss), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.value, brute_value(X, y, s1, w, loss, res.argmax), rtol=1e-12, atol=1e-12)
    # the cut is a minorant of the profiled risk
    rng = np.random.default_rng(seed)
    for v in rng.standard_normal((6, X.shape[1])) * 2:
        assert brute_profiled(X, y, s1, v, loss) >= res.cut.slope @ v + res.cut.offset - 1e-7


@settings(max_examples=60)
@given(data=regression_data(), loss=st.sampled_from(("absolute", "quantile", "epsilon_insensitive")))
def test_line_search_pieces_give_the_risk_on_the_line(data, loss):
    X, y, w, s = data
    oracle = RegressionRisk(X, y, loss, sample_weight=s, **KW)
    assert oracle.supports_line_search
    d = np.linspace(-1, 1, X.shape[1])
    off, slo = oracle.line_search_pieces(w, d)
    for k in (0.0, 0.3, 2.0):
        np.testing.assert_allclose(np.max(off + k * slo, axis=1).sum(), oracle(w + k * d).value, atol=1e-12)


def test_bad_parameters_refused():
    X, y = np.eye(2), np.zeros(2)
    for kw, field in [
        (dict(loss="hinge"), "loss"),
        (dict(quantile=1.0), "quantile"),
        (dict(epsilon=-1), "epsilon"),
        (dict(delta=0), "delta"),
        (dict(sample_weight=[1, -1]), "sample_weight"),
    ]:
        with pytest.raises(InputError) as err:
            RegressionRisk(X, y, **kw)
        assert err.value.field == field
    with pytest.raises(InputError, match="finite"):
        RegressionRisk(X, [0, np.inf])
    with pytest.raises(InputError, match="line search"):
        RegressionRisk(X, y, "absolute", fit_intercept=True).line_search_pieces(np.zeros(2), np.ones(2))
