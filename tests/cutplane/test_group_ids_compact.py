"""``as_group_ids(compact=True)``: the same ids, read-only int32 (int64 for large ids), and a
compact array is shared instead of copied, so the regulariser and the working set hold one
array of ``dim`` ids."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane import minimize
from cutplane.groups import as_group_ids
from cutplane.regularizers import MixedNorm
from cutplane.working_set import WorkingSet
from oracles.linear import MulticlassHinge


@settings(max_examples=100)
@given(ids=st.lists(st.integers(0, 9), min_size=1, max_size=30), big=st.booleans())
def test_the_same_ids_read_only_and_shared(ids, big):
    raw = np.array(ids, dtype=np.int64) + (2**31 if big else 0)
    plain = as_group_ids(raw, raw.size)
    compact = as_group_ids(raw, raw.size, compact=True)
    np.testing.assert_array_equal(compact, plain)
    assert plain.dtype == np.intp and plain.flags.writeable  # the default is unchanged
    assert compact.dtype == (np.int64 if big else np.int32) and not compact.flags.writeable
    assert as_group_ids(compact, raw.size, compact=True) is compact  # immutable: shared
    # a writable array of the right type is still copied (the caller could change it)
    own = np.array(ids, dtype=np.int32)
    again = as_group_ids(own, own.size, compact=True)
    assert again is not own and not np.shares_memory(again, own)
    own[0] += 1
    assert again[0] == ids[0]


def test_the_list_form_compacts_too():
    out = as_group_ids([[0, 2], [1]], 3, compact=True)
    np.testing.assert_array_equal(out, [0, 1, 0])
    assert out.dtype == np.int32 and not out.flags.writeable


def test_the_regulariser_and_the_working_set_share_one_array():
    reg = MixedNorm(np.arange(12) % 4, p=1.0, n_groups=4)
    assert reg.groups.dtype == np.int32 and not reg.groups.flags.writeable
    with pytest.raises(ValueError):
        reg.groups[0] = 3
    ws = WorkingSet(12, groups=reg.groups)
    assert ws.group_ids is reg.groups and ws.same_groups(reg.groups)
    assert WorkingSet(12).group_ids is None


def test_a_run_with_shared_groups_is_certified():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    oracle = MulticlassHinge(X, rng.integers(0, 3, size=30), n_classes=3)
    reg = MixedNorm(np.arange(oracle.dim) % 4, p=1.0, n_groups=4)
    res = minimize(oracle, reg, lam=0.1, eps=1e-6)
    assert res.converged and res.lower_bound <= res.objective and res.gap <= 1e-6


@settings(max_examples=30, deadline=None)
@given(dim=st.integers(5, 40), n_groups=st.integers(2, 5), seed=st.integers(0, 2**31 - 1))
def test_an_adopted_working_set_holds_the_new_regularisers_ids(dim, n_groups, seed):
    """A warm start's working set takes the array of the run's regulariser when the ids are the
    same (a refit's MixedNorm is built anew: no second copy of dim ids), and the products of its
    cuts are unchanged; different ids are refused and nothing changes."""
    import scipy.sparse as sp

    from cutplane.cuts import Cut

    rng = np.random.default_rng(seed)
    ids = rng.integers(0, n_groups, size=dim)
    ids[:n_groups] = np.arange(n_groups)
    first, second = MixedNorm(ids.copy(), p=1.0), MixedNorm(ids.copy(), p=1.0)
    assert first.groups is not second.groups
    ws = WorkingSet(dim, groups=first.groups)
    for _ in range(3):
        ws.add(Cut(sp.random(1, dim, density=0.5, random_state=rng, format="csr"), float(rng.standard_normal())))
    beta = rng.random((n_groups, 3))
    before = ws.combine_by_group(beta).copy()
    other = ids.copy()
    other[0] = (other[0] + 1) % n_groups
    assert not ws.share_groups(MixedNorm(other, p=1.0, n_groups=n_groups).groups)
    assert ws.group_ids is first.groups
    assert ws.share_groups(second.groups)
    assert ws.group_ids is second.groups
    np.testing.assert_array_equal(ws.combine_by_group(beta), before)
