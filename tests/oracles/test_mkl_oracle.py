"""The SVM-dual oracle of Kelley MKL (oracles/mkl.py) against direct cvxpy solves and brute force."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import ConvergenceWarning, InexactCutWarning, InputError
from oracles.mkl import OneVsRestMKLOracle, SVMDualOracle, best_bias, check_grams, combine_grams, free_sv_bias


def _problem(n=40, seed=0):
    """Three PSD Gram matrices (linear, Gaussian, normalised quadratic) and noisy labels."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    y = np.where(X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.5 + 0.4 * rng.standard_normal(n) > 0, 1.0, -1.0)
    lin = X @ X.T
    sq = (X**2).sum(1)
    gauss = np.exp(-0.2 * (sq[:, None] + sq[None, :] - 2 * lin))
    quad = (lin + 1.0) ** 2
    d = np.sqrt(np.diag(quad))
    return [lin, gauss, quad / np.outer(d, d)], y


def _svm_dual_cvxpy(K, y, C):
    """``D = max_{alpha in A} 1^T alpha - 1/2 alpha^T Y K Y alpha`` solved directly by cvxpy."""
    import cvxpy as cp

    w, V = np.linalg.eigh(K)
    L = V * np.sqrt(np.clip(w, 0.0, None))
    a = cp.Variable(len(y))
    prob = cp.Problem(
        cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))), [a >= 0, a <= C, y @ a == 0]
    )
    prob.solve(solver="CLARABEL")
    return prob.value, a.value


@pytest.mark.parametrize("C", [0.5, 10.0])
def test_value_and_cut_match_direct_dual(C):
    grams, y = _problem()
    oracle = SVMDualOracle(grams, y, C)
    beta = np.array([0.2, 0.5, 0.3])
    res = oracle(beta)
    ref, _ = _svm_dual_cvxpy(combine_grams(grams, beta), y, C)
    assert res.exact
    assert res.value == pytest.approx(ref, rel=1e-6)
    sol = res.argmax
    # the cut at beta is tight up to the measured inner gap, and the gap is small
    assert res.cut.offset == 0.0
    assert float(res.cut.slope @ beta) == pytest.approx(sol.dual)
    assert 0.0 <= sol.gap <= 1e-6 * max(1.0, abs(sol.primal))
    # S_k(alpha) recomputed from its definition (eq. 25)
    v = y * sol.alpha
    S = np.array([sol.alpha.sum() - 0.5 * v @ K @ v for K in grams])
    np.testing.assert_allclose(res.cut.slope, S, rtol=1e-12, atol=1e-10)
    # alpha is in A
    assert sol.alpha.min() >= 0.0 and sol.alpha.max() <= C
    assert abs(y @ sol.alpha) <= 1e-9 * C * len(y)


@settings(max_examples=15)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda b: sum(b) > 1e-3),
    st.lists(st.floats(0.0, 1.0), min_size=3, max_size=3).filter(lambda b: sum(b) > 1e-3),
)
def test_cut_is_a_minorant_of_D(b1, b2):
    """Subgradient inequality (3): D(beta') >= <D'(beta), beta'> for all beta' in the simplex."""
    grams, y = _ORACLE_DATA
    b1, b2 = np.array(b1) / sum(b1), np.array(b2) / sum(b2)
    r1, r2 = _ORACLE(b1), _ORACLE(b2)
    for r_at, r_other, b_other in ((r1, r2, b2), (r2, r1, b1)):
        # value at the other point is an upper bound of D there (primal), cut a lower one
        assert r_other.value >= float(r_at.cut.slope @ b_other) - 1e-9 * (1 + abs(r_other.value))


_ORACLE_DATA = _problem(n=30, seed=3)
_ORACLE = SVMDualOracle(*_ORACLE_DATA, C=2.0)


def test_bounds_stay_valid_without_polish_and_flag_inexact():
    """A loose libsvm solve without polish: value >= D(beta) >= cut at beta, and exact=False."""
    grams, y = _problem(n=50, seed=1)
    C, beta = 100.0, np.full(3, 1.0 / 3)
    loose = SVMDualOracle(grams, y, C, svm_tol=0.5, gap_tol=1e-9, max_refine=0, polish=False)
    res = loose(beta)
    ref, _ = _svm_dual_cvxpy(combine_grams(grams, beta), y, C)
    assert not res.exact
    assert res.argmax.gap > 1e-9
    assert res.value >= ref - 1e-6 * abs(ref)
    assert float(res.cut.slope @ beta) <= ref + 1e-6 * abs(ref)
    # the engine is told: its certificate is relative, with a warning
    import cutplane
    from cutplane.regularizers import Simplex

    with pytest.warns(InexactCutWarning), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        out = cutplane.minimize(loose, Simplex(3), 1.0, method="kelley", eps=1e-2, max_iter=3)
    assert out.exact is False


def test_polish_reaches_double_precision_gap():
    """libsvm alone (single-precision kernel cache) leaves a gap that the polish removes."""
    grams, y = _problem(n=60, seed=2)
    beta = np.full(3, 1.0 / 3)
    raw = SVMDualOracle(grams, y, 100.0, gap_tol=1e-12, max_refine=0, polish=False)(beta)
    pol = SVMDualOracle(grams, y, 100.0, gap_tol=1e-12, max_refine=0, polish=True)(beta)
    assert raw.argmax.gap > 1e-8 * raw.value
    assert pol.argmax.gap <= raw.argmax.gap
    assert pol.argmax.gap <= 1e-10 * pol.value
    assert pol.value <= raw.value + 1e-9 * raw.value


@settings(max_examples=60)
@given(
    st.lists(st.tuples(st.floats(-3, 3), st.booleans()), min_size=2, max_size=12).filter(
        lambda r: any(b for _, b in r) and not all(b for _, b in r)
    )
)
def test_best_bias_is_the_minimiser(rows):
    f = np.array([r[0] for r in rows])
    y = np.where([r[1] for r in rows], 1.0, -1.0)
    b = best_bias(f, y)

    def hinge(bb):
        return np.maximum(0.0, 1.0 - y * (f + bb)).sum()

    grid = np.concatenate([y - f, np.linspace(-8, 8, 801)])  # kinks and a fine grid
    assert hinge(b) <= min(hinge(g) for g in grid) + 1e-12


def test_free_sv_bias_averages_free_vectors():
    f = np.array([0.5, -0.2, 0.1, 3.0])
    y = np.array([1.0, -1.0, 1.0, -1.0])
    alpha = np.array([0.3, 0.5, 1.0, 0.0])  # free: 0, 1; at C: 2; zero: 3
    assert free_sv_bias(f, y, alpha, C=1.0) == pytest.approx(np.mean([1 - 0.5, -1 + 0.2]))
    assert free_sv_bias(f, y, np.array([0.0, 1.0, 1.0, 0.0]), C=1.0) is None


def test_one_vs_rest_oracle_is_the_sum_of_binary_oracles():
    grams, y = _problem(n=36, seed=4)
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, size=36)
    Y = np.where(labels[:, None] == np.arange(3)[None, :], 1.0, -1.0)
    beta = np.array([0.1, 0.6, 0.3])
    total = OneVsRestMKLOracle(grams, Y, 1.5)(beta)
    parts = [SVMDualOracle(grams, Y[:, c], 1.5)(beta) for c in range(3)]
    assert total.value == pytest.approx(sum(p.value for p in parts), rel=1e-9)
    np.testing.assert_allclose(total.cut.slope, np.sum([p.cut.slope for p in parts], axis=0), rtol=1e-8)
    assert total.exact and len(total.argmax) == 3


def test_sparse_grams_give_the_dense_answer():
    import scipy.sparse as sp

    grams, y = _problem(n=30, seed=5)
    beta = np.array([0.3, 0.3, 0.4])
    dense = SVMDualOracle(grams, y, 1.0)(beta)
    sparse = SVMDualOracle([sp.csr_matrix(K) for K in grams], y, 1.0)(beta)
    assert sparse.value == pytest.approx(dense.value, rel=1e-10)
    np.testing.assert_allclose(sparse.cut.slope, dense.cut.slope, rtol=1e-8)


def test_bad_input():
    grams, y = _problem(n=20)
    with pytest.raises(InputError, match="same samples"):
        SVMDualOracle([grams[0], grams[1][:10, :10]], y, 1.0)
    with pytest.raises(InputError, match="square"):
        SVMDualOracle([grams[0][:, :5]], y, 1.0)
    bad = grams[0].copy()
    bad[0, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        SVMDualOracle([bad], y, 1.0)
    with pytest.raises(InputError, match="-1 or \\+1"):
        SVMDualOracle(grams, np.where(y > 0, 1, 0), 1.0)
    with pytest.raises(InputError, match="both classes"):
        SVMDualOracle(grams, np.ones(20), 1.0)
    with pytest.raises(InputError, match="shape"):
        SVMDualOracle(grams, y[:5], 1.0)
    for C in (0.0, -1.0, np.inf, "1"):
        with pytest.raises(InputError, match="C"):
            SVMDualOracle(grams, y, C)
    with pytest.raises(InputError):
        check_grams(grams[0])
    with pytest.raises(InputError):
        check_grams([])
    oracle = SVMDualOracle(grams, y, 1.0)
    with pytest.raises(InputError, match="beta"):
        oracle(np.array([0.5, 0.5]))
    with pytest.raises(InputError, match=">= 0"):
        oracle(np.array([1.5, -0.5, 0.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert oracle(np.array([0.5, 0.5, -1e-12])).exact  # round-off below 0 is accepted
