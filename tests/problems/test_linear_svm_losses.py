"""LinearSVM(loss="squared_hinge" | "logistic"): the certified objective brackets a direct cvxpy solve."""

import cvxpy as cp
import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems import LinearSVM
from problems.solvers import CuttingPlane

EPS = 1e-4


def _data(seed, n_classes, n=40, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, n_classes)) + 0.7 * rng.standard_normal((n, n_classes))
    return X, np.argmax(scores, axis=1)


def _direct(X, y, C, loss, regularizer, n_classes, s):
    n, d = X.shape
    if n_classes == 2:
        w = cp.Variable(d)
        m = cp.multiply(np.where(y == 1, 1.0, -1.0), X @ w)
        losses = cp.square(cp.pos(1 - m)) if loss == "squared_hinge" else cp.logistic(-m)
    else:
        w = cp.Variable(n_classes * d)
        W = cp.reshape(w, (n_classes, d), order="C")
        S = X @ W.T  # (n, K)
        Y = np.eye(n_classes)[y]
        true = cp.sum(cp.multiply(S, Y), axis=1)
        if loss == "logistic":
            losses = cp.log_sum_exp(S, axis=1) - true
        else:
            A = S + (1 - Y) - cp.reshape(true, (n, 1), order="F") @ np.ones((1, n_classes))
            losses = cp.square(cp.pos(cp.max(A, axis=1)))  # pos is the identity here: the true class gives 0
    omega = 0.5 * cp.sum_squares(w) if regularizer == "l2" else cp.norm1(w)
    prob = cp.Problem(cp.Minimize(omega + C * (s @ losses) / s.sum()))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
@pytest.mark.parametrize("regularizer", ["l2", "l1"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_brackets_cvxpy(loss, regularizer, n_classes):
    X, y = _data(0, n_classes)
    s = np.random.default_rng(1).integers(1, 4, len(y)).astype(float)
    C = 5.0
    model = LinearSVM(C=C, loss=loss, regularizer=regularizer, solver=CuttingPlane(eps=EPS))
    model.fit(X, y, sample_weight=s)
    direct = _direct(X, y, C, loss, regularizer, n_classes, s)
    tol = 1e-6 * max(1.0, direct)
    assert model.lower_bound_ - tol <= direct <= model.objective_ + tol
    assert model.gap_ <= EPS + 1e-12
    assert model.coef_.shape == ((1 if n_classes == 2 else n_classes), X.shape[1])


def test_ls_bmrm_reaches_the_same_objective():
    X, y = _data(2, 2)
    a = LinearSVM(C=10.0, loss="logistic", solver=CuttingPlane(eps=1e-6)).fit(X, y)
    b = LinearSVM(C=10.0, loss="logistic", solver=CuttingPlane(eps=1e-6, method="ls-bmrm")).fit(X, y)
    assert abs(a.objective_ - b.objective_) <= 2e-6


def test_default_is_the_hinge_and_other_methods_are_refused():
    assert LinearSVM().loss == "hinge"
    X, y = _data(3, 2)
    with pytest.raises(InputError) as err:
        LinearSVM(loss="logistic", solver=CuttingPlane(method="n-slack")).fit(X, y)
    assert err.value.field == "method"
    with pytest.raises(InputError) as err:
        LinearSVM(loss="log").fit(X, y)
    assert err.value.field == "loss"


def test_model_file_keeps_the_loss(tmp_path):
    X, y = _data(4, 3)
    model = LinearSVM(C=2.0, loss="logistic").fit(X, y)
    back = LinearSVM.load(model.save(tmp_path / "m.npz"))
    assert back.loss == "logistic"
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
