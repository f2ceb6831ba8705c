"""The StructuredModel batch forms and the adapter's vectorised path (issue 37): the same answers
as the per-example path (cuts, rows, cached cuts, outputs, errors), the batch forms checked."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_to_dense
from cutplane.exceptions import InputError
from oracles.structured import StructuredModel, StructuredOracle, batch_forms
from tests.oracles.structured_models import (
    ApproximateRestricted,
    ApproximateWorst,
    BatchDisagrees,
    BatchNegativeLoss,
    BatchNonFinite,
    BatchWrongShape,
    Categories,
    MultiLabelPairs,
    NegativeLoss,
    NonFinite,
    PairsBatch,
    Restricted,
    TinyChain,
    WorstArgmax,
    WrongLength,
    random_data,
)

MODELS = {
    "pairs": lambda: MultiLabelPairs(3, 2),
    "pairs-sparse": lambda: MultiLabelPairs(4, 2, sparse=True),
    "chain": lambda: TinyChain(2, 2),
    "chain3": lambda: TinyChain(3, 1),
    "categories": lambda: Categories(),
    "batch-pairs": lambda: PairsBatch(3, 2),
    "batch-pairs-sparse": lambda: PairsBatch(3, 2, sparse=True),
}


def assert_same_cut(a, b):
    assert a.value == pytest.approx(b.value, rel=1e-12, abs=1e-12)
    assert a.cut.offset == b.cut.offset and a.exact == b.exact
    assert sp.issparse(a.cut.slope) == sp.issparse(b.cut.slope)
    np.testing.assert_array_equal(slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope))


def assert_same_outputs(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        if isinstance(u, np.ndarray):
            np.testing.assert_array_equal(u, v)
        else:
            assert u == v


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(MODELS)),
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 7),
    n_chunks=st.integers(1, 3),
    cache_size=st.sampled_from([0, 2]),
    check=st.booleans(),
)
def test_both_paths_give_identical_cuts_rows_and_cached_cuts(name, seed, n, n_chunks, cache_size, check):
    rng = np.random.default_rng(seed)
    model = MODELS[name]()
    X, Y = random_data(model, n, rng)
    kw = dict(n_chunks=n_chunks, cache_size=cache_size, check=check)
    per_example = StructuredOracle(model, X, Y, batch=False, **kw)
    vectorised = StructuredOracle(model, X, Y, batch=True, **kw)
    assert vectorised.vectorised and not per_example.vectorised
    for scale in (0.0, 0.3, 3.0):
        w = rng.normal(size=model.dim) * scale
        a, b = per_example(w), vectorised(w)
        assert_same_cut(a, b)
        assert_same_outputs(a.argmax, b.argmax)
        ea, eb = per_example.example_cuts(w), vectorised.example_cuts(w)
        np.testing.assert_array_equal(ea.offsets, eb.offsets)
        np.testing.assert_allclose(ea.values, eb.values, rtol=1e-12, atol=1e-12)
        assert (ea.slopes != eb.slopes).nnz == 0 and ea.exact == eb.exact
        np.testing.assert_array_equal(ea.slopes.indptr, eb.slopes.indptr)
        assert_same_outputs(ea.argmax, eb.argmax)
        if cache_size:
            ca, cb = per_example.cached_cut(w), vectorised.cached_cut(w)
            assert ca.value == pytest.approx(cb.value, rel=1e-12, abs=1e-12)
            np.testing.assert_array_equal(slope_to_dense(ca.cut.slope), slope_to_dense(cb.cut.slope))


def test_batch_forms_choose_the_vectorised_path():
    assert batch_forms(MultiLabelPairs(2, 2)) == frozenset()
    assert batch_forms(PairsBatch(2, 2)) == {"batch_joint_feature", "batch_loss"}
    rng = np.random.default_rng(0)
    X, Y = random_data(MultiLabelPairs(2, 2), 4, rng)
    assert not StructuredOracle(MultiLabelPairs(2, 2), X, Y).vectorised
    assert StructuredOracle(PairsBatch(2, 2), X, Y).vectorised
    assert not StructuredOracle(PairsBatch(2, 2), X, Y, batch=False).vectorised
    with pytest.raises(InputError) as err:
        StructuredOracle(PairsBatch(2, 2), X, Y, batch="yes")
    assert err.value.field == "batch"


def test_the_batch_model_gives_the_per_example_model_answers():
    rng = np.random.default_rng(1)
    for sparse in (False, True):
        X, Y = random_data(MultiLabelPairs(3, 2), 6, rng)
        ref = StructuredOracle(MultiLabelPairs(3, 2, sparse=sparse), X, Y, n_chunks=2)
        fast = StructuredOracle(PairsBatch(3, 2, sparse=sparse), X, Y, n_chunks=2)
        for _ in range(3):
            w = rng.normal(size=ref.dim)
            assert_same_cut(ref(w), fast(w))


def test_default_batch_forms_loop_over_the_per_example_methods():
    rng = np.random.default_rng(2)
    for sparse in (False, True):
        model = MultiLabelPairs(3, 2, sparse=sparse)
        X, Y = random_data(model, 4, rng)
        phi = StructuredModel.batch_joint_feature(model, X, Y)
        assert sp.issparse(phi) == sparse and phi.shape == (4, model.dim)
        dense = phi.toarray() if sparse else phi
        for j, (x, y) in enumerate(zip(X, Y)):
            row = model.joint_feature(x, y)
            np.testing.assert_array_equal(dense[j], row.toarray().ravel() if sparse else row)
        Y_hat = [1 - y for y in Y]
        np.testing.assert_array_equal(model.batch_loss(Y, Y_hat), [model.loss(a, b) for a, b in zip(Y, Y_hat)])
    assert StructuredModel.batch_joint_feature(MultiLabelPairs(2, 2), [], []).shape == (0, MultiLabelPairs(2, 2).dim)


# -- the same errors on both paths ------------------------------------------------------------------
def _error(make, X, Y, w, **kw):
    with pytest.raises(InputError) as err:
        make(**kw)(w)
    return str(err.value), err.value.field


@pytest.mark.parametrize("model_cls", [NonFinite, NegativeLoss, WorstArgmax])
def test_both_paths_give_the_same_errors(model_cls):
    model = model_cls(3, 2)
    X, Y = random_data(model, 5, np.random.default_rng(20))
    if model_cls is NonFinite:
        Y = [np.zeros(3, dtype=np.int64) for _ in Y]
        w = np.ones(model.dim)
    else:
        w = np.random.default_rng(0).normal(size=model.dim) * 5

    def make(batch):
        return StructuredOracle(model, X, Y, batch=batch, n_chunks=2)

    a, b = _error(make, X, Y, w, batch=False), _error(make, X, Y, w, batch=True)
    assert a == b


def test_wrong_length_and_nonzero_loss_at_the_truth_refused_at_construction_on_both_paths():
    model = WrongLength(3, 2)
    X, Y = random_data(model, 4, np.random.default_rng(3))
    msgs = []
    for batch in (False, True):
        with pytest.raises(InputError, match=r"WrongLength\.joint_feature") as err:
            StructuredOracle(model, X, Y, batch=batch)
        msgs.append(str(err.value))
    assert msgs[0] == msgs[1]

    class NonzeroAtTruth(MultiLabelPairs):
        def loss(self, y, y_hat):
            return 1.0 + super().loss(y, y_hat)

    for batch in (False, True):
        with pytest.raises(InputError, match=r"loss\(y, y\) = 1.0") as err:
            StructuredOracle(NonzeroAtTruth(3, 2), X, Y, batch=batch)
        assert err.value.field == "loss"


def test_approximate_models_are_replaced_alike_on_both_paths():
    rng = np.random.default_rng(4)
    model = ApproximateWorst(3, 2)
    X, Y = random_data(model, 6, rng)
    a = StructuredOracle(model, X, Y, batch=False)
    b = StructuredOracle(model, X, Y, batch=True)
    for _ in range(3):
        w = rng.normal(size=model.dim) * 3
        assert_same_cut(a(w), b(w))
        ea, eb = a.example_cuts(w), b.example_cuts(w)
        assert not ea.exact and not eb.exact
        np.testing.assert_allclose(ea.values, eb.values, rtol=1e-12, atol=1e-12)
    assert a.n_replaced == b.n_replaced > 0


def test_an_argmax_beaten_by_a_cached_output_on_the_vectorised_path():
    rng = np.random.default_rng(21)
    X, Y = random_data(Restricted(3, 2), 1, rng)
    w = rng.normal(size=Restricted(3, 2).dim) * 3
    for cls in (Restricted, ApproximateRestricted):
        model = cls(3, 2)
        oracle = StructuredOracle(model, X, Y, cache_size=2, batch=True)
        first = oracle(w)
        if model.loss(Y[0], first.argmax[0]) == 0:
            pytest.skip("the truth is the most violated output at this w")
        model.excluded = [first.argmax[0]]
        if cls is Restricted:
            with pytest.raises(InputError, match=r"Restricted\.loss_augmented_argmax.*not a maximiser"):
                oracle(w)
        else:
            again = oracle(w)
            assert again.value == pytest.approx(first.value) and oracle.n_replaced == 1


# -- wrong batch forms: one clear error naming the method -------------------------------------------
def test_wrong_batch_forms_are_refused_naming_the_method():
    rng = np.random.default_rng(5)
    X, Y = random_data(MultiLabelPairs(3, 2), 5, rng)
    wrong_shape = r"BatchWrongShape\.batch_joint_feature.*shape \(1, 8\), expected \(1, 9\)"
    with pytest.raises(InputError, match=wrong_shape) as err:
        StructuredOracle(BatchWrongShape(3, 2), X, Y)
    assert err.value.field == "batch_joint_feature"
    disagrees = r"BatchDisagrees\.batch_joint_feature \(example 0\): differs from joint_feature"
    with pytest.raises(InputError, match=disagrees):
        StructuredOracle(BatchDisagrees(3, 2), X, Y)
    Y0 = [np.zeros(3, dtype=np.int64) for _ in Y]
    oracle = StructuredOracle(BatchNonFinite(3, 2), X, Y0)
    with pytest.raises(InputError, match=r"BatchNonFinite\.batch_joint_feature \(example \d\): .*non-finite") as err:
        oracle(np.ones(oracle.dim))
    assert err.value.field == "batch_joint_feature"
    oracle = StructuredOracle(BatchNegativeLoss(3, 2), X, Y)
    with pytest.raises(InputError, match=r"BatchNegativeLoss\.batch_loss \(example \d\): .*>= 0") as err:
        oracle(rng.normal(size=oracle.dim) * 5)
    assert err.value.field == "batch_loss"

    class LossShape(PairsBatch):
        def batch_loss(self, Y, Y_hat):
            return np.zeros(len(Y) + 1)

    with pytest.raises(InputError, match=r"LossShape\.batch_loss: returned shape") as err:
        StructuredOracle(LossShape(3, 2), X, Y)
    assert err.value.field == "batch_loss"


@pytest.mark.parametrize("executor", ["threads", "processes"])
def test_the_vectorised_path_on_executors(executor):
    from cutplane import minimize
    from cutplane.executors import get_executor
    from cutplane.regularizers import L2

    rng = np.random.default_rng(6)
    model = PairsBatch(3, 2, sparse=True)
    X, Y = random_data(model, 8, rng)
    ref = minimize(StructuredOracle(model, X, Y, batch=False), L2(), 0.3, eps=1e-6, max_iter=500)
    with get_executor(executor, 2) as ex:
        oracle = StructuredOracle(model, X, Y, executor=ex, n_chunks=3)
        for method in ("bmrm", "n-slack"):
            res = minimize(oracle, L2(), 0.3, method=method, eps=1e-6, max_iter=500)
            assert res.status == "converged" and res.exact
            assert res.lower_bound - 1e-6 <= ref.objective and ref.lower_bound - 1e-6 <= res.objective
        oracle.close()
