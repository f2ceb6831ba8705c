"""RankSVM, PerfSVM and LinearRegressor: the certified objective brackets a direct cvxpy solve."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import QuantileRegressor

from cutplane.exceptions import InputError
from problems import LinearRegressor, PerfSVM, RankSVM
from problems.metrics.ranking import ndcg_at_k, pairwise_accuracy
from problems.solvers import CuttingPlane

EPS = 1e-4


def _bracket(model, direct, rel=1e-6):
    tol = rel * max(1.0, abs(direct))
    assert model.lower_bound_ - tol <= direct <= model.objective_ + tol
    assert model.objective_ - model.lower_bound_ <= EPS + 1e-12


def _omega(w, regularizer):
    return 0.5 * cp.sum_squares(w) if regularizer == "l2" else cp.norm1(w)


def _solve(objective):
    prob = cp.Problem(cp.Minimize(objective))
    prob.solve(solver=cp.CLARABEL)
    return prob.value


def _pair_diffs(X, y, qid):
    rows = [X[i] - X[j] for i in range(len(y)) for j in range(len(y)) if qid[i] == qid[j] and y[i] > y[j]]
    return np.array(rows)


def _ranking_data(seed, n=36, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.clip(np.round(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)), -1, 2)
    qid = rng.integers(0, 3, n)
    return X, y, qid


@pytest.mark.parametrize("regularizer", ["l2", "l1"])
@pytest.mark.parametrize("seed", [0, 1])
def test_rank_svm_brackets_cvxpy(regularizer, seed):
    X, y, qid = _ranking_data(seed)
    C = 5.0
    model = RankSVM(C=C, regularizer=regularizer, solver=CuttingPlane(eps=EPS)).fit(X, y, qid)
    D = _pair_diffs(X, y, qid)
    assert model.n_pairs_ == D.shape[0]
    w = cp.Variable(X.shape[1])
    direct = _solve(_omega(w, regularizer) + C * cp.sum(cp.pos(1 - D @ w)) / D.shape[0])
    _bracket(model, direct)
    assert model.score(X, y, qid) == pairwise_accuracy(y, model.predict(X), qid)


def test_rank_svm_sparse_and_string_queries_give_the_same_model():
    X, y, qid = _ranking_data(3)
    names = np.array(["a", "b", "c"])[qid]
    dense = RankSVM(C=2.0, solver=CuttingPlane(eps=1e-6)).fit(X, y, qid)
    sparse = RankSVM(C=2.0, solver=CuttingPlane(eps=1e-6)).fit(sp.csr_matrix(X), y, names)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, atol=1e-8)


def test_rank_svm_refuses_no_pairs():
    with pytest.raises(InputError, match="no two items"):
        RankSVM().fit(np.eye(3), [1, 1, 1])


@pytest.mark.parametrize("regularizer", ["l2", "l1"])
def test_perf_svm_roc_auc_brackets_cvxpy(regularizer):
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 3))
    y = np.where(X @ [1.0, -2.0, 0.5] + rng.standard_normal(40) > 0, "yes", "no")
    C = 10.0
    model = PerfSVM(C=C, regularizer=regularizer, solver=CuttingPlane(eps=EPS)).fit(X, y)
    pos, neg = X[y == "yes"], X[y == "no"]
    D = (pos[:, None, :] - neg[None, :, :]).reshape(-1, 3)
    w = cp.Variable(3)
    _bracket(model, _solve(_omega(w, regularizer) + C * cp.sum(cp.pos(1 - D @ w)) / D.shape[0]))
    assert set(model.predict(X)) <= {"yes", "no"}


def test_perf_svm_refuses_other_measures_and_multiclass():
    with pytest.raises(InputError) as err:
        PerfSVM(measure="recall").fit(np.eye(4), [0, 1, 0, 1])
    assert err.value.field == "measure"
    with pytest.raises(InputError, match="binary"):
        PerfSVM().fit(np.eye(3), [0, 1, 2])


def _cvx_loss(r, loss, epsilon, quantile, delta):
    if loss == "absolute":
        return cp.abs(r)
    if loss == "quantile":
        return cp.maximum(quantile * r, (quantile - 1) * r)
    if loss == "epsilon_insensitive":
        return cp.pos(cp.abs(r) - epsilon)
    if loss == "squared":
        return 0.5 * cp.square(r)
    return 0.5 * cp.huber(r, delta)


@pytest.mark.parametrize("loss", ["absolute", "quantile", "epsilon_insensitive", "squared", "huber"])
@pytest.mark.parametrize("regularizer", ["l2", "l1"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_linear_regressor_brackets_cvxpy(loss, regularizer, fit_intercept):
    rng = np.random.default_rng(5)
    n, d = 40, 4
    X = rng.standard_normal((n, d))
    y = X @ [1.0, -1.0, 0.0, 2.0] + 3.0 + rng.standard_normal(n)
    s = rng.integers(1, 4, n).astype(float)
    kw = dict(epsilon=0.4, quantile=0.7, delta=0.8)
    C = 3.0
    model = LinearRegressor(
        loss=loss, regularizer=regularizer, C=C, fit_intercept=fit_intercept, solver=CuttingPlane(eps=EPS), **kw
    ).fit(X, y, sample_weight=s)
    w, b = cp.Variable(d), cp.Variable()
    r = y - X @ w - (b if fit_intercept else 0.0)
    direct = _solve(_omega(w, regularizer) + C * (s @ _cvx_loss(r, loss, **kw)) / s.sum())
    _bracket(model, direct)
    # the reported intercept is the one of the objective: F at (coef_, intercept_) is objective_
    res = y - X @ model.coef_ - model.intercept_
    value = cp.Constant(0) + (s @ _cvx_loss(res, loss, **kw)) / s.sum()
    reg = 0.5 * model.coef_ @ model.coef_ if regularizer == "l2" else np.abs(model.coef_).sum()
    assert reg + C * value.value == pytest.approx(model.objective_, rel=1e-9)


def test_linear_regressor_weights_are_repeats():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((30, 3))
    y = X @ [1.0, 0.5, -1.0] + rng.standard_normal(30)
    s = rng.integers(0, 3, 30)
    opts = dict(loss="quantile", quantile=0.4, C=5.0, solver=CuttingPlane(eps=1e-7))
    weighted = LinearRegressor(**opts).fit(X, y, sample_weight=s)
    repeated = LinearRegressor(**opts).fit(np.repeat(X, s, axis=0), np.repeat(y, s))
    assert weighted.objective_ == pytest.approx(repeated.objective_, abs=2e-7)


def test_quantile_l1_agrees_with_quantile_regressor():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((120, 5))
    y = X @ [1.0, 2.0, 0.0, 0.0, -0.5] + 5.0 + rng.standard_normal(120)
    C, tau = 20.0, 0.3
    ours = LinearRegressor(loss="quantile", quantile=tau, regularizer="l1", C=C, solver=CuttingPlane(eps=1e-8))
    ours.fit(X, y)
    ref = QuantileRegressor(quantile=tau, alpha=1.0 / C, solver="highs").fit(X, y)

    def sk_objective(coef, intercept):
        r = y - X @ coef - intercept
        return np.mean(np.maximum(tau * r, (tau - 1) * r)) + np.abs(coef).sum() / C

    # scikit-learn's objective is ours divided by C: the certified bracket holds its optimum
    assert ours.lower_bound_ / C - 1e-9 <= sk_objective(ref.coef_, ref.intercept_) <= ours.objective_ / C + 1e-9
    assert sk_objective(ours.coef_, ours.intercept_) == pytest.approx(ours.objective_ / C, rel=1e-12)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-3)
    assert ours.intercept_ == pytest.approx(ref.intercept_, abs=1e-3)


def test_ls_bmrm_exact_line_search_without_intercept():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((50, 3))
    y = X @ [1.0, 2.0, -1.0] + rng.standard_normal(50)
    a = LinearRegressor(loss="epsilon_insensitive", fit_intercept=False, C=10.0, solver=CuttingPlane(eps=1e-6))
    b = LinearRegressor(
        loss="epsilon_insensitive", fit_intercept=False, C=10.0, solver=CuttingPlane(eps=1e-6, method="ls-bmrm")
    )
    a.fit(X, y)
    b.fit(X, y)
    assert abs(a.objective_ - b.objective_) <= 2e-6


def test_ranking_metrics_against_brute_force():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 4, 50)
    s = rng.integers(0, 5, 50).astype(float)
    qid = rng.integers(0, 4, 50)
    num = den = 0.0
    for i in range(50):
        for j in range(50):
            if qid[i] == qid[j] and y[i] > y[j]:
                den += 1
                num += 1.0 if s[i] > s[j] else 0.5 if s[i] == s[j] else 0.0
    assert pairwise_accuracy(y, s, qid) == pytest.approx(num / den)
    ndcgs = []
    for q in range(4):
        rel, sc = y[qid == q], s[qid == q]
        ranked = rel[np.argsort(-sc, kind="stable")][:10]
        ideal = np.sort(rel)[::-1][:10]
        disc = 1 / np.log2(np.arange(2, 12))
        if (2.0**ideal - 1).sum() > 0:
            ndcgs.append(((2.0**ranked - 1) @ disc[: len(ranked)]) / ((2.0**ideal - 1) @ disc[: len(ideal)]))
    assert ndcg_at_k(y, s, qid, k=10) == pytest.approx(np.mean(ndcgs))
