"""N-best Viterbi (issue 39, CRF++'s ``-n``) against brute-force enumeration of every label
sequence of tiny chains: the same n best scores, distinct sequences scored as reported, the first
one the 1-best kernel's."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.exceptions import InputError
from oracles.viterbi import viterbi
from oracles.viterbi_nbest import viterbi_nbest


def _score(unary, transition, y):
    """Summed in the kernels' order, ((s + transition) + unary)."""
    s = unary[0, y[0]]
    for t in range(1, len(y)):
        s = (s + transition[y[t - 1], y[t]]) + unary[t, y[t]]
    return s


def _all_scores(unary, transition):
    T, K = unary.shape
    return sorted((_score(unary, transition, y) for y in itertools.product(range(K), repeat=T)), reverse=True)


@st.composite
def chains(draw):
    T = draw(st.integers(1, 4))
    K = draw(st.integers(1, 4))
    # small integers make ties frequent; floats make them rare: both
    values = draw(st.sampled_from([st.integers(-3, 3).map(float), st.floats(-5, 5, allow_nan=False, width=32)]))
    unary = np.array(draw(st.lists(values, min_size=T * K, max_size=T * K)), dtype=np.float64).reshape(T, K)
    trans = np.array(draw(st.lists(values, min_size=K * K, max_size=K * K)), dtype=np.float64).reshape(K, K)
    n = draw(st.integers(1, 12))
    return unary, trans, n


@settings(max_examples=300, deadline=None)
@given(chains())
def test_nbest_matches_brute_force(chain):
    unary, trans, n = chain
    T, K = unary.shape
    labels, scores = viterbi_nbest(unary, trans, n)
    expected = _all_scores(unary, trans)[:n]
    assert labels.shape == (len(expected), T) and scores.tolist() == expected
    assert len({tuple(y) for y in labels.tolist()}) == len(expected)  # distinct sequences
    for y, s in zip(labels, scores):
        assert _score(unary, trans, y) == s  # each scored as reported, bit for bit
    assert _score(unary, trans, labels[0]) == _score(unary, trans, viterbi(unary, trans))


def test_n_beyond_the_number_of_sequences_gives_them_all():
    rng = np.random.default_rng(0)
    unary, trans = rng.normal(size=(3, 2)), rng.normal(size=(2, 2))
    labels, scores = viterbi_nbest(unary, trans, 100)
    assert labels.shape == (8, 3) and np.all(np.diff(scores) <= 0)


def test_bad_arguments_are_refused():
    with pytest.raises(InputError, match="n must be an integer >= 1"):
        viterbi_nbest(np.zeros((2, 2)), np.zeros((2, 2)), 0)
    with pytest.raises(InputError, match="transition must have shape"):
        viterbi_nbest(np.zeros((2, 2)), np.zeros((3, 3)), 2)
    with pytest.raises(InputError, match="finite"):
        viterbi_nbest(np.array([[np.nan, 0.0]]), np.zeros((2, 2)), 2)
