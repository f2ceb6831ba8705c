"""Max-sum diffusion: bounds against brute force, exactness on chains and trees, kernels, input errors."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles import _diffusion_kernels as K
from oracles._map_csp import solve_csp
from oracles._map_model import MaxSumModel
from oracles.mapinference import (
    dual_cutting_plane,
    grid_cycles,
    grid_edges,
    labelling_value,
    max_sum_diffusion,
    random_grid_instance,
    short_cycles,
)

RTOL = 1e-9


def brute_force(unary, pairwise, edges):
    """Maximum of (31) and all labellings' values by enumeration."""
    sizes = [len(u) for u in unary]
    X = np.array(list(itertools.product(*[range(k) for k in sizes])), dtype=np.int64).reshape(-1, len(sizes))
    vals = np.zeros(len(X))
    for v, u in enumerate(unary):
        vals += np.asarray(u, dtype=float)[X[:, v]]
    for (a, b), p in zip(edges, pairwise):
        vals += np.asarray(p, dtype=float)[X[:, a], X[:, b]]
    return vals.max(), X, vals


def assert_monotone(history, scale):
    inc = np.diff(np.asarray(history))
    assert np.all(inc <= RTOL * (1 + scale)), f"bound increased by {inc.max()}"


def check_result(res, unary, pairwise, edges, opt):
    scale = abs(opt)
    assert_monotone(res.bound_history, scale)
    assert res.upper_bound >= opt - RTOL * (1 + scale)
    assert res.lower_bound == pytest.approx(labelling_value(unary, pairwise, edges, res.labels), abs=1e-9)
    assert res.lower_bound <= opt + 1e-9
    if res.tight:  # certified: every subproblem's term is within active_tol of its maximum
        assert res.upper_bound - res.lower_bound <= 1e-3 * (1 + scale)
        assert res.lower_bound == pytest.approx(opt, abs=1e-3 * (1 + scale))


weights = st.floats(-3, 3, allow_nan=False, width=32) | st.integers(-2, 2).map(float)


@st.composite
def grid3x3(draw):
    k = draw(st.sampled_from([2, 3]))
    edges = grid_edges(3, 3)
    unary = np.array(draw(st.lists(weights, min_size=9 * k, max_size=9 * k))).reshape(9, k)
    pairwise = np.array(draw(st.lists(weights, min_size=len(edges) * k * k, max_size=len(edges) * k * k))).reshape(
        len(edges), k, k
    )
    return unary, pairwise, edges


@settings(max_examples=40)
@given(grid3x3())
def test_diffusion_bound_vs_brute_force(problem):
    unary, pairwise, edges = problem
    opt = brute_force(unary, pairwise, edges)[0]
    res = max_sum_diffusion(unary, pairwise, edges)
    check_result(res, unary, pairwise, edges, opt)


@settings(max_examples=40)
@given(grid3x3())
def test_cutting_plane_bound_vs_brute_force(problem):
    unary, pairwise, edges = problem
    opt = brute_force(unary, pairwise, edges)[0]
    res = dual_cutting_plane(unary, pairwise, edges, candidates=grid_cycles(3, 3))
    check_result(res, unary, pairwise, edges, opt)
    assert res.tight  # 4 squares of a 3x3 grid: cycles close every instance seen


def viterbi_value(unary, trans):
    score = unary[0].copy()
    for t in range(1, len(unary)):
        score = (score[:, None] + trans[t - 1]).max(axis=0) + unary[t]
    return score.max()


@pytest.mark.parametrize("seed", range(5))
def test_chain_equals_viterbi(seed):
    rng = np.random.default_rng(seed)
    T, k = int(rng.integers(5, 15)), int(rng.integers(2, 6))
    unary = rng.normal(size=(T, k)) * 2
    trans = rng.normal(size=(T - 1, k, k)) * 3
    edges = np.stack([np.arange(T - 1), np.arange(1, T)], axis=1)
    res = max_sum_diffusion(unary, trans, edges)
    opt = viterbi_value(unary, trans)
    assert res.tight and res.csp_status == "sat"
    assert res.upper_bound == pytest.approx(opt, abs=1e-6)
    assert res.lower_bound == pytest.approx(opt, abs=1e-9)
    assert_monotone(res.bound_history, abs(opt))


@pytest.mark.parametrize("seed", range(5))
def test_random_tree_exact(seed):
    rng = np.random.default_rng(100 + seed)
    n = 8
    parents = [int(rng.integers(0, v)) for v in range(1, n)]
    edges = np.array([(p, v) if rng.random() < 0.5 else (v, p) for v, p in zip(range(1, n), parents)])
    sizes = rng.integers(2, 4, size=n)  # heterogeneous numbers of states
    unary = [rng.normal(size=s) for s in sizes]
    pairwise = [rng.normal(size=(sizes[a], sizes[b])) * 2 for a, b in edges]
    opt = brute_force(unary, pairwise, edges)[0]
    res = max_sum_diffusion(unary, pairwise, edges)
    assert res.tight
    assert res.upper_bound == pytest.approx(opt, abs=1e-6)
    assert res.lower_bound == pytest.approx(opt, abs=1e-9)


def _random_slots(rng, length, k, flips):
    """A cycle 0..length-1 on edges stored in random orientations, with random tables."""
    nodes = list(range(length))
    edges, tables = [], []
    for j, flip in enumerate(flips):
        a, b = nodes[j], nodes[(j + 1) % length]
        edges.append((b, a) if flip else (a, b))
        tables.append(rng.normal(size=(k, k)))
    return nodes, np.array(edges), tables


@pytest.mark.parametrize("length", [3, 4, 5])
def test_cycle_kernels_vs_enumeration(length):
    rng = np.random.default_rng(length)
    k = 3
    flips = rng.integers(0, 2, size=length)
    nodes, edges, tables = _random_slots(rng, length, k, flips)
    model = MaxSumModel([np.zeros(k)] * length, tables, edges)
    _, X, _ = brute_force([np.zeros(k)] * length, tables, edges)
    total = sum(t[X[:, a], X[:, b]] for t, (a, b) in zip(tables, edges))
    slot_edge, (te, ku, kv, fl, coff) = model._candidate_layout([tuple(nodes)])
    assert K.cycles_max(model.th_edge, te, model.edge_fin, te, ku, kv, fl, coff, k)[0] == pytest.approx(total.max())
    for j in range(length):
        out = np.empty(k * k)
        K.slot_maxmarginal(model.th_edge, te, model.edge_fin, te, ku, kv, fl, 0, length, j, k, out)
        a, b = edges[slot_edge[j]]
        expect = np.full((k, k), -np.inf)
        np.maximum.at(expect, (X[:, a], X[:, b]), total)
        np.testing.assert_allclose(out.reshape(k, k), expect)


def test_adding_cycles_keeps_bound_and_removal_is_monotone():
    inst = random_grid_instance(5, 5, 3, coupling=2.0, seed=3)
    model = MaxSumModel(inst.unary, inst.pairwise, inst.edges)
    model.diffuse(5000, 1e-9)
    before = model.bound()
    model.add_cycles(inst.cycles)
    assert model.bound() == pytest.approx(before, abs=1e-12)  # zero messages: unchanged
    hist, _ = model.diffuse(5000, 1e-9)
    assert_monotone(np.concatenate([[before], hist]), abs(before))
    for i in reversed(range(len(model.cycles))):
        b0, change = model.bound(), model.removal_change(i)
        if change <= 0.0:
            model.remove_cycle(i)
            assert model.bound() == pytest.approx(b0 + change, abs=1e-9)
            assert model.bound() <= b0 + 1e-12


def test_separation_gap_is_inequality_42():
    inst = random_grid_instance(4, 4, 3, coupling=2.5, seed=7)
    model = MaxSumModel(inst.unary, inst.pairwise, inst.edges)
    model.diffuse(3000, 1e-10)
    node_act, edge_act = model.active(1e-6)
    separating, gap = model.separation(inst.cycles, node_act, edge_act)
    tables = model.edge_tables()
    eid = {tuple(sorted(e)): i for i, e in enumerate(inst.edges.tolist())}
    for c, sep, g in zip(inst.cycles, separating, gap):
        es = [eid[tuple(sorted((a, b)))] for a, b in zip(c, c[1:] + c[:1])]
        sub_edges = inst.edges[es]
        unary = [np.zeros(3)] * 16
        best = brute_force(
            [unary[v] for v in c], [tables[e] for e in es], [(c.index(a), c.index(b)) for a, b in sub_edges]
        )[0]
        assert g == pytest.approx(sum(tables[e].max() for e in es) - best, abs=1e-9)
        assert g >= -1e-9
        if sep:  # the CSP on the cycle is unsatisfiable: (42) cannot be tight
            assert g > 1e-7


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.floats(0.2, 0.9))
def test_csp_solver_vs_enumeration(seed, density):
    rng = np.random.default_rng(seed)
    edges = grid_edges(2, 3)
    k = 3
    doms = [rng.random(k) < 0.8 for _ in range(6)]
    rels = [rng.random((k, k)) < density for _ in edges]
    X = np.array(list(itertools.product(range(k), repeat=6)))
    ok = np.all([doms[v][X[:, v]] for v in range(6)], axis=0)
    for (a, b), r in zip(edges, rels):
        ok &= r[X[:, a], X[:, b]]
    res = solve_csp(doms, edges, rels)
    assert res.status == ("sat" if ok.any() else "unsat")
    if res.status == "sat":
        assert ok[np.flatnonzero((X == res.labels).all(axis=1))[0]]


def test_short_cycles():
    grid = {frozenset(c) for c in grid_cycles(4, 5)}
    assert {frozenset(c) for c in short_cycles(20, grid_edges(4, 5))} == grid
    k4 = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    cyc = short_cycles(4, k4)
    assert sum(len(c) == 3 for c in cyc) == 4 and sum(len(c) == 4 for c in cyc) == 3
    assert len(grid_cycles(4, 5, max_size=2)) == 3 * 4 + 3 * 3 + 2 * 4 + 2 * 3


# -- -inf weights: the condition before Alg. 1.6 -------------------------------------------------


def test_hard_constraints_obeying_condition():
    rng = np.random.default_rng(5)
    edges = grid_edges(3, 3)
    coloring = np.where(np.eye(3, dtype=bool), -np.inf, 0.0)  # neighbours must differ
    unary = rng.normal(size=(9, 3))
    unary[4, 0] = -np.inf  # forbid state 0 at the centre: its rows must be all -inf too
    pairwise = []
    for a, b in edges:
        p = coloring + rng.normal(size=(3, 3)) * 0.1
        if a == 4:
            p[0, :] = -np.inf
        if b == 4:
            p[:, 0] = -np.inf
        pairwise.append(p)
    opt = brute_force(unary, pairwise, edges)[0]
    for res in (max_sum_diffusion(unary, pairwise, edges), dual_cutting_plane(unary, pairwise, edges)):
        check_result(res, unary, pairwise, edges, opt)
        assert np.isfinite(res.upper_bound)
    assert res.tight and np.isfinite(res.lower_bound) and res.labels[4] != 0


@pytest.mark.parametrize("where", ["unary", "row"])
def test_hard_constraints_violating_condition(where):
    edges = np.array([[0, 1]])
    unary = [np.zeros(2), np.zeros(2)]
    pairwise = [np.zeros((2, 2))]
    if where == "unary":
        unary[0][1] = -np.inf  # but row 1 of the table is finite
    else:
        pairwise[0][1, :] = -np.inf  # but unary[0][1] is finite
    with pytest.raises(InputError, match="Alg. 1.6"):
        max_sum_diffusion(unary, pairwise, edges)


@pytest.mark.parametrize(
    "case, field",
    [
        ("nan_unary", "unary"),
        ("posinf_pair", "pairwise"),
        ("shape", "pairwise"),
        ("n_tables", "pairwise"),
        ("edge_range", "edges"),
        ("repeated", "edges"),
        ("selfloop", "edges"),
        ("float_edges", "edges"),
        ("all_neginf", "unary"),
        ("ragged", "unary"),
    ],
)
def test_bad_input(case, field):
    unary = [np.zeros(2), np.zeros(3), np.zeros(2)]
    edges = np.array([[0, 1], [1, 2]])
    pairwise = [np.zeros((2, 3)), np.zeros((3, 2))]
    if case == "nan_unary":
        unary[1][0] = np.nan
    elif case == "posinf_pair":
        pairwise[0][0, 0] = np.inf
    elif case == "shape":
        pairwise[1] = np.zeros((2, 2))
    elif case == "n_tables":
        pairwise = pairwise[:1]
    elif case == "edge_range":
        edges = np.array([[0, 1], [1, 3]])
    elif case == "repeated":
        edges, pairwise = np.array([[0, 1], [1, 0]]), [np.zeros((2, 3)), np.zeros((3, 2))]
    elif case == "selfloop":
        edges = np.array([[0, 1], [1, 1]])
    elif case == "float_edges":
        edges = np.array([[0.0, 1.0], [1.0, 2.0]])
    elif case == "all_neginf":
        unary[2] = np.full(2, -np.inf)
    elif case == "ragged":
        unary[0] = [[0.0, 1.0]]
    with pytest.raises(InputError) as info:
        max_sum_diffusion(unary, pairwise, edges)
    assert info.value.field == field


def test_bad_cycle():
    inst = random_grid_instance(3, 3, 2, seed=0)
    with pytest.raises(InputError, match="not an edge"):
        max_sum_diffusion(inst.unary, inst.pairwise, inst.edges, cycles=[(0, 1, 2, 3)])


def test_cycle_breaking_the_condition():
    """An odd cycle of 'must differ' constraints with 2 states: finite edge states have no finite
    completion around the triangle, so coupling it would break Alg. 1.6's condition."""
    edges = np.array([[0, 1], [1, 2], [0, 2]])
    differ = np.where(np.eye(2, dtype=bool), -np.inf, 0.0)
    unary = [np.zeros(2)] * 3
    with pytest.raises(InputError, match="completion"):
        max_sum_diffusion(unary, [differ] * 3, edges, cycles=[(0, 1, 2)])
    res = dual_cutting_plane(unary, [differ] * 3, edges)  # the candidate is skipped, not added
    assert res.cycles == [] and not res.tight
    assert res.lower_bound == -np.inf and np.isfinite(res.upper_bound)
