"""Projections onto the simplex and the capped simplex: brute force over supports on tiny
instances, cvxpy, idempotence, the optimality condition, invariances, edge cases."""

import itertools
import warnings
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.prox import project_capped_simplex, project_simplex

ENTRY = st.one_of(st.floats(-10, 10), st.sampled_from([0.0, 1.0, -1.0, 0.5]))  # ties


def vectors(min_dim=1, max_dim=12):
    return st.integers(min_dim, max_dim).flatmap(lambda n: st.lists(ENTRY, min_size=n, max_size=n).map(np.array))


RADIUS = st.one_of(st.floats(0, 20), st.sampled_from([0.0, 1.0, 1e-8, 1e4]))


def brute_force(v, z, capped):
    """Enumerate supports S: on S the projection is v_S - theta (theta = 0 if the sum bound is
    inactive, else (sum v_S - z)/|S|), zero elsewhere. Keep the feasible candidates and return
    the closest, all in exact rational arithmetic (distances differ by O(z^2) only)."""
    n = v.size
    vf = [Fraction(float(t)) for t in v]
    zf = Fraction(float(z))
    best, best_d = None, None
    for k in range(0 if capped else 1, n + 1):
        for S in itertools.combinations(range(n), k):
            thetas = [(sum(vf[i] for i in S) - zf) / k] if k else []
            if capped:
                thetas.append(Fraction(0))
            for theta in thetas:
                x = [vf[i] - theta if i in S else Fraction(0) for i in range(n)]
                total = sum(x)
                if min(x, default=0) < 0 or (total > zf if capped else total != zf):
                    continue
                d = sum((a - b) ** 2 for a, b in zip(x, vf))
                if best_d is None or d < best_d:
                    best, best_d = x, d
    return np.array([float(t) for t in best])


TIGHT = [
    ("CLARABEL", dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)),
    ("SCS", dict(eps=1e-10, max_iters=200_000)),
    ("ECOS", dict(abstol=1e-11, reltol=1e-11, feastol=1e-11, max_iters=500)),
]


def cvx_projection(v, z, capped):
    """The defining QP by cvxpy at tight tolerances, the next backend when one is not 'optimal'."""
    x = cp.Variable(v.size)
    cons = [x >= 0, cp.sum(x) <= z] if capped else [x >= 0, cp.sum(x) == z]
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - v)), cons)
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


def random_feasible(rng, n, z, capped, k=30):
    pts = [z * rng.dirichlet(np.ones(n)) * (rng.uniform() if capped else 1.0) for _ in range(k)]
    pts += [z * np.eye(n)[i] for i in range(n)]  # vertices
    if capped:
        pts.append(np.zeros(n))
    return pts


def check_projection(v, z, capped, x):
    scale = max(1.0, np.abs(v).max(), z)
    assert x.shape == v.shape
    assert np.all(x >= 0)
    if capped:
        assert x.sum() <= z + 1e-12 * scale * v.size
    else:
        assert abs(x.sum() - z) <= 1e-12 * scale * v.size
    # optimality: <v - P(v), u - P(v)> <= 0 for every feasible u
    for u in random_feasible(np.random.default_rng(0), v.size, z, capped):
        assert np.dot(v - x, u - x) <= 1e-10 * scale * scale
    # idempotent
    again = project_capped_simplex(x, z) if capped else project_simplex(x, z)
    np.testing.assert_allclose(again, x, rtol=1e-12, atol=1e-12 * scale)


@settings(max_examples=60)
@given(v=vectors(1, 5), z=RADIUS)
def test_simplex_brute_force(v, z):
    x = project_simplex(v, z)
    check_projection(v, z, False, x)
    np.testing.assert_allclose(x, brute_force(v, z, False), atol=1e-9 * max(1.0, z, np.abs(v).max()))


@settings(max_examples=60)
@given(v=vectors(0, 5), C=RADIUS)
def test_capped_simplex_brute_force(v, C):
    x = project_capped_simplex(v, C)
    if v.size:
        check_projection(v, C, True, x)
    np.testing.assert_allclose(x, brute_force(v, C, True), atol=1e-9 * max(1.0, C, np.abs(v).max(initial=0)))


@settings(max_examples=25)
@given(v=vectors(1, 30), z=RADIUS)
def test_simplex_cvxpy(v, z):
    x = project_simplex(v, z)
    check_projection(v, z, False, x)
    np.testing.assert_allclose(x, cvx_projection(v, z, False), atol=1e-5 * max(1.0, z, np.abs(v).max()))


@settings(max_examples=25)
@given(v=vectors(1, 30), C=RADIUS)
def test_capped_simplex_cvxpy(v, C):
    x = project_capped_simplex(v, C)
    check_projection(v, C, True, x)
    np.testing.assert_allclose(x, cvx_projection(v, C, True), atol=1e-5 * max(1.0, C, np.abs(v).max()))


@settings(max_examples=50)
@given(v=vectors(1, 30), z=st.floats(0.01, 20), c=st.floats(-100, 100))
def test_simplex_shift_invariance(v, z, c):
    # adding a constant to every entry moves theta by the same constant
    np.testing.assert_allclose(project_simplex(v + c, z), project_simplex(v, z), atol=1e-10 * (1 + abs(c) + z))


@settings(max_examples=50)
@given(v=vectors(1, 30), C=st.floats(0, 20))
def test_capped_is_clip_or_simplex(v, C):
    x = project_capped_simplex(v, C)
    pos = np.maximum(v, 0)
    if pos.sum() <= C:
        np.testing.assert_array_equal(x, pos)
    else:
        np.testing.assert_array_equal(x, project_simplex(v, C))
        assert abs(x.sum() - C) <= 1e-12 * max(1.0, C) * v.size


def test_edge_cases():
    # ties: all-equal entries share the mass equally
    np.testing.assert_allclose(project_simplex(np.full(4, 3.0), 2.0), np.full(4, 0.5))
    np.testing.assert_allclose(project_simplex(np.zeros(5)), np.full(5, 0.2))
    # one entry
    np.testing.assert_array_equal(project_simplex(np.array([-7.0]), 3.0), [3.0])
    # z = 0 and C = 0 give the zero vector
    np.testing.assert_array_equal(project_simplex(np.array([1.0, 2.0]), 0.0), [0.0, 0.0])
    np.testing.assert_array_equal(project_capped_simplex(np.array([1.0, 2.0]), 0.0), [0.0, 0.0])
    # a point already in the simplex is fixed; a far vertex direction projects to the vertex
    np.testing.assert_allclose(project_simplex(np.array([0.2, 0.3, 0.5])), [0.2, 0.3, 0.5])
    np.testing.assert_allclose(project_simplex(np.array([100.0, 0.0, -5.0])), [1.0, 0.0, 0.0])
    # capped: inside the set is a fixed point, all-negative goes to 0, empty stays empty
    np.testing.assert_array_equal(project_capped_simplex(np.array([0.1, 0.2]), 1.0), [0.1, 0.2])
    np.testing.assert_array_equal(project_capped_simplex(np.array([-1.0, -2.0]), 1.0), [0.0, 0.0])
    assert project_capped_simplex(np.zeros(0), 1.0).shape == (0,)
    # huge magnitudes relative to z: still feasible
    np.testing.assert_array_equal(project_simplex(np.array([1e20, 1e20 - 1e5, 0.0]), 1.0), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(project_simplex(np.array([1e6, 1e6 - 0.5, -1e20]), 1.0), [0.75, 0.25, 0.0])


def test_input_not_modified(rng):
    v = rng.normal(size=6)
    keep = v.copy()
    project_simplex(v, 2.0)
    project_capped_simplex(v, 0.5)
    np.testing.assert_array_equal(v, keep)


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: project_simplex(np.zeros(0)), "v"),
        (lambda: project_simplex(np.ones((2, 2))), "v"),
        (lambda: project_simplex(np.array([1.0, np.nan])), "v"),
        (lambda: project_simplex(np.ones(3), -1.0), "z"),
        (lambda: project_simplex(np.ones(3), np.inf), "z"),
        (lambda: project_capped_simplex(np.ones(3), -0.1), "C"),
        (lambda: project_capped_simplex(np.ones(3), np.nan), "C"),
        (lambda: project_capped_simplex(np.array([1 + 2j]), 1.0), "v"),
    ],
)
def test_bad_input(call, field):
    with pytest.raises(InputError) as err:
        call()
    assert err.value.field == field
