"""LinearSVM's ``bias``: liblinear's ``-B`` (an appended constant feature, its weight regularised),
checked against liblinear through scikit-learn's LinearSVC on tiny data, and kept by model files."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.svm import LinearSVC

from problems.linear.svm import LinearSVM
from problems.solvers import CuttingPlane


def _objective(X, y_idx, coef, intercept, bias, C, n_classes):
    """``F = 1/2 ||[W, intercept / bias]||^2 + C * mean loss`` (hinge or Crammer-Singer)."""
    W = np.c_[coef, intercept / bias]
    n = X.shape[0]
    if n_classes == 2:
        margins = np.where(y_idx == 1, 1.0, -1.0) * (X @ coef[0] + intercept[0])
        loss = np.maximum(0.0, 1.0 - margins)
    else:
        S = X @ coef.T + intercept
        loss = np.max(S + (np.arange(n_classes)[None, :] != y_idx[:, None]), axis=1) - S[np.arange(n), y_idx]
    return 0.5 * float(np.sum(W * W)) + C * float(loss.mean())


def _data(seed, n, d, n_classes):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)  # every class present
    X = rng.standard_normal((n, d)) + 1.0  # off-centre: the bias matters
    X[np.arange(n), y % d] += 1.5
    return X, y


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 1000),
    n_classes=st.sampled_from([2, 3]),
    bias=st.sampled_from([0.5, 1.0, 3.0]),
    C=st.sampled_from([0.5, 5.0]),
)
def test_bias_objective_is_liblinears(seed, n_classes, bias, C):
    n, d = 24, 3
    X, y = _data(seed, n, d, n_classes)
    ours = LinearSVM(C=C, bias=bias, solver=CuttingPlane(eps=1e-7, max_iter=5000)).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear's ConvergenceWarning on separable draws
        lib = LinearSVC(
            C=C / n,  # liblinear weighs the summed loss
            loss="hinge",
            multi_class="ovr" if n_classes == 2 else "crammer_singer",
            fit_intercept=True,
            intercept_scaling=bias,
            tol=1e-10,
            max_iter=200_000,
        ).fit(X, y)
    F_lib = _objective(X, y, lib.coef_, lib.intercept_, bias, C, n_classes)
    F_ours = _objective(X, y, ours.coef_, ours.intercept_, bias, C, n_classes)
    # our reported objective is F at our weights, intercept_ = bias * (weight of the constant feature)
    assert ours.objective_ == pytest.approx(F_ours, rel=1e-9, abs=1e-12)
    # the same problem: liblinear's solution is certified near-optimal by our lower bound
    assert ours.lower_bound_ <= F_lib + 1e-9
    assert F_lib == pytest.approx(ours.objective_, abs=1e-5)
    assert ours.gap_ <= 1e-7
    np.testing.assert_allclose(ours.decision_function(X), lib.decision_function(X), atol=5e-3)


def test_bias_model_file_round_trip(tmp_path):
    X, y = _data(3, 30, 4, 3)
    est = LinearSVM(C=2.0, bias=2.5, solver=CuttingPlane(eps=1e-6)).fit(X, y)
    assert np.all(est.intercept_ != 0)
    path = est.save(tmp_path / "m.npz")
    back = LinearSVM.load(path)
    assert back.bias == 2.5 and back.get_params()["bias"] == 2.5
    np.testing.assert_array_equal(back.intercept_, est.intercept_)
    np.testing.assert_array_equal(back.coef_, est.coef_)
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    plain = LinearSVM(C=2.0, solver=CuttingPlane(eps=1e-6)).fit(X, y)
    assert LinearSVM.load(plain.save(tmp_path / "p.npz")).bias is None
    np.testing.assert_array_equal(plain.intercept_, 0.0)
