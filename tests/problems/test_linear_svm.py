"""LinearSVM: objective against a direct cvxpy solve of the full primal and against
liblinear (LinearSVC) at the mapped C; estimator behaviour; bad input."""

import numpy as np
import pytest
import scipy.sparse as sp

from cutplane.exceptions import ConvergenceWarning, InputError
from problems import LinearSVM
from problems.solvers import CuttingPlane


def _data(seed, n, d, k, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < (0.5 if sparse else 1.0))
    W = rng.standard_normal((k, d))
    y = np.argmax(X @ W.T + 0.5 * rng.standard_normal((n, k)), axis=1)
    if k == 2:
        y = np.where(y == 1, 3, -7)  # arbitrary labels: the estimator maps them
    return (sp.csr_matrix(X) if sparse else X), y


def _F(est, X, y, regularizer="l2"):
    """``Omega(W) + C * mean loss`` computed directly from coef_ (no oracle code)."""
    Xd = X.toarray() if sp.issparse(X) else X
    W = est.coef_
    omega = 0.5 * np.sum(W**2) if regularizer == "l2" else np.abs(W).sum()
    if W.shape[0] == 1:
        s = np.where(y == est.classes_[1], 1.0, -1.0)
        loss = np.maximum(0, 1 - s * (Xd @ W[0]))
    else:
        idx = np.searchsorted(est.classes_, y)
        S = Xd @ W.T
        aug = S - S[np.arange(len(y)), idx][:, None] + 1.0
        aug[np.arange(len(y)), idx] = 0.0
        loss = aug.max(axis=1)
    return omega + est.C * loss.mean()


def _cvxpy_F(X, y, C, k, regularizer="l2"):
    """Minimum of the full primal by a direct cvxpy solve (Clarabel)."""
    import cvxpy as cp

    Xd = X.toarray() if sp.issparse(X) else X
    n, d = Xd.shape
    classes = np.unique(y)
    if k == 2:
        s = np.where(y == classes[1], 1.0, -1.0)
        w = cp.Variable(d)
        loss = cp.sum(cp.pos(1 - cp.multiply(s, Xd @ w))) / n
        omega = 0.5 * cp.sum_squares(w) if regularizer == "l2" else cp.norm1(w)
    else:
        Y = (np.searchsorted(classes, y)[:, None] == np.arange(k)[None, :]).astype(float)
        W = cp.Variable((k, d))
        S = Xd @ W.T
        true = cp.sum(cp.multiply(Y, S), axis=1)
        aug = S + (1 - Y) - cp.reshape(true, (n, 1), order="C") @ np.ones((1, k))
        loss = cp.sum(cp.max(aug, axis=1)) / n
        omega = 0.5 * cp.sum_squares(W) if regularizer == "l2" else cp.sum(cp.abs(W))
    prob = cp.Problem(cp.Minimize(omega + C * loss))
    prob.solve(solver="CLARABEL")
    return prob.value


@pytest.mark.parametrize(
    "k, sparse, regularizer, C",
    [
        (2, False, "l2", 1.0),
        (2, True, "l2", 10.0),
        (3, False, "l2", 5.0),
        (4, True, "l2", 2.0),
        (2, False, "l1", 3.0),
        (3, True, "l1", 2.0),
    ],
)
def test_objective_matches_direct_cvxpy_solve(k, sparse, regularizer, C):
    X, y = _data(k + 10 * sparse, n=40, d=6, k=k, sparse=sparse)
    eps = 1e-4
    est = LinearSVM(C=C, regularizer=regularizer, solver=CuttingPlane(eps=eps)).fit(X, y)
    F_star = _cvxpy_F(X, y, C, k, regularizer)
    assert est.result_.status == "converged"
    assert est.gap_ <= eps
    assert est.objective_ == pytest.approx(_F(est, X, y, regularizer), rel=1e-10)
    assert est.lower_bound_ <= F_star + 1e-6
    assert F_star - 1e-6 <= est.objective_ <= F_star + eps + 1e-6
    assert est.coef_.shape == ((1 if k == 2 else k), 6)


def test_dense_and_sparse_give_the_same_model():
    X, y = _data(5, n=60, d=8, k=3)
    a = LinearSVM(C=4.0, solver=CuttingPlane(eps=1e-6)).fit(X, y)
    b = LinearSVM(C=4.0, solver=CuttingPlane(eps=1e-6)).fit(sp.csr_matrix(X), y)
    assert a.objective_ == pytest.approx(b.objective_, abs=2e-6)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.intercept_, b.intercept_, rtol=0, atol=1e-10)
    # equal predictions wherever the best class wins by more than rounding: this data has a
    # sample tied exactly between two classes (margin 9e-15), where summation order decides
    top2 = np.sort(a.decision_function(X), axis=1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 1e-9
    assert clear.sum() >= len(y) - 1
    np.testing.assert_array_equal(a.predict(X)[clear], b.predict(sp.csr_matrix(X))[clear])


def _liblinear_agreement(n, d, C_lib, seed=777):
    from sklearn.svm import LinearSVC

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.sign(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n))
    ref = LinearSVC(C=C_lib, loss="hinge", fit_intercept=False, dual=True, tol=1e-8, max_iter=1_000_000).fit(X, y)
    C = C_lib * n
    F_ref = 0.5 * ref.coef_.ravel() @ ref.coef_.ravel() + C_lib * np.maximum(0, 1 - y * (X @ ref.coef_.ravel())).sum()
    est = LinearSVM(C=C, solver=CuttingPlane(eps=1e-5 * F_ref, max_iter=5000)).fit(X, y)
    F_ours = _F(est, X, y)
    assert abs(F_ours - F_ref) / F_ref <= 1e-4
    assert est.lower_bound_ <= F_ref * (1 + 1e-9)
    assert np.mean(est.predict(X) == ref.predict(X)) > 0.99


@pytest.mark.parametrize("C_lib", [0.01, 1.0])
def test_agrees_with_liblinear_small(C_lib):
    _liblinear_agreement(3000, 100, C_lib)


@pytest.mark.parametrize("C_lib", [0.01, pytest.param(1.0, marks=pytest.mark.slow)])  # ~2-3 min
def test_agrees_with_liblinear_20000x500(C_lib):
    _liblinear_agreement(20000, 500, C_lib)


def test_estimator_api():
    from sklearn.base import clone

    X, y = _data(1, n=50, d=5, k=2)
    est = LinearSVM(C=2.0, solver=CuttingPlane(eps=1e-4))
    assert est.get_params()["C"] == 2.0 and not hasattr(est, "coef_")
    est.fit(X, y)
    assert set(est.classes_) == {-7, 3}
    scores = est.decision_function(X)
    assert scores.shape == (50,)
    np.testing.assert_array_equal(est.predict(X), np.where(scores > 0, 3, -7))
    assert est.score(X, y) == np.mean(est.predict(X) == y)
    assert est.n_iter_ == est.result_.n_iter and est.intercept_.tolist() == [0.0]
    assert clone(est).get_params() == est.get_params()
    assert est.get_params()["solver__eps"] == 1e-4
    assert est.set_params(solver__max_iter=50).solver.max_iter == 50
    Xm, ym = _data(2, n=50, d=5, k=3)
    multi = LinearSVM(C=2.0).fit(Xm, ym.astype(str))
    assert multi.decision_function(Xm).shape == (50, 3)
    assert set(multi.predict(Xm)) <= {"0", "1", "2"}


def test_bias_feature():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((80, 2))
    y = np.where(X[:, 0] > 1.0, 1, -1)  # needs an offset
    plain = LinearSVM(C=100.0, solver=CuttingPlane(eps=1e-4)).fit(X, y)
    biased = LinearSVM(C=100.0, bias=1.0, solver=CuttingPlane(eps=1e-4)).fit(X, y)
    assert biased.intercept_[0] < -0.5
    assert biased.score(X, y) > plain.score(X, y)
    np.testing.assert_allclose(biased.decision_function(X), X @ biased.coef_[0] + biased.intercept_[0])


def test_convergence_warning_at_max_iter():
    X, y = _data(4, n=200, d=10, k=3)
    with pytest.warns(ConvergenceWarning):
        est = LinearSVM(C=1000.0, solver=CuttingPlane(eps=1e-9, max_iter=3)).fit(X, y)
    assert est.result_.status == "max_iter" and est.gap_ > 1e-9


def test_save_load_round_trip(tmp_path):
    X, y = _data(6, n=40, d=5, k=3)
    est = LinearSVM(C=3.0, solver=CuttingPlane(eps=1e-3)).fit(X, y.astype(float))
    est.save(tmp_path / "m.npz")
    back = LinearSVM.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.get_params() == est.get_params() and back.objective_ == est.objective_


@pytest.mark.parametrize(
    "X, y, params, match",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), [0, 1], {}, "NaN"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), [0, 1], {}, "NaN or infinite"),
        (sp.csr_matrix(np.array([[1.0, np.nan], [0.0, 1.0]])), [0, 1], {}, "NaN"),
        (np.ones((3, 2)), [0, 1], {}, "3 samples but y has 2"),
        (np.ones((3, 2)), [1, 1, 1], {}, "at least 2 classes"),
        (np.ones((2, 2)), [0, 1], {"C": 0.0}, "C: must be finite and > 0"),
        (np.ones((2, 2)), [0, 1], {"C": -1.0}, "C: must be finite"),
        (np.ones((2, 2)), [0, 1], {"solver": CuttingPlane(eps=0.0)}, "eps: must be a positive finite number"),
        (np.ones((2, 2)), [0, 1], {"solver": CuttingPlane(eps=-1e-3)}, "eps"),
        (np.ones((2, 2)), [0, 1], {"regularizer": "l3"}, "regularizer"),
        (np.ones((2, 2)), [0, 1], {"solver": CuttingPlane(method="kelley")}, "method"),
        (np.ones((2, 2)), [0, 1], {"solver": CuttingPlane(max_iter=0)}, "max_iter"),
        (np.ones(4), [0, 1, 0, 1], {}, "2-d"),
        (np.array([["a", "b"], ["c", "d"]]), [0, 1], {}, "numbers"),
        (np.ones((2, 2)), [0.5, 1.5], {}, "continuous"),
        (np.ones((2, 2)), [0, 1], {"solver": "cutting-plane"}, "solver=CuttingPlane"),
        (np.ones((2, 2)), [0, 1], {"solver": CuttingPlane(executor="threads")}, "executor"),
    ],
)
def test_bad_input(X, y, params, match):
    with pytest.raises(InputError, match=match):
        LinearSVM(**params).fit(X, y)


def test_predict_checks():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        LinearSVM().predict(np.ones((2, 2)))
    est = LinearSVM().fit(*_data(0, n=20, d=3, k=2))
    with pytest.raises(InputError, match="3 features"):
        est.predict(np.ones((2, 4)))
    with pytest.raises(InputError, match="NaN"):
        est.predict(np.array([[np.nan, 0, 0]]))


def test_spom_is_refused():
    from problems.solvers import SPOM

    with pytest.raises(InputError, match="CuttingPlane") as err:
        LinearSVM(solver=SPOM()).fit(*_data(0, n=20, d=3, k=2))
    assert err.value.field == "solver"


def test_default_solver_is_the_old_default():
    est = LinearSVM().fit(*_data(0, n=20, d=3, k=2))
    assert est.solver is None and est.solver_options_.eps == 1e-3 and est.solver_options_.max_iter == 1000
    assert est.solver_options_.method == "bmrm"


def test_grid_search_over_a_solver_option():
    from sklearn.model_selection import GridSearchCV

    X, y = _data(7, n=60, d=4, k=2)
    grid = GridSearchCV(LinearSVM(solver=CuttingPlane()), {"solver__eps": [1e-1, 1e-3], "C": [1.0, 2.0]}, cv=2)
    grid.fit(X, y)
    assert grid.best_params_["solver__eps"] in (1e-1, 1e-3)
    assert grid.best_estimator_.solver.eps == grid.best_params_["solver__eps"]


@pytest.mark.parametrize("bias", [None, 1.0])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_n_slack_method_reaches_the_bmrm_objective(bias, n_classes):
    rng = np.random.default_rng(n_classes)
    X = rng.standard_normal((150, 5))
    y = np.argmax(X[:, :n_classes] + 0.3 * rng.standard_normal((150, n_classes)), axis=1)
    if n_classes == 2:
        y = 2 * y - 1
    a = LinearSVM(C=10, bias=bias, solver=CuttingPlane(method="n-slack", eps=1e-6)).fit(X, y)
    b = LinearSVM(C=10, bias=bias, solver=CuttingPlane(eps=1e-6)).fit(X, y)
    assert a.result_.method == "n-slack" and a.result_.converged and b.result_.converged
    assert a.objective_ == pytest.approx(b.objective_, abs=2e-6)
    assert a.lower_bound_ <= b.objective_ + 1e-9 and b.lower_bound_ <= a.objective_ + 1e-9
