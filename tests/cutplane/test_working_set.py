"""WorkingSet: the incremental Gram blocks equal a recomputation, pruning and aggregation."""

import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import Cut
from cutplane.exceptions import InputError
from cutplane.working_set import WorkingSet


def random_slope(rng, dim, sparse, density=0.4):
    a = rng.standard_normal(dim) * (rng.random(dim) < density)
    return sp.csr_matrix(a[None, :]) if sparse else a


def dense_rows(ws):
    A = ws.matrix()
    return A.toarray() if sp.issparse(A) else np.array(A)


def check_consistent(ws, groups, rng):
    A = dense_rows(ws)
    assert A.shape == (ws.n_cuts, ws.dim)
    np.testing.assert_allclose(ws.gram(), A @ A.T, atol=1e-12)
    if groups is not None:
        for j in range(ws.n_groups):
            Aj = A * (groups == j)[None, :]
            np.testing.assert_allclose(ws.gram(group=j), Aj @ Aj.T, atol=1e-12)
            alpha = rng.random(ws.n_cuts)
            np.testing.assert_allclose(ws.combine(alpha, group=j), Aj.T @ alpha, atol=1e-12)
        # all blocks at once: a read-only view; fewer or more blocks (zero-padded) on request
        blocks = ws.gram_blocks()
        assert not blocks.flags.writeable
        np.testing.assert_array_equal(blocks, np.stack([ws.gram(group=j) for j in range(ws.n_groups)]))
        more = ws.gram_blocks(ws.n_groups + 2)
        np.testing.assert_array_equal(more[: ws.n_groups], blocks)
        assert more.shape == (ws.n_groups + 2, ws.n_cuts, ws.n_cuts) and not more[ws.n_groups :].any()
        np.testing.assert_array_equal(ws.gram_blocks(1), blocks[:1])
    alpha = rng.random(ws.n_cuts)
    np.testing.assert_allclose(ws.combine(alpha), A.T @ alpha, atol=1e-12)
    w = rng.standard_normal(ws.dim)
    np.testing.assert_allclose(ws.slopes_dot(w), A @ w, atol=1e-12)


@settings(max_examples=40)
@given(
    seed=st.integers(0, 2**31),
    dim=st.integers(1, 12),
    n_groups=st.sampled_from([None, 1, 2, 4]),
    sparse=st.booleans(),
    ops=st.lists(st.sampled_from(["add", "add", "add", "prune", "aggregate"]), min_size=1, max_size=25),
)
def test_incremental_gram_equals_recomputed(seed, dim, n_groups, sparse, ops):
    rng = np.random.default_rng(seed)
    groups = None if n_groups is None else rng.integers(0, n_groups, size=dim)
    if groups is not None:
        groups[: min(dim, n_groups)] = np.arange(min(dim, n_groups))  # every id used when dim allows
    ws = WorkingSet(dim, groups=groups)
    reference = []  # (slope, offset) kept by hand in age order
    for op in ops:
        if op == "add" or ws.n_cuts == 0:
            a, b = random_slope(rng, dim, sparse), float(rng.standard_normal())
            assert ws.add(Cut(a, b)) == ws.n_cuts - 1
            reference.append((a.toarray().ravel() if sparse else a.copy(), b))
        elif op == "prune":
            alpha = rng.random(ws.n_cuts) * (rng.random(ws.n_cuts) < 0.5)
            ws.record_duals(alpha)
            removed = ws.prune(1)
            zero = alpha <= ws.zero_tol * max(alpha.sum(), np.finfo(float).tiny)
            assert removed == int(zero.sum())
            reference = [r for r, z in zip(reference, zero) if not z]
        else:
            n = ws.n_cuts
            budget = int(rng.integers(1, n + 1))
            alpha = rng.random(n)
            merged = ws.aggregate(budget, alpha)
            if budget == n:
                assert merged == 0
            else:
                k = n - budget + 1
                assert merged == k - 1
                beta = alpha[:k] / alpha[:k].sum()
                slope = sum(bt * r[0] for bt, r in zip(beta, reference[:k]))
                off = sum(bt * r[1] for bt, r in zip(beta, reference[:k]))
                reference = [(slope, off)] + reference[k:]
            assert ws.n_cuts == budget
        assert ws.n_cuts == len(reference)
        if reference:
            np.testing.assert_allclose(dense_rows(ws), np.array([r[0] for r in reference]), atol=1e-12)
            np.testing.assert_allclose(ws.offsets, [r[1] for r in reference], atol=1e-12)
            check_consistent(ws, groups, rng)
    assert ws.sparse is sparse
    assert ws.nbytes > 0


def test_storage_follows_the_oracle_slopes(rng):
    dense, sparse = WorkingSet(50), WorkingSet(50)
    for _ in range(5):
        a = random_slope(rng, 50, False, density=0.05)
        dense.add(Cut(a, 0.0))
        sparse.add(Cut(sp.csr_matrix(a[None, :]), 0.0))
    assert not dense.sparse and sparse.sparse
    assert sp.issparse(sparse.matrix()) and isinstance(dense.matrix(), np.ndarray)
    np.testing.assert_allclose(sparse.gram(), dense.gram())
    # memory per cut is the cut's nonzeros when sparse
    assert sparse.nbytes < dense.nbytes


def test_prune_needs_k_consecutive_zero_duals():
    ws = WorkingSet(3)
    for i in range(3):
        ws.add(Cut(np.eye(3)[i], 0.0))
    ws.record_duals(np.array([0.0, 1.0, 0.0]))
    ws.record_duals(np.array([0.0, 0.5, 0.5]))  # cut 2 used again: its count restarts
    np.testing.assert_array_equal(ws.idle_counts, [2, 0, 0])
    assert ws.prune(3) == 0
    assert ws.prune(2) == 1
    np.testing.assert_allclose(dense_rows(ws), np.eye(3)[1:])
    np.testing.assert_allclose(ws.duals, [0.5, 0.5])


def test_aggregation_keeps_the_reduced_optimum(rng):
    """Merging cuts with the reduced duals as weights leaves the reduced QP's value unchanged."""
    from cutplane.reduced.qp import QPReducedSolver
    from cutplane.regularizers import L2

    solver = QPReducedSolver(L2(), "CLARABEL")
    ws = WorkingSet(6)
    for _ in range(12):
        ws.add(Cut(rng.standard_normal(6), float(rng.standard_normal())))
    lam = 0.3
    before = solver.solve(ws, lam)
    merged = ws.aggregate(4, before.alpha)
    assert merged == 8 and ws.n_cuts == 4
    after = solver.solve(ws, lam)
    assert after.lower_bound == pytest.approx(before.lower_bound, abs=1e-7)
    np.testing.assert_allclose(after.w, before.w, atol=1e-4)


def test_aggregation_drops_zero_dual_cuts_before_merging():
    ws = WorkingSet(4)
    for i in range(4):
        ws.add(Cut(np.eye(4)[i], float(i)))
    assert ws.aggregate(3, np.array([0.5, 0.0, 0.5, 0.0])) == 1  # the oldest zero-dual cut goes
    np.testing.assert_allclose(ws.offsets, [0.0, 2.0, 3.0])
    assert ws.aggregate(2, np.array([0.5, 0.5, 0.0])) == 1
    np.testing.assert_allclose(ws.offsets, [0.0, 2.0])
    assert ws.aggregate(1, np.array([0.25, 0.75])) == 1  # a real merge: beta = duals
    np.testing.assert_allclose(dense_rows(ws), [[0.25, 0.0, 0.75, 0.0]])
    np.testing.assert_allclose(ws.offsets, [1.5])
    np.testing.assert_allclose(ws.gram(), [[0.25**2 + 0.75**2]])


@settings(max_examples=30)
@given(
    seed=st.integers(0, 2**31),
    dim=st.integers(1, 8),
    sparse=st.booleans(),
    n_groups=st.sampled_from([None, 2]),
    pos=st.integers(0, 20),
    budget=st.integers(3, 6),
)
def test_aggregation_and_pruning_pin_the_floor_cut(seed, dim, sparse, n_groups, pos, budget):
    """With ``floor`` given, the zero-slope cut ``R >= r0`` is neither dropped, pruned nor merged
    (it moves to the newest end); the other cuts are merged as without a floor; the Gram
    blocks stay those of the stored slopes."""
    rng = np.random.default_rng(seed)
    groups = None if n_groups is None else rng.integers(0, n_groups, size=dim)
    n = budget + 4
    pos = pos % n
    rows = [(rng.standard_normal(dim) + 0.1, float(rng.standard_normal())) for _ in range(n)]
    rows[pos] = (np.zeros(dim), -0.5)

    def build():
        ws = WorkingSet(dim, groups=groups)
        for a, b in rows:
            ws.add(Cut(sp.csr_matrix(a[None, :]) if sparse else a, b))
        return ws

    alpha = rng.random(n) * (rng.random(n) < 0.7)
    alpha[pos] = 0.0  # idle: pruned, or dropped before merging, without the pin
    zero = alpha <= 1e-7 * max(alpha.sum(), np.finfo(float).tiny)
    ws = build()
    assert ws.floor_index(None) is None and ws.floor_index(-0.5) == pos
    ws.record_duals(alpha)
    assert ws.prune(1, floor=-0.5) == int(zero.sum()) - 1
    keep = ~zero
    keep[pos] = True
    np.testing.assert_allclose(dense_rows(ws), np.array([r[0] for r in rows])[keep], atol=1e-12)
    check_consistent(ws, groups, rng)

    alpha = rng.random(n) + 0.01  # no zero duals: a plain merge of the oldest cuts but the floor cut
    alpha[pos] = 0.0
    ws = build()
    lost = ws.aggregate(budget - 1, alpha, floor=-0.5)
    others = [r for i, r in enumerate(rows) if i != pos]
    a_others = np.delete(alpha, pos)
    assert ws.n_cuts == budget - 1 and lost == n - (budget - 1)
    assert ws.floor_index(-0.5) == ws.n_cuts - 1 and ws.offsets[-1] == -0.5
    assert not dense_rows(ws)[-1].any()
    k = n - 1 - (budget - 3)  # the others that become one (budget - 3 stay apart, and the floor cut)
    beta = a_others[:k] / a_others[:k].sum()
    np.testing.assert_allclose(dense_rows(ws)[0], sum(bt * r[0] for bt, r in zip(beta, others[:k])), atol=1e-12)
    np.testing.assert_allclose(ws.offsets[0], sum(bt * r[1] for bt, r in zip(beta, others[:k])), atol=1e-12)
    np.testing.assert_allclose(dense_rows(ws)[1:-1], np.array([r[0] for r in others[k:]]).reshape(-1, dim), atol=1e-12)
    check_consistent(ws, groups, rng)


def test_aggregation_to_one_cut_mixes_in_the_floor():
    """A budget of one cut leaves no room for the floor cut: the merge of every cut is mixed with
    ``(0, r0)`` at weight ``FLOOR_SHARE``, so its slope keeps a margin (L1: the reduced LP stays
    bounded); without a floor the merge is the plain dual-weighted one."""
    from cutplane.working_set.limited_memory import FLOOR_SHARE

    def build():
        ws = WorkingSet(2)
        ws.add(Cut(np.array([1.0, 0.0]), 1.0))
        ws.add(Cut(np.zeros(2), 0.0))
        ws.add(Cut(np.array([0.0, -1.0]), 3.0))
        return ws

    alpha = np.array([0.5, 0.25, 0.25])
    plain, floored = build(), build()
    assert plain.aggregate(1, alpha) == 2 and floored.aggregate(1, alpha, floor=0.0) == 2
    np.testing.assert_allclose(dense_rows(plain), [[0.5, -0.25]])
    np.testing.assert_allclose(plain.offsets, [1.25])
    t = FLOOR_SHARE
    np.testing.assert_allclose(dense_rows(floored), [[0.5 * (1 - t), -0.25 * (1 - t)]])
    np.testing.assert_allclose(floored.offsets, [1.25 * (1 - t)])
    np.testing.assert_allclose(floored.gram(), [[(1 - t) ** 2 * 0.3125]])
    with pytest.raises(InputError, match="floor"):
        build().aggregate(1, alpha, floor=np.nan)


def test_bad_input_is_reported():
    ws = WorkingSet(3)
    with pytest.raises(InputError, match="shape"):
        ws.add(Cut(np.ones(4), 0.0))
    with pytest.raises(InputError, match="NaN"):
        ws.add(Cut(np.array([1.0, np.nan, 0.0]), 0.0))
    with pytest.raises(InputError, match="offset"):
        ws.add(Cut(np.ones(3), np.inf))
    with pytest.raises(InputError, match="groups"):
        WorkingSet(3, groups=[0, 1])
    with pytest.raises(InputError, match="groups"):
        WorkingSet(3, groups=[0, -1, 1])
    ws.add(Cut(np.ones(3), 0.0))
    with pytest.raises(InputError, match="alpha"):
        ws.combine(np.ones(2))
    with pytest.raises(InputError, match="beta"):
        ws.combine_by_group(np.ones((ws.n_groups, ws.n_cuts + 1)))
    with pytest.raises(InputError, match="group"):
        ws.gram(group=1)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_cuts=st.integers(1, 9), n_groups=st.integers(1, 5), contiguous=st.booleans())
def test_threaded_gram_rows_equal_serial(seed, n_cuts, n_groups, contiguous):
    """The Gram rows by merge join, by dense scatter and gather (per-entry group lookup or run by
    run for contiguous groups), serial or on the thread pool (forced by a zero threshold), all
    equal a direct sparse product; ``A alpha`` and ``A^T w`` on threads equal the serial ones."""
    import cutplane.working_set.sparse_rows as ws_module

    rng = np.random.default_rng(seed)
    dim = 300
    groups = np.sort(rng.integers(0, n_groups, dim)) if contiguous else rng.integers(0, n_groups, dim)
    slopes = [sp.random(1, dim, density=rng.uniform(0.05, 0.9), random_state=rng, format="csr") for _ in range(n_cuts)]
    alpha = rng.random(n_cuts) * (rng.random(n_cuts) < 0.7)
    beta = rng.standard_normal((n_groups, n_cuts)) * (rng.random((n_groups, n_cuts)) < 0.7)
    w = rng.standard_normal(dim)
    grams, combos, dots, by_group = [], [], [], []
    saved = ws_module._PARALLEL_NNZ, ws_module._SCRATCH_MAX_DIM, ws_module._MAX_RUNS_PER_GROUP, ws_module._BLOCK
    try:
        # (threshold for threads, largest dim with a scatter buffer, runs per group, cache block):
        # scatter buffer + gather; cache blocks (of 7 or 2^18 coordinates) when the groups are
        # runs, else the merge join; each serial and on threads
        for knobs in (
            (10**15, 0, 16, 7),
            (0, 0, 16, 7),
            (10**15, 0, 10**6, 2**18),
            (0, 0, 10**6, 11),
            (10**15, 10**9, 0, 7),
            (0, 10**9, 0, 7),
            (10**15, 10**9, 10**6, 7),
            (0, 10**9, 10**6, 7),
        ):
            (ws_module._PARALLEL_NNZ, ws_module._SCRATCH_MAX_DIM, ws_module._MAX_RUNS_PER_GROUP, ws_module._BLOCK) = (
                knobs
            )
            ws = WorkingSet(dim, groups=groups)
            for a in slopes:
                ws.add(Cut(a, 0.0))
            grams.append(np.stack([ws.gram(group=j) for j in range(ws.n_groups)]))
            combos.append(ws.combine(alpha))
            by_group.append(ws.combine_by_group(beta))
            dots.append(ws.slopes_dot(w))
            if ws._store._scratch is not None:
                assert not ws._store._scratch.any()  # the buffer is left zero between calls
    finally:
        ws_module._PARALLEL_NNZ, ws_module._SCRATCH_MAX_DIM, ws_module._MAX_RUNS_PER_GROUP, ws_module._BLOCK = saved
    A = sp.vstack(slopes).tocsr()
    direct = np.stack([(A[:, groups == j] @ A[:, groups == j].T).toarray() for j in range(grams[0].shape[0])])
    for g in grams:
        np.testing.assert_allclose(g, direct, rtol=1e-10, atol=1e-12)
    for c in combos:  # one thread per coordinate range: each sum is taken in the same order
        np.testing.assert_array_equal(c, combos[0])
    np.testing.assert_allclose(combos[0], A.T @ alpha, rtol=1e-12, atol=1e-12)
    for c in by_group:
        np.testing.assert_array_equal(c, by_group[0])
    # w_j = A_j^T beta_j: column c of A weighted by beta[g(c)]
    direct_by_group = np.asarray((A.multiply(beta[groups].T)).sum(axis=0)).ravel()
    np.testing.assert_allclose(by_group[0], direct_by_group, rtol=1e-12, atol=1e-12)
    for d in dots:
        np.testing.assert_array_equal(d, dots[0])
    np.testing.assert_allclose(dots[0], A @ w, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_cuts=st.integers(1, 8),
    n_groups=st.integers(1, 4),
    n=st.sampled_from([3, 7, 8936, 10**6]),
    big=st.booleans(),
)
def test_count_cuts_are_stored_as_exact_int16_counts(seed, n_cuts, n_groups, n, big):
    """Slopes that are integer counts times 1/n with a count of +-1 among them (the structured
    oracles' cuts) are stored as int16 counts and a scale, bit-for-bit equal to the slope, or as
    int32 counts when a count is beyond int16; real values stay float64. Gram blocks, A alpha,
    A^T w, the stored matrix and an aggregation agree with direct products either way, on every
    kernel path."""
    import cutplane.working_set.sparse_rows as ws_module

    rng = np.random.default_rng(seed)
    dim = 200
    groups = np.sort(rng.integers(0, n_groups, dim))
    slopes = []
    kinds = []
    for r in range(n_cuts):
        kinds.append("float" if r % 3 == 2 else "big" if big and r % 2 else "counts")
        counts = rng.integers(-40, 41, dim) * (rng.random(dim) < 0.3)
        counts[rng.integers(0, dim)] = rng.choice([-1, 1])
        if big and r % 2:
            counts[rng.integers(0, dim)] = 40000  # beyond int16: int32 counts
        row = counts * (1.0 / n) if r % 3 != 2 else counts * rng.random(dim)  # every third: real values
        slopes.append(sp.csr_matrix(row[None, :]))
    A = sp.vstack(slopes).tocsr()
    alpha = rng.random(n_cuts)
    w = rng.standard_normal(dim)
    direct = np.stack([(A[:, groups == j] @ A[:, groups == j].T).toarray() for j in range(n_groups)])
    absA = abs(A)
    magnitude = np.stack([(absA[:, groups == j] @ absA[:, groups == j].T).toarray() for j in range(n_groups)])
    saved = ws_module._SCRATCH_MAX_DIM
    try:
        for scratch_max in (0, 10**9):  # merge join, gather
            ws_module._SCRATCH_MAX_DIM = scratch_max
            ws = WorkingSet(dim, groups=groups)
            for a in slopes:
                ws.add(Cut(a, 0.0))
            for (ir, dr), scale, a, kind in zip(ws._store.rows, ws._store.scale, slopes, kinds):
                d = a.toarray().ravel()[ir]
                np.testing.assert_array_equal(dr * scale, d)  # exact, whatever the storage
                if kind == "counts":
                    assert dr.dtype == np.int16
                elif kind == "big":
                    assert dr.dtype == np.int32
                else:
                    assert dr.dtype == np.float64
            np.testing.assert_array_equal(ws.matrix().toarray(), A.toarray())
            grams = np.stack([ws.gram(group=j) for j in range(ws.n_groups)])
            # rounding of a dot product is bounded by sum |a_i b_i|, not by |sum a_i b_i| (rows
            # with a count of 40000 beside counts of 1 cancel): the standard backward bound
            assert np.all(np.abs(grams - direct[: ws.n_groups]) <= 1e-13 * magnitude[: ws.n_groups] + 1e-15)
            # the same backward bound for the combinations (sum_r |a_r| alpha_r: cancelling rows
            # leave a small result whose relative error is not bounded)
            bound = 1e-13 * np.asarray(absA.T @ alpha).ravel() + 1e-15
            assert np.all(np.abs(ws.combine(alpha) - A.T @ alpha) <= bound)
            beta = rng.standard_normal((n_groups, n_cuts))
            expected = np.asarray(A.multiply(beta[groups].T).sum(axis=0)).ravel()
            bound = 1e-13 * np.asarray(absA.multiply(np.abs(beta[groups].T)).sum(axis=0)).ravel() + 1e-15
            assert np.all(np.abs(ws.combine_by_group(beta) - expected) <= bound)
            np.testing.assert_allclose(ws.slopes_dot(w), A @ w, rtol=1e-12, atol=1e-15)
            if n_cuts >= 2:
                ws.record_duals(alpha)
                ws.aggregate(1)
                beta = alpha / alpha.sum()
                np.testing.assert_allclose(ws.matrix().toarray()[0], A.T @ beta, rtol=1e-12, atol=1e-15)
                merged = ws.matrix()[0]
                np.testing.assert_allclose(ws.gram(), (merged @ merged.T).toarray(), rtol=1e-10, atol=1e-15)
    finally:
        ws_module._SCRATCH_MAX_DIM = saved


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n_cuts=st.integers(0, 6),
    n_groups=st.integers(1, 4),
    extra=st.integers(0, 2),
    dense=st.booleans(),
)
def test_combine_by_group_is_each_groups_own_combination(seed, n_cuts, n_groups, extra, dense):
    """``combine_by_group(beta)`` restricted to group j equals ``combine(beta[j])`` restricted to j,
    for dense and sparse storage, with or without trailing rows of beta for groups owning no coordinate."""
    rng = np.random.default_rng(seed)
    dim = 40
    groups = rng.integers(0, n_groups, dim)
    groups[:n_groups] = np.arange(n_groups)  # every group owns a coordinate
    ws = WorkingSet(dim, groups=groups)
    for _ in range(n_cuts):
        a = rng.standard_normal(dim) * (rng.random(dim) < 0.5)
        ws.add(Cut(a if dense else sp.csr_matrix(a[None, :]), float(rng.standard_normal())))
    beta = rng.standard_normal((n_groups + extra, n_cuts))
    w = ws.combine_by_group(beta)
    assert w.shape == (dim,)
    for j in range(n_groups):
        expected = ws.combine(beta[j]) if n_cuts else np.zeros(dim)
        np.testing.assert_allclose(w[groups == j], expected[groups == j], rtol=1e-12, atol=1e-14)


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(-(2**31) + 1, 2**31 - 1).filter(lambda c: c != 0), min_size=1, max_size=30),
    n=st.sampled_from([1, 3, 7, 8936, 10**6]),
    noise=st.booleans(),
    big=st.booleans(),
)
def test_quantize_is_exact_or_declines(counts, n, noise, big):
    """``quantize``: integer multiples of the smallest magnitude come back as int16 counts (all
    within 32767) or int32 counts and a scale, bit for bit; anything else comes back unchanged
    with scale 1. Checked against the definition, entry by entry."""
    from cutplane.working_set.sparse_rows import quantize

    c = np.array(counts, dtype=np.int64)
    if not big:
        c = np.clip(c, -40000, 40000)
        c[c == 0] = 1
    data = c * (1.0 / n)
    if noise:
        data = data * (1.0 + 1e-9 * np.arange(len(data)))
    q, scale = quantize(data)
    if q is data:
        assert scale == 1.0
        smallest = np.abs(data).min()
        mult = np.rint(data / smallest)
        assert np.abs(mult).max() > 2**31 - 1 or not np.array_equal(mult * smallest, data)
    else:
        assert q.dtype == (np.int16 if np.abs(q).max() <= 32767 else np.int32)
        assert scale == np.abs(data).min()
        np.testing.assert_array_equal(q.astype(np.float64) * scale, data)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n_cuts=st.integers(1, 8), sparse=st.booleans())
def test_slopes_dot_and_model_value_on_a_subset_of_cuts(seed, n_cuts, sparse):
    rng = np.random.default_rng(seed)
    dim = 15
    ws = WorkingSet(dim)
    dense = rng.standard_normal((n_cuts, dim)) * (rng.random((n_cuts, dim)) < 0.5)
    offsets = rng.standard_normal(n_cuts)
    for a, b in zip(dense, offsets):
        ws.add(Cut(sp.csr_matrix(a[None, :]) if sparse else a, float(b)))
    w = rng.standard_normal(dim)
    rows = rng.choice(n_cuts, size=rng.integers(1, n_cuts + 1), replace=False)
    full = ws.slopes_dot(w)
    np.testing.assert_allclose(full, dense @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ws.slopes_dot(w, rows), full[rows], rtol=1e-13, atol=1e-13)
    assert ws.model_value(w, rows) == pytest.approx(np.max(dense[rows] @ w + offsets[rows]), abs=1e-12)
    assert ws.model_value(w, rows) <= ws.model_value(w) + 1e-12
    assert ws.model_value(w, np.zeros(0, dtype=int)) == -np.inf


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_cuts=st.integers(1, 6), keep=st.lists(st.booleans(), min_size=1, max_size=8))
def test_combine_reuses_only_outputs_nobody_holds(seed, n_cuts, keep):
    """``A alpha`` fills a kept output array again once nothing refers to it: an output the caller
    still holds (or a view of it, or a frozen copy the engine queries) is never overwritten, and
    every result equals the direct product."""
    rng = np.random.default_rng(seed)
    dim = 50
    ws = WorkingSet(dim)
    slopes = [sp.random(1, dim, density=0.3, random_state=rng, format="csr") for _ in range(n_cuts)]
    for a in slopes:
        ws.add(Cut(a, 0.0))
    A = sp.vstack(slopes).tocsr()
    held = []
    for k in keep:
        alpha = rng.random(n_cuts) * (rng.random(n_cuts) < 0.8)
        out = ws.combine(alpha)
        np.testing.assert_allclose(out, A.T @ alpha, rtol=1e-12, atol=1e-12)
        if k:
            if rng.random() < 0.5:
                out.flags.writeable = False  # as the engine freezes its query points
            held.append((out if rng.random() < 0.5 else out[::2], np.array(out, copy=True)))
        del out
    for view, snapshot in held:  # later calls never wrote into an array still referred to
        base = view if view.base is None else view.base
        np.testing.assert_array_equal(base, snapshot)
    held.clear()
    first = ws.combine(np.ones(n_cuts))
    ref = weakref.ref(first)
    del first  # nothing holds it any more: the next output is the same array, filled again
    again = ws.combine(np.full(n_cuts, 2.0))
    assert ref() is again
    np.testing.assert_allclose(again, A.T @ np.full(n_cuts, 2.0), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_held=st.integers(1, 6))
def test_idle_outputs_are_let_go_but_the_one_reused(seed, n_held):
    """Outputs nothing refers to any more are not kept beyond the one the next ``A alpha`` fills:
    idle buffers hold at most one vector of memory (a dense vector is 26 MB on CoNLL-2000)."""
    rng = np.random.default_rng(seed)
    dim = 40
    ws = WorkingSet(dim)
    for _ in range(3):
        ws.add(Cut(sp.random(1, dim, density=0.3, random_state=rng, format="csr"), 0.0))
    alpha = rng.random(3)
    held = [ws.combine(alpha) for _ in range(n_held)]  # all held: distinct arrays
    assert len({id(a) for a in held}) == n_held
    refs = [weakref.ref(a) for a in held]
    del held
    again = ws.combine(2.0 * alpha)
    alive = [r() for r in refs if r() is not None]
    assert len(alive) == 1 and alive[0] is again  # the others were let go


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(0, 12), dim=st.integers(1, 5))
def testcompact_rows_equals_fancy_indexing(data, n, dim):
    """Pruning compacts the dense slopes in place: the same rows as ``block[sel]``, any subset or permutation."""
    from cutplane.working_set.limited_memory import compact_rows

    block = np.arange(n * dim, dtype=np.float64).reshape(n, dim) + 0.5
    if data.draw(st.booleans()):
        sel = np.flatnonzero(np.asarray(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
    else:
        sel = np.asarray(data.draw(st.permutations(list(range(n)))), dtype=np.intp)
    want = block[sel].copy()
    compact_rows(block, sel)
    np.testing.assert_array_equal(block[: sel.size], want)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_cuts=st.integers(1, 12), zero_share=st.floats(0.0, 1.0))
def test_dense_combine_over_the_nonzero_duals_equals_the_full_product(seed, n_cuts, zero_share):
    """Dense slopes: ``combine`` reads only the rows of nonzero duals; the result is ``alpha @ A``."""
    rng = np.random.default_rng(seed)
    ws = WorkingSet(7)
    for _ in range(n_cuts):
        ws.add(Cut(rng.standard_normal(7), float(rng.standard_normal())))
    alpha = rng.random(n_cuts) * (rng.random(n_cuts) >= zero_share)
    np.testing.assert_allclose(ws.combine(alpha), alpha @ ws.matrix(), rtol=1e-13, atol=1e-13)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    dim=st.integers(1, 12),
    n_cuts=st.integers(1, 8),
    n_groups=st.sampled_from([None, 1, 3]),
    sparse=st.booleans(),
    counts=st.booleans(),
    factor=st.floats(0.01, 10.0),
)
def test_scale_multiplies_every_cut_and_its_products(seed, dim, n_cuts, n_groups, sparse, counts, factor):
    rng = np.random.default_rng(seed)
    groups = None if n_groups is None else rng.integers(0, n_groups, size=dim)
    if groups is not None:
        groups[: min(dim, n_groups)] = np.arange(min(dim, n_groups))
    ws, fresh = WorkingSet(dim, groups=groups), WorkingSet(dim, groups=groups)
    for _ in range(n_cuts):
        a = random_slope(rng, dim, sparse)
        if counts:  # integer counts: stored quantized (sparse), scaled through the row scales
            if sparse:
                a = a.copy()
                a.data = np.round(a.data * 3)
            else:
                a = np.round(a * 3)
        b = float(rng.standard_normal())
        ws.add(Cut(a, b))
        fresh.add(Cut(a * factor, b * factor))
    ws.scale(factor)
    np.testing.assert_allclose(dense_rows(ws), dense_rows(fresh), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ws.offsets, fresh.offsets, rtol=1e-12)
    np.testing.assert_allclose(ws.exact_offsets, fresh.exact_offsets, rtol=1e-12)
    np.testing.assert_allclose(ws.gram_blocks(), fresh.gram_blocks(), rtol=1e-10, atol=1e-12)
    check_consistent(ws, groups, rng)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InputError):
            ws.scale(bad)
