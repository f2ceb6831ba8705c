"""Issue 4's m = 1 check: the engine's 1-slack structural SVM on a chain (MixedNorm with one
group, i.e. 1/2 ||w||^2) reaches the optimum of an independent n-slack QP written from the
definition of Phi and solved by cvxpy over every labelling of every sentence."""

import itertools

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutplane.engine import minimize
from cutplane.regularizers import L2, MixedNorm
from oracles.sequence import SequenceHingeOracle

from ..oracles.test_sequence_oracle import dense_phi, random_data


def n_slack_optimum(data, n_features, K, lam, transitions):
    """min_w lam/2 ||w||^2 + (1/n) sum_i xi_i  s.t.  xi_i >= Delta(y_i, y) + <w, Phi_i(y) - Phi_i(y_i)>
    for every sentence i and every labelling y (margin rescaling, Hamming Delta)."""
    indptr, indices, sentence_ptr, labels = data
    n = len(sentence_ptr) - 1
    rows, losses, owner = [], [], []
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi = labels[t0:t1]
        phi_i = dense_phi(indptr, indices, t0, yi, n_features, K, transitions)
        for y in itertools.product(range(K), repeat=int(t1 - t0)):
            rows.append(dense_phi(indptr, indices, t0, np.array(y), n_features, K, transitions) - phi_i)
            losses.append(float(np.sum(np.array(y) != yi)))
            owner.append(i)
    D = np.array(rows)
    w, xi = cp.Variable(D.shape[1]), cp.Variable(n)
    prob = cp.Problem(
        cp.Minimize(lam / 2 * cp.sum_squares(w) + cp.sum(xi) / n), [xi[np.array(owner)] >= np.array(losses) + D @ w]
    )
    prob.solve(solver="CLARABEL")
    return prob.value


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1), K=st.integers(2, 3), transitions=st.booleans(), C=st.sampled_from([0.5, 5.0, 50.0])
)
def test_one_group_matches_the_n_slack_qp(seed, K, transitions, C):
    rng = np.random.default_rng(seed)
    n_features = 4
    data = random_data(rng, 3, 3, n_features, K)
    oracle = SequenceHingeOracle(*data, n_features, K, transitions=transitions)
    lam = 1.0 / C  # F / C = 1/(2C) ||w||^2 + mean loss
    expected = n_slack_optimum(data, n_features, K, lam, transitions)
    for reg in (MixedNorm(np.zeros(oracle.dim, dtype=np.int64), p=1.0), L2()):
        res = minimize(oracle, reg, lam, eps=1e-7, max_iter=2000)
        assert res.status == "converged"
        assert res.lower_bound <= expected + 1e-6 * max(1.0, expected)
        assert res.objective == pytest.approx(expected, rel=1e-3, abs=1e-6)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1), K=st.integers(2, 3), transitions=st.booleans(), C=st.sampled_from([0.5, 5.0, 50.0])
)
def test_the_n_slack_method_matches_the_n_slack_qp(seed, K, transitions, C):
    """``method="n-slack"`` (per-sentence working sets, cutplane.nslack) on the same chains: the
    certified optimum of the QP over every labelling, the lower bound below it."""
    rng = np.random.default_rng(seed)
    n_features = 4
    data = random_data(rng, 3, 3, n_features, K)
    oracle = SequenceHingeOracle(*data, n_features, K, transitions=transitions)
    lam = 1.0 / C
    expected = n_slack_optimum(data, n_features, K, lam, transitions)
    res = minimize(oracle, L2(), lam, method="n-slack", eps=1e-7, max_iter=5000)
    assert res.status == "converged" and res.gap <= 1e-7
    assert res.lower_bound <= expected + 1e-6 * max(1.0, expected)
    assert res.objective == pytest.approx(expected, abs=1e-7 + 1e-6 * max(1.0, expected))
    h = res.history  # monotone up to the clipping at a new best upper bound (round-off, cutplane.bounds)
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:]))) and np.all(h.lower <= h.best_upper)
