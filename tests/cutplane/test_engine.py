"""BMRM and Kelley against direct cvxpy solves; certificates; statuses; input checks.

The oracles are written here with numpy (the task oracles live elsewhere) so the engine is
tested on its own: a max-of-affine risk and a binary hinge risk, dense and sparse slopes.
"""

import time

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import Result, minimize
from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import ConvergenceWarning, InexactCutWarning, InputError
from cutplane.regularizers import L1, L2, Box, MixedNorm, Simplex


class MaxAffine:
    """R(w) = max_i <a_i, w> + b_i."""

    def __init__(self, A, b, sparse=False):
        self.A, self.b, self.sparse, self.dim = np.asarray(A), np.asarray(b), sparse, A.shape[1]
        self.calls = []

    def __call__(self, w):
        self.calls.append(np.array(w))
        v = self.A @ w + self.b
        i = int(np.argmax(v))
        slope = sp.csr_matrix(self.A[i][None, :]) if self.sparse else self.A[i].copy()
        return OracleResult(float(v[i]), Cut(slope, float(self.b[i])))

    def value(self, w):
        return float(np.max(self.A @ w + self.b))

    def cvx(self, w):
        return cp.max(self.A @ w + self.b)


class Hinge:
    """R(w) = (1/n) sum_i max(0, 1 - y_i <x_i, w>) (chapter Example 1.1)."""

    risk_lower_bound = 0.0

    def __init__(self, X, y, sparse=False):
        self.X, self.y, self.sparse, self.dim = X, y, sparse, X.shape[1]
        self.calls = []

    def __call__(self, w):
        self.calls.append(np.array(w))
        m = 1.0 - self.y * (self.X @ w)
        act = m > 0
        val = float(np.maximum(m, 0).sum() / len(self.y))
        a = -(self.y[act, None] * self.X[act]).sum(axis=0) / len(self.y)
        slope = sp.csr_matrix(a[None, :]) if self.sparse else a
        return OracleResult(val, Cut(slope, val - float(a @ w)))

    def value(self, w):
        return float(np.maximum(1.0 - self.y * (self.X @ w), 0).mean())

    def cvx(self, w):
        return cp.sum(cp.pos(1 - cp.multiply(self.y, self.X @ w))) / len(self.y)


def make_oracle(kind, seed, n, dim, sparse):
    rng = np.random.default_rng(seed)
    if kind == "maxaffine":
        return MaxAffine(rng.standard_normal((n, dim)), rng.standard_normal(n), sparse)
    X = rng.standard_normal((n, dim)) * (rng.random((n, dim)) < 0.7)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return Hinge(X, y, sparse)


def direct_solve(oracle, term, lam, constraints=lambda w: []):
    w = cp.Variable(oracle.dim)
    obj = oracle.cvx(w) if term is None else lam * term(w) + oracle.cvx(w)
    prob = cp.Problem(cp.Minimize(obj), constraints(w))
    prob.solve(solver="CLARABEL")
    return prob.value


def check_certificate(res, oracle, reg_value, lam, eps):
    """The invariants every run must satisfy, checked on the full history."""
    h = res.history
    assert len(h) == res.n_iter == len(oracle.calls)
    # non-decreasing; it may only move by round-off when clipped at a new best upper bound
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:]))), "lower bound decreased"
    assert np.all(h.lower <= h.best_upper), "lower bound above the upper bound"
    assert np.all(np.diff(h.best_upper) <= 0)
    np.testing.assert_array_equal(h.best_upper, np.minimum.accumulate(h.upper))
    np.testing.assert_allclose(h.gap, h.best_upper - h.lower)
    # upper[t] really is F at the t-th query point, and the returned w is the best one seen
    F = np.array([lam * reg_value(w) + oracle.value(w) for w in oracle.calls])
    np.testing.assert_allclose(h.upper, F, rtol=1e-12, atol=1e-12)
    assert res.objective == pytest.approx(lam * reg_value(res.w) + oracle.value(res.w), abs=1e-12)
    assert res.objective == h.best_upper[-1] == F.min()
    assert res.lower_bound == h.lower[-1] and res.gap == pytest.approx(res.objective - res.lower_bound)
    if res.status == "converged":
        assert res.gap <= eps


@settings(max_examples=12)
@given(
    seed=st.integers(0, 2**31),
    kind=st.sampled_from(["maxaffine", "hinge"]),
    n=st.integers(1, 25),
    dim=st.integers(1, 6),
    lam=st.sampled_from([0.05, 0.5, 5.0]),
    sparse=st.booleans(),
)
def test_bmrm_l2_matches_direct_solve(seed, kind, n, dim, lam, sparse):
    oracle = make_oracle(kind, seed, n, dim, sparse)
    eps = 1e-4
    res = minimize(oracle, L2(), lam, eps=eps, max_iter=500)
    assert isinstance(res, Result) and res.status == "converged" and res.exact
    ref = direct_solve(oracle, lambda w: 0.5 * cp.sum_squares(w), lam)
    check_certificate(res, oracle, L2(), lam, eps)
    assert ref - 1e-6 <= res.objective <= ref + eps + 1e-6
    assert res.lower_bound <= ref + 1e-6
    assert res.alpha is not None and res.alpha.sum() == pytest.approx(1.0)


@settings(max_examples=10)
@given(
    seed=st.integers(0, 2**31),
    kind=st.sampled_from(["maxaffine", "hinge"]),
    n=st.integers(1, 20),
    dim=st.integers(1, 5),
    lam=st.sampled_from([0.05, 0.5]),
    sparse=st.booleans(),
)
def test_bmrm_l1_matches_direct_solve(seed, kind, n, dim, lam, sparse):
    oracle = make_oracle(kind, seed, n, dim, sparse)
    if kind == "maxaffine":
        oracle.A = np.vstack([oracle.A, np.zeros(dim)])  # R >= -3 keeps every L1 model bounded
        oracle.b = np.append(oracle.b, -3.0)
        oracle.risk_lower_bound = -3.0
    eps = 1e-4
    res = minimize(oracle, L1(), lam, eps=eps, max_iter=500)
    assert res.status == "converged"
    ref = direct_solve(oracle, cp.norm1, lam)
    check_certificate(res, oracle, L1(), lam, eps)
    assert ref - 1e-6 <= res.objective <= ref + eps + 1e-6


@settings(max_examples=10)
@given(seed=st.integers(0, 2**31), n=st.integers(1, 30), dim=st.integers(1, 6))
def test_kelley_piecewise_linear_over_simplex_is_exact(seed, n, dim):
    """f = max of affine: Kelley reaches the LP optimum (to round-off, far below eps)."""
    oracle = make_oracle("maxaffine", seed, n, dim, False)
    res = minimize(oracle, Simplex(dim), 1.0, method="kelley", eps=1e-9, max_iter=500)
    assert res.status == "converged"
    ref = direct_solve(oracle, None, 1.0, lambda w: [w >= 0, cp.sum(w) == 1])
    assert res.objective == pytest.approx(ref, abs=1e-7)
    assert Simplex(dim).contains(res.w)
    check_certificate(res, oracle, lambda w: 0.0, 1.0, 1e-9)


class Quadratic:
    """f(x) = 1/2 ||x - c||^2 + <g, x>: smooth and convex."""

    def __init__(self, c, g):
        self.c, self.g, self.dim = c, g, len(c)
        self.calls = []

    def __call__(self, x):
        self.calls.append(np.array(x))
        grad = x - self.c + self.g
        val = self.value(x)
        return OracleResult(val, Cut(grad, val - float(grad @ x)))

    def value(self, x):
        return float(0.5 * np.sum((x - self.c) ** 2) + self.g @ x)


@pytest.mark.parametrize("set_kind", ["simplex", "box"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kelley_smooth_function(set_kind, seed):
    rng = np.random.default_rng(seed)
    dim = 3
    f = Quadratic(rng.standard_normal(dim), rng.standard_normal(dim))
    if set_kind == "simplex":
        reg, cons = Simplex(dim), (lambda x: [x >= 0, cp.sum(x) == 1])
    else:
        lo, up = -rng.random(dim), rng.random(dim)
        reg, cons = Box(lo, up), (lambda x: [x >= lo, x <= up])
    eps = 1e-4
    res = minimize(f, reg, 1.0, method="kelley", eps=eps, max_iter=2000)
    assert res.status == "converged"
    x = cp.Variable(dim)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - f.c) + f.g @ x), cons(x))
    prob.solve(solver="CLARABEL")
    assert prob.value - 1e-7 <= res.objective <= prob.value + eps
    assert reg.contains(res.w)
    check_certificate(res, f, lambda w: 0.0, 1.0, eps)


# -------------------------------------------------------------- statuses
def hinge_problem(seed=0, n=40, dim=5):
    return make_oracle("hinge", seed, n, dim, False)


def test_max_iter_status_and_warning():
    oracle = hinge_problem()
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = minimize(oracle, L2(), 0.01, eps=1e-12, max_iter=3)
    assert res.status == "max_iter" and res.n_iter == 3 and res.gap > 1e-12
    check_certificate(res, oracle, L2(), 0.01, 1e-12)


def test_callback_stops_the_run():
    seen = []

    def callback(info):
        seen.append(info)
        return info.iteration == 2

    oracle = hinge_problem()
    res = minimize(oracle, L2(), 0.01, eps=1e-12, callback=callback)
    assert res.status == "callback" and res.n_iter == 2
    assert [i.iteration for i in seen] == [1, 2]
    assert seen[-1].lower == res.lower_bound and seen[-1].best_upper == res.objective


def test_keyboard_interrupt_returns_best_so_far():
    inner = hinge_problem()

    class Interrupting:
        dim = inner.dim

        def __init__(self):
            self.calls = inner.calls

        def __call__(self, w):
            if len(inner.calls) == 4:
                raise KeyboardInterrupt
            return inner(w)

        value = staticmethod(inner.value)

    oracle = Interrupting()
    res = minimize(oracle, L2(), 0.01, eps=1e-12)
    assert res.status == "interrupted" and res.n_iter == 4
    check_certificate(res, oracle, L2(), 0.01, 1e-12)


def test_time_limit():
    inner = hinge_problem()

    class Slow:
        dim = inner.dim

        def __call__(self, w):
            time.sleep(0.05)
            return inner(w)

    with pytest.warns(ConvergenceWarning, match="time_limit"):
        res = minimize(Slow(), L2(), 0.001, eps=1e-12, time_limit=0.12)
    assert res.status == "time_limit" and 1 <= res.n_iter <= 4


def test_inexact_cuts_are_flagged():
    inner = hinge_problem()

    class Loose:
        dim = inner.dim

        def __call__(self, w):
            r = inner(w)
            return OracleResult(r.value, r.cut, exact=False)

    with pytest.warns(InexactCutWarning):
        res = minimize(Loose(), L2(), 0.1, eps=1e-4)
    assert res.exact is False and res.status == "converged"
    assert "inexact" in res.summary()


def test_verbose_and_logging(caplog, capsys):
    import logging

    with caplog.at_level(logging.INFO, logger="cutplane"):
        res = minimize(hinge_problem(), L2(), 0.1, eps=1e-4, verbose=True)
    assert sum("it " in r.getMessage() for r in caplog.records) == res.n_iter
    assert "gap" in capsys.readouterr().err  # the tqdm bar
    assert "converged" in repr(res) and "objective" in res.summary()


def test_progress_on_the_scale_F_over_lam(caplog, capsys):
    """progress_scale="F/lam" shows and logs Omega + R / lam (the estimators' F, C = 1 / lam) and
    eps on that scale; the counter is open-ended (no total, no ETA); the result stays on F."""
    import logging
    import re

    lam, eps = 0.1, 1e-4
    with caplog.at_level(logging.INFO, logger="cutplane"):
        res = minimize(hinge_problem(), L2(), lam, eps=eps, verbose=True, progress_scale="F/lam")
    last = [r.getMessage() for r in caplog.records if " it " in r.getMessage()][-1]
    best = float(re.search(r"best ([-+0-9.e]+)", last).group(1))
    assert best == pytest.approx(res.objective / lam, rel=1e-8)
    assert f"(eps {eps / lam:.3g})" in last
    err = capsys.readouterr().err
    assert f"eps={eps / lam:.3g}" in err and f"{res.n_iter}it [" in err and "/1000" not in err
    with caplog.at_level(logging.INFO, logger="cutplane"):
        plain = minimize(hinge_problem(), L2(), lam, eps=eps)
    assert plain.objective == pytest.approx(res.objective)
    with pytest.raises(InputError, match="progress_scale"):
        minimize(hinge_problem(), L2(), lam, progress_scale="C")


def test_progress_reporter_shows_a_result_it_did_not_see():
    """A reporter fed by a callback misses the converging iteration: close(status, result) shows it."""
    import io

    from cutplane.progress import ProgressReporter

    rep = ProgressReporter(False, "x", scale=10.0, eps=0.01, log=False)
    assert rep._postfix(1.0, 0.5, 0.5) == {"upper": "10", "lower": "5", "gap": "5", "eps": "0.1"}
    res = minimize(hinge_problem(), L2(), 0.1, eps=1e-3)
    from tqdm import tqdm

    out = io.StringIO()
    rep._bar = tqdm(total=None, desc="x", file=out)
    rep.close("converged", res)
    text = out.getvalue()
    assert f"x [converged]: {res.n_iter}it" in text and f"gap={10 * res.gap:.3g}" in text


# ---------------------------------------------------------- bad input
class Bad:
    dim = 2

    def __init__(self, result):
        self.result = result

    def __call__(self, w):
        return self.result


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"lam": 0.0}, "lam"),
        ({"lam": -1.0}, "lam"),
        ({"lam": np.nan}, "lam"),
        ({"eps": 0.0}, "eps"),
        ({"max_iter": 0}, "max_iter"),
        ({"max_iter": 2.5}, "max_iter"),
        ({"time_limit": -1.0}, "time_limit"),
        ({"max_cuts": 1}, "max_cuts"),
        ({"prune_after": 0}, "prune_after"),
        ({"w0": np.zeros(3)}, "w0"),
        ({"w0": np.array([np.nan, 0.0])}, "w0"),
        ({"method": "ls-bmrm-x"}, "method"),
        ({"method": "ls-bmrm", "theta": 0.0}, "theta"),
        ({"method": "ls-bmrm", "theta": 1.5}, "theta"),
        ({"method": "ls-bmrm", "theta": np.nan}, "theta"),
        ({"method": "bmrm", "theta": 0.1}, "theta"),
        ({"method": "kelley"}, "regularizer"),
        ({"regularizer": Simplex(3)}, "regularizer"),
        ({"solver": "NOPE"}, "solver"),
    ],
)
def test_bad_arguments(kwargs, field):
    args = {"lam": 1.0, "regularizer": L2()}
    args.update(kwargs)
    oracle = Bad(OracleResult(1.0, Cut(np.zeros(2), 1.0)))
    with pytest.raises(InputError) as err:
        minimize(oracle, args.pop("regularizer"), args.pop("lam"), **args)
    assert err.value.field == field


@pytest.mark.parametrize(
    "result, match",
    [
        (OracleResult(np.nan, Cut(np.zeros(2), 0.0)), "non-finite"),
        (OracleResult(1.0, Cut(np.zeros(3), 1.0)), "shape"),
        (OracleResult(1.0, Cut(sp.csr_matrix((2, 2)), 1.0)), "shape"),
        (OracleResult(1.0, Cut(np.zeros(2), 2.0)), "above the risk"),
        (OracleResult(1.0, Cut(np.array([np.inf, 0.0]), 1.0)), "finite"),
        ((1.0,), "OracleResult"),
    ],
)
def test_bad_oracle_results(result, match):
    with pytest.raises(InputError, match=match):
        minimize(Bad(result), L2(), 1.0)


def test_non_minorant_cuts_are_detected():
    """A concave 'risk' R(w) = -w^2 gives tangents above R elsewhere: the lower bound crosses the upper."""

    class Concave:
        dim = 1

        def __call__(self, w):
            val, g = -(float(w[0]) ** 2), -2.0 * float(w[0])
            return OracleResult(val, Cut(np.array([g]), val - g * float(w[0])))

    with pytest.raises(InputError, match="not minorants"):
        minimize(Concave(), L2(), 1.0, w0=np.array([1.0]), eps=1e-8)


@pytest.mark.parametrize(
    "make_reg, floor_cut",
    [
        (lambda dim: L2(), False),
        (lambda dim: L1(), True),
        (lambda dim: MixedNorm(np.arange(dim) % 2, p=2.0), False),
        (lambda dim: MixedNorm(np.arange(dim) % 2, p=1.0), True),
        (lambda dim: MixedNorm(np.arange(dim) % 2, p=4.0), True),
    ],
)
def test_oracle_risk_floor_is_a_cut_only_where_the_regulariser_takes_it(make_reg, floor_cut):
    """The oracle's declared ``risk_lower_bound`` becomes the cut ``R >= 0`` for L1 and the
    p != 2 block norms, not for 1/2 ||w||^2 (L2, p = 2); an explicit ``risk_lower_bound=`` always
    does; the optimum is the same either way."""
    dim, lam, eps = 4, 0.1, 1e-5
    oracle = make_oracle("hinge", 3, 30, dim, False)
    reg = make_reg(dim)
    assert reg.risk_floor_cut is floor_cut
    default = minimize(oracle, reg, lam, eps=eps, max_iter=2000, prune_after=None)
    explicit = minimize(oracle, reg, lam, eps=eps, max_iter=2000, prune_after=None, risk_lower_bound=0.0)
    assert default.status == explicit.status == "converged"
    assert default.history.n_cuts[0] == (2 if floor_cut else 1) and explicit.history.n_cuts[0] == 2
    assert default.objective == pytest.approx(explicit.objective, abs=2 * eps)


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    kind=st.sampled_from(["maxaffine", "hinge"]),
    n=st.integers(1, 25),
    dim=st.integers(1, 6),
    lam=st.sampled_from([0.05, 0.5, 5.0]),
    rtol=st.sampled_from([1e-3, 1e-2, 0.1]),
    method=st.sampled_from(["bmrm", "ls-bmrm"]),
)
def test_relative_gap_stops_certified(seed, kind, n, dim, lam, rtol, method):
    """With ``rtol`` the run stops at the first iteration whose certified gap is at most
    ``max(eps, rtol |F(w_best)|)``; the bounds stay valid against a direct solve."""
    oracle = make_oracle(kind, seed, n, dim, False)
    eps = 1e-9
    res = minimize(oracle, L2(), lam, eps=eps, rtol=rtol, max_iter=500, method=method)
    assert res.status == "converged" and res.rtol == rtol
    h = res.history
    tol = np.maximum(eps, rtol * np.abs(h.best_upper))
    assert res.gap <= res.tolerance == pytest.approx(max(eps, rtol * abs(res.objective)))
    assert np.all(h.gap[:-1] > tol[:-1]), "the run went on past a certified relative gap"
    ref = direct_solve(oracle, lambda w: 0.5 * cp.sum_squares(w), lam)
    assert res.lower_bound <= ref + 1e-6 and ref - 1e-6 <= res.objective <= ref + res.gap + 1e-6
    assert np.all(np.diff(h.lower) >= -1e-12 * (1 + np.abs(h.lower[1:])))


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, float("nan"), "0.01", True])
def test_bad_rtol_is_refused(bad):
    with pytest.raises(InputError) as err:
        minimize(make_oracle("hinge", 0, 10, 3, False), L2(), 0.1, rtol=bad)
    assert err.value.field == "rtol"
