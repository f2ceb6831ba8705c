"""The compiled active-set solver of the simplex QP against cvxpy (CLARABEL) and brute force."""

import itertools

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.reduced.simplex_qp import SimplexQPResult, solve_simplex_qp


def objective(H, c, a):
    return 0.5 * a @ H @ a - c @ a


def clarabel_value(H, c):
    a = cp.Variable(len(c), nonneg=True)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(a, cp.psd_wrap(H)) - c @ a), [cp.sum(a) == 1])
    # tight tolerances: at the defaults (1e-8) its value can exceed the optimum by ~2e-8 relative
    # when H has entries ~1e4 (lam = 1e-4), more than the comparison below allows
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return prob.value


def brute_force_value(H, c):
    """min f over the simplex by enumerating supports: the minimiser of f on the affine hull of each
    support (least squares on the KKT system, a minimiser also when H_SS is singular), kept when
    feasible; the best feasible one is the optimum (the optimum is such a point for its support)."""
    n = len(c)
    best = np.inf
    for size in range(1, n + 1):
        for S in itertools.combinations(range(n), size):
            S = list(S)
            K = np.zeros((size + 1, size + 1))
            K[:size, :size] = H[np.ix_(S, S)]
            K[:size, size] = K[size, :size] = 1.0
            x = np.linalg.lstsq(K, np.append(c[S], 1.0), rcond=None)[0][:size]
            if np.all(x >= -1e-12) and abs(x.sum() - 1.0) < 1e-9:
                a = np.zeros(n)
                a[S] = np.clip(x, 0.0, None) / np.clip(x, 0.0, None).sum()
                best = min(best, objective(H, c, a))
    return best


@st.composite
def problems(draw, max_n=60):
    """A PSD H = A A^T / lam of full rank, of low rank, or with duplicated cuts; c; a warm start."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, max_n))
    kind = draw(st.sampled_from(["full", "low_rank", "duplicated"]))
    lam = draw(st.sampled_from([1e-4, 1e-2, 1.0, 10.0]))
    warm = draw(st.sampled_from(["none", "random", "sparse"]))
    rng = np.random.default_rng(seed)
    dim = n + 3 if kind == "full" else max(1, n // 3)
    A = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.7) / np.sqrt(dim)
    if kind == "duplicated" and n > 1:
        A[n // 2 :] = A[: n - n // 2]
    H = A @ A.T / lam
    c = rng.random(n) if draw(st.booleans()) else rng.standard_normal(n)
    alpha0 = None
    if warm == "random":
        alpha0 = rng.random(n)
    elif warm == "sparse":
        alpha0 = (rng.random(n) < 0.3) * rng.random(n)  # may be all zero: the default start then
    return H, c, alpha0


def check_answer(res, H, c, ref, ref_rtol=1e-9):
    """``ref``: the optimum by an independent method, accurate to ``ref_rtol`` (relative to
    1 + |ref|): exact enumeration 1e-9; CLARABEL's interior point is only feasible to ~1e-8, so
    its value can sit below the true optimum by that much."""
    a = res.alpha
    scale = 1.0 + abs(ref)
    assert isinstance(res, SimplexQPResult)
    assert a.shape == c.shape and np.all(a >= 0) and a.sum() == pytest.approx(1.0, abs=1e-12)
    value = objective(H, c, a)
    assert res.value == pytest.approx(value, abs=1e-10 * (1.0 + abs(value) + np.abs(H).max()))
    assert value <= ref + 1e-8 * scale  # as good as the reference optimum
    assert value >= ref - 1e-8 * scale
    assert res.fw_gap >= value - ref - ref_rtol * scale  # the gap is a certificate
    g = H @ a - c
    assert res.fw_gap == pytest.approx(max(a @ g - g.min(), 0.0), abs=1e-9 * (1.0 + np.abs(g).max()))
    tol = 1e-11 * (1.0 + np.abs(c).max() + np.abs(H).max())
    assert res.converged == (res.fw_gap <= max(tol, 1e-14))


@settings(max_examples=80)
@given(problems())
def test_matches_clarabel(problem):
    H, c, alpha0 = problem
    res = solve_simplex_qp(H, c, alpha0)
    assert res.converged
    check_answer(res, H, c, clarabel_value(H, c), ref_rtol=1e-8)


@settings(max_examples=60)
@given(problems(max_n=5))
def test_matches_brute_force_on_tiny_problems(problem):
    H, c, alpha0 = problem
    res = solve_simplex_qp(H, c, alpha0)
    assert res.converged
    check_answer(res, H, c, brute_force_value(H, c))


@settings(max_examples=30)
@given(problems(max_n=30), st.integers(0, 2**32 - 1))
def test_warm_start_does_not_change_the_optimum_and_is_not_modified(problem, seed):
    H, c, _ = problem
    alpha0 = np.random.default_rng(seed).random(len(c))
    kept = alpha0.copy()
    cold, warm = solve_simplex_qp(H, c), solve_simplex_qp(H, c, alpha0)
    assert np.array_equal(alpha0, kept)
    assert warm.value == pytest.approx(cold.value, abs=1e-9 * (1.0 + abs(cold.value)))


def test_nonsymmetric_input_is_symmetrised(rng):
    A = rng.standard_normal((8, 3))
    H, c = A @ A.T, rng.standard_normal(8)
    K = rng.standard_normal((8, 8))
    skewed = H + (K - K.T)  # the same quadratic form
    res = solve_simplex_qp(skewed, c)
    assert res.converged and res.value == pytest.approx(clarabel_value(H, c), abs=1e-7)
    assert res.value == pytest.approx(objective(H, c, res.alpha), abs=1e-12)


def test_step_limit_gives_an_unconverged_answer_with_a_valid_gap(rng):
    A = rng.standard_normal((40, 60))
    H, c = A @ A.T, rng.standard_normal(40)
    res = solve_simplex_qp(H, c, max_iter=3)
    ref = clarabel_value(H, c)
    assert res.n_iter == 3 and not res.converged
    assert np.all(res.alpha >= 0) and res.alpha.sum() == pytest.approx(1.0)
    assert res.fw_gap >= objective(H, c, res.alpha) - ref - 1e-9 * (1 + abs(ref)) > 0
    full = solve_simplex_qp(H, c)
    assert full.converged and full.value == pytest.approx(ref, abs=1e-7 * (1 + abs(ref)))


def test_explicit_tolerance_is_used(rng):
    A = rng.standard_normal((30, 10))
    H, c = A @ A.T, rng.standard_normal(30)
    loose = solve_simplex_qp(H, c, tol=1e3)  # stops at the first face minimum
    tight = solve_simplex_qp(H, c)
    assert loose.converged == (loose.fw_gap <= 1e3)
    assert loose.n_iter <= tight.n_iter and tight.value <= loose.value + 1e-12


def test_single_cut_and_identical_cuts():
    res = solve_simplex_qp(np.array([[2.0]]), np.array([0.5]))
    assert res.alpha.tolist() == [1.0] and res.value == pytest.approx(0.5) and res.converged
    H, c = np.ones((5, 5)), np.full(5, 0.3)  # every point of the simplex is optimal
    res = solve_simplex_qp(H, c, np.arange(5.0))
    assert res.converged and res.value == pytest.approx(0.5 - 0.3) and res.fw_gap <= 1e-12


@pytest.mark.parametrize(
    "H, c, message",
    [
        (np.eye(3), np.ones(2), "expected"),
        (np.eye(3)[:2], np.ones(3), "expected"),
        (np.zeros((0, 0)), np.zeros(0), "empty"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), np.ones(2), "finite"),
        (np.eye(2), np.array([0.0, np.inf]), "finite"),
        (np.diag([1.0, np.inf]), np.ones(2), "finite"),
    ],
)
def test_bad_input_raises_value_error(H, c, message):
    with pytest.raises(ValueError, match=message):
        solve_simplex_qp(H, c)
