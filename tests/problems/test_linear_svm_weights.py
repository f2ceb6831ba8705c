"""LinearSVM: solver__eps through GridSearchCV on a default estimator; class and sample weights."""

import cvxpy as cp
import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from cutplane.exceptions import InputError
from problems import LinearSVM
from problems.solvers import CuttingPlane


def _binary(seed=0, n=60, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.7 * rng.standard_normal(n) > 0.4, "pos", "neg")
    return X, y, rng


def test_grid_search_over_solver_eps_on_a_default_estimator():
    X, y, _ = _binary()
    pipe = Pipeline([("scale", StandardScaler()), ("svm", LinearSVM())])
    search = GridSearchCV(pipe, {"svm__solver__eps": [1e-2, 1e-3]}, cv=2).fit(X, y)
    assert search.best_params_["svm__solver__eps"] in (1e-2, 1e-3)
    assert search.best_estimator_.named_steps["svm"].solver.eps == search.best_params_["svm__solver__eps"]
    est = LinearSVM()
    est.set_params(solver__max_iter=7)
    assert est.solver == CuttingPlane(max_iter=7)
    assert LinearSVM().solver is None  # the default itself is untouched


def _weighted_objective(X, yb, c, C, s_total):
    w = cp.Variable(X.shape[1])
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * (c @ cp.pos(1 - cp.multiply(yb, X @ w))) / s_total))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("class_weight", [None, "balanced", {"pos": 3.0, "neg": 0.5}])
def test_weighted_binary_brackets_cvxpy(class_weight):
    X, y, rng = _binary(1)
    s = rng.integers(0, 4, y.shape[0]).astype(float)
    C = 4.0
    model = LinearSVM(C=C, class_weight=class_weight, solver=CuttingPlane(eps=1e-5)).fit(X, y, sample_weight=s)
    yb = np.where(y == "pos", 1.0, -1.0)
    if class_weight is None:
        cw = np.ones_like(s)
    elif class_weight == "balanced":
        counts = {k: np.sum(y == k) for k in ("pos", "neg")}
        cw = np.array([len(y) / (2 * counts[k]) for k in y])
    else:
        cw = np.array([class_weight[k] for k in y])
    direct = _weighted_objective(X, yb, s * cw, C, s.sum())
    assert model.lower_bound_ - 1e-6 <= direct <= model.objective_ + 1e-6
    assert model.gap_ <= 1e-5


def test_integer_sample_weights_equal_repeats_and_liblinear():
    X, y, rng = _binary(2)
    s = rng.integers(0, 3, y.shape[0])
    C = 2.0
    opts = dict(C=C, class_weight={"pos": 2.0, "neg": 1.0}, solver=CuttingPlane(eps=1e-7))
    weighted = LinearSVM(**opts).fit(X, y, sample_weight=s)
    repeated = LinearSVM(**opts).fit(np.repeat(X, s, axis=0), np.repeat(y, s))
    assert weighted.objective_ == pytest.approx(repeated.objective_, abs=3e-7)
    np.testing.assert_allclose(weighted.coef_, repeated.coef_, atol=1e-3)
    lib = LinearSVC(
        C=C / s.sum(),
        loss="hinge",
        fit_intercept=False,
        class_weight={"pos": 2.0, "neg": 1.0},
        tol=1e-10,
        max_iter=10**6,
    ).fit(X, y, sample_weight=s)
    sign = 1.0 if lib.classes_[1] == weighted.classes_[1] else -1.0
    np.testing.assert_allclose(weighted.coef_, sign * lib.coef_, atol=2e-3)


def test_weighted_multiclass_brackets_cvxpy():
    rng = np.random.default_rng(3)
    n, d, k = 30, 3, 3
    X = rng.standard_normal((n, d))
    y = rng.integers(0, k, n)
    s = rng.integers(1, 4, n).astype(float)
    C = 3.0
    model = LinearSVM(C=C, class_weight={0: 2.0}, solver=CuttingPlane(eps=1e-5)).fit(X, y, sample_weight=s)
    cw = np.where(y == 0, 2.0, 1.0)
    W = cp.Variable((k, d))
    terms = []
    for i in range(n):
        scores = W @ X[i]
        terms.append(cp.max(scores + (np.arange(k) != y[i]) - scores[y[i]]))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(W) + C * ((s * cw) @ cp.hstack(terms)) / s.sum()))
    prob.solve(solver=cp.CLARABEL)
    assert model.lower_bound_ - 1e-6 <= prob.value <= model.objective_ + 1e-6


def test_bad_weights_refused():
    X, y, _ = _binary()
    with pytest.raises(InputError) as err:
        LinearSVM(class_weight="heavy").fit(X, y)
    assert err.value.field == "class_weight"
    with pytest.raises(InputError, match="not in y"):
        LinearSVM(class_weight={"other": 2.0}).fit(X, y)
    with pytest.raises(InputError) as err:
        LinearSVM().fit(X, y, sample_weight=-np.ones(len(y)))
    assert err.value.field == "sample_weight"
    with pytest.raises(InputError, match="validation_fraction"):
        LinearSVM(C=[1.0, 2.0]).fit(X, y, sample_weight=np.ones(len(y)), validation_fraction=0.2)
