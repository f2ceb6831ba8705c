"""Real-valued features in the sequence oracle (``values``) against brute force over every labelling.

With a value per feature occurrence, ``Phi(x, y)`` adds the value where an indicator adds 1: the
loss-augmented argmax, the risk and the subgradient (the joint-feature difference) are checked
against an enumeration of all labellings on tiny instances; values all 1 give the indicator
oracle bit for bit; and every consumer of the ids (cached cuts, n-slack rows, SPOM's
per-sentence oracle, unary scores, decoding, threads) uses the values."""

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_to_dense
from cutplane.exceptions import InputError
from cutplane.executors import ThreadExecutor
from oracles.sequence import SequenceHingeOracle, viterbi_decode
from oracles.sequence_examples import SequenceExampleOracle


def random_data(rng, n, max_len, n_features, K, max_feats=3):
    lengths = rng.integers(1, max_len + 1, size=n)
    sentence_ptr = np.concatenate([[0], np.cumsum(lengths)])
    n_tokens = int(sentence_ptr[-1])
    feats = [np.sort(rng.integers(0, n_features, size=rng.integers(0, max_feats + 1))) for _ in range(n_tokens)]
    indptr = np.concatenate([[0], np.cumsum([len(f) for f in feats])])
    indices = np.concatenate(feats + [np.zeros(0, int)]).astype(np.int32)  # repeats allowed
    labels = rng.integers(0, K, size=n_tokens)
    values = np.round(rng.normal(0, 2, size=len(indices)), 3)
    return indptr, indices, sentence_ptr, labels, values


def dense_phi(indptr, indices, values, t0, y, n_features, K, transitions):
    """Phi(x, y) from its definition, dense: the value of each occurrence with the token's label."""
    phi_w = np.zeros((n_features, K))
    for t, k in enumerate(y):
        for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
            phi_w[indices[p], k] += values[p]
    parts = [phi_w.ravel()]
    if transitions:
        phi_t = np.zeros((K, K))
        for a, b in zip(y[:-1], y[1:]):
            phi_t[a, b] += 1
        parts.append(phi_t.ravel())
    return np.concatenate(parts)


def brute_force(data, w, nf, K, transitions):
    """Per sentence the best ``Delta + <w, Phi(y) - Phi(y_i)>`` and the dense ``sum_i Phi(y^_i) - Phi(y_i)``."""
    indptr, indices, sentence_ptr, labels, values = data
    total, best_vals = 0.0, []
    for i in range(len(sentence_ptr) - 1):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi = labels[t0:t1]
        phi_i = dense_phi(indptr, indices, values, t0, yi, nf, K, transitions)
        scored = [
            (np.sum(np.array(y) != yi) + w @ (dense_phi(indptr, indices, values, t0, y, nf, K, transitions) - phi_i), y)
            for y in itertools.product(range(K), repeat=t1 - t0)
        ]
        best = max(v for v, _ in scored)
        best_vals.append((best, [np.array(y) for v, y in scored if v >= best - 1e-9]))
        total += best
    return total / (len(sentence_ptr) - 1), best_vals


@st.composite
def instance(draw):
    return (
        draw(st.integers(0, 2**32 - 1)),
        draw(st.integers(1, 4)),
        draw(st.integers(1, 3)),
        draw(st.integers(1, 4)),
        draw(st.booleans()),
    )


@settings(max_examples=120, deadline=None)
@given(instance())
def test_valued_oracle_matches_brute_force(inst):
    seed, n, K, nf, transitions = inst
    rng = np.random.default_rng(seed)
    data = random_data(rng, n, 4, nf, K)
    indptr, indices, sentence_ptr, labels, values = data
    oracle = SequenceHingeOracle(indptr, indices, sentence_ptr, labels, nf, K, transitions=transitions, values=values)
    w = rng.normal(size=oracle.dim)
    res = oracle(w)
    risk, per_sentence = brute_force(data, w, nf, K, transitions)
    assert res.value == pytest.approx(risk, rel=1e-9, abs=1e-9)
    slope = slope_to_dense(res.cut.slope, oracle.dim)
    assert slope @ w + res.cut.offset == pytest.approx(risk, rel=1e-9, abs=1e-9)
    # the argmax is a maximiser, and the slope is (1/n) sum_i Phi(y^_i) - Phi(y_i) with the values
    expected = np.zeros(oracle.dim)
    for i, (best, maximisers) in enumerate(per_sentence):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yhat = res.argmax[t0:t1]
        assert any(np.array_equal(yhat, y) for y in maximisers)
        expected += dense_phi(indptr, indices, values, t0, yhat, nf, K, transitions)
        expected -= dense_phi(indptr, indices, values, t0, labels[t0:t1], nf, K, transitions)
        # per-sentence views: the loss-augmented argmax, the joint feature, SPOM's subgradient
        np.testing.assert_array_equal(oracle.loss_augmented_argmax(w, i), yhat)
        jf = oracle.joint_feature(i, yhat).toarray().ravel()
        np.testing.assert_allclose(jf, dense_phi(indptr, indices, values, t0, yhat, nf, K, transitions), atol=1e-12)
        ex = oracle.example_oracle(w, i)
        assert ex.value == pytest.approx(best, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(slope, expected / n, atol=1e-12)
    # n-slack rows: one cut per sentence, the same maximisers
    cuts = oracle.example_cuts(w)
    for i, (best, _) in enumerate(per_sentence):
        assert cuts.values[i] == pytest.approx(best, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(np.asarray(cuts.slopes.sum(axis=0)).ravel(), expected, atol=1e-9)
    # SPOM's per-sentence oracle on the support of each sentence
    ex_oracle = SequenceExampleOracle(oracle)
    for i, (best, _) in enumerate(per_sentence):
        sup = ex_oracle.example_support(i)
        sg = ex_oracle.example_subgradient(i, w[sup])
        assert sg.value == pytest.approx(best, rel=1e-9, abs=1e-9)
        d = np.zeros(oracle.dim)
        d[sg.indices] = sg.values
        np.testing.assert_allclose(
            d, -oracle.delta_phi(i, cuts.argmax[sentence_ptr[i] : sentence_ptr[i + 1]]).toarray().ravel(), atol=1e-9
        )


@settings(max_examples=60, deadline=None)
@given(instance())
def test_values_all_one_are_the_indicator_oracle(inst):
    seed, n, K, nf, transitions = inst
    rng = np.random.default_rng(seed)
    indptr, indices, sentence_ptr, labels, _ = random_data(rng, n, 5, nf, K)
    args = (indptr, indices, sentence_ptr, labels, nf, K)
    plain = SequenceHingeOracle(*args, transitions=transitions)
    ones = SequenceHingeOracle(*args, transitions=transitions, values=np.ones(len(indices)))
    w = rng.normal(size=plain.dim)
    a, b = plain(w), ones(w)
    assert a.value == b.value and a.cut.offset == b.cut.offset
    np.testing.assert_array_equal(a.argmax, b.argmax)
    np.testing.assert_array_equal(slope_to_dense(a.cut.slope, plain.dim), slope_to_dense(b.cut.slope, plain.dim))
    ca, cb = plain.cached_cut(w * 0.5), ones.cached_cut(w * 0.5)
    assert ca.value == cb.value
    np.testing.assert_array_equal(slope_to_dense(ca.cut.slope, plain.dim), slope_to_dense(cb.cut.slope, plain.dim))
    np.testing.assert_array_equal(plain.unary_scores(w, 0), ones.unary_scores(w, 0))


def test_scaling_a_value_and_its_weights():
    """Values times 2 and the weights of the features times 1/2: the same scores and labels."""
    rng = np.random.default_rng(3)
    indptr, indices, sentence_ptr, labels, values = random_data(rng, 6, 6, 5, 3)
    values = np.where(values == 0, 1.0, values)
    nf, K = 5, 3
    a = SequenceHingeOracle(indptr, indices, sentence_ptr, labels, nf, K, values=values)
    b = SequenceHingeOracle(indptr, indices, sentence_ptr, labels, nf, K, values=2 * values)
    w = rng.normal(size=a.dim)
    w_half = w.copy()
    w_half[: nf * K] /= 2
    for i in range(a.n_samples):
        np.testing.assert_allclose(a.unary_scores(w, i), b.unary_scores(w_half, i), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(a.decode(w), b.decode(w_half))
    assert a(w).value == pytest.approx(b(w_half).value, rel=1e-12)


def test_threads_chunks_and_decode_agree():
    rng = np.random.default_rng(5)
    data = random_data(rng, 40, 7, 12, 4, max_feats=5)
    indptr, indices, sentence_ptr, labels, values = data
    one = SequenceHingeOracle(indptr, indices, sentence_ptr, labels, 12, 4, values=values)
    many = SequenceHingeOracle(
        indptr, indices, sentence_ptr, labels, 12, 4, values=values, executor=ThreadExecutor(2), n_chunks=5
    )
    w = rng.normal(size=one.dim)
    a, b = one(w), many(w)
    np.testing.assert_array_equal(a.argmax, b.argmax)
    assert a.value == pytest.approx(b.value, rel=1e-12)
    np.testing.assert_allclose(slope_to_dense(a.cut.slope, one.dim), slope_to_dense(b.cut.slope, one.dim), atol=1e-12)
    # a chunk pickled for a worker process carries its own sentences and their values
    for task in many.tasks:
        shipped = pickle.loads(pickle.dumps(task))
        assert len(shipped.values) == len(shipped.indices) < len(indices)
        got, want = shipped(w), task(w)
        np.testing.assert_array_equal(got.yhat, want.yhat)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(got.values, want.values)
    pred = viterbi_decode(w, indptr, indices, sentence_ptr, 12, 4, values=values)
    np.testing.assert_array_equal(pred, one.decode(w))
    # the values change the prediction: without them another labelling wins somewhere
    assert not np.array_equal(pred, viterbi_decode(w, indptr, indices, sentence_ptr, 12, 4))


def test_values_refused():
    rng = np.random.default_rng(0)
    indptr, indices, sentence_ptr, labels, values = random_data(rng, 3, 3, 4, 2)
    args = (indptr, indices, sentence_ptr, labels, 4, 2)
    # without values the oracle's own attributes are those it had before values (its checkpoint fingerprint)
    assert "values" not in SequenceHingeOracle(*args).__dict__
    with pytest.raises(InputError, match="one per feature id"):
        SequenceHingeOracle(*args, values=np.ones(len(indices) + 1))
    with pytest.raises(InputError, match="finite"):
        SequenceHingeOracle(*args, values=np.full(len(indices), np.nan))
    bigram = (np.zeros(len(labels) + 1, np.int64), np.zeros(0, np.int32), 1)
    with pytest.raises(InputError, match="bigram"):
        SequenceHingeOracle(*args, values=values, bigram_features=bigram)
