"""OrdinalRegressor: the certified objective brackets a direct cvxpy solve over (w, theta)."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from cutplane.exceptions import InputError
from problems import OrdinalRegressor
from problems.solvers import CuttingPlane

EPS = 1e-4


def _data(seed, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    levels = np.digitize(X @ [1.5, -1.0, 0.5] + 0.5 * rng.standard_normal(n), [-1.0, 0.0, 1.2])
    return X, np.array(["1-low", "2-mid", "3-high", "4-top"])[levels], levels


@pytest.mark.parametrize("regularizer", ["l2", "l1"])
@pytest.mark.parametrize("seed", [0, 1])
def test_brackets_cvxpy_with_unregularised_thresholds(regularizer, seed):
    X, _, r = _data(seed)
    C = 10.0
    model = OrdinalRegressor(C=C, regularizer=regularizer, solver=CuttingPlane(eps=EPS)).fit(X, r)
    n, d = X.shape
    K = r.max() + 1
    Z = np.where(r[:, None] > np.arange(K - 1)[None, :], 1.0, -1.0)
    w, theta = cp.Variable(d), cp.Variable(K - 1)
    margins = cp.multiply(
        Z,
        cp.reshape(X @ w, (n, 1), order="F") @ np.ones((1, K - 1))
        - np.ones((n, 1)) @ cp.reshape(theta, (1, K - 1), order="F"),
    )
    omega = 0.5 * cp.sum_squares(w) if regularizer == "l2" else cp.norm1(w)
    prob = cp.Problem(cp.Minimize(omega + C * cp.sum(cp.pos(1 - margins)) / n))
    prob.solve(solver=cp.CLARABEL)
    tol = 1e-6 * max(1.0, prob.value)
    assert model.lower_bound_ - tol <= prob.value <= model.objective_ + tol
    assert model.gap_ <= EPS + 1e-12
    assert np.all(np.diff(model.thresholds_) >= 0)
    # the reported thresholds are those of the objective
    m = Z * (X @ model.coef_[:, None] - model.thresholds_[None, :])
    reg = 0.5 * model.coef_ @ model.coef_ if regularizer == "l2" else np.abs(model.coef_).sum()
    assert reg + C * np.maximum(0, 1 - m).sum() / n == pytest.approx(model.objective_, rel=1e-9)


def test_labels_ranks_and_score():
    X, y, r = _data(2, n=300)
    model = OrdinalRegressor(C=100.0).fit(sp.csr_matrix(X), y)
    assert list(model.classes_) == sorted(set(y))  # the labels' sorted order is the rank order
    ranks = np.searchsorted(model.classes_, y)
    assert model.score(X, y) == np.mean(model.predict_rank(X) == ranks)
    assert model.score(X, y) > 0.7
    assert set(model.predict(X)) <= set(y)
    dense = OrdinalRegressor(C=100.0, solver=CuttingPlane(eps=1e-6)).fit(X, r)
    sparse = OrdinalRegressor(C=100.0, solver=CuttingPlane(eps=1e-6)).fit(sp.csr_matrix(X), r)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, atol=1e-8)


def test_refusals_name_the_field():
    with pytest.raises(InputError) as err:
        OrdinalRegressor().fit(np.eye(3), [1, 1, 1])
    assert err.value.field == "y"
    with pytest.raises(InputError) as err:
        OrdinalRegressor().fit(np.eye(3), [0.5, 1.0, 2.0])
    assert err.value.field == "y"
    with pytest.raises(InputError) as err:
        OrdinalRegressor(C=-1.0).fit(np.eye(3), [0, 1, 2])
    assert err.value.field == "C"
