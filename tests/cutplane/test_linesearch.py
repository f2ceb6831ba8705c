"""Exact and generic line searches against brute force (candidate points and a fine grid)."""

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import linesearch
from cutplane.exceptions import InputError
from cutplane.linesearch import (
    LineSearchResult,
    _breakpoints_general,
    _breakpoints_two,
    exact_line_search,
    line_search,
    minimize_along,
)


def f_of(a2, a1, C, S, k):
    k = np.asarray(k, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        return _f_of(a2, a1, C, S, k)


def _f_of(a2, a1, C, S, k):
    env = (C[None] + k.reshape(-1, 1, 1) * S[None]).max(axis=2).sum(axis=1)
    return 0.5 * a2 * k.ravel() ** 2 + a1 * k.ravel() + env


def brute_force(a2, a1, C, S, k_max=None):
    """Exact minimum by enumeration: f is quadratic between pairwise crossings of lines."""
    n, m = C.shape
    slope_inf = a1 + S.max(axis=1).sum()
    if a2 == 0 and k_max is None and slope_inf < 0:
        return math.inf, -math.inf
    cand = [0.0]
    for i in range(n):
        for j in range(m):
            for k in range(m):
                if S[i, k] != S[i, j]:
                    with np.errstate(over="ignore"):
                        t = (C[i, j] - C[i, k]) / (S[i, k] - S[i, j])
                    if 0 < t < math.inf:
                        cand.append(t)
    hi = k_max if k_max is not None else max(cand) + 1.0
    if a2 > 0 and k_max is None:
        hi = max(hi, -slope_inf / a2 + 1.0)
    cand = np.unique(np.clip(np.array(cand + [hi]), 0.0, hi))
    pts = list(cand)
    for lo, up in zip(cand[:-1], cand[1:]):
        mid = 0.5 * (lo + up)
        s = S[np.arange(n), np.argmax(C + mid * S, axis=1)].sum()
        if a2 > 0:
            pts.append(min(max(-(a1 + s) / a2, lo), up))
    pts = np.array(pts)
    vals = f_of(a2, a1, C, S, pts)
    best = vals.min()
    return float(pts[vals <= best].min()), float(best)


def instance(draw, ints):
    n = draw(st.integers(1, 5))
    m = draw(st.integers(1, 5))
    if ints:  # small integers: many exact ties between lines and between breakpoints
        elem = st.integers(-3, 3).map(float)
    else:
        elem = st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 6))
    C = np.array(draw(st.lists(elem, min_size=n * m, max_size=n * m))).reshape(n, m)
    S = np.array(draw(st.lists(elem, min_size=n * m, max_size=n * m))).reshape(n, m)
    a2 = draw(st.sampled_from([0.0, 0.0, 0.5, 1.0]) | st.floats(1e-3, 10))
    a1 = draw(elem)
    return a2, a1, C, S


@st.composite
def instances(draw):
    return instance(draw, draw(st.booleans()))


def check_against_enumeration(res, k_bf, v_bf, k_max):
    """``res`` is the enumerated minimum (or flags the unbounded case), the smallest minimiser."""
    if math.isinf(k_bf):
        assert res.unbounded and res.k == math.inf and res.value == -math.inf
        return
    assert not res.unbounded
    assert res.value <= v_bf + 1e-9 * (1.0 + abs(v_bf))
    assert 0.0 <= res.k and (k_max is None or res.k <= k_max)
    # the smallest minimiser: no point left of k is as good
    assert res.k <= k_bf + 1e-9 * (1.0 + k_bf)


@settings(max_examples=400)
@given(instances(), st.booleans())
def test_exact_matches_enumeration(inst, capped):
    a2, a1, C, S = inst
    k_max = 7.5 if capped else None
    k_bf, v_bf = brute_force(a2, a1, C, S, k_max)
    res = exact_line_search(a2, a1, C, S, k_max=k_max)
    assert isinstance(res, LineSearchResult)
    check_against_enumeration(res, k_bf, v_bf, k_max)
    if not res.unbounded:
        assert res.value == pytest.approx(f_of(a2, a1, C, S, res.k)[0], rel=1e-12, abs=1e-12)


@settings(max_examples=300)
@given(instances(), st.booleans())
def test_selection_by_halves_matches_enumeration(inst, capped):
    """The same minimiser when every breakpoint set is halved by selection before the sort."""
    a2, a1, C, S = inst
    k_max = 7.5 if capped else None
    k_bf, v_bf = brute_force(a2, a1, C, S, k_max)
    with mock.patch.object(linesearch, "_SORT_BELOW", 1), mock.patch.object(linesearch, "COMPILED_MIN_TERMS", 10**9):
        res = exact_line_search(a2, a1, C, S, k_max=k_max)
    check_against_enumeration(res, k_bf, v_bf, k_max)


def test_the_compiled_pass_comes_after_enough_numpy_searches():
    """The first COMPILED_AFTER large searches of a process run in numpy (a short fit loads no
    kernel), the later ones compiled; small ones always in numpy."""
    calls = []
    real = linesearch._compiled_two_lines

    def spy(*args):
        calls.append(args[2].shape[0])
        return real(*args)

    rng = np.random.default_rng(3)
    big = np.column_stack([np.zeros(5000), rng.standard_normal(5000)])
    small = big[:100]
    with (
        mock.patch.object(linesearch, "_numpy_searches", 0),
        mock.patch.object(linesearch, "COMPILED_AFTER", 3),
        mock.patch.object(linesearch, "_compiled_two_lines", spy),
    ):
        results = [exact_line_search(1.0, -5.0, pieces, pieces[::-1].copy()) for pieces in [big] * 5 + [small]]
        assert calls == [5000, 5000]  # the 4th and 5th large searches
        assert linesearch._numpy_searches == 3
    for res in results[1:5]:  # numpy and compiled: the same root up to the rounding of the sums
        assert res.k == pytest.approx(results[0].k, rel=1e-12) and res.n_breakpoints == results[0].n_breakpoints


@st.composite
def two_line_instances(draw):
    """Two lines per term, up to 60 terms: integers (ties everywhere) or 6-decimal floats."""
    n = draw(st.integers(1, 60))
    if draw(st.booleans()):
        elem = st.integers(-3, 3).map(float)
    else:
        elem = st.floats(-10, 10, allow_nan=False).map(lambda x: round(x, 6))
    C = np.array(draw(st.lists(elem, min_size=2 * n, max_size=2 * n))).reshape(n, 2)
    S = np.array(draw(st.lists(elem, min_size=2 * n, max_size=2 * n))).reshape(n, 2)
    a2 = draw(st.sampled_from([0.0, 0.0, 0.5, 1.0]) | st.floats(1e-3, 10))
    return a2, draw(elem), C, S


@settings(max_examples=400, deadline=None)
@given(two_line_instances(), st.booleans())
def test_compiled_two_lines_match_enumeration(inst, capped):
    """The compiled pass (partitions, then insertion sort) finds the enumerated minimiser."""
    a2, a1, C, S = inst
    k_max = 7.5 if capped else None
    k_bf, v_bf = brute_force(a2, a1, C, S, k_max)
    with mock.patch.object(linesearch, "COMPILED_MIN_TERMS", 0), mock.patch.object(linesearch, "COMPILED_AFTER", 0):
        res = exact_line_search(a2, a1, C, S, k_max=k_max)
    ref = exact_line_search(a2, a1, C, S, k_max=k_max)  # numpy: fewer terms than COMPILED_MIN_TERMS
    check_against_enumeration(res, k_bf, v_bf, k_max)
    assert res.n_breakpoints == ref.n_breakpoints  # the numpy path counts the same breakpoints


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([0.0, 1e-3, 1.0]))
def test_selection_agrees_with_the_full_sort_on_many_breakpoints(seed, ints, a2):
    """Hinge-like pieces of 20000 terms: the compiled pass and numpy's halving by selection find
    the root of the full sort."""
    rng = np.random.default_rng(seed)
    n = 20000
    C = np.zeros((n, 2))
    S = np.zeros((n, 2))
    C[:, 1] = rng.integers(-3, 4, n) if ints else rng.standard_normal(n)
    S[:, 1] = rng.integers(-3, 4, n) if ints else rng.standard_normal(n)
    lead = np.where(C[:, 1] > 0, S[:, 1], np.where(C[:, 1] < 0, 0.0, np.maximum(S[:, 1], 0.0)))
    slope_0, slope_inf = float(lead.sum()), float(np.maximum(S[:, 1], 0.0).sum())
    a1 = -0.5 * (slope_0 + slope_inf)  # f'(0+) < 0 < f'(inf) when a2 = 0: a finite root inside
    with mock.patch.object(linesearch, "COMPILED_AFTER", 0):
        compiled = exact_line_search(a2, a1, C, S)
    with mock.patch.object(linesearch, "COMPILED_MIN_TERMS", 10**9):
        halved = exact_line_search(a2, a1, C, S)
        with mock.patch.object(linesearch, "_SORT_BELOW", 10**9):
            ref = exact_line_search(a2, a1, C, S)
    assert ref.n_breakpoints > 4096 and not ref.unbounded and ref.k > 0.0
    for res in (compiled, halved):
        assert res.n_breakpoints == ref.n_breakpoints and not res.unbounded
        assert res.k == pytest.approx(ref.k, rel=1e-9, abs=1e-12)
        assert res.value == pytest.approx(ref.value, rel=1e-12, abs=1e-9)


@settings(max_examples=100)
@given(instances())
def test_exact_below_fine_grid(inst):
    a2, a1, C, S = inst
    k_max = 20.0
    res = exact_line_search(a2, a1, C, S, k_max=k_max)
    grid = np.linspace(0.0, k_max, 40001)
    fg = f_of(a2, a1, C, S, grid)
    assert res.value <= fg.min() + 1e-9 * (1.0 + abs(fg.min()))
    # and the grid gets close to it: the exact value is a true attained minimum
    assert fg.min() - res.value <= 1e-2 * (1.0 + abs(res.value))
    # local optimality: f(k +- h) >= f(k)
    for h in (1e-6, 1e-3):
        side = f_of(a2, a1, C, S, [max(res.k - h, 0.0), min(res.k + h, k_max)])
        assert (side >= res.value - 1e-9 * (1.0 + abs(res.value))).all()


def right_slope_from_breakpoints(start, bk, jump, k):
    """Slope of the risk just right of each k, from the envelope's breakpoints."""
    return start + np.array([jump[bk <= kk].sum() for kk in np.atleast_1d(k)])


def right_slope_direct(C, S, k, h=1e-7):
    """Slope of sum_i max_j (c_ij + k s_ij) just right of k, by brute force over lines."""
    out = []
    for kk in np.atleast_1d(k):
        val = C + kk * S
        top = val >= val.max(axis=1, keepdims=True) - 1e-12 * (1 + np.abs(val).max())
        out.append(np.where(top, S, -np.inf).max(axis=1).sum())
    return np.array(out)


@settings(max_examples=200)
@given(st.data())
def test_envelope_slopes_match_brute_force(data):
    n = data.draw(st.integers(1, 8))
    m = data.draw(st.integers(2, 6))
    ints = data.draw(st.booleans())
    elem = st.integers(-2, 2).map(float) if ints else st.floats(-5, 5, allow_nan=False).map(lambda x: round(x, 6))
    C = np.array(data.draw(st.lists(elem, min_size=n * m, max_size=n * m))).reshape(n, m)
    S = np.array(data.draw(st.lists(elem, min_size=n * m, max_size=n * m))).reshape(n, m)
    paths = [_breakpoints_general(C, S)]
    if m == 2:
        paths.append(_breakpoints_two(C, S))
    for start, bk, jump in paths:
        assert (bk >= 0).all() and (jump > 0).all() and bk.size <= n * (m - 1)
        # probe between and around all breakpoints (and at 0): the step functions agree
        pts = np.unique(np.concatenate([[0.0], bk, bk + 1e-3, bk * 1.5 + 0.25]))
        got = right_slope_from_breakpoints(start, bk, jump, pts)
        np.testing.assert_allclose(got, right_slope_direct(C, S, pts), atol=1e-9)
        # total jump = slope at infinity - slope at 0+
        assert start + jump.sum() == pytest.approx(S.max(axis=1).sum(), abs=1e-9)


def test_envelope_breakpoints_of_known_rows():
    # max(0, 1 - k, 2 - 3k, k - 1): envelope 2 - 3k, then 1 - k (k = 1/2), then k - 1
    # (k = 1, where the line 0 only touches the envelope); slope -3 -> -1 -> 1
    C = np.array([[0.0, 1.0, 2.0, -1.0]])
    S = np.array([[0.0, -1.0, -3.0, 1.0]])
    start, k, jump = _breakpoints_general(C, S)
    assert start == -3.0
    at = {float(v): float(jump[k == v].sum()) for v in np.unique(k)}
    assert at == {0.5: 2.0, 1.0: 2.0}


def test_minimiser_exactly_at_breakpoint():
    # f = a2/2 k^2 + max(1 - k, 0): f'(1-) = a2 - 1 < 0 < a2 = f'(1+)
    C, S = np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]])
    res = exact_line_search(0.3, 0.0, C, S)
    assert res.k == 1.0 and res.value == pytest.approx(0.15) and res.n_breakpoints == 1
    # a2 = 0: the minimiser set is [1, inf); the smallest is returned
    res0 = exact_line_search(0.0, 0.0, C, S)
    assert res0.k == 1.0 and res0.value == 0.0 and not res0.unbounded


def test_ties_identical_and_concurrent_lines():
    # three identical rows; in each row duplicated lines and three lines through (1, 0)
    row_c = [1.0, 1.0, 0.0, -1.0, -1.0]
    row_s = [-1.0, -1.0, 0.0, 1.0, 1.0]
    C, S = np.array([row_c] * 3), np.array([row_s] * 3)
    res = exact_line_search(0.0, 0.0, C, S)
    assert res.k == 1.0 and res.value == 0.0
    res = exact_line_search(0.0, 0.0, C, S, k_max=0.5)
    assert res.k == 0.5 and res.value == pytest.approx(1.5)


def test_minimiser_at_zero():
    C = np.array([[0.0, 1.0], [2.0, 0.5]])
    S = np.array([[1.0, 2.0], [0.0, 3.0]])
    res = exact_line_search(1.0, 0.5, C, S)  # f'(0+) = 0.5 + 2 + 0 > 0
    assert res.k == 0.0 and res.value == pytest.approx(3.0)
    # f'(0+) == 0 exactly: k = 0 is still the (smallest) minimiser
    res = exact_line_search(1.0, -2.0, C, S)
    assert res.k == 0.0
    # all-zero direction: f constant, k = 0
    res = exact_line_search(0.0, 0.0, C, np.zeros_like(S))
    assert res.k == 0.0 and res.value == pytest.approx(3.0)


def test_unbounded_direction():
    C = np.array([[0.0, 1.0]])
    S = np.array([[-1.0, -2.0]])
    res = exact_line_search(0.0, 0.0, C, S)
    assert res.unbounded and res.k == math.inf and res.value == -math.inf
    with pytest.raises(InputError, match="unbounded"):
        exact_line_search(0.0, 0.0, C, S, on_unbounded="raise")
    capped = exact_line_search(0.0, 0.0, C, S, k_max=10.0)
    assert not capped.unbounded and capped.k == 10.0 and capped.value == -10.0
    # a tiny a2 > 0 makes it bounded: k = -f'/a2 past the breakpoint at k = 1
    res = exact_line_search(1e-3, 0.0, C, S)
    assert res.k == pytest.approx(1000.0) and not res.unbounded


@settings(max_examples=100)
@given(st.floats(1e-3, 10), st.floats(-10, 10), st.floats(-10, 10), st.floats(-10, 10))
def test_single_line_closed_form(a2, a1, c, s):
    res = exact_line_search(a2, a1, np.array([[c]]), np.array([[s]]))
    k = max(0.0, -(a1 + s) / a2)
    assert res.k == pytest.approx(k, rel=1e-12, abs=1e-12)
    assert res.value == pytest.approx(0.5 * a2 * k * k + (a1 + s) * k + c, rel=1e-12, abs=1e-12)


def test_empty_risk_and_input_errors():
    res = exact_line_search(2.0, -4.0, np.zeros((0, 3)), np.zeros((0, 3)))
    assert res.k == 2.0 and res.value == -4.0
    C = np.zeros((2, 2))
    with pytest.raises(InputError, match="a2"):
        exact_line_search(-1.0, 0.0, C, C)
    with pytest.raises(InputError, match="shape"):
        exact_line_search(1.0, 0.0, C, np.zeros((2, 3)))
    with pytest.raises(InputError, match="2-D"):
        exact_line_search(1.0, 0.0, np.zeros(2), np.zeros(2))
    with pytest.raises(InputError, match="finite"):
        exact_line_search(1.0, 0.0, np.array([[np.nan, 0.0]]), C[:1])
    with pytest.raises(InputError, match="a1"):
        exact_line_search(1.0, np.inf, C, C)
    with pytest.raises(InputError, match="k_max"):
        exact_line_search(1.0, 0.0, C, C, k_max=-1.0)


@settings(max_examples=150)
@given(instances())
def test_generic_agrees_with_exact(inst):
    a2, a1, C, S = inst
    k_max = None if a2 > 0 else 12.0
    exact = exact_line_search(a2, a1, C, S, k_max=k_max)
    gen = line_search(lambda k: float(f_of(a2, a1, C, S, k)[0]), k_max=k_max)
    assert gen.converged and not gen.unbounded
    assert gen.value == pytest.approx(f_of(a2, a1, C, S, gen.k)[0], rel=1e-12, abs=1e-12)
    assert gen.value - exact.value <= 1e-6 * (1.0 + abs(exact.value))
    assert gen.value >= exact.value - 1e-9 * (1.0 + abs(exact.value))
    if a2 > 0:  # strong convexity bounds the distance to the unique minimiser
        gap = max(gen.value - exact.value, 0.0)
        assert abs(gen.k - exact.k) <= math.sqrt(2 * gap / a2) + 1e-6 * (1 + exact.k)


def test_generic_smooth_and_edge_cases():
    res = line_search(lambda k: (k - 3.0) ** 2)
    assert res.k == pytest.approx(3.0, abs=1e-6) and res.converged
    res = line_search(lambda k: math.exp(k) - 2.0 * k)
    assert res.k == pytest.approx(math.log(2.0), abs=1e-6)
    res = line_search(lambda k: (k + 1.0) ** 2)  # increasing: k = 0
    assert res.k == 0.0 and res.value == 1.0 and res.n_evals <= 4  # f'(0+) >= 0 test
    res = line_search(lambda k: (k - 3.0) ** 2, k_max=2.0)  # clamp at k_max
    assert res.k == pytest.approx(2.0) and res.value == pytest.approx(1.0)
    res = line_search(lambda k: (k - 1e6) ** 2 / 1e6)  # far minimiser, by doubling
    assert res.k == pytest.approx(1e6, rel=1e-6)
    res = line_search(lambda k: -k)
    assert res.unbounded and not res.converged and res.k > 1e15
    with pytest.raises(InputError, match="fun"):
        line_search(lambda k: float("nan"))
    with pytest.raises(InputError, match="k_init"):
        line_search(lambda k: k, k_init=0.0)


class _Hinge:
    """R(w) = sum_i max(0, 1 - y_i <x_i, w>): form (16) with m = 2 (test double)."""

    supports_line_search = True

    def __init__(self, X, y):
        self.X, self.y, self.dim = X, y, X.shape[1]

    def __call__(self, w):
        from cutplane.cuts import OracleResult, make_cut

        margin = 1.0 - self.y * (self.X @ w)
        act = margin > 0
        slope = -(self.y[act, None] * self.X[act]).sum(axis=0)
        value = float(margin[act].sum())
        return OracleResult(value, make_cut(value, slope, w))

    def line_search_pieces(self, w, d):
        n = self.X.shape[0]
        off = np.column_stack([np.zeros(n), 1.0 - self.y * (self.X @ w)])
        slo = np.column_stack([np.zeros(n), -self.y * (self.X @ d)])
        return off, slo


class _HingeNoLS(_Hinge):
    supports_line_search = False


def test_minimize_along_exact_and_generic_paths(rng):
    X = rng.normal(size=(60, 5))
    y = np.sign(X @ rng.normal(size=5) + 0.3 * rng.normal(size=60))
    w, d = rng.normal(size=5) * 0.1, rng.normal(size=5)
    lam = 0.7
    exact = minimize_along(_Hinge(X, y), lam, w, d)
    gen = minimize_along(_HingeNoLS(X, y), lam, w, d)
    assert exact.n_breakpoints > 0 and gen.n_breakpoints == 0
    wk = w + exact.k * d
    full = 0.5 * lam * wk @ wk + _Hinge(X, y)(wk).value
    assert exact.value == pytest.approx(full, rel=1e-12)
    assert gen.value == pytest.approx(exact.value, rel=1e-7)
    assert gen.k == pytest.approx(exact.k, rel=1e-3, abs=1e-6)
