"""The vectorised path's reuse between calls (issue 37): an example whose output did not change
keeps its row; the 1-slack sum is updated by the changed rows when the entries are integers. The
answers equal a fresh oracle's at every query, whatever the sequence of queries; and the model's
optional ``batch_joint_feature_difference`` gives the joint features' answers, checked."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import oracles.structured_chunk as structured_chunk
from cutplane.cuts import slope_to_dense
from cutplane.exceptions import InputError
from oracles.structured import StructuredModel, StructuredOracle, batch_forms
from tests.oracles.structured_models import (
    ApproximateWorst,
    DifferenceNotZero,
    DifferenceWrong,
    PairsBatch,
    PairsDifference,
    random_data,
)

MODELS = {
    "batch": lambda: PairsBatch(3, 2),
    "batch-sparse": lambda: PairsBatch(3, 2, sparse=True),
    "difference": lambda: PairsDifference(3, 2),
    "difference-sparse": lambda: PairsDifference(4, 2, sparse=True),
}


def integer_inputs(X, rng):
    """The inputs replaced by small integers (integer joint features: the exact sum update)."""
    return [rng.integers(-2, 3, size=np.shape(x)).astype(np.float64) for x in X]


def queries(rng, dim, n_queries):
    """A sequence of queries as a cutting-plane method makes: repeats, small steps, jumps."""
    w = np.zeros(dim)
    out = [w]
    for _ in range(n_queries):
        move = rng.integers(3)
        w = w if move == 0 else w + rng.normal(size=dim) * (0.05 if move == 1 else 2.0)
        out.append(w)
    return out


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(MODELS)),
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 30),
    n_chunks=st.integers(1, 3),
    integer=st.booleans(),
)
def test_reused_rows_give_a_fresh_oracles_answers(name, seed, n, n_chunks, integer):
    rng = np.random.default_rng(seed)
    model = MODELS[name]()
    X, Y = random_data(model, n, rng)
    if integer:
        X = integer_inputs(X, rng)
    kept = StructuredOracle(model, X, Y, n_chunks=n_chunks)
    for w in queries(rng, model.dim, 8):
        fresh = StructuredOracle(model, X, Y, n_chunks=n_chunks)
        a, b = kept(w), fresh(w)
        assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-12)
        assert a.cut.offset == pytest.approx(b.cut.offset, rel=1e-12, abs=1e-12)
        da, db = slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope)
        if integer:  # counts: the updated sum is the fresh one, exactly
            np.testing.assert_array_equal(da, db)
        else:
            np.testing.assert_allclose(da, db, rtol=1e-12, atol=1e-12)
        for u, v in zip(a.argmax, b.argmax):
            np.testing.assert_array_equal(u, v)
        ea, eb = kept.example_cuts(w), fresh.example_cuts(w)
        np.testing.assert_allclose(ea.values, eb.values, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(ea.slopes.toarray(), eb.slopes.toarray(), rtol=1e-12, atol=1e-12)


def test_the_sum_is_updated_from_the_changed_rows_with_integer_features(monkeypatch):
    rng = np.random.default_rng(3)
    model = PairsBatch(3, 2, sparse=True)
    X, Y = random_data(model, 60, rng)
    X = integer_inputs(X, rng)
    oracle = StructuredOracle(model, X, Y)
    w = rng.normal(size=model.dim)
    first = oracle(w)
    merged = []
    real = structured_chunk.merge_sorted_sums

    def counting(*args):
        merged.append(1)
        return real(*args)

    monkeypatch.setattr(structured_chunk, "merge_sorted_sums", counting)
    again = oracle(w)  # no output changed: the last sum, updated by nothing
    assert merged, "the repeated query did not take the update"
    np.testing.assert_array_equal(slope_to_dense(first.cut.slope), slope_to_dense(again.cut.slope))
    merged.clear()
    X_real = random_data(model, 60, rng)[0]  # real inputs: the sum is taken afresh
    oracle = StructuredOracle(model, X_real, Y)
    oracle(w)
    oracle(w)
    assert not merged


class Sometimes(ApproximateWorst):
    """An approximate model: the least violated output when ``worst`` (set by the test), else
    the exact loss-augmented argmax (the enumeration's)."""

    worst = False

    def loss_augmented_argmax(self, x, y, w):
        if self.worst:
            return super().loss_augmented_argmax(x, y, w)
        return StructuredModel.loss_augmented_argmax(self, x, y, w)


def test_an_approximate_models_replaced_outputs_are_looked_at_again():
    rng = np.random.default_rng(4)
    model = Sometimes(3, 2)
    X, Y = random_data(model, 6, rng)
    oracle = StructuredOracle(model, X, Y, batch=True)
    for w in queries(rng, model.dim, 12):
        model.worst = bool(rng.integers(2))
        a = oracle(w)
        b = StructuredOracle(model, X, Y, batch=True)(w)
        assert a.value == pytest.approx(b.value, abs=1e-12)
        np.testing.assert_array_equal(slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope))
        for u, v in zip(a.argmax, b.argmax):
            np.testing.assert_array_equal(u, v)
    assert oracle.n_replaced > 0  # the sequence did replace outputs


def test_the_difference_form_is_a_batch_form_with_a_default():
    assert batch_forms(PairsDifference(3, 2)) == {"batch_joint_feature", "batch_joint_feature_difference", "batch_loss"}
    rng = np.random.default_rng(5)
    for sparse in (False, True):
        model = PairsBatch(3, 2, sparse=sparse)
        X, Y = random_data(model, 5, rng)
        Y_hat = [1 - y for y in Y]
        default = StructuredModel.batch_joint_feature_difference(model, X, Y, Y_hat)
        direct = PairsDifference(3, 2, sparse=sparse).batch_joint_feature_difference(X, Y, Y_hat)
        assert sp.issparse(default) == sparse
        ref = np.array([model.joint_feature(x, yh) - model.joint_feature(x, y) for x, y, yh in zip(X, Y, Y_hat)])
        ref = np.array([np.asarray(sp.csr_matrix(r).toarray()).ravel() for r in ref]) if sparse else ref
        np.testing.assert_allclose(sp.csr_matrix(default).toarray(), ref, atol=1e-15)
        np.testing.assert_allclose(sp.csr_matrix(direct).toarray(), ref, atol=1e-15)


def test_a_wrong_difference_form_is_refused_naming_it():
    rng = np.random.default_rng(6)
    X, Y = random_data(PairsBatch(3, 2), 5, rng)
    with pytest.raises(
        InputError, match=r"DifferenceNotZero\.batch_joint_feature_difference \(example 0\): is not zero"
    ) as err:
        StructuredOracle(DifferenceNotZero(3, 2), X, Y)
    assert err.value.field == "batch_joint_feature_difference"
    oracle = StructuredOracle(DifferenceWrong(3, 2), X, Y)
    with pytest.raises(
        InputError, match=r"DifferenceWrong\.batch_joint_feature_difference \(example \d\): differs"
    ) as err:
        oracle(rng.normal(size=oracle.dim))
    assert err.value.field == "batch_joint_feature_difference"
    unchecked = StructuredOracle(DifferenceWrong(3, 2), X, Y, check=False)  # the user's choice: not compared
    at_zero = unchecked(np.zeros(unchecked.dim))
    assert at_zero.value == pytest.approx(at_zero.cut.offset)
