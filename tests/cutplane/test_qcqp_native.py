"""The native interior-point QCQP solver of MTL^struct against cvxpy (CLARABEL) and brute force."""

import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.reduced.qcqp.native import QCQPNativeResult, solve_qcqp_native
from cutplane.reduced.qp import psd_factor

# The reduced QCQP the engine solved at MTL^struct's last iteration on CoNLL-2000 (86 cuts, 22
# active groups; Gram blocks exactly symmetric, stored as upper triangles) and its warm start.
RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "qcqp_conll2000_86cuts.npz"


def load_recorded(path=RECORDED):
    """``(grams, b, lam, warm)`` of the recorded instance."""
    with np.load(path) as f:
        upper, b, lam, warm = f["gram_upper"], f["b"], float(f["lam"]), f["warm"]
    n = len(b)
    iu = np.triu_indices(n)
    grams = np.zeros((len(upper), n, n))
    grams[:, iu[0], iu[1]] = upper
    grams[:, iu[1], iu[0]] = upper
    return list(grams), b, lam, warm


def quad_values(grams, lam, a):
    return np.array([a @ Q @ a for Q in grams]) / (2.0 * lam)


def objective(grams, b, lam, a):
    """``b^T a - max_j q_j(a)``: the QCQP's objective at a point of the simplex."""
    return float(b @ a - quad_values(grams, lam, a).max())


def size_of(grams, b, lam, a):
    """The size of the two terms of the objective (the scale the relative tolerance refers to)."""
    return max(abs(float(b @ a)), float(quad_values(grams, lam, a).max()), 1e-300)


def normalised(grams, b, lam):
    """An equivalent instance of scale one (same maximisers): the reference solvers get it."""
    Qs = [0.5 * (Q + Q.T) / lam for Q in grams]
    bs = b - b.max()
    sigma = max(float(np.max(-bs)), max(0.5 * float(np.max(np.diag(Q))) for Q in Qs))
    if sigma == 0.0:
        sigma = 1.0
    return [Q / sigma for Q in Qs], bs / sigma


def _reference_solve(prob):
    """CLARABEL at tight tolerances; its "Solution may be inaccurate" note is not what the tests
    check (they accept "optimal_inaccurate" and compare values to a tolerance)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        prob.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)


def clarabel_alpha(grams, b, lam):
    """The QCQP as a cvxpy model (one second-order cone per non-zero group), solved by CLARABEL."""
    Qs, bs = normalised(grams, b, lam)
    n = len(b)
    a = cp.Variable(n, nonneg=True)
    t = cp.Variable()
    cons = [cp.sum(a) == 1]
    for Q in Qs:
        F = psd_factor(Q)
        cons.append(0.5 * cp.sum_squares(F @ a) <= t if F.shape[0] else t >= 0)
    prob = cp.Problem(cp.Maximize(bs @ a - t), cons)
    _reference_solve(prob)
    assert prob.status in ("optimal", "optimal_inaccurate")
    a = np.clip(a.value, 0.0, None)
    return a / a.sum()


def dual_function(grams, b, lam, mu):
    """``D(mu) = max_{a in simplex} b^T a - sum_j mu_j q_j(a)`` by cvxpy (CLARABEL), input units."""
    Qs, bs = normalised(grams, b, lam)
    H = sum(m * Q for m, Q in zip(mu, Qs))
    a = cp.Variable(len(b), nonneg=True)
    F = psd_factor(H)
    quad = 0.5 * cp.sum_squares(F @ a) if F.shape[0] else 0.0
    prob = cp.Problem(cp.Maximize(bs @ a - quad), [cp.sum(a) == 1])
    _reference_solve(prob)
    a = np.clip(a.value, 0.0, None)
    a /= a.sum()
    # the exact value of the maximand at the returned point: a lower bound on D(mu) in input units
    qv = quad_values(grams, lam, a)
    return float(b @ a - mu @ qv)


@st.composite
def instances(draw, max_n=40, max_m=8):
    """Random QCQPs: full-rank, low-rank, duplicated-cut, zero or tiny groups, at several scales."""
    seed = draw(st.integers(0, 2**32 - 1))
    n = draw(st.integers(1, max_n))
    m = draw(st.integers(1, max_m))
    kind = draw(st.sampled_from(["full", "low_rank", "duplicated", "zero_groups", "tiny_groups"]))
    lam = draw(st.sampled_from([1e-6, 1e-3, 1.0, 1e2]))
    q_scale = draw(st.sampled_from([1e-6, 1.0, 1e6]))
    b_scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    rng = np.random.default_rng(seed)
    grams = []
    for j in range(m):
        dim = n + 2 if kind == "full" else max(1, n // 3)
        A = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.6)
        if kind == "duplicated" and n > 1:
            A[n // 2 :] = A[: n - n // 2]
        Q = A @ A.T * q_scale / dim
        if kind == "zero_groups" and j % 2 == 1:
            Q = np.zeros((n, n))
        if kind == "tiny_groups" and j % 2 == 1:
            Q = Q * 1e-12
        grams.append(Q)
    b = rng.random(n) * b_scale
    if kind == "duplicated" and n > 1:
        b[n // 2 :] = b[: n - n // 2]
    # lam ties the quadratic part to the offsets: keep the two comparable in most draws
    # (otherwise one side dominates and the problem degenerates to a vertex or to min max_j q_j)
    if draw(st.booleans()):
        lam = lam * q_scale / b_scale
    return grams, b, lam, kind


def rounding(grams, b, lam, a):
    """Bound on the floating-point error of evaluating the objective at ``a`` (dot products of
    length n: 2 n eps relative to the sums of absolute values), twice (a value and a bound)."""
    quad = max(abs(a) @ np.abs(Q) @ abs(a) for Q in grams) / (2.0 * lam)
    return 4.0 * len(b) * np.finfo(float).eps * (quad + np.abs(b) @ abs(a))


def check_result(res, grams, b, lam, tol=1e-7):
    """Invariants of every answer; returns the size the relative tolerance refers to."""
    n, m = len(b), len(grams)
    assert isinstance(res, QCQPNativeResult)
    assert res.alpha.shape == (n,) and res.mu.shape == (m,)
    assert np.all(res.alpha >= 0) and abs(res.alpha.sum() - 1.0) < 1e-12
    assert np.all(res.mu >= 0) and abs(res.mu.sum() - 1.0) < 1e-12
    q = quad_values(grams, lam, res.alpha)
    fl = rounding(grams, b, lam, res.alpha)
    assert abs(res.theta - q.max()) <= fl
    assert abs(res.value - objective(grams, b, lam, res.alpha)) <= fl
    assert res.gap >= 0.0
    # complementarity, implied by a valid certificate: b^T a - mu^T q(a) <= D(mu) <= value + gap
    assert res.mu @ (res.theta - q) <= res.gap + fl
    size = size_of(grams, b, lam, res.alpha)
    if res.converged:
        assert res.gap <= max(tol * size, fl) + fl
    return size


def reference_accuracy(grams, b, lam):
    """What a reference solve of the normalised instance can be trusted to, in input units: its
    tolerance (1e-11) times the normalisation factor, with a margin."""
    Qs = [0.5 * (Q + Q.T) / lam for Q in grams]
    sigma = max(float(b.max() - b.min()), max(0.5 * float(np.max(np.diag(Q))) for Q in Qs))
    return 1e-9 * sigma


@settings(max_examples=40)
@given(instances())
def test_matches_clarabel_and_gap_is_certified(inst):
    grams, b, lam, kind = inst
    res = solve_qcqp_native(grams, b, lam)
    size = check_result(res, grams, b, lam)
    # converged to 1e-9 but on a few extreme instances (Q^j / lam ~1e9 times b with duplicated
    # cuts: the offsets' part of the objective is then at the 1e-9 level, stalls near 1e-8)
    assert res.gap <= 1e-7 * size + 2 * rounding(grams, b, lam, res.alpha)
    ref = clarabel_alpha(grams, b, lam)
    ref_value = objective(grams, b, lam, ref)
    acc = reference_accuracy(grams, b, lam)
    # at least as good as CLARABEL's point (up to CLARABEL's own accuracy), and the certificate
    # covers it exactly (CLARABEL's value at a feasible point <= optimum <= value + gap); with
    # gap <= 1e-7 size (converged) the two pin the value to the optimum
    fl = rounding(grams, b, lam, ref)
    assert res.value >= ref_value - 1e-7 * size - acc - fl
    assert res.value + res.gap >= ref_value - fl
    # mu is dual optimal: the dual function at mu (maximised independently) is within the gap
    d_lower = dual_function(grams, b, lam, res.mu)
    assert d_lower <= res.value + res.gap + fl
    assert d_lower >= ref_value - 1e-7 * size - acc - fl  # weak duality, on an independent solve
    if kind == "full" and all_positive_definite(grams):
        # strictly concave objective: a unique maximiser
        np.testing.assert_allclose(res.alpha, ref, atol=1e-5)


def all_positive_definite(grams):
    return all(np.linalg.eigvalsh(0.5 * (Q + Q.T))[0] > 1e-8 * np.abs(Q).max() for Q in grams)


@settings(max_examples=15)
@given(instances(max_n=30), st.sampled_from(["optimum", "vertex", "random"]))
def test_warm_start_reaches_the_same_optimum(inst, how):
    grams, b, lam, _ = inst
    n = len(b)
    cold = solve_qcqp_native(grams, b, lam)
    rng = np.random.default_rng(n)
    alpha0 = {"optimum": cold.alpha, "vertex": np.eye(n)[int(rng.integers(n))], "random": rng.random(n)}[how]
    warm = solve_qcqp_native(grams, b, lam, alpha0=alpha0)
    size = check_result(warm, grams, b, lam)
    assert warm.gap <= 1e-7 * size + 2 * rounding(grams, b, lam, warm.alpha)
    fl = rounding(grams, b, lam, warm.alpha) + rounding(grams, b, lam, cold.alpha)
    assert abs(warm.value - cold.value) <= 1e-7 * size + fl
    # each certificate covers the other's point
    assert warm.value + warm.gap >= cold.value - fl
    assert cold.value + cold.gap >= warm.value - fl


@settings(max_examples=20)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1e-4, 1.0, 100.0]))
def test_two_cuts_against_brute_force(seed, lam):
    """n = 2: alpha = (t, 1 - t), the objective is concave in t; a fine grid brackets the optimum."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 5))
    grams = []
    for _ in range(m):
        A = rng.standard_normal((2, 3))
        grams.append(A @ A.T)
    b = rng.standard_normal(2) * max(1.0, 1.0 / lam)
    res = solve_qcqp_native(grams, b, lam)
    size = check_result(res, grams, b, lam)
    t = np.linspace(0.0, 1.0, 200001)
    pts = np.stack([t, 1.0 - t], axis=1)
    quad = np.stack([np.einsum("ki,ij,kj->k", pts, Q, pts) for Q in grams]) / (2.0 * lam)
    grid = pts @ b - quad.max(axis=0)
    best = grid.max()
    fl = rounding(grams, b, lam, pts[np.argmax(grid)])
    assert res.value >= best - 1e-9 * size - fl
    assert res.value + res.gap >= best - fl
    # the grid's spacing bounds how far above the grid the optimum can be (Lipschitz constant)
    lip = np.abs(np.diff(grid)).max()
    assert res.value <= best + lip


def test_single_cut():
    grams = [np.array([[4.0]]), np.array([[2.0]]), np.zeros((1, 1))]
    res = solve_qcqp_native(grams, np.array([3.0]), 0.5)
    assert res.alpha.tolist() == [1.0]
    assert res.theta == pytest.approx(4.0)
    assert res.value == pytest.approx(-1.0)
    assert res.gap == 0.0 and res.converged
    assert res.mu.tolist() == [1.0, 0.0, 0.0]


def test_identical_cuts_are_a_linear_program():
    """Two identical cuts: every q_j is constant on the simplex, the optimum is the vertex of the
    larger offset (regression: a rounding-negative curvature of the slack made the step negative)."""
    rng = np.random.default_rng(443)
    grams = []
    for _ in range(8):
        a = rng.standard_normal(3)
        A = np.stack([a, a])
        grams.append(A @ A.T)
    b = np.array([0.3, 0.7])
    res = solve_qcqp_native(grams, b, 100.0)
    check_result(res, grams, b, 100.0)
    assert res.converged
    const = max(Q[0, 0] for Q in grams) / 200.0
    assert res.value == pytest.approx(0.7 - const, rel=1e-9)
    assert res.alpha[1] > 1 - 1e-8


def test_all_groups_zero_is_the_best_vertex():
    rng = np.random.default_rng(0)
    b = rng.random(7)
    res = solve_qcqp_native([np.zeros((7, 7))] * 3, b, 1.0)
    check_result(res, [np.zeros((7, 7))] * 3, b, 1.0)
    assert res.converged
    assert res.value == pytest.approx(b.max(), rel=1e-9)
    assert res.alpha[np.argmax(b)] > 1 - 1e-6


def test_constant_problem():
    """Equal offsets and zero blocks: every point is optimal; the warm start is returned."""
    res = solve_qcqp_native([np.zeros((3, 3))], np.ones(3), 1.0, alpha0=np.array([1.0, 0.0, 1.0]))
    np.testing.assert_allclose(res.alpha, [0.5, 0.0, 0.5])
    assert res.value == 1.0 and res.gap == 0.0 and res.converged


def random_cuts_instance(seed, n=40, dim=300, m=10, lam=1e-3):
    """An engine-like instance: sparse cut slopes over ``dim`` coordinates split into ``m``
    groups (coordinate runs of unequal size), ``Q^j = A_j A_j^T``, offsets like losses."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.1)
    bounds = np.sort(rng.choice(np.arange(1, dim), m - 1, replace=False))
    groups = np.split(np.arange(dim), bounds)
    grams = [A[:, g] @ A[:, g].T for g in groups]
    b = rng.random(n) * 5.0
    return grams, b, lam


def assert_converged_to_clarabel(res, grams, b, lam):
    """Feasible, converged, as good as CLARABEL's optimum and certified above it; returns
    CLARABEL's alpha."""
    size = check_result(res, grams, b, lam)
    assert res.converged
    ref = clarabel_alpha(grams, b, lam)
    ref_value = objective(grams, b, lam, ref)
    assert res.value >= ref_value - 1e-7 * size
    assert res.value + res.gap >= ref_value - rounding(grams, b, lam, ref)
    return ref


@pytest.mark.parametrize("seed", [0, 1])
def test_random_cuts_against_clarabel(seed):
    grams, b, lam = random_cuts_instance(seed)
    res = solve_qcqp_native(grams, b, lam)
    ref = assert_converged_to_clarabel(res, grams, b, lam)
    np.testing.assert_allclose(res.alpha, ref, atol=1e-5)


def test_not_converged_still_feasible_and_certified():
    grams, b, lam = random_cuts_instance(3)
    res = solve_qcqp_native(grams, b, lam, max_iter=2)
    assert not res.converged
    check_result(res, grams, b, lam)
    full = solve_qcqp_native(grams, b, lam)
    assert res.value <= full.value + full.gap
    assert res.value + res.gap >= full.value  # the early certificate covers the optimum


def test_recorded_instance():
    grams, b, lam, warm = load_recorded()
    assert len(grams) == 22 and len(b) == 86
    for alpha0 in (None, warm):
        res = solve_qcqp_native(grams, b, lam, alpha0=alpha0)
        assert_converged_to_clarabel(res, grams, b, lam)


@pytest.mark.parametrize(
    "bad, match",
    [
        (dict(b=np.zeros(0)), "non-empty"),
        (dict(lam=0.0), "lam"),
        (dict(lam=np.nan), "lam"),
        (dict(grams=[]), "at least one group"),
        (dict(grams=[np.eye(2)]), "shape"),
        (dict(b=np.array([1.0, np.nan, 0.0])), "finite"),
        (dict(alpha0=np.ones(2)), "alpha0"),
    ],
)
def test_bad_input_raises_input_error(bad, match):
    args = dict(grams=[np.eye(3)], b=np.ones(3), lam=1.0)
    args.update(bad)
    with pytest.raises(InputError, match=match):
        solve_qcqp_native(**args)
