"""The compact storage of the n-slack method (:mod:`cutplane.nslack`, issue 38).

- Integer rows (a structured task's cuts: differences of feature counts) keep their values in
  the narrow integer type beside their coordinates; the others in float64. Every row reads back
  bit for bit as it was given, whichever store holds it (a value the narrow type cannot hold, a
  fraction or an integer out of its range, goes to float64), and the certified ``D(alpha)`` is
  the dense formula's through merges (integer rows merged into float rows) and compactions.
- The pools grow in place and are compacted in place (no second pool).
- With a loose relative tolerance the query points are float32 values: the returned point is one
  of them, ``F`` there is the reported objective, and the bound is still below the optimum.
"""

from __future__ import annotations

import mmap

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import cutplane
from cutplane.exceptions import InputError
from cutplane.nslack import ExampleWorkingSets
from cutplane.nslack import example_working_sets as ews
from cutplane.regularizers import L2
from oracles.linear import BinaryHinge

from .test_nslack import _dual_value, _svm_optimum

_LO, _HI = np.iinfo(ews.VALUE_DTYPE).min, np.iinfo(ews.VALUE_DTYPE).max

#: values a row may hold: small counts, the narrow type's edges, just past them, fractions
_EDGE_VALUES = [1.0, -1.0, 2.0, 3.0, -7.0, _HI, _LO, _HI + 1.0, _LO - 1.0, 40000.0, 0.5, -2.25, 1e-300, 3.0e9]


def _integer_batch(rng, n, dim, odd):
    """A batch of integer rows, ``odd`` of them with one value the narrow type cannot hold."""
    dense = rng.integers(-3, 4, size=(n, dim)).astype(np.float64)
    dense[rng.random((n, dim)) < 0.4] = 0.0
    for i in rng.choice(n, size=min(odd, n), replace=False):
        dense[i, rng.integers(dim)] = _EDGE_VALUES[rng.integers(len(_EDGE_VALUES))]
    return sp.csr_matrix(dense), rng.uniform(0.0, 2.0, n)


def _fits(values):
    return bool(np.all((values == np.floor(values)) & (values >= _LO) & (values <= _HI)))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 8), dim=st.integers(1, 30), odd=st.integers(0, 8))
def test_every_row_reads_back_bit_for_bit_from_the_store_that_holds_it(seed, n, dim, odd):
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, 0.1, -1e9, planes=3)  # a low floor: every nonzero cut enters
    slopes, offsets = _integer_batch(rng, n, dim, odd)
    sets.add(slopes @ sets.w + offsets, offsets, slopes)
    for i in range(n):
        idx, val = (
            slopes.indices[slopes.indptr[i] : slopes.indptr[i + 1]],
            slopes.data[slopes.indptr[i] : slopes.indptr[i + 1]],
        )
        r = sets.slot[i, 0]
        assert r >= 0
        got_idx, got_val = sets.row(r)
        np.testing.assert_array_equal(got_idx, idx)
        assert got_val.dtype == np.float64
        assert got_val.tobytes() == val.tobytes()  # bit for bit
        assert (sets.rfo[r] < 0) == _fits(val)  # narrow exactly when the narrow type holds the values
    narrow_rows = [sets.slot[i, 0] for i in range(n) if sets.rfo[sets.slot[i, 0]] < 0]
    assert int(sets.state[4]) == int(sum(sets.rlen[r] for r in sets.slot[:, 0] if r not in narrow_rows))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 6),
    dim=st.integers(1, 12),
    odd=st.integers(0, 2),
    threads=st.sampled_from([1, 2]),
)
def test_integer_rows_merged_and_compacted_keep_the_exact_dual(seed, n, dim, odd, threads):
    """Integer cuts, blocks of two slots (merges into float rows follow), many batches (the pools
    grow and are compacted in place): ``D(alpha)`` and ``w(alpha)`` are the dense formula's."""
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, 0.1, 0.0, planes=2, threads=threads)
    for _ in range(30):
        slopes, offsets = _integer_batch(rng, n, dim, odd)
        sets.add(slopes @ sets.w + offsets + 0.5, offsets + 0.5, slopes)
        sets.sweep(rng.permutation(n))
        sets.lower_bound()
    d = sets.lower_bound()
    d_ref, w_ref = _dual_value(sets, [[] for _ in range(n)])
    assert d == pytest.approx(d_ref, abs=1e-9 * (1 + abs(d_ref)))
    np.testing.assert_allclose(sets.w, w_ref, rtol=1e-12, atol=1e-12)
    assert sets.live_nnz <= int(sets.state[1])


def test_a_row_of_counts_takes_no_float_values_and_a_fraction_or_a_large_count_does():
    sets = ExampleWorkingSets(3, 6, 0.1, -1.0, planes=2)
    dense = np.array(
        [[1.0, -2.0, 0.0, _HI, _LO, 0.0], [0.0, 1.5, 0.0, 0.0, 0.0, 1.0], [0.0, 0.0, _HI + 1.0, 0.0, 0.0, 0.0]]
    )
    sets.add(np.ones(3), np.ones(3), sp.csr_matrix(dense))
    assert [sets.rfo[sets.slot[i, 0]] < 0 for i in range(3)] == [True, False, False]
    assert int(sets.state[4]) == 3  # only the second row's two values and the third's one are float64
    assert sets.pval.dtype == ews.VALUE_DTYPE
    for i in range(3):
        np.testing.assert_array_equal(sets.row(sets.slot[i, 0])[1], dense[i][dense[i] != 0])


def test_the_pool_grows_in_place_and_copies_when_it_is_viewed_elsewhere():
    class Holder:
        pass

    h = Holder()
    h.a = ews._mapped(np.int32, 1000)
    h.a[:] = np.arange(1000)
    grown_in_place = isinstance(h.a.base, memoryview) and isinstance(h.a.base.obj, mmap.mmap)
    the_map = h.a.base.obj if grown_in_place else None
    h.a = ews._regrown(h, "a", 5000, 1000)
    np.testing.assert_array_equal(h.a[:1000], np.arange(1000))
    assert h.a.shape == (5000,)
    if grown_in_place:
        assert h.a.base.obj is the_map  # the same map, remapped: no copy
    view = h.a[:10]
    h.a = ews._regrown(h, "a", 9000, 5000)  # a view is alive: copied
    np.testing.assert_array_equal(h.a[:1000], np.arange(1000))
    np.testing.assert_array_equal(view, np.arange(10))


@pytest.mark.parametrize("rtol", [1e-3, 1e-2])
def test_float32_query_points_keep_the_certificate(rtol):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 5))
    y = np.where(X[:, 0] - X[:, 2] + 0.3 * rng.standard_normal(60) > 0, 1.0, -1.0)
    lam = 1e-3
    oracle = BinaryHinge(X, y)
    res = cutplane.minimize(oracle, L2(), lam, method="n-slack", eps=1e-12, rtol=rtol, max_iter=5000)
    assert res.converged
    w = res.w
    assert w.dtype == np.float64
    np.testing.assert_array_equal(w.astype(np.float32).astype(np.float64), w)  # a float32 point
    f = 0.5 * lam * float(w @ w) + float(np.mean(np.maximum(0.0, 1.0 - y * (X @ w))))
    assert res.objective == pytest.approx(f, rel=1e-12, abs=1e-12)  # F at the returned point
    opt = _svm_optimum(X, y, lam)
    assert res.lower_bound <= opt + 1e-7
    assert res.objective - opt <= rtol * abs(res.objective) + 1e-7


def test_a_released_tail_reads_as_zeros_and_the_head_is_kept():
    a = ews._mapped(np.float64, 1 << 16)
    a[:] = 7.0
    ews._release_tail(a, 1000)
    assert np.all(a[:1000] == 7.0)
    page_entries = mmap.PAGESIZE // a.itemsize
    first_released = -(-1000 // page_entries) * page_entries
    if isinstance(a.base, memoryview) and isinstance(a.base.obj, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        assert np.all(a[first_released:] == 0.0)
    assert np.all(a[1000:first_released] == 7.0)  # the page that holds entry 999 is kept whole


def _twin_stores(seed, n, dim, lam, batches, threads=1):
    """A float32 store and a float64 one driven alike: the same batches (offsets rising by 100
    a batch, far above the rounding, so both take the same cuts), the float32 store's duals
    copied into the float64 one after its passes, so that every merge is the same in both (the
    same slots, the same weights)."""
    rng = np.random.default_rng(seed)
    low = ExampleWorkingSets(n, dim, lam, 0.0, planes=2, threads=threads, float_dtype=np.float32)
    exact = ExampleWorkingSets(n, dim, lam, 0.0, planes=2, threads=threads)
    for t in range(batches):
        slopes = sp.random(n, dim, density=0.6, random_state=np.random.RandomState(rng.integers(2**31)), format="csr")
        slopes.data = 4.0 * slopes.data - 2.0  # fractions: not float32 values
        offsets = 100.0 * (t + 1) + rng.uniform(0.0, 2.0, n)
        for sets in (low, exact):
            sets.add(slopes @ sets.w + offsets, offsets, slopes)
        np.testing.assert_array_equal(low.slot >= 0, exact.slot >= 0)
        low.sweep(rng.permutation(n))
        low.lower_bound()
        exact.alpha[:] = low.alpha
        exact.recompute_w()  # so that both see the next batch at the same point, up to rounding
    return low, exact


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 5),
    dim=st.integers(1, 12),
    lam=st.sampled_from([1.0, 0.1, 0.01]),
    threads=st.sampled_from([1, 2]),
)
def test_float32_rows_stay_within_their_bound_and_the_bound_stays_below_the_exact_dual(seed, n, dim, lam, threads):
    """Float32 rows (the loose-tolerance store): every stored row, merged ones included, is
    within ``rerr`` of the exact row, and the certified ``D`` is at most the exact rows' ``D``
    at the same duals (so weak duality still holds), and close to it."""
    low, exact = _twin_stores(seed, n, dim, lam, 12, threads)
    assert low.fval.dtype == np.float32 and exact.fval.dtype == np.float64
    assert not np.any(exact.rerr)  # float64 rows: no rounding accounted
    for i in range(n):
        for j in range(low.planes):
            r, q = low.slot[i, j], exact.slot[i, j]
            if r < 0:
                continue
            idx, val = low.row(r)
            ref_idx, ref_val = exact.row(q)
            a, b = np.zeros(dim), np.zeros(dim)
            np.add.at(a, idx, val)
            np.add.at(b, ref_idx, ref_val)
            assert np.linalg.norm(a - b) <= low.rerr[r] * (1 + 1e-9) + 1e-300
            assert low.rb[r] == exact.rb[q]
    d_low, d_exact = low.lower_bound(), exact.lower_bound()
    np.testing.assert_array_equal(low.alpha, exact.alpha)
    # the slack is tight to first order (in one dimension, exactly what the rounding moved), so
    # the two may differ by the float64 rounding of D itself, far below the slack (about
    # 1e-9 here): without it, the float32 D would lie above the exact one
    assert d_low <= d_exact + 8 * np.finfo(float).eps * (1.0 + abs(d_exact))
    assert d_exact - d_low <= 1e-5 * (1.0 + abs(d_exact))


def test_float32_rows_are_charged_only_for_what_rounding_changed():
    sets = ExampleWorkingSets(2, 4, 0.1, -1.0, planes=2, float_dtype=np.float32)
    dense = np.array([[0.5, -2.25, 0.0, 1.0], [0.1, 0.0, 0.0, 1.0 / 3.0]])  # float32 values, then not
    sets.add(np.ones(2), np.ones(2), sp.csr_matrix(dense))
    r0, r1 = sets.slot[0, 0], sets.slot[1, 0]
    assert sets.rerr[r0] == 0.0  # 0.5 and -2.25 are float32 values: nothing to charge
    expect = np.hypot(float(np.float32(0.1)) - 0.1, float(np.float32(1.0 / 3.0)) - 1.0 / 3.0)
    assert sets.rerr[r1] == pytest.approx(expect, rel=1e-12)
    assert sets.lower_bound() == pytest.approx(-1.0)  # duals on the floors: nothing charged
    with pytest.raises(InputError, match="float32 or float64"):
        ExampleWorkingSets(2, 4, 0.1, 0.0, float_dtype=np.float16)
