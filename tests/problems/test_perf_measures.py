"""PerfSVM(measure="f1" | "precision_at_k"): the certified objective brackets a cvxpy solve over every labelling."""

import itertools

import cvxpy as cp
import numpy as np
import pytest

from cutplane.exceptions import InputError
from problems import PerfSVM
from problems.solvers import CuttingPlane

EPS = 1e-4


def _direct(X, y, C, measure, k, regularizer):
    """min_w Omega(w) + C t, t >= Delta(y, y') + (1/(2n)) (y' - y)^T X w for every admissible y'."""
    n, d = X.shape
    rows, deltas = [], []
    for bits in itertools.product((-1.0, 1.0), repeat=n):
        yp = np.array(bits)
        tp = np.sum((y == 1) & (yp == 1))
        if measure == "precision_at_k":
            if np.sum(yp == 1) != k:
                continue
            deltas.append(1.0 - tp / k)
        else:
            fp, fn = np.sum((y == -1) & (yp == 1)), np.sum((y == 1) & (yp == -1))
            deltas.append(1.0 if tp == 0 else 1.0 - 2 * tp / (2 * tp + fp + fn))
        rows.append((yp - y) @ X / (2 * n))
    w, t = cp.Variable(d), cp.Variable()
    omega = 0.5 * cp.sum_squares(w) if regularizer == "l2" else cp.norm1(w)
    prob = cp.Problem(cp.Minimize(omega + C * t), [t >= np.array(deltas) + np.array(rows) @ w])
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def _data(seed, n=10, d=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ [1.0, -1.0, 0.5] + 0.8 * rng.standard_normal(n) > 0.3, 1, -1)
    y[0], y[1] = 1, -1
    return X, y


@pytest.mark.parametrize(
    "measure, k, regularizer",
    [("f1", None, "l2"), ("f1", None, "l1"), ("precision_at_k", 3, "l2"), ("precision_at_k", 1, "l2")],
)
@pytest.mark.parametrize("seed", [0, 1])
def test_perf_svm_brackets_cvxpy(measure, k, regularizer, seed):
    X, y = _data(seed)
    C = 20.0
    labels = np.where(y == 1, "pos", "neg")  # classes_ sorted: "pos" is the positive class
    model = PerfSVM(measure=measure, k=k, C=C, regularizer=regularizer, solver=CuttingPlane(eps=EPS)).fit(X, labels)
    direct = _direct(X, y, C, measure, k, regularizer)
    tol = 1e-6 * max(1.0, abs(direct))
    assert model.lower_bound_ - tol <= direct <= model.objective_ + tol
    assert model.gap_ <= EPS + 1e-12
    assert set(model.predict(X)) <= {"pos", "neg"}


def test_precision_at_k_with_k_positives_allows_l1():
    X, y = _data(2)
    k = int(np.sum(y == 1))
    C = 20.0
    model = PerfSVM(measure="precision_at_k", k=k, C=C, regularizer="l1", solver=CuttingPlane(eps=EPS)).fit(X, y)
    direct = _direct(X, y, C, "precision_at_k", k, "l1")
    assert model.lower_bound_ - 1e-6 <= direct <= model.objective_ + 1e-6


def test_f1_training_raises_the_training_f1():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    y = np.where(X @ [1.0, 2.0, -1.0, 0.0] + rng.standard_normal(300) > 2.0, 1, -1)  # about 15% positives
    model = PerfSVM(measure="f1", C=100.0).fit(X, y)
    from sklearn.metrics import f1_score

    # the risk at the solution bounds 1 - F1 of the labelling predicted by sign(<w, x>) (Joachims 2005)
    assert 1.0 - f1_score(y, model.predict(X)) <= model.objective_ / 100.0 + 1e-9
    assert f1_score(y, model.predict(X)) > 0.5


def test_refusals_name_the_field():
    X, y = _data(0)
    for est, field in [
        (PerfSVM(measure="precision_at_k"), "k"),
        (PerfSVM(measure="f1", k=2), "k"),
        (PerfSVM(measure="roc_auc", k=2), "k"),
        (PerfSVM(measure="precision_at_k", k=11), "k"),
        (PerfSVM(measure="precision_at_k", k=1, regularizer="l1"), "regularizer"),
        (PerfSVM(measure="precision_at_k", k=1, solver=CuttingPlane(risk_floor_cut=True)), "regularizer"),
    ]:
        with pytest.raises(InputError) as err:
            est.fit(X, y)
        assert err.value.field == field
