"""Binary and Crammer-Singer hinge oracles against per-example brute force."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import OracleResult
from cutplane.exceptions import InputError
from oracles.linear import BinaryHinge, MulticlassHinge


def _binary_data(seed, n=15, d=4, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return (sp.csr_matrix(X) if sparse else X), y


def _multi_data(seed, n=15, d=4, k=3, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.6)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)
    return (sp.csr_matrix(X) if sparse else X), y


def brute_binary(X, y, w):
    X = X.toarray() if sp.issparse(X) else X
    n = len(y)
    value, grad = 0.0, np.zeros(X.shape[1])
    for i in range(n):
        loss = 1.0 - y[i] * X[i] @ w
        if loss > 0:
            value += loss / n
            grad -= y[i] * X[i] / n
    return value, grad


def brute_multi(X, y, w, k):
    X = X.toarray() if sp.issparse(X) else X
    n, d = X.shape
    W = w.reshape(k, d)
    value, G = 0.0, np.zeros((k, d))
    for i in range(n):
        terms = [float(c != y[i]) + (W[c] - W[y[i]]) @ X[i] for c in range(k)]
        c = int(np.argmax(terms))
        value += terms[c] / n
        G[c] += X[i] / n
        G[y[i]] -= X[i] / n
    return value, G.ravel()


@pytest.mark.parametrize("sparse", [False, True])
def test_binary_matches_brute_force(sparse):
    X, y = _binary_data(0, sparse=sparse)
    oracle = BinaryHinge(X, y)
    assert oracle.dim == 4
    for seed in range(5):
        w = np.random.default_rng(seed).standard_normal(4)
        res = oracle(w)
        assert isinstance(res, OracleResult)
        value, grad = brute_binary(X, y, w)
        assert res.value == pytest.approx(value, rel=1e-12, abs=1e-12)
        assert isinstance(res.cut.slope, np.ndarray) and res.cut.slope.shape == (4,)
        np.testing.assert_allclose(res.cut.slope, grad, atol=1e-12)
        assert res.cut.slope @ w + res.cut.offset == pytest.approx(res.value, abs=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
def test_multiclass_matches_brute_force(sparse):
    X, y = _multi_data(1, sparse=sparse)
    oracle = MulticlassHinge(X, y)
    assert oracle.n_classes == 3 and oracle.dim == 12
    for seed in range(5):
        w = np.random.default_rng(seed).standard_normal(12)
        res = oracle(w)
        value, grad = brute_multi(X, y, w, 3)
        assert res.value == pytest.approx(value, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(res.cut.slope, grad, atol=1e-12)
        assert res.cut.slope @ w + res.cut.offset == pytest.approx(res.value, abs=1e-12)


def test_multiclass_at_zero_is_one():
    X, y = _multi_data(2)
    assert MulticlassHinge(X, y)(np.zeros(12)).value == pytest.approx(1.0)
    Xb, yb = _binary_data(2)
    assert BinaryHinge(Xb, yb)(np.zeros(4)).value == pytest.approx(1.0)


def test_gradient_matches_finite_differences_at_generic_point():
    X, y = _multi_data(3, n=30, d=5, k=4)
    oracle = MulticlassHinge(X, y)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(oracle.dim)
    g = oracle(w).cut.slope
    h = 1e-7
    fd = np.array([(oracle(w + h * e).value - oracle(w - h * e).value) / (2 * h) for e in np.eye(oracle.dim)])
    np.testing.assert_allclose(g, fd, atol=1e-5)


@settings(max_examples=60)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["binary", "multi"]),
    sparse=st.booleans(),
    scale=st.floats(0.01, 10.0),
)
def test_subgradient_inequality(seed, kind, sparse, scale):
    if kind == "binary":
        X, y = _binary_data(seed, sparse=sparse)
        oracle = BinaryHinge(X, y)
    else:
        X, y = _multi_data(seed, sparse=sparse)
        oracle = MulticlassHinge(X, y)
    rng = np.random.default_rng(seed + 1)
    w = scale * rng.standard_normal(oracle.dim)
    res = oracle(w)
    for _ in range(10):
        v = w + scale * rng.standard_normal(oracle.dim)
        assert oracle(v).value >= res.value + res.cut.slope @ (v - w) - 1e-10


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.sampled_from([0.0, 0.5, 3.0, 30.0]))
def test_binary_slope_from_the_active_rows_only_is_the_full_product(seed, scale):
    """A sparse X with few active examples (w near a separator) reads only their rows: the same
    slope as the product over every row, and as brute force."""
    rng = np.random.default_rng(seed)
    n, d = 200, 30
    X = sp.random(n, d, density=0.2, format="csr", random_state=rng)
    w_true = rng.standard_normal(d)
    y = np.where(X @ w_true >= 0, 1.0, -1.0)
    oracle = BinaryHinge(X, y)
    w = scale * w_true
    res = oracle(w)
    coef = np.where(res.argmax, -y / n, 0.0)
    np.testing.assert_array_equal(res.cut.slope, np.asarray(X.T @ coef).ravel())
    value, grad = brute_binary(X, y, w)
    np.testing.assert_allclose(res.cut.slope, grad, atol=1e-12)
    assert res.value == pytest.approx(value, rel=1e-12, abs=1e-12)


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["binary", "multi"]))
def test_dense_equals_sparse(seed, kind):
    make, cls = (_binary_data, BinaryHinge) if kind == "binary" else (_multi_data, MulticlassHinge)
    Xd, y = make(seed)
    dense, sparse = cls(Xd, y), cls(sp.csr_matrix(Xd), y)
    w = np.random.default_rng(seed).standard_normal(dense.dim)
    a, b = dense(w), sparse(w)
    assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-14)
    np.testing.assert_allclose(a.cut.slope, b.cut.slope, atol=1e-14)


@settings(max_examples=40)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(["binary", "multi"]), sparse=st.booleans())
def test_line_search_pieces_reproduce_risk_on_the_line(seed, kind, sparse):
    if kind == "binary":
        X, y = _binary_data(seed, sparse=sparse)
        oracle, m = BinaryHinge(X, y), 2
    else:
        X, y = _multi_data(seed, sparse=sparse)
        oracle, m = MulticlassHinge(X, y), 3
    rng = np.random.default_rng(seed)
    w, d = rng.standard_normal(oracle.dim), rng.standard_normal(oracle.dim)
    offsets, slopes = oracle.line_search_pieces(w, d)
    assert offsets.shape == slopes.shape == (len(y), m)
    for k in np.concatenate([[0.0], rng.standard_normal(5) * 3]):
        direct = oracle(w + k * d).value
        assert np.max(offsets + k * slopes, axis=1).sum() == pytest.approx(direct, rel=1e-10, abs=1e-12)
    assert BinaryHinge.supports_line_search and MulticlassHinge.supports_line_search


@settings(max_examples=60)
@given(
    seed=st.integers(0, 10_000),
    kind=st.sampled_from(["binary", "multi"]),
    sparse=st.booleans(),
    k=st.floats(0.0, 5.0),
    theta=st.floats(0.01, 1.0),
)
def test_products_along_the_searched_line_match_a_fresh_oracle(seed, kind, sparse, k, theta):
    """LS-BMRM's points on the searched line reuse ``X w0 + kappa X d``: the same cuts as a fresh oracle."""
    rng = np.random.default_rng(seed)
    if kind == "binary":
        X, y = _binary_data(seed, sparse=sparse)
        make = lambda: BinaryHinge(X, y)  # noqa: E731
    else:
        X, y = _multi_data(seed, sparse=sparse)
        make = lambda: MulticlassHinge(X, y, n_classes=3)  # noqa: E731
    kept, fresh = make(), make()
    w0 = rng.standard_normal(kept.dim)
    wt = rng.standard_normal(kept.dim)
    d = wt - w0
    kept.line_search_pieces(w0, d)
    kappa = (1.0 - theta) * k + theta
    on_line = [w0 + k * d, w0 + kappa * d, w0]  # candidate, query (as LineSearchStep writes them), base
    off_line = [w0 + kappa * d + 1e-3 * rng.standard_normal(kept.dim), np.zeros(kept.dim)]
    for v in on_line + off_line:
        a, b = kept(v), fresh(v)
        assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(a.cut.slope, b.cut.slope, rtol=1e-12, atol=1e-14)
        assert a.cut.offset == pytest.approx(b.cut.offset, rel=1e-12, abs=1e-12)
    # the next line starts at the candidate: its pieces equal a fresh oracle's
    w1, d1 = w0 + k * d, rng.standard_normal(kept.dim)
    for got, want in zip(kept.line_search_pieces(w1, d1), fresh.line_search_pieces(w1, d1)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


def test_points_on_the_line_need_one_product_per_iteration():
    """After the first line, a line from the candidate and the query cost one pass over X (``X d``)."""
    X, y = _binary_data(3, n=40, d=6)
    oracle = BinaryHinge(X, y)
    calls = []
    direct = oracle._product
    oracle._products._product = lambda v: calls.append(1) or direct(v)
    rng = np.random.default_rng(0)
    w, d = rng.standard_normal(6), rng.standard_normal(6)
    oracle.line_search_pieces(w, d)
    assert len(calls) == 2  # X w and X d
    for _ in range(5):
        k = float(rng.random())
        oracle(w + (0.9 * k + 0.1) * d)  # the query: no product
        w = w + k * d  # the candidate becomes the next base
        d = rng.standard_normal(6)
        oracle.line_search_pieces(w, d)  # X d only
    assert len(calls) == 2 + 5
    for _ in range(40):  # a long chain: the base product is computed afresh every 32 lines
        k = float(rng.random())
        w = w + k * d
        d = rng.standard_normal(6)
        oracle.line_search_pieces(w, d)
    assert len(calls) == 2 + 5 + 40 + 1
    np.testing.assert_allclose(oracle.margins(w), BinaryHinge(X, y).margins(w), rtol=1e-12, atol=1e-13)


def test_bad_input_raises_input_error():
    X, y = _binary_data(0)
    with pytest.raises(InputError, match="-1 or \\+1"):
        BinaryHinge(X, np.where(y > 0, 1, 0))
    with pytest.raises(InputError, match="shape"):
        BinaryHinge(X, y[:-1])
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(InputError, match="NaN"):
        BinaryHinge(Xn, y)
    with pytest.raises(InputError, match="shape"):
        BinaryHinge(X, y)(np.zeros(3))
    Xm, ym = _multi_data(0)
    with pytest.raises(InputError, match="integer"):
        MulticlassHinge(Xm, ym + 0.5)
    with pytest.raises(InputError, match="n_classes"):
        MulticlassHinge(Xm, ym, n_classes=2)
    with pytest.raises(InputError, match="non-negative"):
        MulticlassHinge(Xm, ym - 1)
