"""Wrapper MKL: the beta updates of problems.mkl.steps, and the Gauss-Seidel / SimpleMKL wrappers with
structured PEGASOS inside (problems.mkl.wrappers.wrapper_mkl with a PegasosInner)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from problems.mkl.steps import (
    gauss_seidel_weights,
    mkl_gradient,
    mkl_surrogate,
    simplemkl_direction,
    simplemkl_max_step,
    simplemkl_step,
)

norms_st = st.lists(st.floats(0.0, 10.0), min_size=1, max_size=6)


def _random_simplex(rng, m):
    return rng.dirichlet(np.ones(m))


@settings(max_examples=60)
@given(norms=norms_st, seed=st.integers(0, 2**31 - 1))
def test_gauss_seidel_minimises_surrogate_on_the_simplex(norms, seed):
    n = np.array(norms)
    beta = gauss_seidel_weights(n)
    assert np.all(beta >= 0) and beta.sum() == pytest.approx(1.0)
    best = mkl_surrogate(n**2, beta, lam=2.0)
    assert best == pytest.approx(n.sum() ** 2, rel=1e-12, abs=1e-12)  # lam/2 * (sum n)^2 with lam = 2
    rng = np.random.default_rng(seed)
    for _ in range(20):
        other = _random_simplex(rng, n.size)
        assert mkl_surrogate(n**2, other, lam=2.0) >= best * (1 - 1e-12) - 1e-12


def test_gauss_seidel_against_cvxpy():
    cp = pytest.importorskip("cvxpy")
    n = np.array([3.0, 0.5, 1.5, 0.0])
    b = cp.Variable(4, nonneg=True)
    prob = cp.Problem(cp.Minimize(sum(cp.quad_over_lin(n[k], b[k]) for k in range(3))), [cp.sum(b) == 1])
    prob.solve(solver="CLARABEL")
    beta = gauss_seidel_weights(n)
    assert mkl_surrogate(n**2, beta, 2.0) == pytest.approx(prob.value, rel=1e-6)
    np.testing.assert_allclose(beta, b.value, atol=1e-4)  # interior-point accuracy of the reference


@settings(max_examples=40)
@given(norms=st.lists(st.floats(0.01, 10.0), min_size=2, max_size=6), seed=st.integers(0, 2**31 - 1))
def test_gradient_is_the_surrogate_derivative(norms, seed):
    """dJ/dbeta = -lam/2 ||v_k||^2 / beta_k^2: the derivative of the surrogate at fixed v (Danskin)."""
    s = np.array(norms) ** 2
    beta = _random_simplex(np.random.default_rng(seed), s.size) * 0.9 + 0.1 / s.size
    g = mkl_gradient(s, beta, lam=0.3)
    h = 1e-6
    for k in range(s.size):
        e = np.zeros(s.size)
        e[k] = h
        fd = (mkl_surrogate(s, beta + e, 0.3) - mkl_surrogate(s, beta - e, 0.3)) / (2 * h)
        scale = mkl_surrogate(s, beta, 0.3)  # round-off of the central difference ~ 1e-16 * scale / h
        assert g[k] == pytest.approx(fd, rel=1e-5, abs=1e-8 * scale)


@settings(max_examples=60)
@given(grad=st.lists(st.floats(-10, 0), min_size=2, max_size=6), seed=st.integers(0, 2**31 - 1), zero=st.integers(0, 5))
def test_direction_is_feasible_descent(grad, seed, zero):
    g = np.array(grad)
    beta = _random_simplex(np.random.default_rng(seed), g.size)
    beta[zero % g.size] = 0.0
    if beta.sum() == 0:
        beta[:] = 1.0
    beta /= beta.sum()
    D = simplemkl_direction(g, beta)
    assert abs(D.sum()) < 1e-10
    assert np.all(D[beta == 0] >= 0)
    assert np.dot(g, D) <= 1e-12
    gmax = simplemkl_max_step(beta, D)
    if np.isfinite(gmax):
        assert np.all(beta + gmax * D >= -1e-12)
        assert np.min(beta + gmax * D) < 1e-12


@settings(max_examples=25)
@given(
    norms=st.lists(st.one_of(st.just(0.0), st.floats(0.1, 10.0)), min_size=2, max_size=5),
    seed=st.integers(0, 2**31 - 1),
)
def test_simplemkl_step_decreases_surrogate_and_iterates_to_gauss_seidel(norms, seed):
    """Reduced-gradient steps descend and reach the Gauss-Seidel minimum (norms either 0 or
    >= 0.1: a tiny nonzero norm makes the problem ill-conditioned and gradient steps slow)."""
    n = np.array(norms)
    s = n**2
    beta = _random_simplex(np.random.default_rng(seed), n.size) * 0.9 + 0.1 / n.size
    beta /= beta.sum()
    start = mkl_surrogate(s, beta, 1.0)
    for _ in range(200):
        st_ = simplemkl_step(s, beta, 1.0)
        assert st_.surrogate_after <= st_.surrogate_before + 1e-12
        assert np.all(st_.beta >= 0) and st_.beta.sum() == pytest.approx(1.0)
        beta = st_.beta
    end = mkl_surrogate(s, beta, 1.0)
    assert end <= start + 1e-12
    assert end == pytest.approx(0.5 * n.sum() ** 2, rel=1e-3, abs=1e-9)


def test_bad_inputs_raise_input_error():
    with pytest.raises(InputError):
        gauss_seidel_weights([-1.0, 2.0])
    with pytest.raises(InputError):
        mkl_gradient([1.0, 1.0], [1.0, 0.0])
    with pytest.raises(InputError):
        simplemkl_direction([0.0, -1.0], [0.5, 0.6])


# ---------------------------------------------------------------- the wrappers on a tiny chain
def _tiny_chain(seed=0):
    from oracles.dense_sequence import DenseSequenceOracle

    rng = np.random.default_rng(seed)
    lens = rng.integers(2, 5, size=12)
    ptr = np.concatenate([[0], np.cumsum(lens)])
    X = rng.normal(size=(ptr[-1], 6))
    X[:, 3:] *= 0.2  # a weak block, so the kernel weights differ
    y = rng.integers(0, 3, size=ptr[-1])
    return DenseSequenceOracle(X, y, ptr, 3, feature_groups=np.array([0, 0, 1, 1, 2, 2]))


@pytest.fixture(scope="module")
def certified_mkl_optimum():
    """MTL^struct (BMRM with MixedNorm p=1) on the tiny chain: the certified optimum of F."""
    from cutplane import minimize
    from cutplane.regularizers import MixedNorm

    o = _tiny_chain()
    reg = MixedNorm(o.groups, p=1, n_groups=o.n_groups)
    res = minimize(o, reg, 0.3, eps=1e-7, max_iter=500)
    assert res.status == "converged"
    return o, reg, res


@pytest.mark.parametrize("method", ["gauss-seidel", "simplemkl"])
def test_wrappers_minimise_the_same_objective_as_mtl_struct(certified_mkl_optimum, method):
    from problems.mkl.wrappers import PegasosInner, wrapper_mkl

    o, reg, ref = certified_mkl_optimum
    lam = 0.3
    res = wrapper_mkl(o, method, inner=PegasosInner(lam, o.groups, n_groups=o.n_groups, max_passes=400, seed=0))
    # the reported objective is lam * MixedNorm(p=1) + R at the returned predictor ...
    assert res.objective == pytest.approx(lam * reg(res.w) + o(res.w).value, rel=1e-12)
    # ... hence never below MTL^struct's certified lower bound, and it gets close to the optimum
    assert np.all(res.history.objective >= ref.lower_bound - 1e-9)
    assert res.objective <= ref.objective * 1.005
    assert res.passes == 400 and res.history.passes[-1] == 400
    assert res.n_iter == 1 + int(np.ceil((400 - 20) / 3))
    assert res.lower_bound is None and res.gap is None and not res.exact
    assert np.all(res.beta_history >= 0)
    np.testing.assert_allclose(res.beta_history.sum(axis=1), 1.0)


def test_gauss_seidel_update_keeps_the_predictor():
    """After a beta update the warm start u = v / sqrt(beta) reproduces the same predictor v."""
    from problems.mkl.wrappers import PegasosInner, wrapper_mkl

    o = _tiny_chain(1)
    one = wrapper_mkl(o, inner=PegasosInner(0.3, o.groups, max_passes=20, seed=0))  # one SVM call, then the update
    two = wrapper_mkl(o, inner=PegasosInner(0.3, o.groups, max_passes=21, seed=0))
    assert one.n_iter == 1 and two.n_iter == 2
    np.testing.assert_allclose(two.beta_history[1], gauss_seidel_weights(reg_norms(o, one.w)), rtol=1e-12)
    assert two.history.objective[20] == pytest.approx(one.objective, rel=1e-12)


def reg_norms(o, w):
    from cutplane.groups import group_norms

    return group_norms(w, o.groups, o.n_groups)


def test_wrapper_bad_method():
    from problems.mkl.wrappers import PegasosInner, wrapper_mkl

    o = _tiny_chain()
    with pytest.raises(InputError):
        wrapper_mkl(o, "newton", inner=PegasosInner(0.3, o.groups))
    with pytest.raises(InputError):
        wrapper_mkl(o, inner=PegasosInner(0.3, o.groups), beta0=[0.5, 0.6, 0.0, 0.0])


def test_wrapper_with_pegasos_stops_on_max_iter_and_callback():
    from problems.mkl.wrappers import PegasosInner, WrapperInfo, wrapper_mkl

    o = _tiny_chain(2)
    inner = PegasosInner(0.3, o.groups, n_groups=o.n_groups, first_epochs=2, later_epochs=1, max_passes=50)
    res = wrapper_mkl(o, "simplemkl", inner=inner, max_iter=3)
    assert res.status == "max_iter" and res.n_iter == 3 and res.passes == 2 + 1 + 1
    assert len(res.history) == res.passes + 1 and res.history.beta.shape == (res.passes + 1, o.n_groups)
    seen = []

    def stop_at_five(info):
        assert isinstance(info, WrapperInfo) and info.lower is None
        seen.append(info.passes)
        return info.passes == 5

    res = wrapper_mkl(o, inner=inner, callback=stop_at_five)
    assert res.status == "callback" and res.passes == 5 and seen == [1, 2, 3, 4, 5]
    assert res.objective == pytest.approx(res.history.objective[-1])
