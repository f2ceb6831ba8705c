"""Dual cutting-plane algorithm against an exact ILP (cvxpy + HiGHS) on medium grids."""

import numpy as np
import pytest

from oracles.mapinference import dual_cutting_plane, labelling_value, max_sum_diffusion, random_grid_instance

cp = pytest.importorskip("cvxpy")
if "HIGHS" not in cp.installed_solvers():  # pragma: no cover - depends on the machine
    pytest.skip("cvxpy has no HiGHS backend for the exact MILP", allow_module_level=True)


def ilp_optimum(unary, pairwise, edges):
    """Exact maximum of (31) by the standard ILP: binary node indicators, edge marginals."""
    n, k = unary.shape
    mu = cp.Variable((n, k), boolean=True)
    me = [cp.Variable((k, k), nonneg=True) for _ in edges]
    cons = [cp.sum(mu, axis=1) == 1]
    for e, (u, v) in enumerate(edges):
        cons += [cp.sum(me[e], axis=1) == mu[u], cp.sum(me[e], axis=0) == mu[v]]
    obj = cp.sum(cp.multiply(unary, mu)) + sum(cp.sum(cp.multiply(pairwise[e], me[e])) for e in range(len(edges)))
    prob = cp.Problem(cp.Maximize(obj), cons)
    prob.solve(solver="HIGHS")
    assert prob.status == "optimal"
    return prob.value


def assert_monotone(history, scale):
    assert np.all(np.diff(history) <= 1e-9 * (1 + scale))


@pytest.mark.parametrize("seed", range(3))
def test_medium_grid_vs_ilp(seed):
    inst = random_grid_instance(5, 5, 3, coupling=2.0, seed=seed)
    opt = ilp_optimum(inst.unary, inst.pairwise, inst.edges)
    diff = max_sum_diffusion(inst.unary, inst.pairwise, inst.edges)
    res = dual_cutting_plane(inst.unary, inst.pairwise, inst.edges)
    for r in (diff, res):
        assert_monotone(r.bound_history, abs(opt))
        assert r.upper_bound >= opt - 1e-6
        assert r.lower_bound <= opt + 1e-6
    assert res.upper_bound <= diff.upper_bound + 1e-9  # tightening never loosens
    assert res.tight
    assert res.lower_bound == pytest.approx(opt, abs=1e-6)
    assert labelling_value(inst.unary, inst.pairwise, inst.edges, res.labels) == pytest.approx(opt, abs=1e-6)


def test_fraction_closed_on_4x4_batch():
    """Frustrated 4x4 grids, 4 states: diffusion alone is rarely tight, cycles close the gap."""
    n_tight_diffusion, n_closed = 0, 0
    seeds = range(12)
    for seed in seeds:
        inst = random_grid_instance(4, 4, 4, coupling=2.0, seed=seed)
        opt = ilp_optimum(inst.unary, inst.pairwise, inst.edges)
        diff = max_sum_diffusion(inst.unary, inst.pairwise, inst.edges)
        res = dual_cutting_plane(inst.unary, inst.pairwise, inst.edges)
        assert_monotone(res.bound_history, abs(opt))
        assert res.upper_bound >= opt - 1e-6
        n_tight_diffusion += diff.tight
        if res.tight:
            assert res.lower_bound == pytest.approx(opt, abs=1e-6)  # a tight claim is the true maximum
            n_closed += abs(res.upper_bound - opt) <= 1e-6
    assert n_tight_diffusion < len(seeds)  # the batch is not trivial
    assert n_closed >= 0.8 * len(seeds)


def test_pure_separation_is_monotone_and_valid():
    """Without the fallback, only separating cycles are added; the bound stays valid and monotone."""
    inst = random_grid_instance(8, 8, 4, coupling=2.0, seed=4)
    res = dual_cutting_plane(inst.unary, inst.pairwise, inst.edges, fallback=False, prune_every=1)
    assert res.n_fallback == 0
    assert_monotone(res.bound_history, abs(res.upper_bound))
    assert res.n_added > 0
    assert np.all(np.diff(res.step_bounds) <= 1e-9 * (1 + abs(res.upper_bound)))
    assert res.upper_bound >= res.lower_bound - 1e-9
