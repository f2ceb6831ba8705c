"""Warm start and the certified regularisation path (cutplane.path) against cold runs at each lam."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cutplane import InputError, PathResult, WarmStart, minimize, regularization_path
from cutplane.engine import minimize_with_working_set
from cutplane.path import AUTO_ORDER, run_order
from cutplane.regularizers import L1, L2, MixedNorm
from cutplane.working_set import WorkingSet
from oracles.linear import BinaryHinge, MulticlassHinge

ROUND = 1e-9


def _binary(seed, n=40, d=6, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    y[y == 0] = 1
    return BinaryHinge(sp.csr_matrix(X) if sparse else X, y)


def _multiclass(seed, n=30, d=4, k=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.integers(0, k, size=n)
    return MulticlassHinge(X, y, n_classes=k)


def _regularizer(kind, dim):
    if kind == "l2":
        return L2()
    groups = np.arange(dim) % 3
    return MixedNorm(groups, p=1.0 if kind == "mtl" else 1.5, n_groups=3)


def _check_against_cold(oracle, reg, lams, eps, order, eps_cold=None):
    eps_cold = eps if eps_cold is None else eps_cold
    path = regularization_path(oracle, reg, lams, eps=eps, order=order)
    assert isinstance(path, PathResult)
    assert path.status == "converged" and path.converged
    assert path.lams == tuple(float(v) for v in lams)
    assert sorted(path.run_order) == list(range(len(lams)))
    assert path.not_run == ()
    for lam, res in zip(lams, path.results):
        cold = minimize(oracle, reg, lam, eps=eps_cold)
        assert cold.converged and res.converged
        assert abs(res.objective - cold.objective) <= eps + eps_cold + ROUND
        assert res.lower_bound <= cold.objective + ROUND * max(1.0, abs(cold.objective))
        assert np.all(res.history.lower <= cold.objective + ROUND * max(1.0, abs(cold.objective)))
        assert res.lower_bound <= res.objective
        assert res.gap <= eps
        assert res.n_iter == len(res.history)
        # the point's objective is F at its own lam, at its returned w
        value = oracle(res.w).value
        assert res.objective == pytest.approx(lam * reg(res.w) + value, rel=1e-9, abs=1e-12)
    return path


grids = st.lists(st.sampled_from([3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 0.003]), min_size=2, max_size=4, unique=True)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10**6),
    lams=grids,
    kind=st.sampled_from(["l2", "mtl", "pmtl"]),
    order=st.sampled_from(["increasing", "decreasing", "given"]),
)
def test_path_matches_cold_runs(seed, lams, kind, order):
    oracle = _binary(seed)
    _check_against_cold(oracle, _regularizer(kind, oracle.dim), lams, 1e-3, order)


@pytest.mark.parametrize("kind", ["l2", "mtl", "pmtl"])
@pytest.mark.parametrize("order", ["increasing", "decreasing"])
def test_path_both_directions_multiclass(kind, order):
    oracle = _multiclass(3)
    _check_against_cold(oracle, _regularizer(kind, oracle.dim), [1.0, 0.1, 0.01, 0.001], 1e-4, order)


def test_path_sparse_slopes_and_per_point_eps():
    oracle = _binary(5, n=50, d=10, sparse=True)
    lams = [0.01, 1.0, 0.1]
    eps = [1e-4, 1e-3, 1e-3]
    path = regularization_path(oracle, L2(), lams, eps=eps, order="increasing")
    assert path.run_order == (0, 2, 1)
    for e, res in zip(eps, path.results):
        assert res.eps == e and res.gap <= e


def test_orders():
    lams = [0.1, 1.0, 0.01]
    assert run_order(lams, "increasing") == (2, 0, 1)
    assert run_order(lams, "decreasing") == (1, 0, 2)
    assert run_order(lams, "given") == (0, 1, 2)
    assert run_order(lams, "auto") == run_order(lams, AUTO_ORDER)
    with pytest.raises(InputError, match="order"):
        run_order(lams, "sideways")


def test_warm_start_reuses_cuts_lower_bound_at_once():
    oracle = _binary(1)
    reg = L2()
    res1, ws = minimize_with_working_set(oracle, reg, 0.1, eps=1e-6)
    n_before = ws.n_cuts
    cold = minimize(oracle, reg, 0.05, eps=1e-6)
    warm = minimize(oracle, reg, 0.05, eps=1e-6, warm_start=WarmStart(ws, res1.w))
    # the first iteration's lower bound comes from every carried cut: finite and valid at once
    assert np.isfinite(warm.history.lower[0])
    assert warm.history.lower[0] <= cold.objective + ROUND
    assert warm.history.lower[0] > cold.history.lower[0]
    assert ws.n_cuts >= 1 and n_before >= 1
    assert abs(warm.objective - cold.objective) <= 2e-6
    assert warm.n_iter < cold.n_iter
    # the start point's F is re-evaluated at the new lam
    assert warm.history.upper[0] == pytest.approx(0.05 * reg(res1.w) + oracle(res1.w).value, rel=1e-12)


def test_warm_start_floor_cut_not_added_twice():
    oracle = _binary(2, n=60, d=8)
    reg = L1()
    res1, ws = minimize_with_working_set(oracle, reg, 0.1, eps=1e-4, risk_lower_bound=0.0)
    assert ws.max_constant_offset() == 0.0
    n_const_before = _n_constant(ws)
    res2, ws2 = minimize_with_working_set(
        oracle, reg, 0.01, eps=1e-4, risk_lower_bound=0.0, prune_after=None, warm_start=WarmStart(ws, res1.w)
    )
    assert ws2 is ws  # ownership: extended in place, not copied
    assert res2.converged
    assert _n_constant(ws2) == n_const_before
    cold = minimize(oracle, reg, 0.01, eps=1e-4, risk_lower_bound=0.0)
    assert abs(res2.objective - cold.objective) <= 2e-4
    assert res2.lower_bound <= cold.objective + ROUND


def test_warm_start_max_cuts_from_the_start():
    oracle = _binary(2, n=60, d=8)
    res1, ws = minimize_with_working_set(oracle, L2(), 0.1, eps=1e-6, prune_after=None)
    assert ws.n_cuts > 6
    res2 = minimize(oracle, L2(), 0.01, eps=1e-4, max_cuts=6, warm_start=WarmStart(ws, res1.w))
    cold = minimize(oracle, L2(), 0.01, eps=1e-4)
    assert res2.converged and res2.history.n_cuts.max() <= 6
    assert abs(res2.objective - cold.objective) <= 2e-4
    assert res2.lower_bound <= cold.objective + ROUND


def _n_constant(ws):
    A = ws.matrix()
    norms = np.asarray(abs(A).sum(axis=1)).ravel()
    return int(np.sum(norms == 0))


def test_warm_start_memory_limit():
    oracle = _binary(4, n=50, d=12)
    path = regularization_path(oracle, L2(), [1.0, 0.1, 0.01], eps=1e-4, memory_limit=6000)
    assert path.converged
    for res in path.results:
        assert res.peak_working_set_bytes <= 6000 + 12 * 8 * 4


def test_callback_gets_lam_and_stops_path():
    oracle = _binary(6)
    seen = []

    def cb(info):
        seen.append(info.lam)
        return info.lam == 0.01 and info.iteration >= 2

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = regularization_path(oracle, L2(), [1.0, 0.01, 0.001], eps=1e-6, order="decreasing", callback=cb)
    assert set(seen) == {1.0, 0.01}
    assert path.status == "callback"
    assert path.run_order == (0, 1)
    assert path.results[2] is None and path.not_run == (2,)
    # minimize fills lam in too
    infos = []
    minimize(oracle, L2(), 0.5, eps=1e-3, callback=infos.append)
    assert infos and all(i.lam == 0.5 for i in infos)


def test_on_point_stops_and_sees_each_point():
    oracle = _binary(7)
    calls = []

    def on_point(i, lam, res):
        calls.append((i, lam, res.status))
        return len(calls) == 2

    path = regularization_path(oracle, L2(), [0.01, 1.0, 0.1], eps=1e-4, order="decreasing", on_point=on_point)
    assert calls == [(1, 1.0, "converged"), (2, 0.1, "converged")]
    assert path.status == "stopped"
    assert path.results[0] is None and path.run_order == (1, 2)
    # True on the last point: nothing was left to stop
    path = regularization_path(oracle, L2(), [1.0], eps=1e-4, on_point=lambda *a: True)
    assert path.status == "converged"


def test_extend_adds_points_warm_and_certified():
    oracle = _binary(11)
    reg = L2()
    asked = []

    def extend(lams, results):
        asked.append((lams, tuple(r is not None for r in results)))
        if len(lams) >= 4:
            return None
        return lams[-1] / 10.0, 1e-4

    seen = []
    path = regularization_path(
        oracle, reg, [1.0, 0.1], eps=1e-4, extend=extend, on_point=lambda i, lam, res: seen.append((i, lam))
    )
    assert path.status == "converged"
    assert path.lams == pytest.approx((1.0, 0.1, 0.01, 0.001))
    assert path.run_order == (0, 1, 2, 3)
    assert [i for i, _ in seen] == [0, 1, 2, 3]
    # called once the given points ran, then after each point it added
    assert [len(lams) for lams, _ in asked] == [2, 3, 4]
    assert all(all(ran) for _, ran in asked)
    for lam, res in zip(path.lams, path.results):
        cold = minimize(oracle, reg, lam, eps=1e-4)
        assert res.converged and res.gap <= 1e-4
        assert abs(res.objective - cold.objective) <= 2e-4 + ROUND
        assert res.lower_bound <= cold.objective + ROUND * max(1.0, abs(cold.objective))
    # an added point starts from the working set: its first lower bound is already certified (> 0)
    assert path.results[2].history.lower[0] > 0


def test_extend_below_starts_from_the_nearest_point():
    oracle = _binary(12)
    starts = []
    done = []

    def extend(lams, results):
        return None if len(lams) > 2 else (10.0, 1e-4)

    def callback(info):
        if info.lam == 10.0 and not starts:
            starts.append(info)

    path = regularization_path(
        oracle,
        L2(),
        [0.01, 1.0],
        eps=1e-4,
        order="decreasing",
        extend=extend,
        callback=callback,
        on_point=lambda i, lam, res: done.append(i),
    )
    assert path.lams == (0.01, 1.0, 10.0) and done == [1, 0, 2]
    assert path.results[2].converged
    # the run at lam = 10 started at the best w of lam = 1 (nearest), not of lam = 0.01 (run last)
    first = path.results[2].history.upper[0]
    w1 = path.results[1].w
    assert first == pytest.approx(10.0 * L2()(w1) + oracle(w1).value, rel=1e-9)


def test_extend_not_called_after_a_stop_and_refusals():
    oracle = _binary(13)
    called = []

    def extend(lams, results):
        called.append(1)
        return 0.01, 1e-4

    path = regularization_path(oracle, L2(), [1.0, 0.1], eps=1e-4, extend=extend, on_point=lambda *a: True)
    assert path.status == "stopped" and called == [] and len(path.lams) == 2
    with pytest.raises(InputError, match="run already"):
        regularization_path(oracle, L2(), [1.0, 0.1], eps=1e-4, extend=lambda lams, r: (1.0, 1e-4))
    with pytest.raises(InputError, match="extend"):
        regularization_path(oracle, L2(), [1.0], eps=1e-3, extend=3)
    with pytest.raises(InputError, match="lams"):
        regularization_path(oracle, L2(), [1.0], eps=1e-3, extend=lambda lams, r: (-1.0, 1e-3))


def test_time_limit_whole_path():
    oracle = _binary(8, n=200, d=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = regularization_path(oracle, L2(), [1.0, 1e-3, 1e-4, 1e-5], eps=1e-9, time_limit=1e-6, max_iter=100000)
    assert path.status == "time_limit"
    assert len(path.run_order) < 4 or path.results[path.run_order[-1]].status == "time_limit"
    assert all((r is None) == (i not in path.run_order) for i, r in enumerate(path.results))
    assert path.seconds < 5.0


def test_max_iter_point_continues_path():
    oracle = _binary(9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        path = regularization_path(oracle, L2(), [1.0, 1e-3], eps=1e-8, max_iter=3, order="decreasing")
    assert path.status == "max_iter"
    assert path.run_order == (0, 1)
    assert all(r.status == "max_iter" and r.n_iter == 3 for r in path.results)


@pytest.mark.parametrize(
    "lams, eps, match",
    [
        ([], 1e-3, "empty"),
        ([1.0, 0.0], 1e-3, "lams"),
        ([1.0, -2.0], 1e-3, "lams"),
        ([1.0, float("nan")], 1e-3, "lams"),
        ([1.0, 0.1, 1.0], 1e-3, "duplicates"),
        ("1.0", 1e-3, "sequence"),
        ([1.0, 0.1], [1e-3], "2 lams"),
        ([1.0, 0.1], [1e-3, 0.0], "eps"),
        ([1.0, 0.1], -1.0, "eps"),
    ],
)
def test_bad_input(lams, eps, match):
    with pytest.raises(InputError, match=match):
        regularization_path(_binary(0), L2(), lams, eps=eps)


def test_bad_input_other():
    oracle = _binary(0)
    with pytest.raises(InputError, match="order"):
        regularization_path(oracle, L2(), [1.0], eps=1e-3, order="up")
    with pytest.raises(InputError, match="time_limit"):
        regularization_path(oracle, L2(), [1.0], eps=1e-3, time_limit=0)
    with pytest.raises(InputError, match="on_point"):
        regularization_path(oracle, L2(), [1.0], eps=1e-3, on_point=3)


def test_warm_start_refusals(tmp_path):
    oracle = _binary(0)
    _, ws = minimize_with_working_set(oracle, L2(), 1.0, eps=1e-3)
    with pytest.raises(InputError, match="resume"):
        minimize(oracle, L2(), 0.1, warm_start=WarmStart(ws), checkpoint=tmp_path / "c.npz", resume=True)
    with pytest.raises(InputError, match="w0"):
        minimize(oracle, L2(), 0.1, warm_start=WarmStart(ws, np.zeros(oracle.dim)), w0=np.zeros(oracle.dim))
    with pytest.raises(InputError, match="dim"):
        minimize(oracle, L2(), 0.1, warm_start=WarmStart(WorkingSet(oracle.dim + 1)))
    with pytest.raises(InputError, match="groups"):
        minimize(oracle, MixedNorm(np.arange(oracle.dim) % 2), 0.1, warm_start=WarmStart(ws))
    with pytest.raises(InputError, match="warm_start"):
        minimize(oracle, L2(), 0.1, warm_start=ws)
    with pytest.raises(InputError, match="WorkingSet"):
        minimize(oracle, L2(), 0.1, warm_start=WarmStart([1, 2]))
    # a warm-started run may write a checkpoint (resumed later without warm_start)
    res = minimize(oracle, L2(), 0.1, eps=1e-3, warm_start=WarmStart(ws), checkpoint=tmp_path / "d.npz")
    assert res.converged


def test_warm_start_default_point_and_empty_working_set():
    oracle = _binary(3)
    cold = minimize(oracle, L2(), 0.1, eps=1e-4)
    warm = minimize(oracle, L2(), 0.1, eps=1e-4, warm_start=WarmStart(WorkingSet(oracle.dim)))
    assert warm.n_iter == cold.n_iter and warm.objective == pytest.approx(cold.objective)


def test_path_summary_and_kelley_refused():
    oracle = _binary(0)
    path = regularization_path(oracle, L2(), [1.0, 0.1], eps=1e-3)
    text = path.summary()
    assert "lam 1" in text and "converged" in text
    from cutplane.regularizers import Box

    with pytest.raises(InputError, match="norm regulariser"):
        regularization_path(oracle, Box(-np.ones(oracle.dim), np.ones(oracle.dim)), [1.0], eps=1e-3)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**31),
    kind=st.sampled_from(["l2", "mtl", "pmtl"]),
    rtol=st.sampled_from([1e-3, 1e-2]),
    order=st.sampled_from(["decreasing", "increasing"]),
)
def test_path_with_a_relative_gap(seed, kind, rtol, order):
    """``rtol`` on a path: every point stops at its own relative gap, its bounds valid against a
    cold run at that lam solved far tighter."""
    oracle = _multiclass(seed)
    reg = _regularizer(kind, oracle.dim)
    lams = [1.0, 0.1, 0.01]
    path = regularization_path(oracle, reg, lams, eps=1e-12, rtol=rtol, order=order)
    assert path.status == "converged"
    for lam, res in zip(lams, path.results):
        cold = minimize(oracle, reg, lam, eps=1e-7)
        assert res.converged and res.rtol == rtol
        assert res.gap <= max(1e-12, rtol * abs(res.objective))
        assert res.lower_bound <= cold.objective + ROUND * max(1.0, abs(cold.objective))
        assert cold.lower_bound - ROUND * max(1.0, abs(cold.objective)) <= res.objective
        assert res.objective - cold.objective <= res.gap + cold.gap + ROUND
