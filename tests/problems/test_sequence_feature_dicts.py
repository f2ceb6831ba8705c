"""SequenceTagger on sklearn-crfsuite's input (per-token feature dicts, templates=None).

The central check: feature dicts that hold the same features as a set of CRF++ templates train
the same model (objective, bounds, predictions, template weights by name), so the dict path
reuses the templates' oracle and solver unchanged. Then the value types, the groups, and the
refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from cutplane.exceptions import InputError
from problems import SequenceTagger, SequenceTaggerCV
from problems.demo_data import make_demo_tagging
from problems.sequence.feature_dicts import N_NUMERIC_BINS, DictFeatureIndex, check_feature_dicts
from problems.solvers import CuttingPlane

TEMPLATES = "U00:%x[0,0]\nU01:%x[0,1]\nU10:%x[-1,0]\nB\n"


def as_dicts(X):
    """The features of TEMPLATES as dicts: U00 and U01 the token's columns 0 and 1, U10 column 0 of
    the previous token (CRF++'s _B-1 before the sentence)."""
    return [
        [{"U00": row[0], "U01": row[1], "U10": sent[t - 1][0] if t else "_B-1"} for t, row in enumerate(sent)]
        for sent in X
    ]


@pytest.fixture(scope="module")
def demo():
    t = make_demo_tagging(seed=1, n_train=40, n_test=15)
    return [list(s) for s in t.X_train], [list(s) for s in t.y_train], [list(s) for s in t.X_test]


def test_dicts_train_the_templates_model(demo):
    X, y, X_test = demo
    solver = CuttingPlane(eps=1e-3)
    a = SequenceTagger(TEMPLATES, C=100.0, min_count=2, solver=solver).fit(X, y)
    b = SequenceTagger(C=100.0, min_count=2, solver=solver).fit(as_dicts(X), y)
    assert b.feature_index_.n_features_ == a.feature_index_.n_features_
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-9)
    assert b.lower_bound_ == pytest.approx(a.lower_bound_, rel=1e-9)
    assert b.n_iter_ == a.n_iter_
    assert b.predict(as_dicts(X_test)) == a.predict(X_test)
    assert list(b.template_weights_) == ["U00", "U01", "U10", "B"]  # the dict keys, then the transitions
    for name, mu in a.template_weights_.items():
        assert b.template_weights_[name] == pytest.approx(mu, abs=1e-7)
    # the same feature, renamed: template "U00:the" is dict feature "U00=the"
    names_a = {s.replace(":", "=", 1) for s in a.feature_index_.feature_names()}
    assert set(b.feature_index_.feature_names()) == names_a


def test_value_types_and_groups():
    X = [
        [
            {"w": "the", "bias": 1.0, "BOS": True, "up": False, "sfx": ["e", "he"], "len": 3},
            {"w": "cat", "bias": 1.0, "up": np.bool_(True), "sfx": ("t", "at", "at"), "len": 30.5},
        ],
        [{"w": "a", "bias": 1.0, "len": 0, "up": False}, {"w": "dog", "bias": 1.0, "len": np.float32(7.0)}],
    ]
    index = DictFeatureIndex()
    feats = index.fit_transform(X)
    assert index.template_names == ["w", "bias", "BOS", "sfx", "len", "up", "B"]
    names = index.feature_names()
    assert "BOS" in names and "bias" in names and "up" in names  # True and a constant number: indicators
    assert "sfx=at" in names and not any(n.startswith("up=") for n in names)
    # ids contiguous per group, in the order of template_names
    assert np.all(np.diff(index.feature_groups_) >= 0)
    assert index.group_offsets_[-1] == index.n_features_ and index.group_offsets_[-2] == index.n_features_
    csr = feats.to_csr()
    at = index.vocabulary_["sfx=at"]
    assert csr[1, at] == 2  # a repeated item counts twice
    assert feats.indptr[3] - feats.indptr[2] == 2  # "a": w=a and bias; len 0 and False give nothing
    # numbers: the nonzero values 3, 30.5, 7 in quantile bins (edges at training values), each in its own
    assert list(index.numeric_edges_["len"]) == [7.0, 30.5]
    len_names = [index.feature_names()[i] for i in csr[[0, 1, 3]].indices if index.feature_groups_[i] == 4]
    assert len(set(len_names)) == 3 and all("len" in n for n in len_names)
    assert len(index.numeric_edges_["len"]) <= N_NUMERIC_BINS - 1 and len(index.numeric_edges_["bias"]) == 0
    # transform: the same features, unseen strings ignored, a number falls in its bin
    again = index.transform(X)
    np.testing.assert_array_equal(again.indices, feats.indices)
    np.testing.assert_array_equal(again.indptr, feats.indptr)
    # the largest value's bin takes every larger number; unseen strings and keys give nothing
    new = index.transform([[{"w": "zebra", "len": 1e6, "other": "x"}]])
    assert [names[i] for i in new.indices] == [names[i] for i in csr[1].indices if index.feature_groups_[i] == 4]


feature_value = st.one_of(
    st.sampled_from(["a", "b", "c"]),
    st.booleans(),
    st.floats(-5, 5, allow_nan=False).filter(lambda v: v != 0),
    st.lists(st.sampled_from(["x", "y"]), max_size=3),
)
token = st.dictionaries(st.sampled_from(["k1", "k2", "k3", "k4"]), feature_value, max_size=4)
corpus = st.lists(st.lists(token, min_size=1, max_size=5), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(corpus, st.integers(1, 3))
def test_transform_is_fit_transform_and_counts(X, min_count):
    index = DictFeatureIndex(min_count=min_count)
    feats = index.fit_transform(X)
    again = index.transform(X)
    np.testing.assert_array_equal(again.indptr, feats.indptr)
    np.testing.assert_array_equal(again.indices, feats.indices)
    assert feats.sentence_ptr[-1] == sum(len(s) for s in X) == feats.n_tokens
    np.testing.assert_array_equal(np.bincount(feats.indices, minlength=index.n_features_), index.feature_counts_)
    assert np.all(index.feature_counts_ >= min_count)
    for t in range(feats.n_tokens):  # ids sorted within a token
        assert np.all(np.diff(feats.indices[feats.indptr[t] : feats.indptr[t + 1]]) >= 0)
    assert index.coordinate_groups(3).shape == (index.dim(3),)


def test_clone_cv_and_validation_on_dicts(demo):
    X, y, X_test = demo
    D = as_dicts(X)
    est = clone(SequenceTagger(C=10.0))
    assert est.get_params()["templates"] is None
    cv = SequenceTaggerCV(Cs=[1.0, 10.0], validation_fraction=0.25, extend=0).fit(D, y)
    assert cv.C_ in (1.0, 10.0) and len(cv.path_["C"]) == 2
    assert all(0.0 <= s <= 1.0 for s in cv.path_["validation_score"])
    assert len(cv.predict(as_dicts(X_test))) == len(X_test)
    # validation_data given as feature dicts too
    cv2 = SequenceTaggerCV(Cs=[10.0], extend=0).fit(D[:30], y[:30], validation_data=(D[30:], y[30:]))
    assert cv2.validation_["n_examples"] == len(D) - 30


@pytest.mark.parametrize(
    "X, match",
    [
        ([[{"a": "x"}], [("x", "y")]], "token rows"),  # a sentence of rows after one of dicts
        ([[{"a": "x"}, ("x",)]], "feature dict"),
        ([[{"a": None}]], "NoneType"),
        ([[{"a": float("nan")}]], "finite"),
        ([[{"a": {"b": 1.0}}]], "dict"),
        ([[{"a": ["x", 1]}]], "list"),
        ([[{1: "x"}]], "feature names"),
        ([[{"B": "x"}]], "transitions"),
        ([[{"a": "x"}], []], "no tokens"),
    ],
)
def test_bad_feature_dicts(X, match):
    y = [["O"] * len(s) for s in X]
    with pytest.raises(InputError, match=match):
        SequenceTagger(C=1.0).fit(X, y)


def test_refusals(demo, tmp_path):
    X, y, _ = demo
    D = as_dicts(X)
    with pytest.raises(InputError, match="templates=None"):
        SequenceTagger(TEMPLATES).fit(D, y)
    with pytest.raises(InputError, match="templates"):
        SequenceTagger().fit(X, y)
    with pytest.raises(InputError, match="labels"):
        check_feature_dicts(D[:2], [y[0], y[1][:-1]])
    est = SequenceTagger(C=1.0).fit(D, y)
    with pytest.raises(InputError, match="fitted on feature dicts"):
        est.predict(X)
    rows = SequenceTagger(TEMPLATES, C=1.0).fit(X, y)
    with pytest.raises(InputError, match="fitted on token rows"):
        rows.predict(D)
