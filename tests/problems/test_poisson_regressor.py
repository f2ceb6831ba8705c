"""LinearRegressor(loss="poisson"): the certified objective brackets cvxpy and scikit-learn's PoissonRegressor."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.linear_model import PoissonRegressor

from cutplane.exceptions import InputError
from problems import LinearRegressor
from problems.solvers import CuttingPlane


def _data(seed, n=60, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.poisson(np.exp(X @ [0.5, -0.3, 0.2] + 0.7)).astype(float)
    return X, y


@pytest.mark.parametrize("regularizer", ["l2", "l1"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_brackets_cvxpy(regularizer, fit_intercept):
    X, y = _data(0)
    n, d = X.shape
    C = 10.0
    model = LinearRegressor(
        loss="poisson",
        regularizer=regularizer,
        C=C,
        fit_intercept=fit_intercept,
        solver=CuttingPlane(eps=1e-5, method="ls-bmrm"),
    ).fit(X, y)
    w, b = cp.Variable(d), cp.Variable()
    eta = X @ w + (b if fit_intercept else 0.0)
    ylogy = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
    risk = cp.sum(cp.exp(eta) - y - cp.multiply(y, eta) + ylogy) / n
    omega = 0.5 * cp.sum_squares(w) if regularizer == "l2" else cp.norm1(w)
    prob = cp.Problem(cp.Minimize(omega + C * risk))
    prob.solve(solver=cp.CLARABEL)
    tol = 1e-6 * max(1.0, prob.value)
    assert model.lower_bound_ - tol <= prob.value <= model.objective_ + tol
    assert model.gap_ <= 1e-5 + 1e-12
    assert np.all(model.predict(X) > 0)


def test_agrees_with_poisson_regressor():
    X, y = _data(1, n=200)
    C = 50.0
    ours = LinearRegressor(loss="poisson", C=C, solver=CuttingPlane(eps=1e-8, method="ls-bmrm")).fit(X, y)
    ref = PoissonRegressor(alpha=1.0 / C, tol=1e-10, max_iter=1000).fit(X, y)

    def sk_objective(coef, intercept):
        mu = np.exp(X @ coef + intercept)
        ylogy = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
        return np.mean(mu - y - y * np.log(mu) + ylogy) + 0.5 / C * coef @ coef

    assert ours.lower_bound_ / C - 1e-9 <= sk_objective(ref.coef_, ref.intercept_) <= ours.objective_ / C + 1e-9
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-3)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-3)


def test_negative_targets_are_refused():
    with pytest.raises(InputError) as err:
        LinearRegressor(loss="poisson").fit(np.eye(3), [1.0, -2.0, 0.0])
    assert err.value.field == "y"


def test_default_solver_is_ls_bmrm_and_converges():
    X, y = _data(2)
    model = LinearRegressor(loss="poisson", C=10.0).fit(X, y)
    assert model.solver_options_.method == "ls-bmrm"
    assert model.result_.status == "converged"
    assert LinearRegressor(loss="squared").fit(X, y).solver_options_.method == "bmrm"
