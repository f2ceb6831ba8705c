"""MixedNorm and its reduced solvers against direct cvxpy solves of their defining problems."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.cuts import Cut
from cutplane.exceptions import InputError
from cutplane.reduced.registry import make_reduced_solver
from cutplane.regularizers import L2, MixedNorm
from cutplane.working_set import WorkingSet


def _random_setup(seed, dim=12, m=4, n_cuts=6, sparse=False):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, m, size=dim)
    groups[:m] = np.arange(m)  # every group non-empty
    A = rng.standard_normal((n_cuts, dim))
    if sparse:
        A[rng.random(A.shape) < 0.6] = 0.0
    b = rng.uniform(0.0, 2.0, size=n_cuts)
    return groups, A, b


def _working_set(groups, A, b, sparse=False):
    ws = WorkingSet(A.shape[1], groups=groups)
    for a, off in zip(A, b):
        ws.add(Cut(sp.csr_matrix(a[None, :]) if sparse else a, float(off)))
    return ws


def _direct_reduced(reg, A, b, lam):
    w = cp.Variable(A.shape[1])
    prob = cp.Problem(cp.Minimize(lam * reg.cvx_term(w) + cp.max(A @ w + b)))
    with warnings.catch_warnings():  # the reference's own notes; the tests check its value to a tolerance
        warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
        warnings.filterwarnings("ignore", message="pnorm with p=", category=UserWarning)
        prob.solve(solver="CLARABEL")
    return prob.value, w.value


def _reduced_primal(reg, A, b, lam, w):
    return lam * reg(w) + float(np.max(A @ w + b))


@settings(max_examples=60)
@given(seed=st.integers(0, 10**6), p=st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_fenchel_young_and_gradient(seed, p):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 3, size=9)
    reg = MixedNorm(groups, p=p, n_groups=3)
    w, v = rng.standard_normal(9), rng.standard_normal(9)
    assert reg(w) + reg.conjugate(v) >= w @ v - 1e-9
    g = reg.grad_conjugate(v)
    assert reg(g) + reg.conjugate(v) == pytest.approx(g @ v, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("p", [1.0, 1.5, 4.0])
def test_conjugate_matches_cvxpy(p):
    rng = np.random.default_rng(3)
    groups = np.array([0, 0, 1, 1, 1, 2, 2, 0])
    reg = MixedNorm(groups, p=p)
    v = rng.standard_normal(8)
    w = cp.Variable(8)
    prob = cp.Problem(cp.Maximize(v @ w - reg.cvx_term(w)))
    prob.solve(solver="CLARABEL")
    assert reg.conjugate(v) == pytest.approx(prob.value, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("path", ["native", "direct", "cvxpy"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_qcqp_matches_direct_solve(seed, sparse, path):
    """The three paths (the native interior point, the default; Clarabel's own API; cvxpy)
    against a cvxpy solve of the reduced primal."""
    groups, A, b = _random_setup(seed, sparse=sparse)
    lam = 0.7
    reg = MixedNorm(groups, p=1.0)
    ws = _working_set(groups, A, b, sparse)
    solver = (
        make_reduced_solver(reg) if path == "native" else make_reduced_solver(reg, "CLARABEL", direct=path == "direct")
    )
    sol = solver.solve(ws, lam)
    if ws.n_cuts > 1:
        assert sol.backend == {"native": "NATIVE-IPM", "direct": "CLARABEL(direct)"}.get(path, "CLARABEL")
        assert sol.failures == ()
    opt, _ = _direct_reduced(reg, A, b, lam)
    # certified lower bound and the recovered w's value bracket the optimum tightly
    assert sol.lower_bound <= opt + 1e-6
    assert sol.lower_bound == pytest.approx(opt, rel=1e-5, abs=1e-6)
    # w recovered through eq. (7) from the conic duals: their error is about sqrt of the
    # backend's 1e-8 tolerance, so the primal value is reproduced to ~1e-5 relative
    assert _reduced_primal(reg, A, b, lam, sol.w) == pytest.approx(opt, rel=1e-4)
    # mu from the constraint duals is on the simplex and reproduces w through eq. (7)
    assert sol.mu.sum() == pytest.approx(1.0, abs=1e-6)
    assert np.all(sol.mu >= 0)
    v = -(A.T @ sol.alpha) / lam
    np.testing.assert_allclose(sol.w, sol.mu[groups] * v, atol=1e-12)


@pytest.mark.parametrize("p", [1.25, 1.5, 3.0, 100.0])
@pytest.mark.parametrize("seed", range(3))
def test_smooth_dual_matches_direct_solve(p, seed):
    groups, A, b = _random_setup(seed + 10)
    lam = 0.5
    reg = MixedNorm(groups, p=p)
    ws = _working_set(groups, A, b)
    sol = make_reduced_solver(reg).solve(ws, lam)
    opt, _ = _direct_reduced(reg, A, b, lam)
    assert sol.status in ("optimal", "stalled")
    assert sol.lower_bound <= opt + 1e-6 * max(1, abs(opt))
    assert sol.lower_bound == pytest.approx(opt, rel=1e-5, abs=1e-6)
    # for p = 100 eq. (13) cannot resolve the groups below the largest norm; the solver's
    # restricted primal solve (p > 2: its first path) gives the minimiser all the same
    assert _reduced_primal(reg, A, b, lam, sol.w) == pytest.approx(opt, rel=1e-5, abs=1e-6)


def test_p_near_one_agrees_with_qcqp():
    groups, A, b = _random_setup(21)
    lam = 1.0
    ws = _working_set(groups, A, b)
    s1 = make_reduced_solver(MixedNorm(groups, p=1.0)).solve(ws, lam)
    s2 = make_reduced_solver(MixedNorm(groups, p=1.02)).solve(ws, lam)
    assert s2.lower_bound == pytest.approx(s1.lower_bound, rel=0.02)


def test_p_two_equals_l2():
    groups, A, b = _random_setup(5)
    lam = 0.3
    ws = _working_set(groups, A, b)
    s_mixed = make_reduced_solver(MixedNorm(groups, p=2.0)).solve(ws, lam)
    s_l2 = make_reduced_solver(L2()).solve(ws, lam)
    assert s_mixed.lower_bound == pytest.approx(s_l2.lower_bound, rel=1e-7, abs=1e-9)
    np.testing.assert_allclose(s_mixed.w, s_l2.w, atol=1e-6)


class _MaxAffine:
    """R(w) = max_i <a_i, w> + c_i, a convex piecewise-linear risk."""

    def __init__(self, A, c):
        self.A, self.c, self.dim = A, c, A.shape[1]

    def __call__(self, w):
        from cutplane.cuts import OracleResult

        vals = self.A @ w + self.c
        i = int(np.argmax(vals))
        return OracleResult(float(vals[i]), Cut(self.A[i].copy(), float(self.c[i])))


@pytest.mark.parametrize("p", [1.0, 1.5])
def test_engine_with_mixed_norm_matches_full_primal(p):
    rng = np.random.default_rng(8)
    dim, m = 10, 3
    groups = np.arange(dim) % m
    A = rng.standard_normal((40, dim))
    c = rng.uniform(0, 1, 40)
    reg = MixedNorm(groups, p=p)
    lam, eps = 0.5, 1e-5
    res = minimize(_MaxAffine(A, c), reg, lam, eps=eps, max_iter=500)
    opt, _ = _direct_reduced(reg, A, c, lam)
    assert res.status == "converged"
    assert res.gap <= eps
    assert res.lower_bound <= opt + 1e-6
    assert res.objective == pytest.approx(opt, abs=2 * eps)
    h = res.history
    assert np.all(np.diff(h.lower) >= -1e-12)
    assert np.all(h.lower <= h.best_upper + 1e-9)


def test_group_sparsity_on_noise_groups():
    """Only group 0 carries signal: p = 1 zeroes the others, p = 2 does not."""
    rng = np.random.default_rng(0)
    n, dim = 60, 12
    groups = np.repeat(np.arange(4), 3)
    X = rng.standard_normal((n, dim))
    y = np.sign(X[:, :3] @ np.array([1.0, -1.0, 0.5]) + 1e-9)
    from oracles.linear import BinaryHinge

    res1 = minimize(BinaryHinge(X, y), MixedNorm(groups, p=1.0), 1.0, eps=1e-6, max_iter=500)
    res2 = minimize(BinaryHinge(X, y), MixedNorm(groups, p=2.0), 1.0, eps=1e-6, max_iter=500)
    norms1 = MixedNorm(groups).group_norms(res1.w)
    norms2 = MixedNorm(groups).group_norms(res2.w)
    assert norms1[0] > 0.1
    assert np.all(norms1[1:] <= 1e-5 * norms1[0])
    assert np.all(norms2[1:] > 1e-3)
    assert res1.mu is not None and res1.mu[0] == pytest.approx(1.0, abs=1e-4)


def test_bad_input():
    with pytest.raises(InputError):
        MixedNorm([0, 1, 1], p=0.5)
    with pytest.raises(InputError):
        MixedNorm([0, 1, 1], p=float("nan"))
    reg = MixedNorm([0, 1, 1])
    with pytest.raises(InputError):
        reg(np.zeros(4))


@pytest.mark.parametrize("p", [1.0, 1.5])
def test_trailing_empty_groups(p):
    """A template with no feature left (e.g. all dropped by min_count) keeps its id and weight 0."""
    rng = np.random.default_rng(4)
    dim = 8
    groups = np.arange(dim) % 3  # ids 0..2 used, 3 and 4 empty
    A = rng.standard_normal((20, dim))
    c = rng.uniform(0, 1, 20)
    reg = MixedNorm(groups, p=p, n_groups=5)
    res = minimize(_MaxAffine(A, c), reg, 0.5, eps=1e-5, max_iter=300)
    opt, _ = _direct_reduced(MixedNorm(groups, p=p), A, c, 0.5)
    assert res.status == "converged"
    assert res.objective == pytest.approx(opt, abs=2e-5)
    assert res.mu.shape == (5,) and np.all(res.mu[3:] == 0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dim=st.integers(1, 40), n_groups=st.integers(1, 6), sorted_ids=st.booleans())
def test_from_group_weights_in_place_and_run_by_run(seed, dim, n_groups, sorted_ids):
    """``w_j = mu_j v_j`` whether the groups are runs (scaled run by run) or scattered, into a new
    vector by default and into ``v`` itself with ``overwrite_v=True``."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, dim)
    ids = np.sort(ids) if sorted_ids else ids
    reg = MixedNorm(ids, p=1.0)
    v = rng.standard_normal(dim)
    mu = rng.random(reg.n_groups)
    expect = mu[ids] * v
    v0 = v.copy()
    w = reg.from_group_weights(v, mu)
    np.testing.assert_array_equal(w, expect)
    np.testing.assert_array_equal(v, v0)  # untouched by default
    w2 = reg.from_group_weights(v, mu, overwrite_v=True)
    assert w2 is v  # the array itself, not a view of it (the engine keeps it without a copy)
    np.testing.assert_array_equal(w2, expect)
    np.testing.assert_array_equal(v, expect)  # scaled in place


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), dim=st.integers(1, 200), n_groups=st.integers(1, 6))
def test_scale_by_group_runs_numpy_and_compiled_agree(seed, dim, n_groups):
    """``v *= mu[group]`` run by run gives the same bits in numpy (few runs) and in the compiled
    pass (many runs)."""
    from cutplane.groups import group_runs
    from cutplane.working_set import _ws_kernels

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, dim)
    runs = group_runs(ids, n_groups, max_runs_per_group=dim)
    v = rng.standard_normal(dim) * 10.0 ** rng.integers(-300, 300, dim)
    mu = rng.random(n_groups) * 10.0 ** rng.integers(-20, 20, n_groups)
    a, b = v.copy(), v.copy()
    with np.errstate(over="ignore"):  # values up to 1e320: products overflow to inf, here as in the kernels
        _ws_kernels.scale_by_group_runs(a, mu, *runs)
        kept = _ws_kernels.NUMPY_SCALE_MAX_RUNS
        _ws_kernels.NUMPY_SCALE_MAX_RUNS = 0  # every run count takes the compiled pass
        try:
            _ws_kernels.scale_by_group_runs(b, mu, *runs)
        finally:
            _ws_kernels.NUMPY_SCALE_MAX_RUNS = kept
        expected = mu[ids] * v
    np.testing.assert_array_equal(a, expected)
    np.testing.assert_array_equal(b, expected)
