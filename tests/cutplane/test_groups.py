"""Group partitions: the two accepted forms, their validation, and the group norms."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from cutplane.groups import as_group_ids, group_norms, group_runs


@settings(max_examples=100)
@given(ids=st.lists(st.integers(0, 6), min_size=0, max_size=20))
def test_list_form_round_trips_to_id_form(ids):
    ids = np.array(ids, dtype=np.int64)
    m = int(ids.max()) + 1 if ids.size else 0
    lists = [np.flatnonzero(ids == j) for j in range(m)]  # includes empty groups
    np.testing.assert_array_equal(as_group_ids(ids, ids.size), ids)
    if m:
        np.testing.assert_array_equal(as_group_ids(lists, ids.size), ids)
        np.testing.assert_array_equal(as_group_ids([list(map(int, g)) for g in lists], ids.size), ids)


def test_accepted_forms():
    np.testing.assert_array_equal(as_group_ids([0, 0, 1], 3), [0, 0, 1])
    np.testing.assert_array_equal(as_group_ids(([2], [0, 1]), 3), [1, 1, 0])
    np.testing.assert_array_equal(as_group_ids([[1], [], [0, 2]], 3, n_groups=3), [2, 0, 2])
    assert as_group_ids([], 0).shape == (0,)
    out = as_group_ids(np.array([1, 0], dtype=np.int8), 2)
    assert out.dtype == np.intp


@pytest.mark.parametrize(
    "groups, dim, n_groups, field",
    [
        ([0, 1], 3, None, "groups"),  # wrong length
        ([0.0, 1.0, 1.0], 3, None, "groups"),  # float ids
        ([True, False, True], 3, None, "groups"),  # bool ids
        ([0, -1, 1], 3, None, "groups"),  # negative id
        ([0, 3, 1], 3, 3, "groups"),  # id >= n_groups
        (np.zeros((2, 2), dtype=int), 4, None, "groups"),  # 2-D is ambiguous
        ([[0, 1], [1, 2]], 3, None, "groups[1]"),  # overlap
        ([[0, 0], [1, 2]], 3, None, "groups[0]"),  # duplicate inside a group
        ([[0, 1]], 3, None, "groups"),  # coordinate 2 in no group
        ([[0, 1], [2, 3]], 3, None, "groups[1]"),  # out of range
        ([[0.0, 1.0], [2]], 3, None, "groups[0]"),  # float indices
        ([[0, 1], 2], 3, None, "groups"),  # mixed forms
        ([[0, 1], [2]], 3, 3, "groups"),  # n_groups mismatch
        ([0, 1, 2], -1, None, "dim"),
        ([0, 1, 2], 3, -2, "n_groups"),
    ],
)
def test_bad_groups(groups, dim, n_groups, field):
    with pytest.raises(InputError) as err:
        as_group_ids(groups, dim, n_groups=n_groups)
    assert err.value.field == field


@settings(max_examples=100)
@given(data=st.data(), dim=st.integers(1, 25))
def test_group_norms_match_direct(data, dim):
    """Per-entry ids and run by run (sorted ids), at any magnitude: entries m * 10^e with e in
    [-300, 300] mix groups whose squares underflow or overflow with ordinary ones."""
    mant = np.array(data.draw(st.lists(st.floats(-10, 10), min_size=dim, max_size=dim)))
    expo = np.array(
        data.draw(st.lists(st.sampled_from([0, 0, 0, -150, -200, -300, 150, 200, 300]), min_size=dim, max_size=dim)),
        dtype=float,
    )
    v = mant * 10.0**expo
    ids = np.array(data.draw(st.lists(st.integers(0, 4), min_size=dim, max_size=dim)))
    if data.draw(st.booleans()):  # the contiguous layout: runs
        ids = np.sort(ids)
    direct = np.array([math.hypot(*v[ids == j]) for j in range(5)])  # scaled, no underflow
    np.testing.assert_allclose(group_norms(v, ids, 5), direct, rtol=1e-13, atol=0)
    runs = group_runs(ids, 5, max_runs_per_group=10**6)
    np.testing.assert_allclose(group_norms(v, ids, 5, runs=runs), direct, rtol=1e-13, atol=0)


def test_group_norms_extreme_magnitudes():
    # squares of 1e-200 underflow; each group must still get its own norm to full precision
    v = np.array([3e200, 4e200, 3e-200, 4e-200, 0.0, 5e-324])
    ids = np.array([0, 0, 1, 1, 2, 3])
    np.testing.assert_allclose(group_norms(v, ids), [5e200, 5e-200, 0.0, 5e-324], rtol=1e-14)
    assert group_norms(np.zeros(3), np.array([0, 2, 2])).tolist() == [0.0, 0.0, 0.0]
    assert group_norms(np.zeros(0), np.zeros(0, dtype=np.intp)).shape == (0,)
    # sorted ids (reduceat path) with empty groups in between and at the end
    v = np.array([3.0, 4.0, 1e-300, 1.0, 2.0, 2.0])
    np.testing.assert_allclose(
        group_norms(v, np.array([0, 0, 2, 4, 4, 4]), 6), [5.0, 0.0, 1e-300, 0.0, 3.0, 0.0], rtol=1e-14
    )
