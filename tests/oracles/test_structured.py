"""The StructuredModel contract and its adapter StructuredOracle (issue 37): cuts against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_dot, slope_to_dense
from cutplane.exceptions import InputError
from cutplane.protocols import CachingOracle, ExampleCutsOracle, ExampleOracle, Oracle, RiskFloorOracle
from oracles.structured import StructuredModel, StructuredOracle
from tests.oracles.structured_models import (
    ApproximateRestricted,
    ApproximateWorst,
    Categories,
    MultiLabelPairs,
    NegativeLoss,
    NoArgmax,
    NonFinite,
    Restricted,
    TinyChain,
    WorstArgmax,
    WrongLength,
    random_data,
)


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


# -- training: every method, every executor, against a direct cvxpy solve ------------------------
def qp_optimum(model, X, Y, lam, groups=None):
    """``min lam * Omega(w) + (1/n) sum_i xi_i`` s.t. ``xi_i >= Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>``
    for every enumerated output ``y`` (the n-slack QP; ``Omega`` 1/2 ||w||^2, or 1/2 (sum_j ||w_j||)^2 with groups)."""
    import cvxpy as cp

    n = len(X)
    w = cp.Variable(model.dim)
    xi = cp.Variable(n)
    cons = []
    for i, (x, y) in enumerate(zip(X, Y)):
        base = dense(model.joint_feature(x, y))
        outs = list(model.outputs(x))
        D = np.array([dense(model.joint_feature(x, yh)) - base for yh in outs])
        loss = np.array([model.loss(y, yh) for yh in outs])
        cons.append(xi[i] >= loss + D @ w)
    if groups is None:
        omega = 0.5 * cp.sum_squares(w)
    else:
        norms = [cp.norm(w[np.flatnonzero(groups == g)], 2) for g in np.unique(groups)]
        omega = 0.5 * cp.square(cp.sum(cp.hstack(norms)))
    prob = cp.Problem(cp.Minimize(lam * omega + cp.sum(xi) / n), cons)
    prob.solve(solver=cp.CLARABEL)
    return float(prob.value)


def assert_certified(res, target, tol=1e-6):
    assert res.lower_bound - tol <= target <= res.objective + tol, (res.lower_bound, target, res.objective)
    assert res.objective - res.lower_bound <= 1e-4 + tol


@pytest.fixture(scope="module")
def executors():
    from cutplane.executors import get_executor

    made = {"threads": get_executor("threads", 2), "processes": get_executor("processes", 2)}
    made["serial"] = get_executor("serial")
    yield made
    for ex in made.values():
        ex.close()


@pytest.mark.parametrize(
    "method, executor",
    [
        ("bmrm", "serial"),
        ("bmrm", "threads"),
        ("bmrm", "processes"),
        ("ls-bmrm", "serial"),
        ("ls-bmrm", "threads"),
        ("n-slack", "serial"),
        ("n-slack", "threads"),
        ("n-slack", "processes"),
    ],
)
def test_training_matches_the_qp(method, executor, executors):
    from cutplane import minimize
    from cutplane.regularizers import L2

    rng = np.random.default_rng(7)
    lam = 0.3
    for model in (MultiLabelPairs(3, 2, sparse=True), TinyChain(2, 2)):
        X, Y = random_data(model, 8, rng)
        oracle = StructuredOracle(model, X, Y, executor=executors[executor], n_chunks=3)
        res = minimize(oracle, L2(), lam, method=method, eps=1e-5, max_iter=500)
        assert res.status == "converged" and res.exact
        assert_certified(res, qp_optimum(model, X, Y, lam))
        oracle.close()


@settings(max_examples=6)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6), lam=st.sampled_from([0.1, 1.0]))
def test_random_models_bmrm_and_nslack_match_the_qp(seed, n, lam):
    from cutplane import minimize
    from cutplane.regularizers import L2

    rng = np.random.default_rng(seed)
    model = MultiLabelPairs(int(rng.integers(2, 4)), 2, sparse=bool(rng.integers(2)))
    X, Y = random_data(model, n, rng)
    target = qp_optimum(model, X, Y, lam)
    for method in ("bmrm", "n-slack"):
        res = minimize(StructuredOracle(model, X, Y), L2(), lam, method=method, eps=1e-5, max_iter=1000)
        assert_certified(res, target)


@pytest.mark.parametrize("executor", ["serial", "threads"])
def test_mtl_mixed_norm_matches_cvxpy(executor, executors):
    from cutplane import minimize
    from cutplane.regularizers import MixedNorm

    rng = np.random.default_rng(8)
    lam = 0.5
    model = MultiLabelPairs(3, 2)
    X, Y = random_data(model, 6, rng)
    oracle = StructuredOracle(model, X, Y, executor=executors[executor], n_chunks=2)
    res = minimize(oracle, MixedNorm(oracle.groups, p=1.0), lam, eps=1e-5, max_iter=500)
    assert res.status == "converged"
    assert_certified(res, qp_optimum(model, X, Y, lam, groups=model.groups), tol=1e-5)


@pytest.mark.parametrize("regularizer", ["l2", "mtl"])
def test_spom_never_below_the_certified_lower_bound(regularizer):
    from cutplane import minimize
    from cutplane.online import spom
    from cutplane.regularizers import L2, MixedNorm

    rng = np.random.default_rng(9)
    lam = 0.5
    model = TinyChain(2, 2)
    X, Y = random_data(model, 10, rng)
    oracle = StructuredOracle(model, X, Y)
    reg = L2() if regularizer == "l2" else MixedNorm(oracle.groups, p=1.0)
    cert = minimize(oracle, reg, lam, eps=1e-6, max_iter=500)
    on = spom(oracle.example_oracles(), reg, lam, epochs=5, eta0=0.5, batch_oracle=oracle, seed=0)
    assert on.objective >= cert.lower_bound - 1e-9
    direct = lam * reg(on.w) + brute_risk(model, X, Y, on.w)
    assert on.objective == pytest.approx(direct, rel=1e-9, abs=1e-9)


def test_example_oracle_matches_the_example_cuts():
    rng = np.random.default_rng(10)
    model = MultiLabelPairs(3, 2, sparse=True)
    X, Y = random_data(model, 5, rng)
    oracle = StructuredOracle(model, X, Y)
    w = rng.normal(size=model.dim)
    ex = oracle.example_oracles()
    cuts = oracle.example_cuts(w)
    for i in range(5):
        assert ex.example_support(i) is None
        g = ex.example_subgradient(i, w)
        assert g.value == pytest.approx(cuts.values[i])
        row = np.zeros(model.dim)
        row[g.indices] = g.values
        np.testing.assert_allclose(row, cuts.slopes[i].toarray().ravel())


# -- the constraint cache ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["pairs", "categories", "chain"])
def test_cached_cut_is_a_minorant_below_the_risk(name):
    rng = np.random.default_rng(11)
    model = MODELS[name]()
    X, Y = random_data(model, 6, rng)
    oracle = StructuredOracle(model, X, Y, cache_size=3, n_chunks=2)
    empty = oracle.cached_cut(rng.normal(size=model.dim))
    assert empty.value == 0.0 and empty.cut.offset == 0.0  # only the truth yet
    for _ in range(4):
        oracle(rng.normal(size=model.dim) * 2)
    for _ in range(5):
        w = rng.normal(size=model.dim) * 2
        cc = oracle.cached_cut(w)
        assert cc.value <= brute_risk(model, X, Y, w) + 1e-9
        assert slope_dot(cc.cut.slope, w) + cc.cut.offset == pytest.approx(cc.value, abs=1e-9)
        v = rng.normal(size=model.dim) * 3
        assert brute_risk(model, X, Y, v) >= slope_dot(cc.cut.slope, v) + cc.cut.offset - 1e-9


def test_the_cache_keeps_the_last_distinct_outputs():
    model = Categories()
    rng = np.random.default_rng(12)
    X, Y = random_data(model, 1, rng)
    oracle = StructuredOracle(model, X, Y, cache_size=1)
    seen = []
    for _ in range(6):
        seen.append(oracle(rng.normal(size=model.dim) * 3).argmax[0])
    task = oracle.tasks[0]
    kept = [e[0] for e in task._cache[0]]  # noqa: SLF001 - the test looks inside
    assert len(kept) <= 1
    if any(s != Y[0] for s in seen):
        assert kept == [[s for s in seen if s != Y[0]][-1]]


@pytest.mark.parametrize("executor", ["serial", "processes"])
def test_training_with_the_constraint_cache(executor, executors):
    from cutplane import minimize
    from cutplane.regularizers import L2

    rng = np.random.default_rng(13)
    lam = 0.2
    for model in (Categories(), TinyChain(2, 2)):
        X, Y = random_data(model, 8, rng)
        oracle = StructuredOracle(model, X, Y, cache_size=4, executor=executors[executor], n_chunks=2)
        res = minimize(oracle, L2(), lam, eps=1e-5, cache_steps=3, max_iter=500)
        assert res.status == "converged"
        assert_certified(res, qp_optimum(model, X, Y, lam))
        oracle.close()


# -- honest certificates: each wrong answer one clear error, or an inexact certificate -------------
def _data(model, n=5, seed=20):
    return random_data(model, n, np.random.default_rng(seed))


def test_wrong_length_joint_feature_is_refused_at_construction():
    model = WrongLength(3, 2)
    with pytest.raises(InputError, match=r"WrongLength\.joint_feature.*shape \(8,\), expected \(9,\)") as err:
        StructuredOracle(model, *_data(model))
    assert err.value.field == "joint_feature"


def test_non_finite_joint_feature_is_refused():
    model = NonFinite(3, 2)
    X, Y = _data(model)
    Y = [np.zeros(3, dtype=np.int64) for _ in Y]  # the truth's feature is finite
    oracle = StructuredOracle(model, X, Y)
    with pytest.raises(InputError, match=r"NonFinite\.joint_feature.*non-finite") as err:
        oracle(np.ones(model.dim))
    assert err.value.field == "joint_feature"


def test_negative_loss_is_refused():
    model = NegativeLoss(3, 2)
    oracle = StructuredOracle(model, *_data(model))
    with pytest.raises(InputError, match=r"NegativeLoss\.loss.*>= 0") as err:
        oracle(np.random.default_rng(0).normal(size=model.dim) * 5)
    assert err.value.field == "loss"


class _NonzeroAtTruth(MultiLabelPairs):
    def loss(self, y, y_hat):
        return 1.0 + super().loss(y, y_hat)


def test_loss_at_the_truth_must_be_zero():
    model = _NonzeroAtTruth(3, 2)
    with pytest.raises(InputError, match=r"loss\(y, y\) = 1.0") as err:
        StructuredOracle(model, *_data(model))
    assert err.value.field == "loss"


@pytest.mark.parametrize("executor", ["serial", "processes"])
def test_an_argmax_worse_than_the_truth_is_refused(executor, executors):
    from cutplane import minimize
    from cutplane.regularizers import L2

    model = WorstArgmax(3, 2)
    oracle = StructuredOracle(model, *_data(model), executor=executors[executor], n_chunks=2)
    with pytest.raises(InputError, match=r"WorstArgmax\.loss_augmented_argmax.*worse than the true output") as err:
        minimize(oracle, L2(), 0.1, eps=1e-6, max_iter=200)
    assert err.value.field == "loss_augmented_argmax"
    oracle.close()


def test_an_approximate_argmax_gives_an_inexact_certificate():
    from cutplane import minimize
    from cutplane.exceptions import InexactCutWarning
    from cutplane.regularizers import L2

    model = ApproximateWorst(3, 2)
    X, Y = _data(model, 6)
    oracle = StructuredOracle(model, X, Y)
    with pytest.warns(InexactCutWarning):
        res = minimize(oracle, L2(), 0.3, eps=1e-6, max_iter=200)
    assert not res.exact
    assert oracle.n_replaced > 0  # outputs worse than the truth were replaced by it
    # the cuts are still minorants of the true risk: the lower bound is below the true optimum
    assert res.lower_bound <= qp_optimum(MultiLabelPairs(3, 2), X, Y, 0.3) + 1e-6
    res_w = oracle(res.w)
    assert not res_w.exact and res_w.value <= brute_risk(model, X, Y, res.w) + 1e-9
    assert not oracle.example_cuts(res.w).exact
    with pytest.warns(InexactCutWarning):  # the n-slack method marks its result inexact too
        res_ns = minimize(oracle, L2(), 0.3, eps=1e-6, max_iter=200, method="n-slack")
    assert not res_ns.exact


def test_an_argmax_beaten_by_a_cached_output_is_refused():
    rng = np.random.default_rng(21)
    model = Restricted(3, 2)
    X, Y = random_data(model, 1, rng)
    oracle = StructuredOracle(model, X, Y, cache_size=2)
    w = rng.normal(size=model.dim) * 3
    best = oracle(w)
    if model.loss(Y[0], best.argmax[0]) == 0:
        pytest.skip("the truth is the most violated output at this w")
    model.excluded = [best.argmax[0]]
    with pytest.raises(InputError, match=r"Restricted\.loss_augmented_argmax.*not a maximiser"):
        oracle(w)
    approx = ApproximateRestricted(3, 2)
    oracle = StructuredOracle(approx, X, Y, cache_size=2)
    first = oracle(w)
    approx.excluded = [first.argmax[0]]
    again = oracle(w)  # the cached output is better: taken
    assert again.value == pytest.approx(first.value) and not again.exact and oracle.n_replaced == 1


def test_a_model_without_argmax_says_which_method_to_write():
    model = NoArgmax()
    oracle = StructuredOracle(model, [[1.0]], [1])
    with pytest.raises(NotImplementedError, match=r"NoArgmax\.loss_augmented_argmax"):
        oracle(np.zeros(2))
    with pytest.raises(NotImplementedError, match=r"NoArgmax\.argmax"):
        oracle.predict([[1.0]], np.zeros(2))


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"cache_size": -1}, "cache_size"),
        ({"n_chunks": 0}, "n_chunks"),
    ],
)
def test_bad_oracle_arguments(kwargs, field):
    model = MultiLabelPairs(2, 2)
    with pytest.raises(InputError) as err:
        StructuredOracle(model, *_data(model), **kwargs)
    assert err.value.field == field


def test_bad_data_and_model_attributes():
    model = MultiLabelPairs(2, 2)
    X, Y = _data(model)
    with pytest.raises(InputError) as err:
        StructuredOracle(model, X, Y[:-1])
    assert err.value.field == "Y"
    with pytest.raises(InputError) as err:
        StructuredOracle(model, [], [])
    assert err.value.field == "X"
    bad = MultiLabelPairs(2, 2)
    bad.groups = np.zeros(3, dtype=int)
    with pytest.raises(InputError, match="MultiLabelPairs.groups") as err:
        StructuredOracle(bad, X, Y)
    assert err.value.field == "groups"

    class NoDim(StructuredModel):
        pass

    with pytest.raises(InputError, match="NoDim has no attribute dim") as err:
        StructuredOracle(NoDim(), X, Y)
    assert err.value.field == "dim"
    oracle = StructuredOracle(model, X, Y)
    with pytest.raises(InputError) as err:
        oracle(np.zeros(model.dim + 1))
    assert err.value.field == "w"


def test_check_false_gives_the_same_cut():
    rng = np.random.default_rng(22)
    model = TinyChain(2, 2)
    X, Y = random_data(model, 6, rng)
    w = rng.normal(size=model.dim)
    a = StructuredOracle(model, X, Y)(w)
    b = StructuredOracle(model, X, Y, check=False)(w)
    assert a.value == b.value
    np.testing.assert_array_equal(slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope))


def test_dask_gives_the_serial_cuts_and_keeps_the_cache():
    pytest.importorskip("dask.distributed")
    from cutplane.executors import DaskExecutor

    rng = np.random.default_rng(23)
    model = TinyChain(2, 2)
    X, Y = random_data(model, 8, rng)
    w = rng.normal(size=model.dim)
    ref = StructuredOracle(model, X, Y, cache_size=2)
    with DaskExecutor(2, processes=False) as ex:
        oracle = StructuredOracle(model, X, Y, executor=ex, n_chunks=3, cache_size=2)
        for o in (ref, oracle):
            o(rng.normal(size=model.dim))
        a, b = ref(w), oracle(w)
        assert a.value == pytest.approx(b.value, abs=1e-12)
        np.testing.assert_allclose(slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope), atol=1e-12)
        assert oracle.cached_cut(w).value == pytest.approx(ref.cached_cut(w).value, abs=1e-12)
        oracle.close()


class _AnySparse(MultiLabelPairs):
    """Joint features in every scipy sparse form: COO, CSC, a 1-d array, a CSR with duplicates."""

    def __init__(self, kind):
        super().__init__(3, 2)
        self.kind = kind

    def joint_feature(self, x, y):
        phi = np.asarray(super().joint_feature(x, y))
        if self.kind == "coo":
            return sp.coo_matrix(phi.reshape(1, -1))
        if self.kind == "csc":
            return sp.csc_matrix(phi.reshape(1, -1))
        if self.kind == "1d":
            return sp.coo_array(phi)
        nz = np.flatnonzero(phi)  # every entry split in two halves, unsorted
        cols = np.concatenate([nz[::-1], nz])
        vals = np.concatenate([phi[nz][::-1], phi[nz]]) / 2
        return sp.csr_matrix((vals, cols, np.array([0, cols.size])), shape=(1, self.dim))


@pytest.mark.parametrize("kind", ["coo", "csc", "1d", "duplicates"])
def test_every_sparse_form_gives_the_same_cut(kind):
    rng = np.random.default_rng(24)
    ref_model = MultiLabelPairs(3, 2)
    X, Y = random_data(ref_model, 5, rng)
    w = rng.normal(size=ref_model.dim)
    a = StructuredOracle(ref_model, X, Y)(w)
    b = StructuredOracle(_AnySparse(kind), X, Y)(w)
    assert sp.issparse(b.cut.slope)
    assert a.value == pytest.approx(b.value, abs=1e-12)
    np.testing.assert_allclose(slope_to_dense(a.cut.slope), slope_to_dense(b.cut.slope), atol=1e-12)
