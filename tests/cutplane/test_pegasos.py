"""Structured PEGASOS against a direct cvxpy solve on tiny chains; warm starts; projection."""

import itertools

import numpy as np
import pytest

from cutplane.exceptions import InputError
from cutplane.online.pegasos import pegasos, pegasos_radius
from oracles.dense_sequence import DenseSequenceOracle


def _tiny(seed=0, n=4, D=3, K=2, max_len=3):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, size=n)
    ptr = np.concatenate([[0], np.cumsum(lens)])
    X = rng.normal(size=(ptr[-1], D))
    y = rng.integers(0, K, size=ptr[-1])
    return DenseSequenceOracle(X, y, ptr, K, feature_groups=np.arange(D) % 2)


def _cvxpy_optimum(o, lam, scale):
    """min_u lam/2 ||u||^2 + mean_i max_y [Delta + <scale o u, Phi(y) - Phi(y_i)>], all y enumerated."""
    cp = pytest.importorskip("cvxpy")
    u = cp.Variable(o.dim)
    terms = []
    for i in range(o.n_samples):
        t0, t1 = o.sentence_ptr[i], o.sentence_ptr[i + 1]
        yi = o.labels[t0:t1]
        rows, offs = [], []
        for yy in itertools.product(range(o.n_labels), repeat=int(t1 - t0)):
            yy = np.array(yy)
            rows.append(scale * (o.joint_feature(i, yy) - o.joint_feature(i, yi)))
            offs.append(o.loss(i, yy))
        terms.append(cp.max(np.array(rows) @ u + np.array(offs)))
    prob = cp.Problem(cp.Minimize(lam / 2 * cp.sum_squares(u) + sum(terms) / o.n_samples))
    prob.solve(solver="CLARABEL")
    return prob.value


def _objective(o, lam, scale, u):
    return lam / 2 * float(u @ u) + o(scale * u).value


@pytest.mark.parametrize("seed", [0, 1])
def test_pegasos_reaches_the_cvxpy_optimum_with_scaled_groups(seed):
    o = _tiny(seed)
    lam = 0.5
    scale = np.sqrt(np.array([0.7, 0.1, 0.2]))[o.groups]
    opt = _cvxpy_optimum(o, lam, scale)
    res = pegasos(o, lam, epochs=3000, scale=scale, seed=seed, radius=pegasos_radius(o(np.zeros(o.dim)).value, lam))
    val = _objective(o, lam, scale, res.u)
    assert val >= opt - 1e-6  # cannot beat the optimum
    assert val <= opt * (1 + 1e-3)
    np.testing.assert_allclose(res.w, scale * res.u)


def test_warm_start_continues_the_same_run():
    o = _tiny(3)
    lam = 0.2
    full = pegasos(o, lam, epochs=7, seed=11)
    rng = np.random.default_rng(11)
    first = pegasos(o, lam, epochs=3, seed=rng)
    second = pegasos(o, lam, epochs=4, u0=first.u, t0=first.t, seed=rng)
    assert second.t == full.t == 7 * o.n_samples
    np.testing.assert_allclose(second.u, full.u, rtol=1e-12, atol=1e-12)


def test_projection_keeps_the_iterates_in_the_ball():
    o = _tiny(5)
    lam = 0.05
    r = 0.3  # deliberately small: the projection is active
    norms = []
    pegasos(o, lam, epochs=30, radius=r, seed=0, callback=lambda e, t, u: norms.append(np.linalg.norm(u)))
    assert len(norms) == 30
    assert max(norms) <= r * (1 + 1e-12)
    assert max(norms) >= 0.5 * r  # the ball is reached, so the check above is not vacuous


def test_zero_scale_freezes_a_group():
    o = _tiny(2)
    scale = np.where(o.groups == 0, 0.0, 1.0)
    res = pegasos(o, 0.3, epochs=20, scale=scale, seed=0)
    assert np.all(res.u[o.groups == 0] == 0)
    assert np.any(res.u[o.groups == 1] != 0)


def test_bad_inputs():
    o = _tiny()
    with pytest.raises(InputError):
        pegasos(o, 0.0)
    with pytest.raises(InputError):
        pegasos(o, 1.0, scale=-np.ones(o.dim))
    with pytest.raises(InputError):
        pegasos(o, 1.0, u0=np.zeros(o.dim + 1))
    with pytest.raises(InputError):
        pegasos(o, 1.0, epochs=1.5)
