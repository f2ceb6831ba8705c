"""Viterbi (plain and Hamming-augmented) against exhaustive search, ties included."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.brute_force import all_sequences, sequence_argmax, sequence_score
from oracles.sequence import viterbi


@st.composite
def chain(draw, integer=True):
    T = draw(st.integers(0, 5))
    K = draw(st.integers(1, 4))
    if integer:
        # small integers force many exact ties
        vals = st.integers(-2, 2).map(float)
    else:
        vals = st.floats(-5, 5, allow_nan=False, allow_infinity=False)
    unary = np.array(draw(st.lists(vals, min_size=T * K, max_size=T * K)), dtype=float).reshape(T, K)
    trans = np.array(draw(st.lists(vals, min_size=K * K, max_size=K * K)), dtype=float).reshape(K, K)
    y_true = np.array(draw(st.lists(st.integers(0, K - 1), min_size=T, max_size=T)), dtype=np.int64)
    return unary, trans, y_true


@settings(max_examples=1000)
@given(chain(integer=True))
def test_plain_matches_brute_force_with_ties(inst):
    unary, trans, _ = inst
    assert np.array_equal(viterbi(unary, trans), sequence_argmax(unary, trans))


@settings(max_examples=1000)
@given(chain(integer=True))
def test_augmented_matches_brute_force_with_ties(inst):
    unary, trans, y_true = inst
    got = viterbi(unary, trans, y_true)
    assert np.array_equal(got, sequence_argmax(unary, trans, y_true))


@settings(max_examples=500)
@given(chain(integer=False))
def test_continuous_scores_reach_the_maximum(inst):
    # With real-valued scores two different paths can round to the same float total although
    # their prefixes differ (e.g. -1e-180 vs 0 before adding 1.0), so the argmax itself is only
    # compared when the maximum is separated from the runner-up; the score always must be maximal.
    unary, trans, y_true = inst
    T, K = unary.shape
    for yt in (None, y_true):
        got = viterbi(unary, trans, yt)
        ref = sequence_argmax(unary, trans, yt)
        assert sequence_score(unary, trans, got, yt) == pytest.approx(sequence_score(unary, trans, ref, yt), abs=1e-9)
        scores = sorted((sequence_score(unary, trans, y, yt) for y in all_sequences(T, K)), reverse=True)
        if len(scores) < 2 or scores[0] - scores[1] > 1e-9:
            assert np.array_equal(got, ref)


def test_tie_rule_is_lowest_label_from_the_end():
    # all scores zero: every sequence ties; the rule picks all zeros
    assert viterbi(np.zeros((4, 3)), np.zeros((3, 3))).tolist() == [0, 0, 0, 0]
    # last position prefers label 2 or 1 equally -> 1; then previous ties -> 0
    u = np.array([[0.0, 0.0], [0.0, 0.0]])
    tr = np.array([[0.0, 1.0], [0.0, 1.0]])  # anything followed by 1 gets +1
    assert viterbi(u, tr).tolist() == [0, 1]


def test_loss_augmentation_moves_away_from_truth():
    # with zero scores the augmented argmax must disagree with y_true everywhere (K >= 2)
    y_true = np.array([0, 1, 1, 0])
    y = viterbi(np.zeros((4, 2)), np.zeros((2, 2)), y_true)
    assert np.all(y != y_true)


@pytest.mark.parametrize(
    "bad",
    [
        dict(unary=np.zeros(3), transition=np.zeros((3, 3))),
        dict(unary=np.zeros((2, 3)), transition=np.zeros((2, 2))),
        dict(unary=np.array([[np.nan, 0.0]]), transition=np.zeros((2, 2))),
        dict(unary=np.zeros((2, 2)), transition=np.zeros((2, 2)), y_true=np.array([0, 2])),
        dict(unary=np.zeros((2, 2)), transition=np.zeros((2, 2)), y_true=np.array([0])),
    ],
)
def test_bad_input_raises_input_error(bad):
    with pytest.raises(InputError):
        viterbi(**bad)
