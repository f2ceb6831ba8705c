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


@st.composite
def growing_problems(draw):
    """Cuts added one at a time, with some dropped on the way (renamed positions): a BMRM run."""
    seed = draw(st.integers(0, 2**32 - 1))
    n_final = draw(st.integers(8, 40))
    kind = draw(st.sampled_from(["full", "low_rank", "duplicated"]))
    lam = draw(st.sampled_from([1e-4, 1e-2, 1.0]))
    drop_every = draw(st.sampled_from([0, 3, 7]))
    rng = np.random.default_rng(seed)
    dim = n_final + 3 if kind == "full" else max(2, n_final // 3)
    A = rng.standard_normal((n_final, dim)) * (rng.random((n_final, dim)) < 0.7) / np.sqrt(dim)
    if kind == "duplicated":
        A[n_final // 2 :] = A[: n_final - n_final // 2]
    return A, rng.standard_normal(n_final), lam, drop_every


@settings(max_examples=60, deadline=None)
@given(growing_problems())
def test_a_kept_factor_gives_the_answer_of_a_fresh_solve(problem):
    """Solving a growing problem from the last face factor (renamed after drops) answers as a
    fresh factorisation does: certified, the same optimum; a factor is returned for the next."""
    A, c_all, lam, drop_every = problem
    rows, alpha, factor_ids = [], None, None  # rows: indices into A of the current cuts
    used = 0
    for t in range(A.shape[0]):
        if drop_every and t % drop_every == drop_every - 1 and alpha is not None:
            zero = [r for r, a in zip(rows, alpha) if a == 0.0]
            if zero:  # drop an idle cut, as pruning does: positions shift
                alpha = alpha[np.array(rows) != zero[0]]
                rows.remove(zero[0])
        rows.append(t)
        idx = np.array(rows)
        H = A[idx] @ A[idx].T / lam
        c = c_all[idx]
        warm = None if alpha is None else np.append(alpha, 0.0)
        factor = None
        if factor_ids is not None and warm is not None and np.isin(factor_ids[0], idx).all():
            pos = {r: i for i, r in enumerate(rows)}
            factor = factor_ids[1]._replace(members=np.array([pos[r] for r in factor_ids[0]], dtype=np.int64))
        res = solve_simplex_qp(H, c, warm, factor=factor)
        ref = solve_simplex_qp(H, c, warm)
        used += factor is not None
        assert res.converged and ref.converged
        assert res.value == pytest.approx(ref.value, abs=1e-9 * (1.0 + abs(ref.value) + np.abs(H).max()))
        g = H @ res.alpha - c
        assert res.fw_gap == pytest.approx(max(res.alpha @ g - g.min(), 0.0), abs=1e-9 * (1.0 + np.abs(g).max()))
        alpha = res.alpha
        if res.factor is not None:
            assert res.factor.L.shape == (res.factor.members.size - 1,) * 2
            factor_ids = (idx[res.factor.members], res.factor)
        else:
            factor_ids = None
    assert used > 0 or A.shape[0] <= 8  # the kept factor was used (problems above 6 cuts return one)


@pytest.mark.parametrize("bad", ["another_H", "out_of_range", "repeated", "r0_outside"])
def test_a_factor_that_does_not_fit_is_refused_and_the_answer_stays_certified(bad):
    rng = np.random.default_rng(5)
    n, dim = 30, 40
    A = rng.standard_normal((n, dim)) / np.sqrt(dim)
    H, c = A @ A.T, rng.standard_normal(n)
    first = solve_simplex_qp(H, c)
    assert first.factor is not None and first.factor.members.size >= 3
    members = first.factor.members.copy()
    if bad == "another_H":
        H = 4.0 * H  # another lam: the diagonal check refuses the factor
    elif bad == "out_of_range":
        members[-1] = n + 5
    elif bad == "repeated":
        members[-1] = members[1]
    else:
        members[0] = int(np.flatnonzero(first.alpha == 0.0)[0])
    res = solve_simplex_qp(H, c, first.alpha, factor=first.factor._replace(members=members))
    ref = solve_simplex_qp(H, c)
    assert res.converged
    assert res.value == pytest.approx(ref.value, abs=1e-9 * (1.0 + abs(ref.value) + np.abs(H).max()))
