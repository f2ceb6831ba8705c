"""The 1-slack parsing oracle: value against brute force, subgradient inequality, executors."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import OracleResult, slope_to_dense
from cutplane.exceptions import InputError
from cutplane.executors import ThreadExecutor
from oracles.brute_force import brute_force_tree, enumerate_trees
from oracles.parse_oracle import ArcFeatures, ParseOracle, decode
from oracles.parsing import is_projective, is_tree, tree_score


def random_dataset(rng, n_sent=6, max_words=5, dim=12, per_arc=3):
    """Random binary arc features (empty rows for arcs into the root and self-loops)."""
    lengths = rng.integers(1, max_words + 1, size=n_sent)
    rows = []
    for n in lengths:
        N = n + 1
        for h in range(N):
            for m in range(N):
                if m == 0 or h == m:
                    rows.append(np.empty(0, np.int32))
                else:
                    k = rng.integers(0, per_arc + 1)
                    rows.append(np.sort(rng.choice(dim, size=k, replace=False)).astype(np.int32))
    indptr = np.concatenate(([0], np.cumsum([r.size for r in rows])))
    arc_ptr = np.concatenate(([0], np.cumsum((lengths + 1) ** 2)))
    feats = ArcFeatures(lengths, arc_ptr, indptr, np.concatenate(rows), dim)
    return feats, [random_tree(rng, int(n)) for n in lengths]


def random_tree(rng, n):
    """A random tree: words in random order, each attached to the root or an earlier one."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1, dtype=np.int64)
    placed = [0]
    for m in order:
        heads[m] = placed[rng.integers(len(placed))]
        placed.append(int(m))
    return heads


def dense_phi(feats, i, heads):
    return slope_to_dense(feats.phi(i, heads), feats.dim)


def brute_value(feats, gold, w, projective=False, single_root=False, normalize=False):
    total = 0.0
    for i, g in enumerate(gold):
        S = feats.scores(i, w)
        n = len(g) - 1
        lw = 1.0 / n if normalize else 1.0
        best = brute_force_tree(S, g, projective=projective, single_root=single_root, loss_weight=lw)
        total += best.score - tree_score(S, g)
    return total / len(gold)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_value_equals_brute_force_and_cut_is_tight(seed, projective, single_root, normalize, integer):
    rng = np.random.default_rng(seed)
    feats, gold = random_dataset(rng)
    w = rng.integers(-2, 3, size=feats.dim).astype(float) if integer else rng.normal(size=feats.dim)
    oracle = ParseOracle(feats, gold, projective=projective, single_root=single_root, normalize_loss=normalize)
    res = oracle(w)
    assert isinstance(res, OracleResult) and res.exact
    assert res.value == pytest.approx(brute_value(feats, gold, w, projective, single_root, normalize), abs=1e-9)
    assert res.value >= oracle.risk_lower_bound - 1e-12  # the floor the engine adds as a cut
    a = slope_to_dense(res.cut.slope, feats.dim)
    assert sp.issparse(res.cut.slope) and res.cut.slope.shape == (1, feats.dim)
    assert res.value == pytest.approx(a @ w + res.cut.offset, abs=1e-12)
    # a = (1/n) sum (Phi(pred) - Phi(gold)), b = mean loss, from the returned argmax
    expect = np.mean(
        [dense_phi(feats, i, p) - dense_phi(feats, i, g) for i, (p, g) in enumerate(zip(res.argmax, gold))], axis=0
    )
    np.testing.assert_allclose(a, expect, atol=1e-12)
    losses = [np.count_nonzero(p[1:] != g[1:]) / ((len(g) - 1) if normalize else 1) for p, g in zip(res.argmax, gold)]
    assert res.cut.offset == pytest.approx(np.mean(losses), abs=1e-12)
    for p in res.argmax:
        assert is_tree(p, single_root=single_root)
        if projective:
            assert is_projective(p)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_subgradient_inequality(seed, projective):
    rng = np.random.default_rng(seed)
    feats, gold = random_dataset(rng, n_sent=5)
    oracle = ParseOracle(feats, gold, projective=projective)
    w1 = rng.normal(size=feats.dim) * rng.choice([0.1, 1.0, 10.0])
    r1 = oracle(w1)
    for _ in range(5):
        w2 = w1 + rng.normal(size=feats.dim) * rng.choice([0.01, 1.0, 10.0])
        r2 = oracle(w2)
        assert r2.value >= r1.cut.slope.dot(w2).item() + r1.cut.offset - 1e-9


def test_private_arc_features_margin_scaling():
    # one private feature per arc: with w = c * Phi(gold), every wrong word of a tree y adds
    # 1 - c to Delta + <w, Phi(y) - Phi(gold)>, so R = max(0, 1 - c) * (mean max #wrong heads)
    rng = np.random.default_rng(1)
    lengths = np.array([3, 5, 1, 4])
    rows, k = [], 0
    for n in lengths:
        for h in range(n + 1):
            for m in range(n + 1):
                if m == 0 or h == m:
                    rows.append(np.empty(0, np.int32))
                else:
                    rows.append(np.array([k], np.int32))
                    k += 1
    indptr = np.concatenate(([0], np.cumsum([r.size for r in rows])))
    feats = ArcFeatures(lengths, np.concatenate(([0], np.cumsum((lengths + 1) ** 2))), indptr, np.concatenate(rows), k)
    gold = [random_tree(rng, int(n)) for n in lengths]
    w = np.sum([dense_phi(feats, i, g) for i, g in enumerate(gold)], axis=0)
    oracle = ParseOracle(feats, gold)
    max_wrong = np.mean([max(np.count_nonzero(t[1:] != g[1:]) for t in enumerate_trees(len(g) - 1)) for g in gold])
    for c in (0.0, 0.25, 0.5, 1.0, 2.0, 100.0):
        res = oracle(c * w)
        assert res.value == pytest.approx(max(0.0, 1.0 - c) * max_wrong, abs=1e-12)
        if c > 1.0:
            for p, g in zip(res.argmax, gold):
                np.testing.assert_array_equal(p, g)
            assert res.cut.slope.nnz == 0 and res.cut.offset == 0.0


def test_zero_weights_value_is_mean_max_loss():
    # at w = 0 every tree scores 0, so the value is the mean of the largest achievable loss
    rng = np.random.default_rng(2)
    feats, gold = random_dataset(rng, n_sent=8)
    res = ParseOracle(feats, gold)(np.zeros(feats.dim))
    best = [max(np.count_nonzero(t[1:] != g[1:]) for t in enumerate_trees(len(g) - 1)) for g in gold]
    assert res.value == pytest.approx(np.mean(best))


@pytest.mark.parametrize("normalize", [False, True])
def test_threads_equal_serial(normalize):
    rng = np.random.default_rng(5)
    feats, gold = random_dataset(rng, n_sent=40, max_words=12, dim=300, per_arc=6)
    w = rng.normal(size=feats.dim)
    serial = ParseOracle(feats, gold, normalize_loss=normalize)(w)
    ex = ThreadExecutor(2)
    try:
        threaded = ParseOracle(feats, gold, normalize_loss=normalize, executor=ex, n_chunks=7)(w)
    finally:
        ex.close()
    assert threaded.value == pytest.approx(serial.value, rel=1e-13, abs=1e-13)
    assert threaded.cut.offset == pytest.approx(serial.cut.offset, rel=1e-13, abs=1e-13)
    assert (threaded.cut.slope != serial.cut.slope).nnz == 0
    for a, b in zip(threaded.argmax, serial.argmax):
        np.testing.assert_array_equal(a, b)


def test_per_example_cut_and_decode():
    rng = np.random.default_rng(9)
    feats, gold = random_dataset(rng, n_sent=5)
    w = rng.normal(size=feats.dim)
    oracle = ParseOracle(feats, gold)
    full = oracle(w)
    values = []
    for i, g in enumerate(gold):
        ex = oracle.loss_augmented(i, w)
        np.testing.assert_array_equal(ex.heads, full.argmax[i])
        np.testing.assert_allclose(
            slope_to_dense(ex.dphi, feats.dim), dense_phi(feats, i, g) - dense_phi(feats, i, ex.heads), atol=0
        )
        assert ex.value == pytest.approx(ex.loss - ex.dphi.dot(w).item(), abs=1e-12)
        values.append(ex.value)
    assert np.mean(values) == pytest.approx(full.value, abs=1e-12)
    # plain decoding equals brute force without loss
    pred = decode(feats, w)
    assert len(pred) == 5
    for i, p in enumerate(pred):
        S = feats.scores(i, w)
        assert tree_score(S, p) == pytest.approx(brute_force_tree(S).score, abs=1e-12)
    for a, b in zip(oracle.predict(w), pred):
        np.testing.assert_array_equal(a, b)


def test_subset_and_file_convention_gold():
    rng = np.random.default_rng(4)
    feats, gold = random_dataset(rng, n_sent=6)
    sub = feats.subset([4, 1])
    w = rng.normal(size=feats.dim)
    for j, i in enumerate([4, 1]):
        np.testing.assert_array_equal(sub.scores(j, w), feats.scores(i, w))
    a = ParseOracle(sub, [gold[4], gold[1]])(w)
    b = ParseOracle(sub, [gold[4][1:], gold[1][1:]])(w)  # (n,) arrays, 0 = root
    assert a.value == b.value


def test_bad_input():
    rng = np.random.default_rng(0)
    feats, gold = random_dataset(rng, n_sent=3)
    with pytest.raises(InputError, match="gold trees"):
        ParseOracle(feats, gold[:2])
    bad = [g.copy() for g in gold]
    bad[1][1] = 99
    with pytest.raises(InputError, match="sentence 1"):
        ParseOracle(feats, bad)
    oracle = ParseOracle(feats, gold)
    with pytest.raises(InputError, match="shape"):
        oracle(np.zeros(feats.dim + 1))
    with pytest.raises(InputError, match="NaN"):
        oracle(np.full(feats.dim, np.nan))
    with pytest.raises(InputError, match="feature ids"):
        ArcFeatures(feats.lengths, feats.arc_ptr, feats.indptr, feats.indices, 2)
    with pytest.raises(InputError, match="arc_ptr"):
        ArcFeatures(feats.lengths, feats.arc_ptr + 1, feats.indptr, feats.indices, feats.dim)
