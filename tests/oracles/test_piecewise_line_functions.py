"""The line functions of the piecewise-linear risks that are not of form (16) (pairwise hinges, a profiled
intercept or thresholds), and LS-BMRM's exact search on them, against brute force (hypothesis).

Each ``phi(k)`` is compared with a brute-force evaluation of the risk at ``w + k d`` (all pairs; the
minimum over the offset's candidate breakpoints; the multivariate hinge's own value, tested against
every labelling in ``test_multivariate.py``), its slope with the one-sided difference quotients,
and the minimiser found by :func:`cutplane.linesearch.piecewise_linear_search` with a fine grid of
the brute-force objective.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.linesearch import piecewise_linear_search
from oracles.multivariate import MultivariateHinge
from oracles.ordinal import OrdinalHinge
from oracles.ranking import PairwiseRankingHinge
from oracles.regression import PIECEWISE_LINEAR_LOSSES, RegressionRisk
from oracles.roc_area import ROCAreaHinge


def brute_ranking(X, y, qid, w):
    s = X @ w
    total, count = 0.0, 0
    for i in range(len(y)):
        for j in range(len(y)):
            if qid[i] == qid[j] and y[i] > y[j]:
                total += max(0.0, 1.0 - (s[i] - s[j]))
                count += 1
    return total / count


def brute_ordinal(X, r, w):
    s = X @ w
    total = 0.0
    for j in range(r.max()):
        z = np.where(r > j, 1.0, -1.0)
        total += min(np.maximum(0.0, 1.0 - z * (s - t)).sum() for t in np.r_[s - 1.0, s + 1.0])
    return total / len(r)


def regression_loss(loss, r):
    if loss == "absolute":
        return np.abs(r)
    if loss == "quantile":
        return np.maximum(0.3 * r, -0.7 * r)
    return np.maximum(0.0, np.abs(r) - 0.5)


def brute_regression(X, y, loss, w):
    z = y - X @ w
    kinks = {"absolute": [0.0], "quantile": [0.0], "epsilon_insensitive": [-0.5, 0.5]}[loss]
    return min(regression_loss(loss, z - b).mean() for b in np.concatenate([z - k for k in kinks]))


def make(kind, X, labels, extra):
    if kind == "ranking":
        return PairwiseRankingHinge(X, labels, extra), lambda w: brute_ranking(X, labels, extra, w)
    if kind == "roc":
        y = np.where(labels > np.median(labels), 1, -1)
        y[0], y[1] = 1, -1
        return ROCAreaHinge(X, y), lambda w: brute_ranking(X, y, np.zeros(len(y)), w)
    if kind == "ordinal":
        r = labels.copy()
        r[:3] = [0, 1, 2]
        r = np.unique(r, return_inverse=True)[1]
        return OrdinalHinge(X, r), lambda w: brute_ordinal(X, r, w)
    if kind in ("f1", "precision_at_k"):
        y = np.where(labels > np.median(labels), 1, -1)
        y[0], y[1] = 1, -1
        oracle = MultivariateHinge(X, y, kind, k=2 if kind == "precision_at_k" else None)
        reference = MultivariateHinge(X, y, kind, k=oracle.k)  # its value: tested against every labelling
        return oracle, lambda w: reference(w).value
    loss = kind
    kw = {"quantile": 0.3} if loss == "quantile" else {"epsilon": 0.5} if loss == "epsilon_insensitive" else {}
    y = labels.astype(float) + 0.25 * extra
    return RegressionRisk(X, y, loss=loss, fit_intercept=True, **kw), lambda w: brute_regression(X, y, loss, w)


KINDS = ["ranking", "roc", "ordinal", "f1", "precision_at_k", *PIECEWISE_LINEAR_LOSSES]


@st.composite
def cases(draw):
    n = draw(st.integers(4, 9))
    d = draw(st.integers(1, 3))
    floats = st.floats(-3, 3, allow_subnormal=False).map(lambda v: round(v, 6))
    X = np.array(draw(st.lists(floats, min_size=n * d, max_size=n * d)), float).reshape(n, d)
    w = np.array(draw(st.lists(floats, min_size=d, max_size=d)), float)
    direction = np.array(draw(st.lists(floats, min_size=d, max_size=d)), float)
    labels = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    labels[:2] = [0, 1]
    extra = np.array(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    extra[1] = extra[0]  # (as query ids) items 0 and 1 make a pair
    return X, w, direction, labels, extra


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None)
@given(case=cases(), k=st.floats(0.0, 3.0))
def test_line_function_value_and_slope(kind, case, k):
    X, w, d, labels, extra = case
    oracle, brute = make(kind, X, labels, extra)
    value, slope = oracle.line_function(w, d)(k)
    assert value == pytest.approx(brute(w + k * d), rel=1e-9, abs=1e-9)
    h = 1e-6
    left = (brute(w + k * d) - brute(w + (k - h) * d)) / h if k >= h else -np.inf
    right = (brute(w + (k + h) * d) - brute(w + k * d)) / h
    # a subgradient along the line: between the one-sided slopes (the derivative off the kinks)
    assert left - 1e-4 <= slope <= right + 1e-4


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=40, deadline=None)
@given(case=cases(), lam=st.floats(0.05, 5.0))
def test_exact_search_beats_a_fine_grid(kind, case, lam):
    X, w, d, labels, extra = case
    if not np.any(d):
        return
    oracle, brute = make(kind, X, labels, extra)
    res = piecewise_linear_search(lam * float(d @ d), lam * float(w @ d), oracle.line_function(w, d))
    assert res.converged

    def f(k):
        return 0.5 * lam * (k * k * float(d @ d) + 2.0 * k * float(w @ d)) + brute(w + k * d)

    assert res.value == pytest.approx(f(res.k), rel=1e-9, abs=1e-9)  # the value at k, not estimated
    grid = np.linspace(0.0, 2.0 * res.k + 1.0, 801)
    assert res.value <= min(f(k) for k in grid) + 1e-9
