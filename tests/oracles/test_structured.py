"""The StructuredModel contract and its adapter StructuredOracle (issue 37): cuts against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_dot, slope_to_dense
from cutplane.protocols import CachingOracle, ExampleCutsOracle, ExampleOracle, Oracle, RiskFloorOracle
from oracles.structured import StructuredModel, StructuredOracle
from tests.oracles.structured_models import Categories, MultiLabelPairs, TinyChain, random_data


def dense(phi):
    return np.asarray(phi.toarray()).ravel() if sp.issparse(phi) else np.asarray(phi, dtype=float)


def brute_terms(model, x, y, w):
    """Every output's ``Delta + <w, Phi(y') - Phi(y)>`` of one example (enumerated)."""
    base = dense(model.joint_feature(x, y))
    return [(model.loss(y, yh) + float(w @ (dense(model.joint_feature(x, yh)) - base)), yh) for yh in model.outputs(x)]


def brute_risk(model, X, Y, w):
    return float(np.mean([max(v for v, _ in brute_terms(model, x, y, w)) for x, y in zip(X, Y)]))


MODELS = {
    "pairs": lambda: MultiLabelPairs(3, 2),
    "pairs-sparse": lambda: MultiLabelPairs(4, 2, sparse=True),
    "chain": lambda: TinyChain(2, 2),
    "chain3": lambda: TinyChain(3, 1),
    "categories": lambda: Categories(),
}


@settings(max_examples=25)
@given(name=st.sampled_from(sorted(MODELS)), seed=st.integers(0, 2**31 - 1), n=st.integers(1, 6))
def test_cut_matches_brute_force(name, seed, n):
    rng = np.random.default_rng(seed)
    model = MODELS[name]()
    X, Y = random_data(model, n, rng)
    oracle = StructuredOracle(model, X, Y)
    w = rng.normal(size=model.dim) * 2
    res = oracle(w)
    assert res.exact
    assert res.value == pytest.approx(brute_risk(model, X, Y, w), abs=1e-10)
    assert slope_dot(res.cut.slope, w) + res.cut.offset == pytest.approx(res.value, abs=1e-10)
    assert len(res.argmax) == n
    for _ in range(3):  # a minorant everywhere
        v = rng.normal(size=model.dim) * 3
        assert brute_risk(model, X, Y, v) >= slope_dot(res.cut.slope, v) + res.cut.offset - 1e-9
    ex = oracle.example_cuts(w)
    assert ex.slopes.shape == (n, model.dim) and sp.issparse(ex.slopes)
    for i, (x, y) in enumerate(zip(X, Y)):
        assert ex.values[i] == pytest.approx(max(v for v, _ in brute_terms(model, x, y, w)), abs=1e-10)
        assert ex.offsets[i] == pytest.approx(model.loss(y, ex.argmax[i]))
        row = np.asarray(ex.slopes[i].toarray()).ravel()
        assert row @ w + ex.offsets[i] == pytest.approx(ex.values[i], abs=1e-10)
    np.testing.assert_allclose(np.asarray(ex.slopes.mean(axis=0)).ravel(), slope_to_dense(res.cut.slope), atol=1e-12)


def test_sparse_features_give_sparse_slopes_and_dense_give_dense():
    rng = np.random.default_rng(0)
    for sparse in (True, False):
        model = MultiLabelPairs(3, 2, sparse=sparse)
        X, Y = random_data(model, 4, rng)
        res = StructuredOracle(model, X, Y)(rng.normal(size=model.dim))
        assert sp.issparse(res.cut.slope) == sparse
        if sparse:
            assert res.cut.slope.shape == (1, model.dim)


def test_protocols_and_attributes():
    model = TinyChain(2, 2)
    X, Y = random_data(model, 5, np.random.default_rng(1))
    oracle = StructuredOracle(model, X, Y, cache_size=2)
    for proto in (Oracle, RiskFloorOracle, ExampleCutsOracle, CachingOracle):
        assert isinstance(oracle, proto)
    assert isinstance(oracle.example_oracles(), ExampleOracle)
    assert (oracle.dim, oracle.n_samples) == (model.dim, 5)
    assert oracle.risk_lower_bound == 0.0 and oracle.example_lower_bound == 0.0
    np.testing.assert_array_equal(oracle.groups, model.groups)


def test_zero_weights_value_is_mean_max_loss():
    model = MultiLabelPairs(3, 2)
    X, Y = random_data(model, 5, np.random.default_rng(2))
    assert StructuredOracle(model, X, Y)(np.zeros(model.dim)).value == pytest.approx(3.0)


def test_default_loss_hamming_and_zero_one():
    m = Categories()
    assert m.loss("a", "a") == 0.0 and m.loss("a", "b") == 1.0
    assert m.loss(np.array([0, 1, 1]), np.array([1, 1, 0])) == 2.0
    assert m.loss((0, 1), (0, 1)) == 0.0 and m.loss((0, 1), (1, 1)) == 1.0
    assert m.loss([0, 1], [0, 1, 1]) == 1.0  # different shapes: 0/1
    assert m.loss(("x", 1), ("x", 2)) == 1.0


def test_default_argmax_enumerates_outputs():
    rng = np.random.default_rng(3)
    model = TinyChain(3, 2)
    for _ in range(5):
        x = rng.normal(size=(3, 2))
        w = rng.normal(size=model.dim)
        best = StructuredModel.argmax(model, x, w)  # the base's enumeration of outputs(x)
        scores = {tuple(y): float(w @ dense(model.joint_feature(x, y))) for y in model.outputs(x)}
        assert scores[tuple(best)] == pytest.approx(max(scores.values()))
        np.testing.assert_array_equal(model.argmax(x, w), best)  # the model's Viterbi agrees
        y = rng.integers(0, 3, size=3)
        la = model.loss_augmented_argmax(x, y, w)
        la_base = StructuredModel.loss_augmented_argmax(model, x, y, w)
        vals = {tuple(o): v for v, o in brute_terms(model, x, y, w)}
        assert vals[tuple(la)] == pytest.approx(vals[tuple(la_base)]) == pytest.approx(max(vals.values()))


def test_predict_is_the_argmax():
    rng = np.random.default_rng(4)
    model = TinyChain(2, 2)
    X, Y = random_data(model, 7, rng)
    w = rng.normal(size=model.dim)
    for n_chunks in (1, 3):
        pred = StructuredOracle(model, X, Y, n_chunks=n_chunks).predict(X, w)
        assert len(pred) == 7
        for x, p in zip(X, pred):
            np.testing.assert_array_equal(p, model.argmax(x, w))


def test_chunks_do_not_change_the_cut():
    rng = np.random.default_rng(5)
    model = MultiLabelPairs(3, 2, sparse=True)
    X, Y = random_data(model, 9, rng)
    w = rng.normal(size=model.dim)
    a = StructuredOracle(model, X, Y, n_chunks=1)(w)
    b = StructuredOracle(model, X, Y, n_chunks=4)(w)
    assert a.value == pytest.approx(b.value, abs=1e-12)
    np.testing.assert_allclose(slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope), atol=1e-12)
