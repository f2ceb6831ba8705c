"""Squared-hinge and logistic risks: value against a per-example loop, gradient against finite differences."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.smooth_linear import BinarySmoothLoss, MulticlassSmoothLoss


def brute(X, y, w, loss, n_classes, s):
    """The mean loss, one example at a time, straight from the formulas."""
    total = 0.0
    for i in range(len(y)):
        if n_classes is None:
            m = y[i] * (X[i] @ w)
            li = max(0.0, 1.0 - m) ** 2 if loss == "squared_hinge" else np.log1p(np.exp(-m))
        else:
            sc = w.reshape(n_classes, -1) @ X[i]
            if loss == "logistic":
                li = np.log(np.sum(np.exp(sc))) - sc[y[i]]
            else:
                li = max((c != y[i]) + sc[c] - sc[y[i]] for c in range(n_classes)) ** 2
        total += s[i] * li
    return total / len(y)


@st.composite
def data(draw):
    n = draw(st.integers(1, 7))
    d = draw(st.integers(1, 3))
    k = draw(st.sampled_from([None, 3, 4]))
    X = np.array(draw(st.lists(st.floats(-2, 2), min_size=n * d, max_size=n * d))).reshape(n, d)
    dim = d if k is None else k * d
    w = np.array(draw(st.lists(st.floats(-2, 2), min_size=dim, max_size=dim)))
    labels = st.sampled_from([-1, 1]) if k is None else st.integers(0, k - 1)
    y = np.array(draw(st.lists(labels, min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.floats(0.0, 3.0), min_size=n, max_size=n))) + 0.1
    loss = draw(st.sampled_from(["squared_hinge", "logistic"]))
    return X, y, w, k, s, loss


def _oracle(X, y, k, loss, s, sparse=False):
    Xo = sp.csr_matrix(X) if sparse else X
    return BinarySmoothLoss(Xo, y, loss, s) if k is None else MulticlassSmoothLoss(Xo, y, k, loss, s)


@settings(max_examples=300, deadline=None)
@given(case=data(), sparse=st.booleans())
def test_value_equals_the_loop_and_slope_the_central_difference(case, sparse):
    X, y, w, k, s, loss = case
    res = _oracle(X, y, k, loss, s, sparse)(w)
    assert res.value == pytest.approx(brute(X, y, w, loss, k, s), rel=1e-10, abs=1e-12)
    h = 1e-6
    fd = np.array(
        [(brute(X, y, w + h * e, loss, k, s) - brute(X, y, w - h * e, loss, k, s)) / (2 * h) for e in np.eye(len(w))]
    )
    # the losses are C^1 except the multiclass squared hinge where its max is tied (and positive)
    if k is not None and loss == "squared_hinge":
        sc = X @ w.reshape(k, -1).T
        A = sc - sc[np.arange(len(y)), y][:, None] + (np.arange(k)[None, :] != y[:, None])
        top = np.sort(A, axis=1)
        if np.any((top[:, -1] - top[:, -2] < 1e-4) & (top[:, -1] > 0)):
            return
    np.testing.assert_allclose(res.cut.slope, fd, atol=1e-5)


@settings(max_examples=150, deadline=None)
@given(case=data(), seed=st.integers(0, 10_000))
def test_cut_is_a_minorant(case, seed):
    X, y, w, k, s, loss = case
    cut = _oracle(X, y, k, loss, s)(w).cut
    for v in np.random.default_rng(seed).standard_normal((8, len(w))) * 2:
        assert brute(X, y, v, loss, k, s) >= cut.slope @ v + cut.offset - 1e-9


def test_bad_input_is_refused():
    with pytest.raises(InputError) as err:
        BinarySmoothLoss(np.eye(2), [1, -1], "hinge")
    assert err.value.field == "loss"
    with pytest.raises(InputError) as err:
        BinarySmoothLoss(np.eye(2), [1, 0], "logistic")
    assert err.value.field == "y"
    with pytest.raises(InputError) as err:
        MulticlassSmoothLoss(np.eye(2), [0, 3], 3, "logistic")
    assert err.value.field == "y"
