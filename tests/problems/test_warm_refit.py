"""The CV estimators' refit starts from the path's cuts (issue 38): the cuts of the risk of the
training part, scaled by ``n_train / n_all``, are cuts of the risk of all the examples, so the
warm refit is certified on its own and reaches the cold refit's optimum within the two gaps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from problems import CuttingPlane, SequenceTagger, SequenceTaggerCV
from problems.demo_data import make_demo_tagging


def agree(a_obj, a_low, b_obj, b_low, eps_sum):
    """Two certified runs of one problem: objectives within the sum of the gaps, each lower
    bound below the other's objective (up to rounding)."""
    slack = 1e-9 * max(1.0, abs(a_obj))
    return abs(a_obj - b_obj) <= eps_sum + slack and a_low <= b_obj + slack and b_low <= a_obj + slack


@settings(max_examples=4, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    n_train=st.integers(30, 60),
    regularizer=st.sampled_from(["mtl", "ssvm"]),
    fraction=st.sampled_from([0.2, 0.34]),
)
def test_the_warm_refit_reaches_the_cold_refits_optimum(seed, n_train, regularizer, fraction):
    task = make_demo_tagging(seed=seed, n_train=n_train, n_test=1)
    Cs = (1.0, 10.0) if regularizer == "ssvm" else (10.0, 100.0)
    cv = SequenceTaggerCV(
        templates=task.templates, regularizer=regularizer, Cs=Cs, validation_fraction=fraction, extend=0
    ).fit(task.X_train, task.y_train)
    assert cv.validation_["refit"] and cv.validation_["refit_warm"]
    assert cv.path_result_.working_set is None  # let go after the refit took it
    eps = float(cv.path_["eps"][cv.best_index_])
    cold = SequenceTagger(templates=task.templates, regularizer=regularizer, C=cv.C_, solver=CuttingPlane(eps=eps)).fit(
        task.X_train, task.y_train
    )
    assert cv.result_.status == cold.result_.status == "converged"
    C = cv.C_
    warm_obj, warm_low = cv.result_.objective * C, cv.result_.lower_bound * C
    cold_obj, cold_low = cold.result_.objective * C, cold.result_.lower_bound * C
    assert warm_obj - warm_low <= eps * (1 + 1e-9) and cold_obj - cold_low <= eps * (1 + 1e-9)
    assert agree(warm_obj, warm_low, cold_obj, cold_low, 2 * eps)
    assert cv.coef_.shape == cold.coef_.shape  # the same coordinates: features and labels of all examples


def test_the_refit_is_cold_without_a_path_working_set():
    task = make_demo_tagging(seed=1, n_train=40, n_test=1)
    solver = CuttingPlane(method="n-slack")  # a working set per example: no shared cuts to hand on
    cv = SequenceTaggerCV(templates=task.templates, regularizer="ssvm", Cs=(1.0, 10.0), extend=0, solver=solver)
    cv.fit(task.X_train, task.y_train)
    assert cv.validation_["refit"] and not cv.validation_["refit_warm"]


def test_a_path_followed_by_a_refit_has_the_refits_features():
    """With a refit to follow, the path's features and labels are those of all the training
    sentences (observations only: the refit's coordinates); without one, those of the part it
    trains on, as when that part and the validation data are given apart."""
    task = make_demo_tagging(seed=2, n_train=40, n_test=1)
    kept = SequenceTaggerCV(templates=task.templates, Cs=(10.0, 100.0), extend=0, refit=False)
    kept.fit(task.X_train, task.y_train)
    refit = SequenceTaggerCV(templates=task.templates, Cs=(10.0, 100.0), extend=0).fit(task.X_train, task.y_train)
    single = SequenceTagger(templates=task.templates, C=refit.C_).fit(task.X_train, task.y_train)
    assert refit.feature_index_.n_features_ == single.feature_index_.n_features_
    assert kept.feature_index_.n_features_ <= refit.feature_index_.n_features_
    assert not kept.validation_.get("refit", False)  # no refit: the model is the path's


@pytest.mark.parametrize("factor", [0.5, 0.9])
def test_scaled_cuts_are_cuts_of_the_whole_risk(factor):
    """The premise: a cut of a part's mean risk times the part's share is below the whole
    mean risk (the rest's risk is >= 0), at random points."""
    from oracles.structured import StructuredOracle
    from tests.oracles.structured_models import MultiLabelPairs, random_data

    rng = np.random.default_rng(0)
    model = MultiLabelPairs(3, 2)
    X, Y = random_data(model, 20, rng)
    n_part = int(factor * 20)
    part, whole = StructuredOracle(model, X[:n_part], Y[:n_part]), StructuredOracle(model, X, Y)
    for _ in range(20):
        at = rng.normal(size=model.dim) * 2
        cut = part(at).cut
        for _ in range(5):
            w = rng.normal(size=model.dim) * 3
            below = (n_part / 20) * (float(cut.slope @ w) + cut.offset)
            assert below <= whole(w).value + 1e-12
