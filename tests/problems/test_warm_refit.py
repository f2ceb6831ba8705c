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


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), picks=st.lists(st.integers(0, 29), max_size=40), dicts=st.booleans())
def test_taking_sentences_equals_extracting_them(seed, picks, dicts):
    """``SequenceFeatures.take`` gives what the feature index gives those sentences: ids, values
    (real-valued feature dicts) and the conditioned bigrams' ids, token for token."""
    from problems.sequence.feature_dicts import DictFeatureIndex
    from problems.sequence.feature_index import FeatureIndex

    task = make_demo_tagging(seed=seed, n_train=30, n_test=1)
    X = task.X_train
    if dicts:
        X = [[{"w": row[0], "len": float(len(row[0])), "pos": row[1]} for row in s] for s in X]
        index = DictFeatureIndex(min_count=1)
    else:
        index = FeatureIndex(task.templates + "\nB01:%x[0,0]\n", min_count=1)  # a conditioned bigram too
    full = index.fit_transform(X)
    taken, direct = full.take(picks), index.transform([X[i] for i in picks])
    for name in full._fields:
        a, b = getattr(taken, name), getattr(direct, name)
        if isinstance(b, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=name)
        else:
            assert a == b, name
    if dicts:  # the numbers are lengths: real values wherever a word of length other than 1 is taken
        assert (taken.values is None) == all(len(X[i][t]["w"]) == 1 for i in picks for t in range(len(X[i])))
    else:
        assert taken.values is None


def test_the_refit_takes_the_paths_features_and_gives_the_same_model(monkeypatch):
    """The path extracts the features of every training sentence once and the refit takes them:
    the features are extracted once, not three times, and the model is the one a refit that
    extracts its own gives, bit for bit."""
    from problems import model_selection
    from problems.sequence.feature_index import FeatureIndex

    task = make_demo_tagging(seed=3, n_train=50, n_test=1)
    sizes = []
    real = FeatureIndex.fit_transform

    def counted(self, sentences):
        sizes.append(len(sentences))
        return real(self, sentences)

    monkeypatch.setattr(FeatureIndex, "fit_transform", counted)
    kw = dict(templates=task.templates, Cs=(10.0, 100.0), validation_fraction=0.2, extend=0)
    shared = SequenceTaggerCV(**kw).fit(task.X_train, task.y_train)
    assert sizes == [len(task.X_train)]  # one dictionary, built on every training sentence
    assert shared.validation_["refit"] and shared.validation_["refit_warm"]

    real_refit = model_selection.refit_at_chosen

    def own_features(*args, **kwargs):
        return real_refit(*args, **dict(kwargs, prepared=None))

    monkeypatch.setattr(model_selection, "refit_at_chosen", own_features)
    sizes.clear()
    own = SequenceTaggerCV(**kw).fit(task.X_train, task.y_train)
    assert sizes == [len(task.X_train)] * 2  # the path's extraction, then the refit's own
    np.testing.assert_array_equal(shared.coef_, own.coef_)
    assert shared.objective_ == own.objective_ and shared.n_iter_ == own.n_iter_
    assert shared.feature_index_.vocabulary_ == own.feature_index_.vocabulary_
