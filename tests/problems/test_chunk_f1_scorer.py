"""problems.metrics.chunk_f1_scorer as scikit-learn's ``scoring=``: GridSearchCV and cross_val_score on
the demo tagging task with chunk tags, each fold's score checked against chunk_f1 computed by hand."""

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from problems import SequenceTagger
from problems.demo_data import make_demo_tagging
from problems.metrics import ChunkF1Scorer, chunk_f1, chunk_f1_scorer

# the demo's labels L0..L3 read as chunk tags (IOB2 with two types)
TAGS = {"L0": "O", "L1": "B-X", "L2": "I-X", "L3": "B-Y"}


@pytest.fixture(scope="module")
def task():
    t = make_demo_tagging(seed=3, n_train=60, n_test=20)
    X = [list(s) for s in t.X_train]
    y = [[TAGS[lab] for lab in s] for s in t.y_train]
    return t.templates, X, y


def by_hand(est, X, y):
    return chunk_f1(y, est.predict(X)).f1 / 100.0


def test_scorer_is_chunk_f1_fraction(task):
    templates, X, y = task
    est = SequenceTagger(templates, C=100.0).fit(X[:40], y[:40])
    s = chunk_f1_scorer(est, X[40:], y[40:])
    assert s == by_hand(est, X[40:], y[40:])
    assert 0.0 < s <= 1.0
    assert ChunkF1Scorer(scheme="conlleval")(est, X[40:], y[40:]) == s  # IOB2: the same reading
    assert chunk_f1_scorer(est, X[40:], y[40:]) != est.score(X[40:], y[40:])  # not token accuracy


def test_cross_val_score_per_fold(task):
    templates, X, y = task
    est = SequenceTagger(templates, C=100.0)
    cv = KFold(3)
    scores = cross_val_score(est, X, y, cv=cv, scoring=chunk_f1_scorer)
    expected = []
    for train, test in cv.split(X):
        fitted = clone(est).fit([X[i] for i in train], [y[i] for i in train])
        expected.append(by_hand(fitted, [X[i] for i in test], [y[i] for i in test]))
    np.testing.assert_allclose(scores, expected, rtol=0, atol=1e-12)


def test_grid_search_chooses_by_chunk_f1(task):
    templates, X, y = task
    grid = {"C": [1.0, 100.0]}
    search = GridSearchCV(SequenceTagger(templates), grid, scoring=chunk_f1_scorer, cv=KFold(2))
    search.fit(X, y)
    means = search.cv_results_["mean_test_score"]
    assert all(math.isfinite(m) and 0.0 <= m <= 1.0 for m in means)
    assert search.best_params_ == {"C": grid["C"][int(np.argmax(means))]}
    for k, C in enumerate(grid["C"]):
        scores = cross_val_score(SequenceTagger(templates, C=C), X, y, cv=KFold(2), scoring=chunk_f1_scorer)
        np.testing.assert_allclose(search.cv_results_["mean_test_score"][k], scores.mean(), atol=1e-12)
    # the refitted model scores as the scorer says
    assert search.score(X, y) == by_hand(search.best_estimator_, X, y)


def test_named_sklearn_scorer_gives_nan(task):
    # the failure the scorer is for: scikit-learn's f1 reads one label per sample
    templates, X, y = task
    with pytest.warns(UserWarning, match="[Ss]coring failed"):
        scores = cross_val_score(SequenceTagger(templates, C=100.0), X[:30], y[:30], cv=KFold(2), scoring="f1_macro")
    assert np.isnan(scores).all()
