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
    index = DictFeatureIndex(numbers="bins")  # the binning option (real values are the default)
    feats = index.fit_transform(X)
    assert feats.values is None
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


# -- real-valued numbers (CRFsuite's attribute values) -------------------------------------------
def test_numbers_are_real_valued_features():
    X = [
        [{"w": "the", "bias": 1.0, "len": 3, "BOS": True}, {"w": "cat", "bias": 1.0, "len": 30.5, "neg": -0.25}],
        [{"w": "a", "bias": True, "len": 0}, {"w": "dog", "bias": 1.0, "len": np.float32(7.0)}],
    ]
    index = DictFeatureIndex()
    feats = index.fit_transform(X)
    names = index.feature_names()
    # one feature per numeric key, named by the key (no bins); True and 1.0 are the same feature
    assert "len" in names and "neg" in names and not any("<" in n for n in names)
    assert index.numeric_edges_ == {} and index.feature_counts_[index.vocabulary_["bias"]] == 4
    assert feats.values is not None and feats.values.shape == feats.indices.shape
    dense = feats.to_csr().toarray()
    np.testing.assert_array_equal(dense[:, index.vocabulary_["len"]], [3.0, 30.5, 0.0, 7.0])  # 0 gives nothing
    np.testing.assert_array_equal(dense[:, index.vocabulary_["neg"]], [0.0, -0.25, 0.0, 0.0])
    np.testing.assert_array_equal(dense[:, index.vocabulary_["bias"]], [1.0, 1.0, 1.0, 1.0])
    # an unseen value is the same feature with its own value; unseen keys and strings give nothing
    new = index.transform([[{"w": "zebra", "len": 1e6, "other": 2.0}]])
    assert [names[i] for i in new.indices] == ["len"] and list(new.values) == [1e6]
    # a corpus whose numbers are all 1 (or True) has no values: the integer kernels
    assert DictFeatureIndex().fit_transform([[{"a": 1.0, "b": True, "c": "x"}]]).values is None
    with pytest.raises(InputError, match="numbers"):
        DictFeatureIndex(numbers="quantiles")


def _with_numbers(D, rng, scale=1.0):
    """The dicts with a real-valued key "num" correlated with the label-bearing column U00."""
    out = []
    for sent in D:
        out.append([{**tok, "num": scale * (len(tok["U00"]) + float(rng.uniform(-0.5, 0.5)))} for tok in sent])
    return out


def test_numbers_all_one_train_the_indicator_model(demo):
    X, y, X_test = demo
    solver = CuttingPlane(eps=1e-3)
    D = as_dicts(X)
    ones = [[{**tok, "one": 1.0} for tok in sent] for sent in D]
    flags = [[{**tok, "one": True} for tok in sent] for sent in D]
    a = SequenceTagger(C=100.0, solver=solver).fit(ones, y)
    b = SequenceTagger(C=100.0, solver=solver).fit(flags, y)
    assert a.objective_ == b.objective_ and a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.predict(as_dicts(X_test)) == b.predict(as_dicts(X_test))


def test_real_valued_tagger_scaling_save_load_and_unseen_values(demo, tmp_path):
    X, y, X_test = demo
    rng = np.random.default_rng(0)
    D, D_test = _with_numbers(as_dicts(X), rng), _with_numbers(as_dicts(X_test), rng)
    est = SequenceTagger(C=100.0, solver=CuttingPlane(eps=1e-3)).fit(D, y)
    idx = est.feature_index_
    assert "num" in est.template_weights_ and idx.feature_names()[idx.vocabulary_["num"]] == "num"
    pred = est.predict(D_test)
    # the value multiplies the weights: the values times 2 and the feature's weights times 1/2 predict the same
    K = len(est.labels_)
    f = idx.vocabulary_["num"]
    half = clone(est)
    half.__dict__.update({k: v for k, v in est.__dict__.items() if k.endswith("_")})
    half.coef_ = est.coef_.copy()
    half.coef_[f * K : (f + 1) * K] /= 2
    twice = [[{**tok, "num": 2 * tok["num"]} for tok in sent] for sent in D_test]
    assert half.predict(twice) == pred
    # save / load: the same model, the same predictions, values unseen in training included
    path = est.save(tmp_path / "real.npz")
    back = SequenceTagger.load(path)
    assert back.feature_index_.numbers == "real"
    np.testing.assert_array_equal(back.coef_, est.coef_)
    assert back.predict(D_test) == pred
    far = [[{**tok, "num": 1e3 * tok["num"]} for tok in sent] for sent in D_test]  # far outside training
    assert back.predict(far) == est.predict(far)
    # the far values dominate the unary scores: the labels follow the num feature's weights alone
    W = est.coef_[: idx.n_features_ * K].reshape(idx.n_features_, K)
    assert est.predict([[{"num": 1e6}]]) == [[est.labels_.labels[int(np.argmax(W[f]))]]]


def test_binned_model_files_still_load(demo, tmp_path):
    """A model written before real values (no "numbers" in its feature_dicts entry) reads back binned."""
    from problems.model_io import load_model, save_model

    X, y, _ = demo
    D = _with_numbers(as_dicts(X), np.random.default_rng(1))
    est = SequenceTagger(C=10.0, solver=CuttingPlane(eps=1e-2)).fit(D, y)
    est.save(tmp_path / "m.npz")
    arrays, meta = load_model(tmp_path / "m.npz")
    assert meta["feature_dicts"]["numbers"] == "real"
    del meta["feature_dicts"]["numbers"]  # as an older file: read with bins
    for k in ("format", "format_version", "checksum", "written_by", "arrays"):
        meta.pop(k, None)
    save_model(tmp_path / "old.npz", arrays, meta)
    old = SequenceTagger.load(tmp_path / "old.npz")
    assert old.feature_index_.numbers == "bins"


def test_real_values_train_with_spom_and_n_slack(demo):
    """Every solver reaches the valued oracle: SPOM (per-sentence subgradients) and the n-slack
    method (one cut per sentence), and both learn from the real-valued key."""
    from problems.solvers import SPOM

    X, y, _ = demo
    D = _with_numbers(as_dicts(X), np.random.default_rng(2))
    spom = SequenceTagger(C=100.0, solver=SPOM(epochs=3, seed=0)).fit(D, y)
    nslack = SequenceTagger(C=100.0, regularizer="ssvm", solver=CuttingPlane(method="n-slack", eps=1.0)).fit(D, y)
    for est in (spom, nslack):
        f, K = est.feature_index_.vocabulary_["num"], len(est.labels_)
        assert np.any(est.coef_[f * K : (f + 1) * K] != 0)
        assert est.score(D, y) > 0.5
