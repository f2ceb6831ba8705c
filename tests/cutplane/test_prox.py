"""Proximity operators: against cvxpy solves of their defining problems, the prox
three-point inequality, closed forms, the seeds' algorithms against each other, edge cases."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.prox import (
    project_l2_ball,
    prox_group_l2q,
    prox_group_l21,
    prox_l1,
    prox_squared_group_l1,
    prox_squared_group_lp,
    prox_squared_l1,
    prox_squared_lp,
    prox_squared_weighted_l1,
)

# ----------------------------------------------------------------------------- helpers
ENTRY = st.one_of(st.floats(-10, 10), st.sampled_from([0.0, 1.0, -1.0, 2.5, -2.5]))  # ties and zeros
TAU = st.one_of(st.floats(0, 30), st.sampled_from([0.0, 1e-3, 1.0, 1e3]))


@st.composite
def grouped_vectors(draw, max_dim=12, max_groups=5):
    dim = draw(st.integers(1, max_dim))
    v = np.array(draw(st.lists(ENTRY, min_size=dim, max_size=dim)))
    m = draw(st.integers(1, max_groups))
    ids = np.array(draw(st.lists(st.integers(0, m - 1), min_size=dim, max_size=dim)))
    return v, ids


def vectors(max_dim=12):
    return st.integers(1, max_dim).flatmap(lambda n: st.lists(ENTRY, min_size=n, max_size=n).map(np.array))


def blocks(x, ids):
    return [x[ids == j] for j in np.unique(ids)]


def norm2(x):
    """Euclidean norm without underflow of the squares (np.linalg.norm squares directly)."""
    top = np.abs(x).max(initial=0.0)
    return 0.0 if top == 0 else top * np.linalg.norm(x / top)


def group_norms_np(w, ids):
    return np.array([norm2(w[ids == j]) for j in np.unique(ids)])


def cvx_blocks(x, ids):
    return cp.hstack([cp.norm(x[np.flatnonzero(ids == j)], 2) for j in np.unique(ids)])


TIGHT = [
    ("CLARABEL", dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)),
    ("SCS", dict(eps=1e-10, max_iters=200_000)),
    ("ECOS", dict(abstol=1e-11, reltol=1e-11, feastol=1e-11, max_iters=500)),
]


def cvx_solve(prob, x):
    """Solve a reference problem at tight tolerances, trying the next backend when one is not
    'optimal' (degenerate cones at w_j = 0 trouble interior-point methods); if none is, the
    first 'optimal_inaccurate' answer is used and must still pass the caller's comparison."""
    fallback = None
    for solver, opts in TIGHT:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                prob.solve(solver=solver, **opts)
        except cp.error.SolverError:
            continue
        if prob.status == "optimal":
            return x.value
        if prob.status == "optimal_inaccurate" and fallback is None:
            fallback = x.value
    assert fallback is not None, f"no reference solver succeeded (last status {prob.status})"
    return fallback


def cvx_prox(v, tau_omega):
    """argmin_x 1/2 ||x - v||^2 + tau_omega(x), the defining problem, solved by cvxpy."""
    x = cp.Variable(v.size)
    return cvx_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - v) + tau_omega(x))), x)


def check_against_cvxpy(v, tau, omega, ours, tau_omega_cvx):
    """Same minimiser to ~1e-5 relative, and our objective is not worse than the solver's."""
    ref = cvx_prox(v, tau_omega_cvx)
    obj = lambda w: 0.5 * np.sum((w - v) ** 2) + tau * omega(w)  # noqa: E731
    scale = max(1.0, np.linalg.norm(v))
    assert np.linalg.norm(ours - ref) <= 1e-5 * scale
    assert obj(ours) <= obj(ref) + 1e-9 * max(1.0, abs(obj(ref)))


def check_three_point(v, tau, omega, p, seed=0, n_u=20):
    """tau*Omega(u) >= tau*Omega(p) + <v - p, u - p> for random u (p is the prox)."""
    rng = np.random.default_rng(seed)
    scale = max(1.0, np.abs(v).max())
    cands = [np.zeros_like(v), v, 2 * p] + [scale * rng.normal(size=v.size) for _ in range(n_u)]
    cands += [p + 1e-3 * scale * rng.normal(size=v.size) for _ in range(n_u)]
    for u in cands:
        lhs = tau * omega(u)
        rhs = tau * omega(p) + np.dot(v - p, u - p)
        assert lhs >= rhs - 1e-8 * (1.0 + abs(lhs) + abs(rhs))


# omegas (numpy) with their cvxpy counterparts
def om_l1(w):
    return np.abs(w).sum()


def om_sq_l1(w):
    return 0.5 * np.abs(w).sum() ** 2


def om_sq_wl1(d):
    return lambda w: 0.5 * np.dot(d, np.abs(w)) ** 2


def om_group_l21(ids):
    return lambda w: group_norms_np(w, ids).sum()


def om_sq_group_l1(ids):
    return lambda w: 0.5 * group_norms_np(w, ids).sum() ** 2


def om_group_l2q(ids, q):
    return lambda w: np.sum(group_norms_np(w, ids) ** q)


def om_sq_group_lp(ids, p):
    return lambda w: 0.5 * np.linalg.norm(group_norms_np(w, ids), ord=p) ** 2


# ----------------------------------------------------------------------------- against cvxpy
@settings(max_examples=25)
@given(v=vectors(), tau=TAU)
def test_prox_l1_cvxpy_and_three_point(v, tau):
    p = prox_l1(v, tau)
    check_against_cvxpy(v, tau, om_l1, p, lambda x: tau * cp.norm1(x))
    check_three_point(v, tau, om_l1, p)


@settings(max_examples=25)
@given(v=vectors(), tau=TAU)
def test_prox_squared_l1_cvxpy_and_three_point(v, tau):
    p = prox_squared_l1(v, tau)
    check_against_cvxpy(v, tau, om_sq_l1, p, lambda x: tau * 0.5 * cp.square(cp.norm1(x)))
    check_three_point(v, tau, om_sq_l1, p)


@settings(max_examples=25)
@given(v=vectors(), tau=TAU, data=st.data())
def test_prox_squared_weighted_l1_cvxpy_and_three_point(v, tau, data):
    d = np.array(data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.7]), min_size=v.size, max_size=v.size)))
    p = prox_squared_weighted_l1(v, tau, d)
    check_against_cvxpy(v, tau, om_sq_wl1(d), p, lambda x: tau * 0.5 * cp.square(d @ cp.abs(x)))
    check_three_point(v, tau, om_sq_wl1(d), p)


def test_prox_squared_weighted_l1_subnormal_ratio():
    """|v| / d underflows to 0 for a subnormal v (found by hypothesis): j = 1 still qualifies."""
    v, d = np.array([5e-324]), np.array([2.0])
    p = prox_squared_weighted_l1(v, 1.0, d)
    check_against_cvxpy(v, 1.0, om_sq_wl1(d), p, lambda x: 0.5 * cp.square(d @ cp.abs(x)))
    check_three_point(v, 1.0, om_sq_wl1(d), p)


@settings(max_examples=25)
@given(vg=grouped_vectors(), tau=TAU)
def test_prox_group_l21_cvxpy_and_three_point(vg, tau):
    v, ids = vg
    p = prox_group_l21(v, tau, ids)
    check_against_cvxpy(v, tau, om_group_l21(ids), p, lambda x: tau * cp.sum(cvx_blocks(x, ids)))
    check_three_point(v, tau, om_group_l21(ids), p)


@settings(max_examples=25)
@given(vg=grouped_vectors(), tau=TAU)
def test_prox_squared_group_l1_prop1_equals_direct_cvxpy(vg, tau):
    v, ids = vg
    p = prox_squared_group_l1(v, tau, ids)
    check_against_cvxpy(v, tau, om_sq_group_l1(ids), p, lambda x: tau * 0.5 * cp.square(cp.sum(cvx_blocks(x, ids))))
    check_three_point(v, tau, om_sq_group_l1(ids), p)


@settings(max_examples=25)
@given(vg=grouped_vectors(), tau=TAU, q=st.sampled_from([1.25, 1.5, 2.0, 3.0, 4.5]))
def test_prox_group_l2q_cvxpy_and_three_point(vg, tau, q):
    v, ids = vg
    p = prox_group_l2q(v, tau, ids, q)
    check_against_cvxpy(v, tau, om_group_l2q(ids, q), p, lambda x: tau * cp.sum(cp.power(cvx_blocks(x, ids), q)))
    check_three_point(v, tau, om_group_l2q(ids, q), p)


@settings(max_examples=30)
@given(vg=grouped_vectors(), tau=TAU, p_exp=st.sampled_from([1.0, 1.1, 1.5, 1.9, 2.0, 2.5, 3.0, 4.0, 100.0, np.inf]))
def test_prox_squared_group_lp_cvxpy_and_three_point(vg, tau, p_exp):
    v, ids = vg
    p = prox_squared_group_lp(v, tau, ids, p_exp)
    check_against_cvxpy(
        v, tau, om_sq_group_lp(ids, p_exp), p, lambda x: tau * 0.5 * cp.square(cp.pnorm(cvx_blocks(x, ids), p_exp))
    )
    check_three_point(v, tau, om_sq_group_lp(ids, p_exp), p)


@settings(max_examples=25)
@given(
    v=vectors(),
    tau=st.sampled_from([1e-3, 0.3, 1.0, 10.0, 1e3]),
    p_exp=st.sampled_from([1.05, 1.5, 1.8, 2.2, 3.0, 6.0, 100.0, np.inf]),
)
def test_prox_squared_lp_cvxpy_and_three_point(v, tau, p_exp):
    omega = lambda w: 0.5 * np.linalg.norm(w, ord=p_exp) ** 2  # noqa: E731
    p = prox_squared_lp(v, tau, p_exp)
    check_against_cvxpy(v, tau, omega, p, lambda x: tau * 0.5 * cp.square(cp.pnorm(x, p_exp)))
    check_three_point(v, tau, omega, p)


@settings(max_examples=25)
@given(v=vectors(), radius=st.one_of(st.floats(0, 20), st.just(0.0)))
def test_project_l2_ball_cvxpy_idempotent_optimality(v, radius):
    p = project_l2_ball(v, radius)
    x = cp.Variable(v.size)
    ref = cvx_solve(cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [cp.norm(x, 2) <= radius]), x)
    assert np.linalg.norm(p - ref) <= 1e-5 * max(1.0, np.linalg.norm(v))
    assert np.linalg.norm(p) <= radius * (1 + 1e-12) + 1e-300
    np.testing.assert_allclose(project_l2_ball(p, radius), p, rtol=1e-12, atol=1e-300)
    rng = np.random.default_rng(1)
    for _ in range(20):
        u = rng.normal(size=v.size)
        u *= radius * rng.uniform() / max(np.linalg.norm(u), 1e-300)
        assert np.dot(v - p, u - p) <= 1e-9 * (1 + np.linalg.norm(v)) ** 2


# ----------------------------------------------------------------------------- seeds against each other
@settings(max_examples=100)
@given(v=vectors(30), tau=TAU)
def test_alg2_equals_alg4_with_unit_weights(v, tau):
    np.testing.assert_allclose(
        prox_squared_l1(v, tau), prox_squared_weighted_l1(v, tau, np.ones(v.size)), rtol=1e-12, atol=1e-12
    )


@settings(max_examples=50)
@given(v=vectors(30), tau=TAU, c=st.floats(0.1, 10))
def test_alg4_constant_weights_is_alg2_with_scaled_tau(v, tau, c):
    # 1/2 (c ||w||_1)^2 = c^2 * 1/2 ||w||_1^2
    np.testing.assert_allclose(
        prox_squared_weighted_l1(v, tau, np.full(v.size, c)), prox_squared_l1(v, tau * c * c), rtol=1e-10, atol=1e-12
    )


@settings(max_examples=50)
@given(v=vectors(20), tau=TAU)
# found by CI: the norm of the shrunk point rounded to just above 1, G(log tau) < 0, no bracket
@example(v=np.full(3, 8.68376909e-281), tau=8.683769094787824e-281)
def test_singleton_groups_reduce_to_coordinatewise(v, tau):
    ids = np.arange(v.size)
    np.testing.assert_allclose(prox_group_l21(v, tau, ids), prox_l1(v, tau), atol=1e-12)
    np.testing.assert_allclose(prox_squared_group_l1(v, tau, ids), prox_squared_l1(v, tau), atol=1e-12)
    np.testing.assert_allclose(prox_squared_group_lp(v, tau, ids, 1.0), prox_squared_l1(v, tau), atol=1e-12)
    np.testing.assert_allclose(prox_squared_group_lp(v, tau, ids, 1.7), prox_squared_lp(v, tau, 1.7), atol=1e-12)


@settings(max_examples=50)
@given(vg=grouped_vectors(20), tau=TAU)
def test_group_lp_special_exponents(vg, tau):
    v, ids = vg
    np.testing.assert_allclose(prox_squared_group_lp(v, tau, ids, 1.0), prox_squared_group_l1(v, tau, ids), atol=1e-12)
    np.testing.assert_allclose(prox_squared_group_lp(v, tau, ids, 2.0), v / (1 + tau), atol=1e-12)


# ----------------------------------------------------------------------------- closed forms
@settings(max_examples=50)
@given(vg=grouped_vectors(20), tau=st.floats(0, 1e6))
def test_l2q_newton_against_closed_forms(vg, tau):
    v, ids = vg
    b0 = group_norms_np(v, ids)
    b2 = group_norms_np(prox_group_l2q(v, tau, ids, 2.0), ids)
    np.testing.assert_allclose(b2, b0 / (1 + 2 * tau), rtol=1e-13, atol=1e-300)
    # q = 3: 3 tau b^2 + b - b0 = 0;  q = 1.5: with s = sqrt(b), s^2 + 1.5 tau s - b0 = 0
    b3 = group_norms_np(prox_group_l2q(v, tau, ids, 3.0), ids)
    exact3 = 2 * b0 / (1 + np.sqrt(1 + 12 * tau * b0))
    np.testing.assert_allclose(b3, exact3, rtol=1e-12, atol=1e-300)
    b15 = group_norms_np(prox_group_l2q(v, tau, ids, 1.5), ids)
    den = 1.5 * tau + np.sqrt(2.25 * tau * tau + 4 * b0)
    s = np.divide(2 * b0, den, out=np.zeros_like(b0), where=den > 0)
    np.testing.assert_allclose(b15, s * s, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("q", [1.001, 1.01, 1.1, 1.5, 2.5, 10.0, 100.0])
@pytest.mark.parametrize("tau", [1e-12, 1e-3, 1.0, 1e3, 1e12])
def test_l2q_newton_residual_over_huge_ranges(q, tau):
    rng = np.random.default_rng(7)
    b0 = np.exp(rng.uniform(-30, 30, size=400))
    b = prox_group_l2q(b0, tau, np.arange(b0.size), q)  # singleton groups, b0 > 0
    assert np.all((b >= 0) & (b <= b0))
    normal = b >= np.finfo(np.float64).tiny
    resid = np.abs(b - b0 + tau * q * b ** (q - 1)) / b0
    assert resid[normal].max() <= 100 * q * np.finfo(np.float64).eps
    # a root reported as 0 must be below the smallest subnormal: b <= (b0 / (tau q))^(1/(q-1))
    bound = (np.log(b0[~normal]) - np.log(tau * q)) / (q - 1)
    assert np.all(bound <= np.log(np.finfo(np.float64).tiny) + 1)


@pytest.mark.parametrize("p", [1.5, 3.0, 100.0])
def test_squared_lp_extreme_tau_asymptotics(p):
    # tau -> inf: tau * prox_{tau f}(v) -> grad f*(v) = ||v||_q^(2-q) sign(v) |v|^(q-1), q = p/(p-1)
    # tau -> 0:  (v - prox_{tau f}(v)) / tau -> grad f(v) = ||v||_p^(2-p) sign(v) |v|^(p-1)
    v = np.array([1.0, -2.0, 0.5, 3.0])
    q = p / (p - 1)
    grad_conj = np.linalg.norm(v, q) ** (2 - q) * np.sign(v) * np.abs(v) ** (q - 1)
    for tau in (1e8, 1e100, 1e300):
        np.testing.assert_allclose(tau * prox_squared_lp(v, tau, p), grad_conj, rtol=1e-6)
    grad = np.linalg.norm(v, p) ** (2 - p) * np.sign(v) * np.abs(v) ** (p - 1)
    # (v - prox) / tau resolves only ~eps * |v| / tau = 7e-9 in absolute terms
    np.testing.assert_allclose((v - prox_squared_lp(v, 1e-7, p)) / 1e-7, grad, rtol=1e-5, atol=2e-8)
    for tau in (1e-100, 1e-300, 5e-324):
        np.testing.assert_allclose(prox_squared_lp(v, tau, p), v, rtol=1e-15)


@pytest.mark.parametrize("tau", [1e-300, 1e300])
def test_squared_l1_extreme_tau(tau):
    v = np.array([1.0, -2.0, 0.5, 2.0])
    expected = v if tau < 1 else np.zeros(4)  # within eps * |v|: soft threshold's absolute accuracy
    for w in (
        prox_squared_l1(v, tau),
        prox_squared_weighted_l1(v, tau, np.full(4, 2.0)),
        prox_squared_lp(v, tau, np.inf) if tau < 1 else np.zeros(4),
    ):
        np.testing.assert_allclose(w, expected, rtol=1e-15, atol=4 * np.finfo(float).eps)
    assert np.all(np.abs(prox_squared_lp(v, 1e300, np.inf)) <= 1e-299)


def test_all_equal_entries_squared_l1():
    for n, c, tau in [(1, 3.0, 0.5), (5, -2.0, 1.0), (40, 1.5, 0.1)]:
        v = np.full(n, c)
        np.testing.assert_allclose(prox_squared_l1(v, tau), v / (1 + n * tau), rtol=1e-14)
        np.testing.assert_allclose(prox_squared_weighted_l1(v, tau, np.ones(n)), v / (1 + n * tau), rtol=1e-14)


# ----------------------------------------------------------------------------- edge cases
ALL_PROX = [
    lambda v, t, g: prox_l1(v, t),
    lambda v, t, g: prox_squared_l1(v, t),
    lambda v, t, g: prox_squared_weighted_l1(v, t, np.linspace(0.5, 2, v.size)),
    lambda v, t, g: prox_group_l21(v, t, g),
    lambda v, t, g: prox_squared_group_l1(v, t, g),
    lambda v, t, g: prox_group_l2q(v, t, g, 1.5),
    lambda v, t, g: prox_squared_lp(v, t, 1.5),
    lambda v, t, g: prox_squared_lp(v, t, 3.0),
    lambda v, t, g: prox_squared_group_lp(v, t, g, 1.5),
    lambda v, t, g: prox_squared_group_lp(v, t, g, 3.0),
    lambda v, t, g: prox_squared_group_lp(v, t, g, np.inf),
]


@pytest.mark.parametrize("prox", ALL_PROX)
def test_tau_zero_identity_zero_vector_and_purity(prox, rng):
    v = rng.normal(size=9)
    g = np.array([0, 0, 1, 1, 1, 2, 3, 3, 3])
    keep = v.copy()
    np.testing.assert_array_equal(prox(v, 0.0, g), v)
    np.testing.assert_array_equal(v, keep)
    np.testing.assert_array_equal(prox(np.zeros(9), 2.0, g), np.zeros(9))
    # very large tau: everything shrinks to (nearly) zero, never grows, keeps signs
    big = prox(v, 1e12, g)
    assert np.linalg.norm(big) <= 1e-3 * np.linalg.norm(v)
    assert np.all(big * v >= 0)


def test_large_tau_exact_zero_for_nonsmooth_at_zero(rng):
    v = rng.normal(size=8)
    g = np.repeat(np.arange(4), 2)
    assert not prox_l1(v, np.abs(v).max()).any()
    assert not prox_group_l21(v, group_norms_np(v, g).max(), g).any()
    assert not project_l2_ball(v, 0.0).any()


def test_single_group(rng):
    v = rng.normal(size=7)
    g = np.zeros(7, dtype=int)
    tau = 0.8
    np.testing.assert_allclose(prox_squared_group_l1(v, tau, g), v / (1 + tau), rtol=1e-14)
    np.testing.assert_allclose(prox_group_l21(v, tau, g), v * max(0, 1 - tau / np.linalg.norm(v)), rtol=1e-14)
    for p in (1.3, 2.0, 5.0, np.inf):
        np.testing.assert_allclose(prox_squared_group_lp(v, tau, g, p), v / (1 + tau), rtol=1e-10)


def test_empty_groups_change_nothing(rng):
    v = rng.normal(size=6)
    dense = np.array([0, 0, 1, 1, 2, 2])
    gappy = np.array([0, 0, 2, 2, 5, 5])  # ids 1, 3, 4 are empty groups
    as_list = [[0, 1], [], [2, 3], [], [], [4, 5], []]
    for prox in ALL_PROX:
        ref = prox(v, 0.7, dense)
        np.testing.assert_allclose(prox(v, 0.7, gappy), ref, rtol=1e-12)
        np.testing.assert_allclose(prox(v, 0.7, as_list), ref, rtol=1e-12)


def test_group_list_form_equals_id_form(rng):
    v = rng.normal(size=7)
    ids = np.array([2, 0, 1, 0, 2, 2, 1])
    lists = [np.flatnonzero(ids == j) for j in range(3)]
    np.testing.assert_array_equal(prox_squared_group_l1(v, 0.4, lists), prox_squared_group_l1(v, 0.4, ids))


def test_zero_weight_coordinate_is_unpenalised():
    v = np.array([3.0, -2.0, 0.5])
    w = prox_squared_weighted_l1(v, 100.0, np.array([1.0, 0.0, 1.0]))
    assert w[1] == -2.0
    assert abs(w[0]) < 0.1 and w[2] == 0.0


def test_weighted_group_l1_matches_cvxpy(rng):
    v = rng.normal(size=8)
    ids = np.array([0, 0, 1, 1, 1, 2, 3, 3])
    d = np.array([1.0, 0.3, 2.0, 0.0])
    tau = 0.9
    p = prox_squared_group_l1(v, tau, ids, weights=d)
    omega = lambda w: 0.5 * np.dot(d, group_norms_np(w, ids)) ** 2  # noqa: E731
    check_against_cvxpy(v, tau, omega, p, lambda x: tau * 0.5 * cp.square(d @ cvx_blocks(x, ids)))


def test_weights_cover_trailing_empty_groups(rng):
    v = rng.normal(size=4)
    d = np.array([1.0, 2.0, 5.0])  # group 2 is empty
    w = prox_squared_group_l1(v, 0.3, [[0, 1], [2, 3], []], weights=d)
    np.testing.assert_allclose(w, prox_squared_group_l1(v, 0.3, [0, 0, 1, 1], weights=d), rtol=1e-14)
    with pytest.raises(InputError) as err:
        prox_squared_group_l1(v, 0.3, [0, 0, 1, 3], weights=d)  # id 3 has no weight
    assert err.value.field == "groups"


def test_radius_inf_is_identity(rng):
    v = rng.normal(size=5) * 1e100
    np.testing.assert_array_equal(project_l2_ball(v, np.inf), v)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: prox_l1(np.ones(3), -1.0), "tau"),
        (lambda: prox_l1(np.ones(3), np.nan), "tau"),
        (lambda: prox_l1(np.ones(3), np.inf), "tau"),
        (lambda: prox_l1(np.ones(3), True), "tau"),
        (lambda: prox_l1(np.ones(3), np.ones(2)), "tau"),
        (lambda: prox_l1(np.ones((3, 2)), 1.0), "v"),
        (lambda: prox_l1(np.array([1.0, np.nan]), 1.0), "v"),
        (lambda: prox_l1(np.array([1.0, np.inf]), 1.0), "v"),
        (lambda: prox_l1(np.array([1 + 1j]), 1.0), "v"),
        (lambda: prox_l1(np.array(["a"]), 1.0), "v"),
        (lambda: prox_squared_weighted_l1(np.ones(3), 1.0, np.ones(2)), "weights"),
        (lambda: prox_squared_weighted_l1(np.ones(3), 1.0, -np.ones(3)), "weights"),
        (lambda: prox_group_l21(np.ones(3), 1.0, [0, 1]), "groups"),
        (lambda: prox_group_l21(np.ones(3), 1.0, [0.0, 1.0, 1.0]), "groups"),
        (lambda: prox_group_l21(np.ones(3), 1.0, [0, -1, 1]), "groups"),
        (lambda: prox_group_l21(np.ones(3), 1.0, [[0, 1], [1, 2]]), "groups[1]"),
        (lambda: prox_group_l21(np.ones(3), 1.0, [[0, 1]]), "groups"),
        (lambda: prox_group_l21(np.ones(3), 1.0, [[0, 1], [2, 3]]), "groups[1]"),
        (lambda: prox_group_l21(np.ones(4), 1.0, np.zeros((2, 2), dtype=int)), "groups"),
        (lambda: prox_group_l2q(np.ones(3), 1.0, [0, 0, 1], 1.0), "q"),
        (lambda: prox_group_l2q(np.ones(3), 1.0, [0, 0, 1], np.inf), "q"),
        (lambda: prox_squared_group_lp(np.ones(3), 1.0, [0, 0, 1], 0.5), "p"),
        (lambda: prox_squared_lp(np.ones(3), 1.0, np.nan), "p"),
        (lambda: project_l2_ball(np.ones(3), -1.0), "radius"),
    ],
)
def test_bad_input_raises_input_error(call, field):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field
