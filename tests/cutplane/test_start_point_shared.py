"""``check_start``: a read-only float64 start point that owns its data is used as it is (a refit
from a path's chosen point does not hold the model twice); any other is copied, and the caller's
array stays writable and unchanged. Either way the run is the same."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.cuts import Cut, OracleResult
from cutplane.regularizers import L2
from cutplane.run_inputs import check_start


@settings(max_examples=40, deadline=None)
@given(dim=st.integers(1, 30), seed=st.integers(0, 2**31 - 1), read_only=st.booleans(), view=st.booleans())
def test_shared_only_when_nothing_can_write_into_it(dim, seed, read_only, view):
    rng = np.random.default_rng(seed)
    base = rng.standard_normal(2 * dim if view else dim)
    w0 = base[::2] if view else base
    before = w0.copy()
    if read_only:
        w0.flags.writeable = False
    out = check_start(w0, L2(), dim)
    np.testing.assert_array_equal(out, before)
    assert (out is w0) == (read_only and not view)
    if out is not w0:
        assert not np.shares_memory(out, w0)
        assert w0.flags.writeable == (not read_only)  # the caller's array is left as it was


def test_float32_or_list_start_points_are_copied_as_float64():
    w32 = np.ones(4, dtype=np.float32)
    w32.flags.writeable = False
    out = check_start(w32, L2(), 4)
    assert out.dtype == np.float64 and out is not w32
    assert check_start([1.0, 2.0], L2(), 2).dtype == np.float64


@pytest.mark.parametrize("read_only", [False, True])
def test_the_run_is_the_same_and_the_start_point_unchanged(read_only):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 6))
    y = np.sign(rng.standard_normal(40))

    def hinge(w):
        m = 1.0 - y * (X @ w)
        active = m > 0
        value = float(np.mean(np.where(active, m, 0.0)))
        slope = -(X[active].T @ y[active]) / len(y)
        return OracleResult(value, Cut(slope, value - float(slope @ w)))

    hinge.dim = 6

    start = rng.standard_normal(6)
    w0 = start.copy()
    w0.flags.writeable = not read_only
    res = minimize(hinge, L2(), 0.1, eps=1e-6, w0=w0)
    ref = minimize(hinge, L2(), 0.1, eps=1e-6, w0=start.copy())
    np.testing.assert_array_equal(w0, start)
    assert res.n_iter == ref.n_iter
    np.testing.assert_array_equal(res.w, ref.w)
    assert res.lower_bound <= res.objective and res.objective - res.lower_bound <= 1e-6
