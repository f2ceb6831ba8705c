"""The primal point of the smooth-dual reduced solver (pMTL, p > 1) against direct cvxpy solves.

For large p the eq. (13) map from the dual to ``w`` cannot resolve the groups below the
largest norm (their dual norms are ~ ratio^(p-1)); these tests check that the returned
``w`` is nevertheless a minimiser of the reduced problem, and that the cutting-plane loop
reaches the optimum of a small full problem solved by cvxpy.
"""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.cuts import Cut
from cutplane.reduced.pnorm_primal import primal_group_weights
from cutplane.reduced.smooth_dual import SmoothDualReducedSolver
from cutplane.regularizers import MixedNorm
from cutplane.working_set import WorkingSet
from oracles.linear import MulticlassHinge


def _instance(seed, dim=12, m=4, n_cuts=8):
    """Random cuts whose groups have very different scales (some groups end below the largest norm)."""
    rng = np.random.default_rng(seed)
    groups = np.arange(dim) % m
    A = rng.standard_normal((n_cuts, dim)) * rng.uniform(0.2, 3.0, m)[groups]
    b = rng.uniform(0.0, 2.0, n_cuts)
    return groups, A, b


def _working_set(groups, A, b, sparse=False):
    ws = WorkingSet(A.shape[1], groups=groups)
    for a, off in zip(A, b):
        ws.add(Cut(sp.csr_matrix(a[None, :]) if sparse else a.copy(), float(off)))
    return ws


def _direct(reg, A, b, lam):
    w = cp.Variable(A.shape[1])
    prob = cp.Problem(cp.Minimize(lam * reg.cvx_term(w) + cp.max(A @ w + b)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cvxpy's note on approximating pnorm by SOC constraints
        prob.solve(solver="CLARABEL")
    return prob.value


def _reduced_value(reg, A, b, lam, w):
    return lam * reg(w) + float(np.max(A @ w + b))


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("primal_first", [False, True])
@pytest.mark.parametrize("p", [4.0, 10.0, 100.0])
@pytest.mark.parametrize("seed", [1, 2, 5, 6, 10])
def test_reduced_primal_point_is_optimal(p, seed, primal_first, sparse):
    """Seeds 1, 2, 5, 6, 10 at p = 100: eq. (13) alone gave a reduced value 0.07-8 above the optimum.
    Both paths (projected gradient then restricted primal; primal first), dense and sparse cuts
    (some exact zeros, so ``w = A_j^T beta_j`` is assembled from the CSR rows)."""
    groups, A, b = _instance(seed)
    if sparse:
        A[np.random.default_rng(seed).random(A.shape) < 0.3] = 0.0
    lam = 0.5
    reg = MixedNorm(groups, p=p)
    sol = SmoothDualReducedSolver(reg, primal_first=primal_first).solve(_working_set(groups, A, b, sparse), lam)
    opt = _direct(reg, A, b, lam)
    scale = max(1.0, abs(opt))
    assert sol.lower_bound <= opt + 1e-6 * scale
    assert sol.lower_bound == pytest.approx(opt, abs=1e-6 * scale)
    assert _reduced_value(reg, A, b, lam, sol.w) == pytest.approx(opt, abs=1e-6 * scale)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10**6), p=st.sampled_from([1.5, 3.0, 4.0, 30.0, 100.0]), lam=st.sampled_from([0.05, 0.5, 2.0])
)
def test_forced_restricted_primal_matches_cvxpy(seed, p, lam):
    """Projected gradient, then with ``primal_rtol=0`` the restricted primal solve always runs; its
    point is a reduced minimiser and never worse than the eq. (13) point."""
    groups, A, b = _instance(seed, n_cuts=6)
    reg = MixedNorm(groups, p=p)
    ws = _working_set(groups, A, b)
    forced = SmoothDualReducedSolver(reg, primal_rtol=0.0, primal_first=False).solve(ws, lam)
    plain = SmoothDualReducedSolver(reg, primal_rtol=np.inf, primal_first=False).solve(ws, lam)
    opt = _direct(reg, A, b, lam)
    scale = max(1.0, abs(opt))
    value = _reduced_value(reg, A, b, lam, forced.w)
    assert value >= opt - 1e-6 * scale  # a primal point cannot beat the optimum
    assert value == pytest.approx(opt, abs=1e-6 * scale)
    assert value <= _reduced_value(reg, A, b, lam, plain.w) + 1e-7 * scale
    # the dual side is untouched: same certified bound
    assert forced.lower_bound == pytest.approx(plain.lower_bound, rel=1e-12, abs=1e-12)
    if "restricted-primal" in forced.backend:
        # the reported weights are eq. (12)'s, written in the primal
        np.testing.assert_allclose(forced.mu, primal_group_weights(reg.group_norms(forced.w), p), rtol=1e-4)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    p=st.sampled_from([1.5, 3.0, 4.0, 30.0, 100.0]),
    lam=st.sampled_from([0.05, 0.5, 2.0]),
    n_cuts=st.integers(2, 9),
)
def test_primal_first_matches_cvxpy(seed, p, lam, n_cuts):
    """The one-conic-solve path (the default for p > 2): alpha from the cut constraints' multipliers
    gives a certified bound equal to the optimum, and ``w`` attains it; both paths agree."""
    groups, A, b = _instance(seed, n_cuts=n_cuts)
    reg = MixedNorm(groups, p=p)
    ws = _working_set(groups, A, b)
    first = SmoothDualReducedSolver(reg, primal_first=True).solve(ws, lam)
    dual = SmoothDualReducedSolver(reg, primal_first=False).solve(ws, lam)
    opt = _direct(reg, A, b, lam)
    scale = max(1.0, abs(opt))
    assert first.backend.endswith("(primal)")
    assert first.alpha.shape == (n_cuts,) and np.all(first.alpha >= 0) and first.alpha.sum() == pytest.approx(1.0)
    assert first.lower_bound <= opt + 1e-6 * scale
    assert first.lower_bound == pytest.approx(opt, abs=1e-6 * scale)
    assert first.lower_bound == pytest.approx(dual.lower_bound, abs=1e-6 * scale)
    assert _reduced_value(reg, A, b, lam, first.w) == pytest.approx(opt, abs=1e-6 * scale)


@settings(max_examples=40)
@given(seed=st.integers(0, 10**6), p=st.sampled_from([1.25, 1.5, 3.0, 4.0, 8.0]))
def test_primal_group_weights_equal_dual_weights(seed, p):
    """``mu`` from ``||w_j||`` equals eq. (12)'s ``mu`` of ``v = grad Omega(w)``, and ``w_j = mu_j v_j``."""
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 4, size=10)
    groups[:4] = np.arange(4)
    reg = MixedNorm(groups, p=p)
    w = rng.standard_normal(10) * rng.uniform(0.3, 3.0, 4)[groups]
    nw = reg.group_norms(w)
    total = np.sum(nw**p) ** (1.0 / p)
    v = total ** (2.0 - p) * (nw ** (p - 2.0))[groups] * w  # gradient of 1/2 ||w||_{2,p}^2
    mu = primal_group_weights(nw, p)
    np.testing.assert_allclose(mu, reg.weights(v), rtol=1e-9)
    np.testing.assert_allclose(mu[groups] * v, w, rtol=1e-9, atol=1e-12)
    # Fenchel-Young with equality at the pair (w, v)
    assert reg(w) + reg.conjugate(v) == pytest.approx(w @ v, rel=1e-9)


def test_primal_group_weights_zero_and_huge():
    mu = primal_group_weights(np.array([0.0, 1.0, 1e-9]), 100.0)
    assert mu[0] == 0.0 and np.all(np.isfinite(mu)) and mu[2] > mu[1] > 0.0
    assert np.all(primal_group_weights(np.zeros(3), 4.0) == 0.0)


def _multiclass(seed=0, n=40, d=6, k=3, m=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.integers(0, k, n)
    X[:, :2] += 0.8 * y[:, None]
    return MulticlassHinge(X, y, k), np.tile(np.arange(d) % m, k)


def _direct_full(oracle, reg, lam):
    X, y, k = oracle.X, oracle.y, oracle.n_classes
    n, d = X.shape
    W = cp.Variable((k, d))
    S = X @ W.T
    Y = np.zeros((n, k))
    Y[np.arange(n), y] = 1.0
    own = cp.sum(cp.multiply(S, Y), axis=1, keepdims=True)
    loss = cp.max(S + 1.0 - Y - own @ np.ones((1, k)), axis=1)
    w = cp.reshape(W, (k * d,), order="C")
    prob = cp.Problem(cp.Minimize(lam * reg.cvx_term(w) + cp.sum(loss) / n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize("p", [4.0, 100.0])
def test_bmrm_reaches_the_full_optimum(p):
    """The whole loop: BMRM with MixedNorm(p) on a multiclass hinge certifies the cvxpy optimum.

    Before the restricted primal step, p = 100 stalled (on a 60-example version: best upper 0.81
    against the optimum 0.486, lower bound 0.27 after 300 iterations)."""
    oracle, groups = _multiclass()
    reg = MixedNorm(groups, p=p)
    lam = 0.02
    opt = _direct_full(oracle, reg, lam)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(oracle, reg, lam, eps=1e-5, max_iter=400)
    assert res.status == "converged"
    assert res.lower_bound <= opt + 1e-6
    assert res.objective == pytest.approx(opt, abs=2e-5)


@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("p", [1.5, 4.0, 100.0])
@pytest.mark.parametrize("seed", [0, 3, 7])
def test_solve_restricted_primal_paths(direct, p, seed):
    """Clarabel's own API and the cvxpy chain: same optimum, multipliers on the simplex giving the bound."""
    from cutplane.reduced.base import dual_value, to_simplex
    from cutplane.reduced.pnorm_primal import DIRECT_NAME, solve_restricted_primal

    groups, A, b = _instance(seed, n_cuts=7)
    lam = 0.3
    reg = MixedNorm(groups, p=p)
    ws = _working_set(groups, A, b)
    grams = np.stack([ws.gram(group=j) for j in range(reg.n_groups)])
    found, failures = solve_restricted_primal(grams, b, lam, p, np.arange(7), direct=direct)
    opt = _direct(reg, A, b, lam)
    assert (found.backend == DIRECT_NAME) == direct and failures == ()
    assert found.value == pytest.approx(opt, abs=1e-6 * max(1.0, abs(opt)))
    w = ws.combine_by_group(found.beta)
    assert _reduced_value(reg, A, b, lam, w) == pytest.approx(found.value, abs=1e-7 * max(1.0, abs(opt)))
    np.testing.assert_allclose(reg.group_norms(w), found.norms, rtol=1e-6, atol=1e-9)
    assert found.duals.sum() == pytest.approx(1.0, abs=1e-6) and np.all(found.duals >= -1e-9)
    lower, _ = dual_value(reg, ws, to_simplex(found.duals), lam)
    assert lower <= opt + 1e-7 * max(1.0, abs(opt))
    assert lower == pytest.approx(opt, abs=1e-6 * max(1.0, abs(opt)))
