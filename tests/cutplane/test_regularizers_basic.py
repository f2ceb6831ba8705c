"""L2, L1, Simplex, Box: values, conjugates (vs brute force / cvxpy), gradients, prox."""

import itertools

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cutplane.exceptions import InputError
from cutplane.reduced.registry import make_reduced_solver
from cutplane.regularizers import L1, L2, Box, Regularizer, Simplex

vectors = st.integers(1, 6).flatmap(
    lambda d: arrays(np.float64, d, elements=st.floats(-5, 5, allow_nan=False, allow_infinity=False))
)


def conjugate_by_cvxpy(term, constraints, v):
    """sup_w <w, v> - Omega(w), solved directly."""
    w = cp.Variable(len(v))
    obj = v @ w - (0 if term is None else term(w))
    prob = cp.Problem(cp.Maximize(obj), constraints(w))
    prob.solve(solver="CLARABEL")
    return prob.value


@settings(max_examples=30)
@given(v=vectors)
def test_l2_conjugate_and_gradient(v):
    reg = L2()
    assert reg.conjugate(v) == pytest.approx(
        conjugate_by_cvxpy(lambda w: 0.5 * cp.sum_squares(w), lambda w: [], v), abs=1e-6
    )
    w = reg.grad_conjugate(v)
    # Fenchel-Young with equality at w = grad Omega*(v)
    assert reg(w) + reg.conjugate(v) == pytest.approx(w @ v, abs=1e-9)


@settings(max_examples=30)
@given(v=vectors, step=st.floats(0.0, 10.0))
def test_prox_minimises_its_objective(v, step):
    for reg, term in ((L2(), lambda x: 0.5 * cp.sum_squares(x)), (L1(), cp.norm1)):
        x = cp.Variable(len(v))
        prob = cp.Problem(cp.Minimize(step * term(x) + 0.5 * cp.sum_squares(x - v)))
        prob.solve(solver="CLARABEL")

        def objective(z):
            return step * reg(z) + 0.5 * np.sum((z - v) ** 2)

        p = reg.prox(v, step)
        assert objective(p) <= prob.value + 1e-7
        # 1-strong convexity: only the minimiser p has F(x) - F(p) >= 1/2 ||x - p||^2 for every x
        assert objective(x.value) - objective(p) >= 0.5 * np.sum((x.value - p) ** 2) - 1e-9


@settings(max_examples=30)
@given(v=vectors)
def test_l1_conjugate_is_the_inf_ball_indicator(v):
    reg = L1()
    inside = np.max(np.abs(v)) <= 1
    assert reg.conjugate(v) == (0.0 if inside else np.inf)
    assert reg.conjugate(v / max(1.0, np.max(np.abs(v)))) == 0.0
    assert reg(v) == pytest.approx(np.abs(v).sum())
    # the zero vector returned by grad_conjugate is in the subdifferential: Fenchel-Young holds with equality
    w = reg.grad_conjugate(v / max(1.0, np.max(np.abs(v))))
    assert reg(w) == 0.0 and not w.any()


@settings(max_examples=30)
@given(v=vectors)
def test_simplex_conjugate_vs_vertices_and_cvxpy(v):
    d = len(v)
    reg = Simplex(d)
    vertices = np.eye(d)
    assert reg.conjugate(v) == pytest.approx(max(vertices @ v))
    assert reg.conjugate(v) == pytest.approx(conjugate_by_cvxpy(None, lambda w: [w >= 0, cp.sum(w) == 1], v), abs=1e-6)
    x = reg.grad_conjugate(v)
    assert reg.contains(x) and x @ v == pytest.approx(reg.conjugate(v))
    assert reg(x) == 0.0 and reg(x - 0.1) == np.inf


@settings(max_examples=30)
@given(v=vectors, seed=st.integers(0, 2**31))
def test_box_conjugate_vs_corners(v, seed):
    rng = np.random.default_rng(seed)
    d = len(v)
    lo = rng.uniform(-2, 1, d)
    up = lo + rng.uniform(0, 3, d)
    reg = Box(lo, up)
    corners = np.array(list(itertools.product(*zip(lo, up))))
    assert reg.conjugate(v) == pytest.approx(np.max(corners @ v))
    x = reg.grad_conjugate(v)
    assert reg.contains(x) and x @ v == pytest.approx(reg.conjugate(v))
    p = reg.prox(v, 1.0)
    np.testing.assert_allclose(p, np.clip(v, lo, up))
    assert reg.contains(reg.initial_point())


def test_simplex_prox_is_the_projection():
    v = np.array([0.9, 0.4, -0.3])
    x = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.sum(x) == 1]).solve(solver="CLARABEL")
    np.testing.assert_allclose(Simplex(3).prox(v), x.value, atol=1e-6)


def test_protocol_and_solvers():
    for reg in (L2(), L1(), Simplex(3), Box(0.0, 1.0, dim=3)):
        assert isinstance(reg, Regularizer)
        solver = make_reduced_solver(reg)
        assert callable(solver.solve)
    assert Simplex(4).repair(np.array([0.5, 0.5, -1e-9, 1e-9])).sum() == pytest.approx(1.0)


def test_bad_construction():
    with pytest.raises(InputError):
        Simplex(0)
    with pytest.raises(InputError, match="lower > upper"):
        Box([0.0, 2.0], [1.0, 1.0])
    with pytest.raises(InputError, match="dim"):
        Box(0.0, 1.0)
    with pytest.raises(InputError, match="finite"):
        Box([0.0], [np.inf])
