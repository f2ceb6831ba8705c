"""piecewise_linear_search (values and right slopes only) against the breakpoint search of form (16)
and a fine grid, on random sums of maxima of lines (hypothesis), kinks at the minimiser included."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.linesearch import exact_line_search, piecewise_linear_search


def phi_of(offsets, slopes):
    def phi(k):
        lines = offsets + k * slopes
        top = lines.max(axis=1, keepdims=True)
        # the right slope: the steepest of the lines at the top (ties at a kink)
        right = np.where(lines == top, slopes, -np.inf).max(axis=1)
        return float(top.sum()), float(right.sum())

    return phi


@st.composite
def pieces(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 4))
    ints = draw(st.booleans())  # integers: kinks shared by several terms, minimisers at kinks
    elems = st.integers(-4, 4) if ints else st.floats(-5, 5)
    offsets = np.array(draw(st.lists(elems, min_size=n * m, max_size=n * m)), float).reshape(n, m)
    slopes = np.array(draw(st.lists(elems, min_size=n * m, max_size=n * m)), float).reshape(n, m)
    a2 = draw(st.sampled_from([1.0, 0.5, 2.0]) | st.floats(1e-3, 10.0))
    a1 = draw(st.integers(-5, 5).map(float) if ints else st.floats(-5, 5))
    return a2, a1, offsets, slopes


@settings(max_examples=500, deadline=None)
@given(case=pieces())
def test_equals_the_breakpoint_search(case):
    a2, a1, offsets, slopes = case
    ref = exact_line_search(a2, a1, offsets, slopes)
    res = piecewise_linear_search(a2, a1, phi_of(offsets, slopes))
    assert res.converged
    assert res.k == pytest.approx(ref.k, rel=1e-9, abs=1e-9)
    assert res.value == pytest.approx(ref.value, rel=1e-12, abs=1e-12)
    f = phi_of(offsets, slopes)
    assert res.value == pytest.approx(0.5 * a2 * res.k**2 + a1 * res.k + f(res.k)[0], rel=1e-12, abs=1e-12)
    grid = np.linspace(0.0, 2.0 * res.k + 1.0, 2001)
    values = [0.5 * a2 * k * k + a1 * k + f(k)[0] for k in grid]
    assert res.value <= min(values) + 1e-9


def test_few_calls_on_many_pieces():
    rng = np.random.default_rng(0)
    offsets, slopes = rng.standard_normal((5000, 2)), rng.standard_normal((5000, 2))
    res = piecewise_linear_search(50.0, -300.0, phi_of(offsets, slopes))
    ref = exact_line_search(50.0, -300.0, offsets, slopes)
    assert res.k == pytest.approx(ref.k, rel=1e-10)
    assert res.n_evals <= 20


def test_refusals():
    with pytest.raises(InputError):
        piecewise_linear_search(0.0, -1.0, lambda k: (0.0, 0.0))
    with pytest.raises(InputError):
        piecewise_linear_search(1.0, -1.0, lambda k: (math.nan, 0.0))
