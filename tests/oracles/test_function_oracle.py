"""The function adapter: checks on what the user's function returns, cuts through it."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from cutplane.protocols import Oracle
from oracles.function import FunctionOracle, oracle


def _abs_dev(w):
    return np.abs(w - 1.0).sum(), np.sign(w - 1.0)


def test_cut_passes_through_the_value_and_is_a_minorant():
    orc = FunctionOracle(_abs_dev, 3)
    assert isinstance(orc, Oracle) and orc.dim == 3
    rng = np.random.default_rng(0)
    for _ in range(20):
        w = rng.standard_normal(3)
        res = orc(w)
        assert isinstance(res, OracleResult) and res.exact
        assert res.value == pytest.approx(np.abs(w - 1).sum())
        assert res.cut.slope @ w + res.cut.offset == pytest.approx(res.value)
        v = rng.standard_normal(3) * 3
        assert orc(v).value >= res.cut.slope @ v + res.cut.offset - 1e-12
    assert orc.n_calls == 40


@settings(max_examples=50)
@given(st.lists(st.floats(-5, 5), min_size=4, max_size=4), st.lists(st.floats(-5, 5), min_size=4, max_size=4))
def test_decorator_max_of_affine_subgradient_inequality(w, v):
    A = np.arange(12.0).reshape(3, 4) - 5.0
    b = np.array([0.5, -1.0, 2.0])

    @oracle(dim=4)
    def max_affine(x):
        j = int(np.argmax(A @ x + b))
        return (A @ x + b)[j], A[j]

    assert isinstance(max_affine, FunctionOracle) and max_affine.__name__ == "max_affine"
    w, v = np.array(w), np.array(v)
    res = max_affine(w)
    assert max_affine(v).value >= res.cut.slope @ v + res.cut.offset - 1e-9


def test_sparse_subgradients_kept_or_densified():
    g = sp.csr_matrix(np.array([[0.0, 2.0, 0.0]]))
    kept = FunctionOracle(lambda w: (1.0, g), 3, sparse=True)(np.ones(3))
    assert sp.issparse(kept.cut.slope) and kept.cut.slope.shape == (1, 3)
    assert kept.cut.offset == pytest.approx(1.0 - 2.0)
    dense = FunctionOracle(lambda w: (1.0, g.T), 3)(np.ones(3))
    np.testing.assert_array_equal(dense.cut.slope, [0.0, 2.0, 0.0])


def test_oracle_result_passes_through_with_exact_flag():
    def approx(w):
        return OracleResult(2.0, Cut(np.ones(2), 0.0), exact=False, argmax="y")

    res = FunctionOracle(approx, 2)(np.ones(2))
    assert res.exact is False and res.argmax == "y"
    assert res.cut.offset == pytest.approx(0.0)  # recomputed: 2 - <1, 1>


@pytest.mark.parametrize(
    "fun, match",
    [
        (lambda w: (np.nan, np.zeros(2)), "non-finite value"),
        (lambda w: (1.0, np.zeros(3)), "shape"),
        (lambda w: (1.0, np.array([np.inf, 0.0])), "non-finite subgradient"),
        (lambda w: 1.0, "must return"),
        (lambda w: (np.zeros(2), np.zeros(2)), "non-scalar"),
        (lambda w: (1.0, sp.csr_matrix((1, 5))), "sparse subgradient"),
    ],
)
def test_bad_returns_raise_input_error(fun, match):
    with pytest.raises(InputError, match=match):
        FunctionOracle(fun, 2)(np.zeros(2))


def test_bad_construction():
    with pytest.raises(InputError, match="callable"):
        FunctionOracle(3, 2)
    for dim in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="dim"):
            FunctionOracle(_abs_dev, dim)
    with pytest.raises(InputError, match="shape"):
        FunctionOracle(_abs_dev, 3)(np.zeros(4))


def test_new_risk_trained_with_the_engine_matches_cvxpy():
    """The docstring's promise: a new risk (mean absolute deviation) in a few lines."""
    import cvxpy as cp

    import cutplane
    from cutplane.regularizers import L2

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    t = X @ np.array([1.0, -2.0, 0.5, 3.0]) + 0.3 * rng.standard_normal(60)

    @oracle(dim=4)
    def mean_abs_deviation(w):
        r = X @ w - t
        return np.abs(r).mean(), X.T @ np.sign(r) / len(t)

    lam, eps = 0.1, 1e-6
    res = cutplane.minimize(mean_abs_deviation, L2(), lam, eps=eps)
    w = cp.Variable(4)
    prob = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(w) + cp.sum(cp.abs(X @ w - t)) / 60))
    prob.solve(solver="CLARABEL")
    assert res.status == "converged" and res.gap <= eps
    assert res.lower_bound <= prob.value + 1e-7
    assert prob.value - 1e-7 <= res.objective <= prob.value + eps + 1e-7
    assert mean_abs_deviation.n_calls == res.n_iter
