"""The in-out step (method="in-out"): BMRM querying between the best point and the reduced minimiser.

Its certificate must be the engine's (bounds, monotone lower bound, gap at exit), it must reach
the optimum of a direct cvxpy solve and the one BMRM reaches, with the L2 and the MTL^struct
regularisers, on the path, and its query points must be the ones its rule says.
"""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize, regularization_path
from cutplane.exceptions import InputError
from cutplane.regularizers import L2, MixedNorm
from cutplane.steps import InOutStep, StepContext
from oracles.linear import BinaryHinge, MulticlassHinge


def binary_data(seed, n, dim, noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    y = np.sign(X @ rng.standard_normal(dim) + noise * rng.standard_normal(n))
    y[y == 0] = 1.0
    return X, y


def cvx_hinge(X, y, lam):
    w = cp.Variable(X.shape[1])
    prob = cp.Problem(cp.Minimize(lam * 0.5 * cp.sum_squares(w) + cp.sum(cp.pos(1 - cp.multiply(y, X @ w))) / len(y)))
    prob.solve(solver="CLARABEL")
    return prob.value


def check_certificate(res, eps):
    h = res.history
    assert res.status == "converged" and res.gap <= eps
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:])))
    assert np.all(np.diff(h.best_upper) <= 0)
    assert np.all(h.lower <= h.best_upper)
    np.testing.assert_array_equal(h.best_upper, np.minimum.accumulate(h.upper))
    assert res.lower_bound <= res.objective


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(5, 60),
    dim=st.integers(1, 8),
    lam=st.sampled_from([1e-4, 1e-2, 1.0]),
    theta=st.sampled_from([0.05, 0.1, 0.5, 1.0]),
    every=st.integers(1, 12),
)
def test_in_out_matches_cvxpy_and_bmrm(seed, n, dim, lam, theta, every):
    X, y = binary_data(seed, n, dim)
    eps = 1e-6
    res = minimize(
        BinaryHinge(X, y), L2(), lam, method="in-out", theta=theta, direct_every=every, eps=eps, max_iter=5000
    )
    check_certificate(res, eps)
    ref = cvx_hinge(X, y, lam)
    bm = minimize(BinaryHinge(X, y), L2(), lam, method="bmrm", eps=eps, max_iter=5000)
    tol = 1e-6 * max(1.0, abs(ref))
    assert res.lower_bound <= ref + tol and ref <= res.objective + tol
    assert abs(res.objective - bm.objective) <= res.gap + bm.gap + tol


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(6, 40), k=st.integers(2, 4), lam=st.sampled_from([1e-3, 1e-1]))
def test_in_out_with_the_mixed_norm_brackets_bmrm(seed, n, k, lam):
    """MTL^struct's regulariser (the QCQP reduced problem): the two certified runs bracket each other."""
    rng = np.random.default_rng(seed)
    dim = 4
    X = rng.standard_normal((n, dim))
    y = rng.integers(0, k, n)
    oracle = MulticlassHinge(X, y, n_classes=k)
    groups = np.repeat(np.arange(k), dim)  # one group per class block
    reg = MixedNorm(groups, p=1.0, n_groups=k)
    eps = 1e-5
    a = minimize(oracle, reg, lam, method="in-out", eps=eps, max_iter=5000)
    b = minimize(oracle, reg, lam, method="bmrm", eps=eps, max_iter=5000)
    check_certificate(a, eps)
    slack = 1e-9 * max(1.0, abs(b.objective))
    assert a.lower_bound <= b.objective + slack and b.lower_bound <= a.objective + slack


def test_the_query_follows_the_rule():
    rng = np.random.default_rng(0)
    wb, wt = rng.standard_normal(5), rng.standard_normal(5)

    class Sol:
        w = wt

    rule = InOutStep(theta=0.25, direct_every=3)
    queries = [rule.next_query(Sol, StepContext(None, None, 1.0, wb, 1.0, it)).query for it in range(6)]
    for it, q in enumerate(queries):
        expected = wt if (it + 1) % 3 == 0 else wb + 0.25 * (wt - wb)
        np.testing.assert_allclose(q, expected, rtol=0, atol=1e-15)
    assert queries[2] is wt  # the BMRM step queries the reduced minimiser itself


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dim=st.integers(1, 20), theta=st.floats(0.05, 0.95))
def test_the_query_is_written_into_the_vector_given(seed, dim, theta):
    """With ``StepContext.vector`` the query is that array, bit for bit the point computed into a
    new array; ``w_t`` and ``w^b`` are left as they were."""
    rng = np.random.default_rng(seed)
    wb, wt = rng.standard_normal(dim), rng.standard_normal(dim)
    wb0, wt0 = wb.copy(), wt.copy()

    class Sol:
        w = wt

    rule = InOutStep(theta=theta, direct_every=10)
    given_buffer = np.full(dim, np.nan)
    q = rule.next_query(Sol, StepContext(None, None, 1.0, wb, 1.0, 0, lambda: given_buffer)).query
    fresh = rule.next_query(Sol, StepContext(None, None, 1.0, wb, 1.0, 0)).query
    assert q is given_buffer
    np.testing.assert_array_equal(q, fresh)
    np.testing.assert_array_equal(wb, wb0)
    np.testing.assert_array_equal(wt, wt0)


@pytest.mark.parametrize(
    "kwargs, field",
    [({"theta": 0.0}, "theta"), ({"theta": 1.5}, "theta"), ({"direct_every": 0}, "direct_every")],
)
def test_bad_options_are_refused(kwargs, field):
    X, y = binary_data(0, 20, 3)
    with pytest.raises(InputError) as err:
        minimize(BinaryHinge(X, y), L2(), 0.1, method="in-out", **kwargs)
    assert err.value.field == field


def test_theta_one_is_bmrm():
    X, y = binary_data(3, 80, 6)
    a = minimize(BinaryHinge(X, y), L2(), 1e-3, method="in-out", theta=1.0, eps=1e-6)
    b = minimize(BinaryHinge(X, y), L2(), 1e-3, method="bmrm", eps=1e-6)
    assert a.n_iter == b.n_iter
    np.testing.assert_array_equal(a.w, b.w)


def test_fewer_iterations_than_bmrm_at_a_small_lam():
    """The reason it exists: at a weak regulariser BMRM oscillates; the damped queries do not."""
    X, y = binary_data(5, 400, 20, noise=2.0)
    a = minimize(BinaryHinge(X, y), L2(), 1e-5, method="in-out", eps=1e-5, max_iter=5000)
    b = minimize(BinaryHinge(X, y), L2(), 1e-5, method="bmrm", eps=1e-5, max_iter=5000)
    assert a.status == b.status == "converged"
    assert a.n_iter < b.n_iter


def test_the_path_certifies_every_point():
    X, y = binary_data(7, 120, 5)
    lams = [1e-1, 1e-2, 1e-3, 1e-4]
    res = regularization_path(BinaryHinge(X, y), L2(), lams, eps=1e-6, method="in-out")
    for lam, r in zip(res.lams, res.results):
        check_certificate(r, 1e-6)
        ref = cvx_hinge(X, y, lam)
        assert r.lower_bound <= ref + 1e-6 * max(1.0, abs(ref)) <= r.objective + 2e-6 * max(1.0, abs(ref))
