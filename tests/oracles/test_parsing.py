"""Chu-Liu-Edmonds and Eisner against exhaustive enumeration on tiny sentences."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cutplane.exceptions import InputError
from oracles.brute_force import brute_force_tree, enumerate_trees
from oracles.parsing import chu_liu_edmonds, eisner, hamming_heads, is_projective, is_tree, loss_augment, tree_score


@st.composite
def instances(draw, max_words=5, integer=None):
    """(scores, heads_true or None): integer scores make ties frequent."""
    n = draw(st.integers(1, max_words))
    if integer is None:
        integer = draw(st.booleans())
    if integer:
        S = draw(arrays(np.int64, (n + 1, n + 1), elements=st.integers(-2, 2))).astype(np.float64)
    else:
        S = draw(arrays(np.float64, (n + 1, n + 1), elements=st.floats(-10, 10, allow_nan=False, allow_infinity=False)))
    gold = None
    if draw(st.booleans()):
        # any head per word (the loss does not need a tree) or a real tree
        if draw(st.booleans()):
            trees = enumerate_trees(n)
            gold = trees[draw(st.integers(0, len(trees) - 1))].copy()
        else:
            gold = np.array(
                [-1] + [draw(st.sampled_from([h for h in range(n + 1) if h != m])) for m in range(1, n + 1)]
            )
    return S, gold


def _objective(S, gold, heads):
    return tree_score(S, heads) + (0 if gold is None else hamming_heads(gold, heads))


def _check(decoder, S, gold, projective, single_root):
    heads = decoder(S, gold, single_root=single_root)
    assert heads.shape == (S.shape[0],) and heads[0] == -1
    assert is_tree(heads, single_root=single_root)
    if projective:
        assert is_projective(heads)
    ref = brute_force_tree(S, gold, projective=projective, single_root=single_root)
    assert _objective(S, gold, heads) == pytest.approx(ref.score, rel=1e-9, abs=1e-9)
    again = decoder(S.copy(), None if gold is None else gold.copy(), single_root=single_root)
    np.testing.assert_array_equal(heads, again)


@settings(max_examples=600)
@given(instances(), st.booleans())
def test_cle_matches_brute_force(inst, single_root):
    S, gold = inst
    _check(chu_liu_edmonds, S, gold, False, single_root)


@settings(max_examples=600)
@given(instances(), st.booleans())
def test_eisner_matches_brute_force(inst, single_root):
    S, gold = inst
    _check(eisner, S, gold, True, single_root)


@pytest.mark.parametrize("single_root", [False, True])
def test_many_random_instances_numpy(single_root):
    """Thousands more instances (n <= 5), half with integer scores (ties), half augmented."""
    rng = np.random.default_rng(7)
    for it in range(1500):
        n = int(rng.integers(1, 6))
        if it % 2:
            S = rng.integers(-2, 3, size=(n + 1, n + 1)).astype(np.float64)
        else:
            S = rng.normal(size=(n + 1, n + 1))
        gold = None
        if it % 4 < 2:
            trees = enumerate_trees(n)
            gold = trees[rng.integers(len(trees))]
        _check(chu_liu_edmonds, S, gold, False, single_root)
        _check(eisner, S, gold, True, single_root)


def test_six_words_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        S = rng.integers(-3, 4, size=(7, 7)).astype(np.float64)
        for sr in (False, True):
            _check(chu_liu_edmonds, S, None, False, sr)
            _check(eisner, S, None, True, sr)


def test_enumeration_counts_match_combinatorics():
    # arborescences of n+1 nodes rooted at 0: (n+1)^(n-1) (Cayley); single root: n^(n-1);
    # projective: (3n choose n)/(2n+1) (OEIS A001764); projective single root:
    # A006013(n-1) = (3n-2 choose n-1)/n (OEIS A006013, offset 0)
    from math import comb

    for n in range(1, 7):
        assert len(enumerate_trees(n)) == (n + 1) ** (n - 1)
        assert len(enumerate_trees(n, single_root=True)) == n ** (n - 1)
        assert len(enumerate_trees(n, projective=True)) == comb(3 * n, n) // (2 * n + 1)
        assert len(enumerate_trees(n, projective=True, single_root=True)) == comb(3 * n - 2, n - 1) // n


def test_non_projective_optimum_found_by_cle_only():
    # strong arcs 0->2, 2->1, 1->3; arcs (0,2) and (1,3) cross (0 < 1 < 2 < 3)
    S = np.full((4, 4), -5.0)
    S[0, 2] = 10
    S[2, 1] = 10
    S[1, 3] = 10
    heads = chu_liu_edmonds(S)
    np.testing.assert_array_equal(heads, [-1, 2, 0, 1])
    assert not is_projective(heads)
    proj = eisner(S)
    assert is_projective(proj)
    assert tree_score(S, proj) < tree_score(S, heads)
    assert tree_score(S, proj) == pytest.approx(brute_force_tree(S, projective=True).score)


def test_single_root_differs_when_root_prefers_two_children():
    S = np.zeros((3, 3))
    S[0, 1] = S[0, 2] = 5.0
    S[1, 2] = S[2, 1] = 1.0
    np.testing.assert_array_equal(chu_liu_edmonds(S), [-1, 0, 0])
    sr = chu_liu_edmonds(S, single_root=True)
    assert int(np.count_nonzero(sr[1:] == 0)) == 1
    assert tree_score(S, sr) == 6.0
    np.testing.assert_array_equal(eisner(S), [-1, 0, 0])
    assert tree_score(S, eisner(S, single_root=True)) == 6.0


def test_loss_augmentation_keeps_gold_scores_and_adds_one_elsewhere():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(5, 5))
    gold = np.array([-1, 2, 0, 2, 3])
    A = loss_augment(S, gold)
    for m in range(1, 5):
        for h in range(5):
            if h != m:
                assert A[h, m] == (S[h, m] if h == gold[m] else S[h, m] + 1.0)


def test_large_loss_makes_decoders_avoid_gold():
    # with zero scores, the loss-augmented argmax is a tree with every head wrong when one exists
    n = 5
    S = np.zeros((n + 1, n + 1))
    gold = np.array([-1, 0, 1, 2, 3, 4])
    for dec in (chu_liu_edmonds, eisner):
        heads = dec(S, gold)
        assert hamming_heads(gold, heads) == n


def test_empty_sentence_and_one_word():
    np.testing.assert_array_equal(chu_liu_edmonds(np.zeros((1, 1))), [-1])
    np.testing.assert_array_equal(eisner(np.zeros((1, 1))), [-1])
    np.testing.assert_array_equal(chu_liu_edmonds(np.zeros((2, 2)), single_root=True), [-1, 0])
    np.testing.assert_array_equal(eisner(np.zeros((2, 2)), single_root=True), [-1, 0])


def test_longer_sentences_are_valid_and_cle_dominates_eisner():
    rng = np.random.default_rng(11)
    for n in (10, 40, 80):
        S = rng.normal(size=(n + 1, n + 1))
        c = chu_liu_edmonds(S)
        e = eisner(S)
        cs = chu_liu_edmonds(S, single_root=True)
        assert is_tree(c) and is_tree(e) and is_projective(e) and is_tree(cs, single_root=True)
        assert tree_score(S, c) >= tree_score(S, e) - 1e-9
        assert tree_score(S, c) >= tree_score(S, cs) - 1e-9
        # the arborescence beats every greedy-repair alternative: change one head and stay a tree
        best = tree_score(S, c)
        for m in range(1, n + 1, 7):
            for h in range(n + 1):
                alt = c.copy()
                alt[m] = h
                if h != m and is_tree(alt):
                    assert tree_score(S, alt) <= best + 1e-9


@pytest.mark.parametrize(
    "bad, msg",
    [
        (np.zeros((3, 4)), "square"),
        (np.zeros((0, 0)), "square"),
        (np.array([[0.0, np.nan], [0.0, 0.0]]), "NaN"),
    ],
)
def test_bad_scores_raise_input_error(bad, msg):
    for dec in (chu_liu_edmonds, eisner):
        with pytest.raises(InputError, match=msg):
            dec(bad)


@pytest.mark.parametrize(
    "gold, msg",
    [
        (np.array([-1, 0]), "shape"),
        (np.array([0, 0, 1]), "heads\\[0\\]"),
        (np.array([-1, 5, 1]), "head of word 1"),
        (np.array([-1, 0, 2]), "head of word 2"),
        (np.array([-1.0, 0.5, 1.0]), "integer"),
    ],
)
def test_bad_gold_heads_raise_input_error(gold, msg):
    with pytest.raises(InputError, match=msg):
        chu_liu_edmonds(np.zeros((3, 3)), gold)
