"""NoveltySVM: the certified objective brackets a direct cvxpy solve over (w, rho), LS-BMRM reaches the
same optimum, and scikit-learn's linear OneClassSVM is the same problem scaled by nu n."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import OneClassSVM
from sklearn.utils.estimator_checks import parametrize_with_checks

from cutplane.exceptions import InputError
from problems import NoveltySVM
from problems.solvers import CuttingPlane

EPS = 1e-6


def _data(seed, n=60, d=3, shift=2.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) + shift * np.arange(1, d + 1)


def _cvxpy(X, nu):
    n, d = X.shape
    w, rho = cp.Variable(d), cp.Variable()
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + cp.sum(cp.pos(rho - X @ w)) / (nu * n) - rho))
    prob.solve(solver=cp.CLARABEL)
    return prob.value, w.value


@pytest.mark.parametrize("method", ["bmrm", "ls-bmrm"])
@pytest.mark.parametrize("nu", [0.05, 0.3, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_brackets_cvxpy_with_an_unregularised_offset(seed, nu, method):
    X = _data(seed)
    model = NoveltySVM(nu=nu, solver=CuttingPlane(eps=EPS, method=method)).fit(X)
    value, _ = _cvxpy(X, nu)
    # F = 1/2 ||w||^2 + (1/nu) R(w) is Schölkopf et al.'s objective with rho profiled out
    tol = 1e-6 * max(1.0, abs(value))
    assert model.lower_bound_ - tol <= value <= model.objective_ + tol
    assert model.gap_ <= EPS + 1e-12
    # the reported offset is a minimiser of the objective at coef_
    s = X @ model.coef_
    f = 0.5 * model.coef_ @ model.coef_ + np.maximum(0, model.offset_ - s).sum() / (nu * len(s)) - model.offset_
    assert f == pytest.approx(model.objective_, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ls_bmrm_reaches_the_bmrm_optimum(seed):
    X = _data(seed, n=400, d=5, shift=0.5)
    runs = {m: NoveltySVM(nu=0.2, solver=CuttingPlane(eps=1e-8, method=m)).fit(X) for m in ("bmrm", "ls-bmrm")}
    a, b = runs["bmrm"], runs["ls-bmrm"]
    assert b.lower_bound_ <= a.objective_ + 1e-8 and a.lower_bound_ <= b.objective_ + 1e-8
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-4)
    assert b.result_.n_line_searches > 0


@pytest.mark.parametrize("nu", [0.1, 0.3, 0.7])
def test_same_problem_as_sklearn_linear_one_class_svm_scaled_by_nu_n(nu):
    X = _data(3, n=200, d=4, shift=1.0)
    n = X.shape[0]
    model = NoveltySVM(nu=nu, solver=CuttingPlane(eps=1e-9)).fit(X)
    ref = OneClassSVM(kernel="linear", nu=nu, tol=1e-10).fit(X)
    np.testing.assert_allclose(model.coef_, ref.coef_.ravel() / (nu * n), rtol=1e-4, atol=1e-6)
    # libsvm's offset / (nu n) is a minimiser over rho: between the k-th and (k+1)-th lowest scores
    s = np.sort(X @ model.coef_)
    k = int(np.ceil(nu * n))
    rho = float(ref.offset_[0]) / (nu * n)
    assert s[k - 1] - 1e-5 <= rho <= s[min(k, n - 1)] + 1e-5
    assert np.mean(model.predict(X) == ref.predict(X)) >= 0.99


def test_outlier_share_and_api():
    X = _data(4, n=500, d=2)
    model = NoveltySVM(nu=0.1).fit(sp.csr_matrix(X))
    pred = model.predict(X)
    assert set(pred) <= {-1, 1}
    assert np.mean(pred == -1) <= 0.1 + 1e-12  # nu bounds the share of training outliers
    np.testing.assert_allclose(model.decision_function(X), model.score_samples(X) - model.offset_)
    np.testing.assert_array_equal(model.fit_predict(X), pred)


def test_refusals_name_the_field():
    for nu in (0.0, 1.2, "x"):
        with pytest.raises(InputError) as err:
            NoveltySVM(nu=nu).fit(np.eye(3))
        assert err.value.field == "nu"
    with pytest.raises(InputError) as err:
        NoveltySVM(solver=CuttingPlane(method="kelley")).fit(np.eye(3))
    assert err.value.field == "method"


@parametrize_with_checks([NoveltySVM()])
def test_check_estimator(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the checks' tiny problems may stop at max_iter
        check(estimator)
