"""Limited memory: pruning idle cuts and aggregating under max_cuts keep the optimum and the certificate."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.exceptions import ConvergenceWarning
from cutplane.regularizers import L1, L2

from .test_engine import check_certificate, direct_solve, make_oracle


@settings(max_examples=10)
@given(
    seed=st.integers(0, 2**31),
    kind=st.sampled_from(["maxaffine", "hinge"]),
    sparse=st.booleans(),
    max_cuts=st.integers(2, 5),
    prune_after=st.sampled_from([None, 1, 3]),
)
def test_budget_and_pruning_keep_the_optimum(seed, kind, sparse, max_cuts, prune_after):
    """The budget bounds the working set; the certified optimum is the unconstrained one.

    A max of 30 affine pieces in 6 dimensions has up to 7 cuts active at the optimum; a budget
    below that turns BMRM into a Frank-Wolfe-like method whose O(1/eps) rate is far too slow
    for a unit test, so that case gets a budget of dim + 2 = 8 (aggregation still happens).
    """
    lam, eps = 0.1, 1e-4
    if kind == "maxaffine":
        max_cuts += 6
    full = minimize(make_oracle(kind, seed, 30, 6, sparse), L2(), lam, eps=eps, prune_after=None)
    oracle = make_oracle(kind, seed, 30, 6, sparse)
    small = minimize(oracle, L2(), lam, eps=eps, max_cuts=max_cuts, prune_after=prune_after, max_iter=2000)
    assert full.status == small.status == "converged"
    assert small.history.n_cuts.max() <= max_cuts
    check_certificate(small, oracle, L2(), lam, eps)
    assert abs(small.objective - full.objective) <= eps
    ref = direct_solve(oracle, lambda w: 0.5 * cp.sum_squares(w), lam)
    assert ref - 1e-6 <= small.objective <= ref + eps + 1e-6


def test_pruning_shrinks_the_working_set_and_memory():
    lam, eps = 0.01, 1e-4
    kept = minimize(make_oracle("hinge", 3, 200, 20, False), L2(), lam, eps=eps, prune_after=None)
    pruned = minimize(make_oracle("hinge", 3, 200, 20, False), L2(), lam, eps=eps, prune_after=2)
    assert kept.status == pruned.status == "converged"
    # without pruning: one cut per iteration (L2 takes no floor cut R >= 0 from Hinge.risk_lower_bound)
    assert pruned.history.n_cuts[-1] < kept.history.n_cuts[-1] == kept.n_iter
    assert pruned.objective == pytest.approx(kept.objective, abs=eps)
    assert kept.peak_working_set_bytes > 0
    limited = minimize(make_oracle("hinge", 3, 200, 20, False), L2(), lam, eps=eps, max_cuts=3, max_iter=5000)
    assert limited.status == "converged" and limited.history.n_cuts.max() <= 3
    assert limited.peak_working_set_bytes < kept.peak_working_set_bytes
    assert limited.objective == pytest.approx(kept.objective, abs=eps)


def _one_cut_bytes(dim):
    """An upper bound on what one more cut adds: a slope with every coordinate set (index and
    value) plus its offset, dual and idle count."""
    return 16 * dim + 24


@pytest.mark.parametrize("sparse", [True, False])
def test_memory_limit_bounds_the_peak_and_keeps_the_optimum(sparse):
    lam, eps, dim = 0.01, 1e-4, 20
    kept = minimize(make_oracle("hinge", 3, 200, dim, sparse), L2(), lam, eps=eps, prune_after=None)
    limit = kept.peak_working_set_bytes // 3
    oracle = make_oracle("hinge", 3, 200, dim, sparse)
    limited = minimize(oracle, L2(), lam, eps=eps, prune_after=None, memory_limit=limit, max_iter=5000)
    assert limited.status == "converged"
    assert limited.peak_working_set_bytes <= limit + _one_cut_bytes(dim)
    assert limited.history.n_cuts.max() < kept.history.n_cuts.max()
    check_certificate(limited, oracle, L2(), lam, eps)
    assert limited.objective == pytest.approx(kept.objective, abs=eps)


@settings(max_examples=8)
@given(seed=st.integers(0, 2**31), sparse=st.booleans(), frac=st.floats(0.2, 0.6))
def test_memory_limit_with_template_groups(seed, sparse, frac):
    """Per-group Gram blocks (MixedNorm): the budget holds and the optimum is the direct solve's."""
    from cutplane.regularizers import MixedNorm

    lam, eps, dim = 0.05, 1e-3, 12
    groups = np.arange(dim) % 4
    reg = MixedNorm(groups, p=1.0)
    kept = minimize(make_oracle("hinge", seed, 60, dim, sparse), reg, lam, eps=eps, prune_after=None)
    limit = max(int(frac * kept.peak_working_set_bytes), 4000)
    oracle = make_oracle("hinge", seed, 60, dim, sparse)
    limited = minimize(oracle, reg, lam, eps=eps, prune_after=None, memory_limit=limit, max_iter=3000)
    assert limited.status == "converged"
    assert limited.peak_working_set_bytes <= limit + _one_cut_bytes(dim)
    ref = direct_solve(oracle, lambda w: 0.5 * cp.square(sum(cp.norm(w[groups == j]) for j in range(4))), lam)
    assert ref - 1e-5 <= limited.objective <= ref + eps + 1e-5


def test_memory_limit_below_two_cuts_is_reported(caplog):
    with caplog.at_level("WARNING", logger="cutplane"), pytest.warns(ConvergenceWarning):
        res = minimize(make_oracle("hinge", 1, 50, 10, True), L2(), 0.01, eps=1e-3, memory_limit=100, max_iter=5)
    assert caplog.text.count("memory_limit=100") == 1  # once per run, not per iteration
    assert res.history.n_cuts[1:].max() <= 2


def _l1_run(seed, sparse, lam, **kwargs):
    oracle = make_oracle("hinge", seed, 30, 4, sparse)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = minimize(oracle, L1(), lam, eps=1e-3, **kwargs)
    return res, oracle


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    sparse=st.booleans(),
    max_cuts=st.integers(2, 5),
    lam=st.sampled_from([0.01, 0.05]),
    prune_after=st.sampled_from([None, 1, 3]),
)
def test_l1_small_budget_keeps_the_risk_floor(seed, sparse, max_cuts, lam, prune_after):
    """L1 under any budget: the floor cut ``R >= 0`` (from ``Hinge.risk_lower_bound``) is what
    keeps the reduced LP bounded, so pruning and aggregation never fold it away.

    Regression: merged into the oldest cuts with the duals as weights, it left one cut whose
    slope lies on the boundary ``||a||_inf = lam`` and the LP was reported unbounded
    (``SolverError``). Budgets below ``dim + 3`` need not converge for L1 (the reduced LP's
    basis has ``dim + 1`` cuts, besides the floor cut and the new cut), so the run is short and
    only its certificate is checked.
    """
    res, oracle = _l1_run(seed, sparse, lam, max_cuts=max_cuts, prune_after=prune_after, max_iter=25)
    assert res.status in ("converged", "max_iter")
    assert res.history.n_cuts.max() <= max_cuts
    check_certificate(res, oracle, L1(), lam, 1e-3)


@settings(max_examples=10, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    sparse=st.booleans(),
    extra=st.integers(0, 2),
    lam=st.sampled_from([0.01, 0.05]),
    prune_after=st.sampled_from([None, 1, 3]),
)
@example(seed=289472, sparse=False, extra=0, lam=0.05, prune_after=1)
def test_l1_budget_reaches_the_optimum(seed, sparse, extra, lam, prune_after):
    """With room for the floor cut, a basis of the reduced LP and the new cut (``dim + 3``),
    L1 under a budget converges to the objective of the run without one.

    Regression (the example): pruning after one idle iteration at a constant lower bound dropped
    and re-added the same cuts for ever (gap 3.2e-3 after 3000 iterations); cuts are now dropped
    only after the bound rose strictly."""
    eps, max_cuts = 1e-3, 4 + 3 + extra
    full, _ = _l1_run(seed, sparse, lam, prune_after=None)
    small, oracle = _l1_run(seed, sparse, lam, max_cuts=max_cuts, prune_after=prune_after, max_iter=500)
    assert full.status == small.status == "converged"
    assert small.history.n_cuts.max() <= max_cuts
    check_certificate(small, oracle, L1(), lam, eps)
    assert abs(small.objective - full.objective) <= eps


@pytest.mark.parametrize(("seed", "max_cuts", "lam"), [(1, 2, 0.05), (3, 3, 0.01), (8, 3, 0.01)])
def test_l1_budget_regression(seed, max_cuts, lam):
    """Cases that raised SolverError (reduced LP unbounded) within 40 iterations before the fix."""
    res, oracle = _l1_run(seed, False, lam, max_cuts=max_cuts, max_iter=40)
    assert res.status in ("converged", "max_iter") and res.history.n_cuts.max() <= max_cuts
    check_certificate(res, oracle, L1(), lam, 1e-3)
