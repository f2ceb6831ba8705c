"""Cuts rounded to float32: minorants on their ball (exact rational arithmetic), the working set's
float32 block against float64 products, and the engine's certificates with rounding on."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import cutplane
import cutplane.working_set.working_set as wsm
from cutplane.cuts import Cut
from cutplane.engine import minimize_with_working_set
from cutplane.exceptions import ConvergenceWarning, InputError
from cutplane.regularizers import L1, L2
from cutplane.rounded_cuts import Ball, ball_from_cut, ball_from_dual, round_cut, stale_offset
from cutplane.working_set import WorkingSet, working_set_from_state, working_set_state
from oracles.linear import BinaryHinge


def exact_dot(u, v):
    return sum((Fraction(float(x)) * Fraction(float(y)) for x, y in zip(u, v, strict=True)), Fraction(0))


def in_ball_exactly(w, ball):
    d = [Fraction(float(x)) - Fraction(float(c)) for x, c in zip(w, ball.center, strict=True)]
    return sum(x * x for x in d) <= Fraction(ball.radius) ** 2


def ball(center, radius):
    center = np.asarray(center, dtype=np.float64)
    return Ball(center, float(radius), float(np.linalg.norm(center)))


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    dim=st.integers(1, 24),
    scale=st.sampled_from([1e-6, 1e-2, 1.0, 1e3]),
    offset=finite,
    radius=st.sampled_from([0.0, 1e-9, 1e-3, 1.0, 1e4]),
    t=st.floats(0.0, 1.0),
)
def test_rounded_cut_is_below_the_exact_cut_on_the_ball(seed, dim, scale, offset, radius, t):
    """``b~ + <a~, w> <= b + <a, w>`` in exact arithmetic for points of the ball, among them the
    worst one (``w = c - rho r / ||r||``) and random directions."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(dim) * scale
    b0 = ball(rng.standard_normal(dim) * rng.choice([0.0, 1.0, 100.0]), radius)
    cut = round_cut(a, offset, b0)
    assert np.array_equal(cut.slope.astype(np.float32).astype(np.float64), cut.slope)
    assert cut.exact_offset == offset
    r = a - cut.slope
    assert cut.residual_norm >= np.linalg.norm(r)
    u = -r / np.linalg.norm(r) if np.any(r) else rng.standard_normal(dim)
    v = rng.standard_normal(dim)
    for direction in (u, v / np.linalg.norm(v)):
        w = b0.center + (t * 0.999999 * radius) * direction
        assume(in_ball_exactly(w, b0))
        lhs = Fraction(cut.offset) + exact_dot(cut.slope, w)
        rhs = Fraction(offset) + exact_dot(a, w)
        assert lhs <= rhs
    # the shift is no larger than the residual's reach on the ball (plus round-off)
    reach = abs(float(r @ b0.center)) + np.linalg.norm(r) * radius
    assert offset - cut.offset <= 2 * reach + 1e-12 * (abs(offset) + reach) + 1e-300


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 16), radius=st.floats(0.0, 1e3), t=st.floats(0.0, 1.0))
def test_stale_offset_is_valid_for_any_residual_within_its_norm(seed, dim, radius, t):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(dim)
    stored = a.astype(np.float32).astype(np.float64)
    e = float(np.linalg.norm(a - stored)) * 1.01
    b0 = ball(rng.standard_normal(dim) * 10, radius)
    b_stale = float(stale_offset(np.array([2.5]), np.array([e]), b0)[0])
    v = rng.standard_normal(dim)
    w = b0.center + t * 0.999999 * radius * v / np.linalg.norm(v)
    assume(in_ball_exactly(w, b0))
    assert Fraction(b_stale) + exact_dot(stored, w) <= Fraction(2.5) + exact_dot(a, w)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 6), dim=st.integers(1, 8), lam=st.sampled_from([1e-3, 0.1, 1.0])
)
def test_dual_ball_holds_every_point_below_the_upper_bound(seed, n, dim, lam):
    """``F_t(w) >= D(alpha) + lam/2 ||w - w_alpha||^2`` for any ``alpha`` on the simplex (L2), so
    every ``w`` with ``F_t(w) <= U`` lies in :func:`ball_from_dual`'s ball; one cut alone gives
    :func:`ball_from_cut`'s."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, dim))
    b = rng.standard_normal(n)
    alpha = rng.dirichlet(np.ones(n))
    w_alpha = -A.T @ alpha / lam
    D = float(b @ alpha) - lam * 0.5 * float(w_alpha @ w_alpha)

    def F(w):
        return lam * 0.5 * float(w @ w) + float(np.max(A @ w + b))

    for _ in range(20):
        w = w_alpha + rng.standard_normal(dim) * rng.choice([0.01, 1.0, 10.0])
        U = F(w)
        bb = ball_from_dual(w_alpha, D, U, lam, 1.0)
        assert np.linalg.norm(w - bb.center) <= bb.radius * (1 + 1e-9) + 1e-12
        one = ball_from_cut(A[0], b[0], U, lam, L2(), 1.0)
        assert np.linalg.norm(w - one.center) <= one.radius * (1 + 1e-9) + 1e-12


@pytest.fixture
def single(monkeypatch):
    """The working set switches to float32 from its first cut on (as it does from 16 MB)."""
    monkeypatch.setattr(wsm, "SINGLE_MIN_BYTES", 0)


def filled(rng, n, dim, b0, exact_first=3, integers=0):
    """``n`` random cuts, the ball set before cut ``exact_first``; the first ``integers`` slopes are
    small integers (float32 numbers: stored exactly even when rounded)."""
    ws = WorkingSet(dim)
    cuts = [
        (
            rng.integers(-3, 4, dim).astype(np.float64) if i < integers else rng.standard_normal(dim),
            float(rng.standard_normal()),
        )
        for i in range(n)
    ]
    for i, (a, b) in enumerate(cuts):
        if i == exact_first:
            ws.set_ball(b0)
        ws.add(Cut(a, b))
    return ws, cuts


def check_products(ws, rng):
    A = np.asarray(ws.matrix(), dtype=np.float64)
    scale = max(1.0, float(np.abs(A).max()) ** 2 * ws.dim)
    np.testing.assert_allclose(ws.gram(), A @ A.T, rtol=0, atol=1e-12 * scale)
    alpha = rng.random(ws.n_cuts) * (rng.random(ws.n_cuts) < 0.7)
    np.testing.assert_allclose(ws.combine(alpha), A.T @ alpha, rtol=0, atol=1e-12 * scale)
    w = rng.standard_normal(ws.dim)
    np.testing.assert_allclose(ws.slopes_dot(w), A @ w, rtol=0, atol=1e-12 * scale)
    rows = np.array([0, ws.n_cuts - 1])
    np.testing.assert_allclose(ws.slopes_dot(w, rows), A[rows] @ w, rtol=0, atol=1e-12 * scale)


def check_minorants(ws, cuts_by_id, b0, rng):
    """Every stored cut is below its exact cut at points of ``b0`` (float arithmetic, tiny slack)."""
    A = np.asarray(ws.matrix(), dtype=np.float64)
    for _ in range(5):
        v = rng.standard_normal(ws.dim)
        w = b0.center + rng.random() * b0.radius * v / np.linalg.norm(v)
        for r, rid in enumerate(ws.row_ids):
            a, b = cuts_by_id[rid]
            assert ws.offsets[r] + A[r] @ w <= b + a @ w + 1e-12 * (1 + abs(b) + np.abs(a) @ np.abs(w))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 20), dim=st.integers(1, 40))
def test_single_block_products_equal_float64_products(single, seed, n, dim):
    rng = np.random.default_rng(seed)
    b0 = ball(rng.standard_normal(dim), 0.5)
    ws, cuts = filled(rng, n, dim, b0)
    assert ws.single_precision and ws.matrix().dtype == np.float32
    assert "float32" in repr(ws)
    check_products(ws, rng)
    by_id = dict(zip(ws.row_ids, cuts, strict=True))
    check_minorants(ws, by_id, b0, rng)
    np.testing.assert_array_equal(ws.exact_offsets, [b for _, b in cuts])
    # lowered by at most the residual's reach on the ball (raised by at most <r, c>)
    reach = ws.residual_norms * (b0.center_norm + b0.radius)
    slack = 1e-14 * (1 + np.abs(ws.exact_offsets))  # the round-off of the offsets themselves
    assert np.all(np.abs(ws.offsets - ws.exact_offsets) <= reach * (1 + 1e-9) + slack)
    # pruning keeps the records with their cuts
    ws.record_duals(np.where(np.arange(n) % 2 == 0, 1.0 / n, 0.0))
    assert ws.prune(1) > 0
    assert ws.single_precision
    check_products(ws, rng)
    check_minorants(ws, by_id, b0, rng)
    # a rebuild from the saved arrays keeps the offsets and the rounding records
    copy = working_set_from_state(working_set_state(ws), dim)
    np.testing.assert_array_equal(copy.offsets, ws.offsets)
    np.testing.assert_array_equal(copy.exact_offsets, ws.exact_offsets)
    np.testing.assert_array_equal(copy.residual_norms, ws.residual_norms)
    np.testing.assert_array_equal(
        np.asarray(copy.matrix(), dtype=np.float64), np.asarray(ws.matrix(), dtype=np.float64)
    )


def test_aggregation_goes_back_to_float64_and_keeps_minorants(single, rng):
    dim, n = 30, 12
    b0 = ball(rng.standard_normal(dim), 0.3)
    ws, cuts = filled(rng, n, dim, b0, exact_first=0)
    by_id = dict(zip(ws.row_ids, cuts, strict=True))
    alpha = rng.dirichlet(np.ones(n))
    ws.record_duals(alpha)
    merged_rows = ws.row_ids[: n - 4 + 1].copy()
    ws.aggregate(4)
    assert not ws.single_precision and ws.n_cuts == 4
    check_products(ws, rng)
    # the merged cut: below the same merge of the exact cuts on the ball; its records merged alike
    beta = alpha[: len(merged_rows)] / alpha[: len(merged_rows)].sum()
    a_exact = sum(bt * by_id[r][0] for bt, r in zip(beta, merged_rows, strict=True))
    b_exact = sum(bt * by_id[r][1] for bt, r in zip(beta, merged_rows, strict=True))
    np.testing.assert_allclose(ws.exact_offsets[0], b_exact, rtol=1e-12, atol=1e-12)
    assert np.linalg.norm(ws.matrix()[0] - a_exact) <= ws.residual_norms[0] * (1 + 1e-9) + 1e-15
    v = rng.standard_normal(dim)
    w = b0.center + 0.99 * b0.radius * v / np.linalg.norm(v)
    assert ws.offsets[0] + ws.matrix()[0] @ w <= b_exact + a_exact @ w + 1e-12


def test_forget_ball_revalidates_offsets_and_discard_drops_rounded_cuts(single, rng):
    dim = 25
    b0 = ball(rng.standard_normal(dim), 0.1)
    ws, cuts = filled(rng, 10, dim, b0, integers=3)
    by_id = dict(zip(ws.row_ids, cuts, strict=True))
    rounded = ws.residual_norms > 0
    assert rounded.sum() == 7 and not rounded[:3].any()  # the first 3 slopes are float32 numbers
    ws.forget_ball()
    assert ws.ball is None
    b1 = ball(rng.standard_normal(dim) * 5, 3.0)  # another problem's region
    ws.set_ball(b1)
    np.testing.assert_array_equal(
        ws.offsets[rounded], stale_offset(ws.exact_offsets[rounded], ws.residual_norms[rounded], b1)
    )
    np.testing.assert_array_equal(ws.offsets[~rounded], ws.exact_offsets[~rounded])
    check_minorants(ws, by_id, b1, rng)
    # without a ball, a new cut is stored exactly (the block goes back to float64 without loss)
    ws.forget_ball()
    before = np.asarray(ws.matrix(), dtype=np.float64).copy()
    ws.add(Cut(rng.standard_normal(dim), 0.0))
    assert not ws.single_precision and ws.residual_norms[-1] == 0
    np.testing.assert_array_equal(ws.matrix()[:-1], before)
    assert ws.discard_rounded() == int(rounded.sum())
    assert ws.n_cuts == 4 and not np.any(ws.residual_norms)
    check_products(ws, rng)


def test_set_ball_and_records_validate_their_input():
    ws = WorkingSet(3)
    with pytest.raises(InputError):
        ws.set_ball((np.zeros(3), 1.0))
    with pytest.raises(InputError):
        ws.set_ball(ball(np.zeros(2), 1.0))
    with pytest.raises(InputError):
        ws.set_ball(ball(np.zeros(3), np.inf))
    ws.add(Cut(np.ones(3), 0.0))
    with pytest.raises(InputError):
        ws.set_rounding_records(np.zeros(1), np.array([-1.0]))


def test_no_switch_without_a_ball_or_above_the_conversion_budget(monkeypatch, rng):
    monkeypatch.setattr(wsm, "SINGLE_MIN_BYTES", 0)
    ws = WorkingSet(10)
    for _ in range(5):
        ws.add(Cut(rng.standard_normal(10), 0.0))
    assert not ws.single_precision  # no ball: exact
    monkeypatch.setattr(wsm, "SINGLE_CONVERT_BUDGET", 5 * 5 * 10)
    ws.set_ball(ball(np.zeros(10), 1.0))
    ws.add(Cut(rng.standard_normal(10), 0.0))  # 6 cuts: 360 products > 250
    assert not ws.single_precision
    ws.forget_ball()  # a working set with stale cuts does not switch either
    monkeypatch.setattr(wsm, "SINGLE_CONVERT_BUDGET", 2**31)
    ws.add(Cut(rng.standard_normal(10), 0.0))
    assert not ws.single_precision


def hinge_problem(seed, n=80, dim=30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, dim))
    y = np.where(X @ rng.standard_normal(dim) + 0.5 * rng.standard_normal(n) > 0, 1, -1)
    return BinaryHinge(X, y)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    method=st.sampled_from(["bmrm", "ls-bmrm"]),
    lam=st.sampled_from([1e-3, 1e-2, 0.3]),
)
def test_engine_with_float32_cuts_keeps_its_certificates(seed, method, lam):
    oracle = hinge_problem(seed)
    exact = cutplane.minimize(oracle, L2(), lam, method="bmrm", eps=1e-10, max_iter=3000)
    assert exact.status == "converged"
    J_star = exact.objective
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wsm, "SINGLE_MIN_BYTES", 0)
        history = []
        res, ws = minimize_with_working_set(
            oracle, L2(), lam, method=method, eps=1e-6, max_iter=2000, callback=lambda info: history.append(info.lower)
        )
    assert ws.single_precision and np.any(ws.residual_norms > 0)
    assert res.status == "converged" and res.gap <= 1e-6
    assert res.lower_bound <= J_star + 1e-12
    assert res.lower_bound <= res.objective
    assert res.objective - J_star <= 1e-6 + 1e-12
    assert all(b >= a for a, b in zip(history, history[1:], strict=False))  # the lower bound never falls
    # a warm start at another lam: the rounded cuts are made valid again for the new optimum
    lam2 = lam * 3
    exact2 = cutplane.minimize(oracle, L2(), lam2, method="bmrm", eps=1e-10, max_iter=3000)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wsm, "SINGLE_MIN_BYTES", 0)
        res2 = cutplane.minimize(
            oracle, L2(), lam2, method=method, eps=1e-6, max_iter=2000, warm_start=cutplane.WarmStart(ws)
        )
    assert res2.status == "converged"
    assert res2.lower_bound <= exact2.objective + 1e-12
    assert res2.objective - exact2.objective <= 1e-6 + 1e-12


def test_a_warm_start_under_l1_drops_the_rounded_cuts(monkeypatch):
    oracle = hinge_problem(3)
    monkeypatch.setattr(wsm, "SINGLE_MIN_BYTES", 0)
    _, ws = minimize_with_working_set(oracle, L2(), 0.01, method="bmrm", eps=1e-5)
    n_rounded = int(np.sum(ws.residual_norms > 0))
    assert n_rounded > 0
    n_before = ws.n_cuts
    exact = cutplane.minimize(oracle, L1(), 0.01, method="bmrm", eps=1e-9, max_iter=3000)
    res, ws2 = minimize_with_working_set(oracle, L1(), 0.01, method="bmrm", eps=1e-6, warm_start=cutplane.WarmStart(ws))
    assert not np.any(ws2.residual_norms > 0) and not ws2.single_precision
    assert ws2.n_cuts >= n_before - n_rounded
    assert res.lower_bound <= exact.objective + 1e-12


def test_a_slope_beyond_float32_range_is_stored_exactly(single, rng):
    dim = 6
    b0 = ball(np.zeros(dim), 1.0)
    ws, _ = filled(rng, 4, dim, b0, exact_first=0)
    assert ws.single_precision
    big = np.full(dim, 1e39)  # beyond float32's 3.4e38
    ws.add(Cut(big, 1.0))
    assert not ws.single_precision and ws.residual_norms[-1] == 0 and ws.offsets[-1] == 1.0
    np.testing.assert_array_equal(ws.matrix()[-1], big)
    check_products(ws, rng)
    # and a working set holding such a cut does not switch
    ws2 = WorkingSet(dim)
    ws2.add(Cut(big, 0.0))
    ws2.set_ball(b0)
    ws2.add(Cut(rng.standard_normal(dim), 0.0))
    assert not ws2.single_precision


def test_checkpoint_resume_keeps_the_rounded_cuts_valid(monkeypatch, tmp_path):
    oracle = hinge_problem(11)
    lam = 0.01
    J_star = cutplane.minimize(oracle, L2(), lam, method="bmrm", eps=1e-10, max_iter=3000).objective
    monkeypatch.setattr(wsm, "SINGLE_MIN_BYTES", 0)
    path = tmp_path / "run.ckpt"
    with pytest.warns(ConvergenceWarning):
        first = cutplane.minimize(
            oracle, L2(), lam, method="ls-bmrm", eps=1e-7, max_iter=8, checkpoint=path, checkpoint_every=1
        )
    assert first.status == "max_iter"
    res, ws = minimize_with_working_set(
        oracle, L2(), lam, method="ls-bmrm", eps=1e-7, max_iter=3000, checkpoint=path, resume=True
    )
    assert res.status == "converged" and res.n_iter > 8
    assert ws.single_precision and np.any(ws.residual_norms > 0)
    assert res.lower_bound <= J_star + 1e-12 and res.objective - J_star <= 1e-7 + 1e-12


def test_a_warm_start_that_aggregates_and_compacts_revalidates_the_rounded_cuts(monkeypatch):
    """The memory budget rebuilds a warm start's working set from its arrays: the rebuilt one
    must still have its rounded cuts' offsets replaced for the new problem."""
    oracle = hinge_problem(5)
    monkeypatch.setattr(wsm, "SINGLE_MIN_BYTES", 0)
    _, ws = minimize_with_working_set(oracle, L2(), 0.01, method="ls-bmrm", eps=1e-6)
    assert np.sum(ws.residual_norms > 0) > 5
    lam2 = 0.05
    exact = cutplane.minimize(oracle, L2(), lam2, method="bmrm", eps=1e-10, max_iter=3000)
    seen = []
    original = wsm.WorkingSet.set_ball

    def spy(self, ball):
        if self._stale:
            seen.append(self)
        original(self, ball)

    monkeypatch.setattr(wsm.WorkingSet, "set_ball", spy)
    res, ws2 = minimize_with_working_set(
        oracle,
        L2(),
        lam2,
        method="ls-bmrm",
        eps=1e-4,
        max_iter=5000,
        max_cuts=8,
        memory_limit=int(0.5 * ws.nbytes),
        warm_start=cutplane.WarmStart(ws),
    )
    assert seen and seen[0] is not ws  # the compacted rebuild was the one revalidated
    assert res.status == "converged"
    assert res.lower_bound <= exact.objective + 1e-12
    assert res.objective - exact.objective <= 1e-4 + 1e-12
