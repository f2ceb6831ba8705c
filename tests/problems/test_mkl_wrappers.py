"""Gauss-Seidel and SimpleMKL against Kelley MKL on the same objective: the three certified
optima agree within eps, with compatible kernel weights; the wrappers' certificates are valid
(checked against a direct cvxpy solve of the MKL QCQP) and their objective curves descend."""

import numpy as np
import pytest

from cutplane.exceptions import InputError
from oracles.mkl import SVMDualOracle
from problems import MKL
from problems.mkl.wrappers import Wrapper, wrapper_mkl
from problems.solvers import CuttingPlane

EPS = 1e-3


def solvers(eps, max_iter):
    """Kelley's method and the two wrappers, by name."""
    return {
        "kelley": CuttingPlane(method="kelley", eps=eps, max_iter=max_iter),
        "gauss-seidel": Wrapper(method="gauss-seidel", eps=eps, max_iter=max_iter),
        "simplemkl": Wrapper(method="simplemkl", eps=eps, max_iter=max_iter),
    }


def make_data(seed, n=60, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    f = X[:, 0] + 0.7 * X[:, 1] ** 2 - 0.7 + 0.3 * rng.normal(size=n)
    if n_classes == 2:
        y = np.where(f > 0, 1, -1)
    else:
        y = np.digitize(f, np.quantile(f, np.linspace(0, 1, n_classes + 1)[1:-1]))
    G = X @ X.T
    sq = np.sum(X * X, axis=1)
    grams = [
        G / np.mean(np.diag(G)),
        (1.0 + G) ** 2 / np.mean((1.0 + sq) ** 2),
        np.exp(-0.25 * (sq[:, None] + sq[None, :] - 2 * G)),
    ]
    return grams, y


def mkl_qcqp(grams, y, C):
    """min D = max_alpha 1^T alpha - t s.t. t >= 1/2 (y o a)^T K_k (y o a), box, y^T alpha = 0 (Lanckriet)."""
    import cvxpy as cp

    n = len(y)
    a, t = cp.Variable(n), cp.Variable()
    cons = [a >= 0, a <= C, y @ a == 0]
    for K in grams:
        L = np.linalg.cholesky(K + 1e-10 * np.eye(n))
        cons.append(t >= 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a)))
    prob = cp.Problem(cp.Maximize(cp.sum(a) - t), cons)
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.fixture(scope="module")
def binary_fits():
    grams, y = make_data(0)
    return grams, y, {name: MKL(grams, C=1.0, solver=solver).fit(None, y) for name, solver in solvers(EPS, 400).items()}


def test_three_methods_reach_the_same_certified_objective(binary_fits):
    grams, y, fits = binary_fits
    opt = mkl_qcqp(grams, y.astype(float), 1.0)
    for name, m in fits.items():
        assert m.result_.status == "converged", name
        assert m.gap_ <= EPS
        assert m.lower_bound_ - 1e-6 <= opt <= m.objective_ + 1e-6, name  # the certificate is valid
    objs = [m.objective_ for m in fits.values()]
    assert max(objs) - min(objs) <= EPS
    lowers = [m.lower_bound_ for m in fits.values()]
    assert max(lowers) <= min(objs) + 1e-9  # every lower bound is below every upper bound


def test_kernel_weights_are_compatible(binary_fits):
    grams, y, fits = binary_fits
    ref = fits["kelley"].kernel_weights_
    assert np.count_nonzero(ref > 0.05) >= 2  # an interior optimum: the comparison is not vertex vs vertex
    for name in ("gauss-seidel", "simplemkl"):
        beta = fits[name].kernel_weights_
        assert beta.sum() == pytest.approx(1.0) and np.all(beta >= 0)
        assert np.abs(beta - ref).sum() < 0.03, name
        # D at the wrapper's beta is within eps of D at Kelley's: a direct SVM solve at each
        o = SVMDualOracle(grams, y, 1.0, gap_tol=1e-9)
        assert abs(o(beta).value - o(ref).value) <= EPS + 1e-8


@pytest.mark.parametrize("method", ["gauss-seidel", "simplemkl"])
def test_wrapper_curves_descend_and_bounds_are_monotone(method):
    grams, y = make_data(1)
    oracle = SVMDualOracle(grams, y, 1.0, gap_tol=1e-10)
    res = wrapper_mkl(oracle, method, eps=EPS, max_iter=400)
    h = res.history
    assert res.status == "converged" and len(h) == res.n_iter == oracle.n_calls
    if method == "gauss-seidel":  # each update lowers D (SimpleMKL's calls include rejected trial points)
        assert np.all(np.diff(h.objective) <= 1e-8 * np.abs(h.objective[1:]))
    assert np.all(np.diff(h.lower) >= 0) and np.all(np.diff(h.best_upper) <= 0)
    assert np.allclose(h.beta.sum(axis=1), 1.0) and np.all(h.beta >= 0)
    assert res.objective == h.best_upper[-1] and res.gap == pytest.approx(h.gap[-1])
    assert np.array_equal(res.w, res.beta) and res.passes is None and h.passes is None


def test_one_vs_rest_shared_beta_agrees():
    grams, y = make_data(2, n=45, n_classes=3)
    fits = [MKL(grams, C=1.0, solver=solver).fit(None, y) for solver in solvers(1e-3, 400).values()]
    objs = [m.objective_ for m in fits]
    assert all(m.gap_ <= 1e-3 for m in fits)
    assert max(objs) - min(objs) <= 1e-3
    assert max(m.lower_bound_ for m in fits) <= min(objs) + 1e-9
    pred = [m.predict(grams) for m in fits]
    assert np.mean(pred[1] == pred[0]) > 0.95 and np.mean(pred[2] == pred[0]) > 0.95


@pytest.mark.parametrize("method", ["gauss-seidel", "simplemkl"])
@pytest.mark.parametrize("seed", [0, 1])
def test_informative_kernel_takes_the_weight(method, seed):
    """The data of the sparsity test of MKL with Kelley's method: Gaussian kernels on the 2 informative inputs and on
    4 blocks of noise; the wrappers put > 0.9 of the weight where Kelley does."""
    from problems.mkl.kernels import GaussianKernel

    rng = np.random.default_rng(seed)
    n = 60
    Xi = rng.standard_normal((n, 2))
    y = np.where(Xi[:, 0] + Xi[:, 1] > 0, 1, -1)
    noise = [rng.standard_normal((n, 3)) for _ in range(4)]
    g = GaussianKernel(gamma=0.1)
    m = MKL([g(Xi)] + [g(Z) for Z in noise], C=1.0, solver=Wrapper(method=method, eps=1e-3, max_iter=400)).fit(None, y)
    assert m.gap_ <= 1e-3
    assert m.kernel_weights_[0] > 0.9


def test_bad_input():
    grams, y = make_data(0, n=20)
    oracle = SVMDualOracle(grams, y, 1.0)
    with pytest.raises(InputError) as err:
        wrapper_mkl(oracle, "newton")
    assert err.value.field == "method"
    with pytest.raises(InputError):
        wrapper_mkl(oracle, eps=0.0)
    with pytest.raises(InputError):
        wrapper_mkl(oracle, beta0=[0.5, 0.5, 0.5])
    with pytest.raises(InputError):
        MKL(grams, C=-1.0, solver=Wrapper()).fit(None, y)
    with pytest.raises(InputError):
        wrapper_mkl(oracle, inner="pegasos")
