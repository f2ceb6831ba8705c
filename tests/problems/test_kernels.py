"""Kernels against direct formulas, feature maps against Gram matrices, sparsity, PSD check."""

import gzip
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.mkl.kernels import (
    B1SplineKernel,
    GaussianKernel,
    LinearKernel,
    NotPSDWarning,
    PolynomialKernel,
    b1spline_bandwidth,
    check_psd,
    gram_matrices,
)


def direct(fun, X, Y):
    """Gram matrix by a double loop over pairs of rows."""
    return np.array([[fun(x, y) for y in Y] for x in X])


KERNELS = [
    (LinearKernel(), lambda x, y: x @ y),
    (PolynomialKernel(), lambda x, y: (x @ y + 1.0) ** 2),
    (PolynomialKernel(3, 0.5, 0.2), lambda x, y: (0.2 * (x @ y) + 0.5) ** 3),
    (PolynomialKernel(1, 2.0, 3.0), lambda x, y: 3.0 * (x @ y) + 2.0),
    (GaussianKernel(0.1), lambda x, y: math.exp(-0.1 * ((x - y) @ (x - y)))),
    (B1SplineKernel(2.5), lambda x, y: max(0.0, 1.0 - math.sqrt((x - y) @ (x - y)) / 2.5)),
]


@pytest.mark.parametrize("kernel,formula", KERNELS, ids=lambda k: repr(k)[:40])
def test_kernels_match_direct_formulas(kernel, formula, rng):
    X, Y = rng.normal(size=(12, 4)), rng.normal(size=(7, 4))
    np.testing.assert_allclose(kernel(X, Y), direct(formula, X, Y), rtol=1e-10, atol=1e-12)
    K = kernel(X)
    np.testing.assert_allclose(K, direct(formula, X, X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(K, K.T, rtol=0, atol=1e-12)
    # sparse input gives the same matrix
    np.testing.assert_allclose(kernel(sp.csr_matrix(X), sp.csr_matrix(Y)), kernel(X, Y), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kernel.diag(X), np.diag(K), rtol=1e-10)


@pytest.mark.parametrize("kernel,formula", KERNELS, ids=lambda k: repr(k)[:40])
def test_normalised_kernels(kernel, formula, rng):
    X, Y = rng.normal(size=(10, 3)), rng.normal(size=(6, 3))
    nk = type(kernel)(**{**kernel.params(), "normalize": True})
    K = nk(X)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    dx = np.array([formula(x, x) for x in X])
    dy = np.array([formula(y, y) for y in Y])
    expect = direct(formula, X, Y) / np.sqrt(dx[:, None] * dy[None, :])
    np.testing.assert_allclose(nk(X, Y), expect, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(nk.diag(X), 1.0)


def test_normalising_a_zero_sample_is_an_error(rng):
    X = rng.normal(size=(5, 3))
    X[2] = 0.0
    with pytest.raises(InputError, match="sample 2"):
        LinearKernel(normalize=True)(X)


@st.composite
def feature_inputs(draw):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 6))
    binary = draw(st.booleans())
    if binary:
        vals = st.sampled_from([0.0, 1.0])
    else:
        vals = st.floats(-3, 3, allow_nan=False).map(lambda v: round(v, 4))
    X = np.array(draw(st.lists(vals, min_size=n * d, max_size=n * d))).reshape(n, d)
    Y = np.array(draw(st.lists(vals, min_size=2 * d, max_size=2 * d))).reshape(2, d)
    return X, Y


@settings(max_examples=150)
@given(
    feature_inputs(),
    st.sampled_from([1, 2]),
    st.sampled_from([0.0, 1.0, 0.3]),
    st.sampled_from([1.0, 0.5]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
def test_explicit_feature_maps_reproduce_the_kernel(data, degree, coef0, gamma, sparse_in, sparse_out, normalize):
    X, Y = data
    kern = PolynomialKernel(degree, coef0, gamma)
    if normalize and (kern.diag(X) <= 0).any() | (kern.diag(Y) <= 0).any():
        return  # zero samples cannot be normalised (tested separately)
    kern.normalize = normalize
    conv = sp.csr_matrix if sparse_in else np.asarray
    binary = bool(np.isin(X, (0, 1)).all() and np.isin(Y, (0, 1)).all())
    P = kern.feature_map(conv(X), sparse=sparse_out, binary=binary)
    Q = kern.feature_map(conv(Y), sparse=sparse_out, binary=binary)
    assert sp.issparse(P) == sparse_out
    G = P @ Q.T
    G = G.toarray() if sp.issparse(G) else G
    np.testing.assert_allclose(G, kern(X, Y), rtol=1e-9, atol=1e-9)
    lin, raw = LinearKernel(normalize=normalize), LinearKernel()
    if not normalize or ((raw.diag(X) > 0).all() and (raw.diag(Y) > 0).all()):
        P, Q = lin.feature_map(conv(X)), lin.feature_map(conv(Y))
        G = P @ Q.T
        G = G.toarray() if sp.issparse(G) else G
        np.testing.assert_allclose(G, lin(X, Y), rtol=1e-9, atol=1e-12)


def test_quadratic_map_layout_and_binary_saving(rng):
    d = 6
    Xr = rng.normal(size=(5, d))
    Xb = (rng.random((5, d)) < 0.5).astype(float)
    k = PolynomialKernel()
    assert k.feature_map(Xr).shape == (5, d * (d + 1) // 2 + d + 1)
    assert k.feature_map(Xb, binary=True).shape == (5, d * (d - 1) // 2 + d + 1)
    assert k.feature_map(Xb).shape == (5, d * (d + 1) // 2 + d + 1)
    with pytest.raises(InputError, match="binary"):
        k.feature_map(Xr, binary=True)
    # sparse output stores only products of nonzeros
    P = k.feature_map(sp.csr_matrix(Xb), binary=True)
    p = (Xb != 0).sum(axis=1)
    assert (np.diff(P.indptr) == p * (p - 1) // 2 + p + 1).all()
    # the sparse map is the dense map, entry by entry, in canonical CSR (sorted columns)
    for X, binary in ((Xb, True), (Xb * rng.normal(size=Xb.shape), False)):
        P = k.feature_map(sp.csr_matrix(X), binary=binary)
        np.testing.assert_allclose(P.toarray(), k.feature_map(X, binary=binary), atol=1e-15)
        assert all((np.diff(P.indices[a:b]) > 0).all() for a, b in zip(P.indptr, P.indptr[1:]))


def test_sparse_quadratic_map_by_blocks_of_rows(rng, monkeypatch):
    import problems.mkl.kernels as kernel_arrays

    monkeypatch.setattr(kernel_arrays, "_MAP_BLOCK_ENTRIES", 40)  # many small blocks
    X = (rng.random((37, 9)) < 0.4) * rng.normal(size=(37, 9))
    X[5] = 0.0  # an empty row
    k = PolynomialKernel(2, 0.4, 0.8)
    P = k.feature_map(sp.csr_matrix(X))
    np.testing.assert_allclose(P.toarray(), k.feature_map(X), atol=1e-15)
    np.testing.assert_allclose((P @ P.T).toarray(), k(X), rtol=1e-10, atol=1e-12)


def test_feature_map_refusals(rng):
    X = rng.normal(size=(4, 3))
    with pytest.raises(InputError, match="no finite explicit feature map"):
        GaussianKernel().feature_map(X)
    with pytest.raises(InputError, match="no finite explicit feature map"):
        PolynomialKernel(degree=3).feature_map(X)
    assert not PolynomialKernel(degree=3).has_feature_map and LinearKernel.has_feature_map
    with pytest.raises(InputError, match="max_bytes"):
        PolynomialKernel().feature_map(rng.normal(size=(100, 50)), max_bytes=10_000)


@pytest.mark.parametrize("target", [0.95, 0.8])
def test_b1spline_sparsity_hits_target(target, rng):
    X = rng.normal(size=(700, 10))
    h = b1spline_bandwidth(X, target, n_pairs=30_000, seed=1)  # sampled pairs
    K = B1SplineKernel(h)(X)
    assert abs((K == 0).mean() - target) < 0.02
    h_all = b1spline_bandwidth(X[:150], target)  # all pairs: exact quantile
    assert abs((B1SplineKernel(h_all)(X[:150]) == 0).mean() - target) < 1e-3
    # binary images (ties in distances): still within a few percent
    Xb = (rng.random((700, 128)) < 0.22).astype(float)
    kb = B1SplineKernel.for_sparsity(Xb, target, n_pairs=30_000, seed=2)
    assert abs((kb(Xb) == 0).mean() - target) < 0.03


def test_b1spline_sparse_gram_equals_dense(rng):
    X, Y = rng.normal(size=(60, 5)), rng.normal(size=(25, 5))
    h = b1spline_bandwidth(X, 0.9)
    dense, sparse = B1SplineKernel(h), B1SplineKernel(h, sparse=True)
    for args in ((X,), (X, Y), (sp.csr_matrix(X),)):
        S = sparse(*args)
        assert sp.isspmatrix_csr(S) or isinstance(S, sp.csr_array)
        D = dense(*args)
        np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=1e-15)
        assert S.nnz == np.count_nonzero(D)
    np.testing.assert_array_equal(sparse(X).diagonal(), 1.0)


def test_gram_matrices_helper(rng):
    X, Y = rng.normal(size=(9, 3)), rng.normal(size=(4, 3))
    ks = [LinearKernel(), PolynomialKernel(), GaussianKernel(0.5)]
    for got, k in zip(gram_matrices(ks, X, Y), ks):
        np.testing.assert_array_equal(got, k(X, Y))
    assert [g.shape for g in gram_matrices(ks, X)] == [(9, 9)] * 3
    with pytest.raises(InputError, match="kernel 1"):
        gram_matrices([LinearKernel(), "rbf"], X)


def test_check_psd_warns_on_non_psd_with_most_negative_eigenvalue(rng):
    K = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
    with pytest.warns(NotPSDWarning, match=r"most negative eigenvalue -1\b"):
        rep = check_psd(K)
    assert not rep.is_psd and rep.min_eigenvalue == pytest.approx(-1.0)
    # the generalised B1-spline is not PSD in 2-D (Askey: (1 - r)_+ is PD only in 1-D)
    X = rng.normal(size=(300, 2))
    B = B1SplineKernel(b1spline_bandwidth(X, 0.5))(X)
    with pytest.warns(NotPSDWarning):
        rep = check_psd(B, name="B1")
    assert rep.min_eigenvalue == pytest.approx(np.linalg.eigvalsh(B)[0], rel=1e-8)
    # PSD Gram matrices do not warn
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in (LinearKernel(), PolynomialKernel(), GaussianKernel(0.2)):
            assert check_psd(k(rng.normal(size=(50, 4)))).is_psd


def test_check_psd_large_sparse_by_arpack():
    # 2x2 blocks [[1, b], [b, 1]] have eigenvalues 1 +- b; one block with b = 1.25 -> -0.25
    n_blocks = 1100
    b = np.full(n_blocks, 0.5)
    b[700] = 1.25
    rows = np.concatenate([2 * np.arange(n_blocks), 2 * np.arange(n_blocks) + 1])
    cols = np.concatenate([2 * np.arange(n_blocks) + 1, 2 * np.arange(n_blocks)])
    K = sp.csr_matrix((np.concatenate([b, b]), (rows, cols)), shape=(2 * n_blocks,) * 2)
    K = K + sp.eye(2 * n_blocks, format="csr")
    with pytest.warns(NotPSDWarning):
        rep = check_psd(K)
    assert rep.min_eigenvalue == pytest.approx(-0.25, abs=1e-6)
    assert rep.max_eigenvalue == pytest.approx(2.25, abs=1e-6)


def test_check_psd_input_errors():
    with pytest.raises(InputError, match="square"):
        check_psd(np.ones((2, 3)))
    with pytest.raises(InputError, match="symmetric"):
        check_psd(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(InputError, match="NaN"):
        check_psd(np.array([[np.nan, 0.0], [0.0, 1.0]]))


def test_input_validation(rng):
    X = rng.normal(size=(4, 3))
    Xnan = X.copy()
    Xnan[2, 1] = np.nan
    with pytest.raises(InputError, match="row 2, column 1"):
        LinearKernel()(Xnan)
    with pytest.raises(InputError, match="NaN or inf"):
        GaussianKernel()(X, sp.csr_matrix(np.array([[np.inf, 0.0, 0.0]])))
    with pytest.raises(InputError, match="features"):
        GaussianKernel()(X, rng.normal(size=(2, 4)))
    with pytest.raises(InputError, match="2-D"):
        LinearKernel()(np.ones(3))
    with pytest.raises(InputError, match="numeric"):
        LinearKernel()([["a", "b"]])
    for make, field in [
        (lambda: GaussianKernel(0.0), "gamma"),
        (lambda: PolynomialKernel(degree=0), "degree"),
        (lambda: PolynomialKernel(coef0=-1.0), "coef0"),
        (lambda: B1SplineKernel(-1.0), "h"),
    ]:
        with pytest.raises(InputError, match=field):
            make()
    with pytest.raises(InputError, match="sparsity"):
        b1spline_bandwidth(X, 1.0)
    with pytest.raises(InputError, match="coincide"):
        b1spline_bandwidth(np.ones((5, 2)))


def _ocr_pixels(data_dir, n):
    path = data_dir / "ocr-letters" / "letter.data.gz"
    if not path.exists():
        pytest.skip(f"{path} absent")
    rows = []
    with gzip.open(path, "rt") as fh:
        for line in fh:
            rows.append([float(v) for v in line.split("\t")[6:134]])
            if len(rows) == n:
                break
    return np.array(rows)


@pytest.mark.data
def test_ocr_letters_kernels(data_dir):
    X = _ocr_pixels(data_dir, 800)
    assert X.shape == (800, 128) and set(np.unique(X)) <= {0.0, 1.0}
    k = B1SplineKernel.for_sparsity(X, 0.95, seed=0, sparse=True)
    K = k(X)
    assert abs(1.0 - K.nnz / (800 * 800) - 0.95) < 0.03
    q = PolynomialKernel(normalize=True)
    P = q.feature_map(sp.csr_matrix(X), binary=True)  # sparse: products of nonzeros only
    np.testing.assert_allclose((P @ P.T).toarray(), q(X), rtol=1e-9, atol=1e-12)
    assert P.shape[1] == 128 * 127 // 2 + 128 + 1
