"""The sequence oracle with input-conditioned bigram features (CRF++'s ``B01:%x[0,1]``) against
brute force: position-dependent Viterbi, the 1-slack cut written out from the definition of Phi,
the cached cut, chunking and the incremental cut; and the plain chain as the special case of one
bigram feature firing everywhere."""

import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cutplane.cuts import slope_to_dense
from cutplane.exceptions import InputError
from cutplane.executors import SerialExecutor, ThreadExecutor
from oracles.brute_force import all_sequences, sequence_argmax, sequence_score
from oracles.sequence import SequenceHingeOracle, viterbi, viterbi_decode

from .test_sequence_oracle import random_data


def random_bigram(rng, sentence_ptr, n_bigram, max_feats=2):
    """Bigram feature ids per token (CSR), ids possibly repeated within a token."""
    n_tokens = int(sentence_ptr[-1])
    if n_bigram == 0:
        feats = [np.zeros(0, int) for _ in range(n_tokens)]
    else:
        feats = [np.sort(rng.integers(0, n_bigram, size=rng.integers(0, max_feats + 1))) for _ in range(n_tokens)]
    indptr = np.concatenate([[0], np.cumsum([len(f) for f in feats])]).astype(np.int64)
    indices = np.concatenate(feats + [np.zeros(0, int)]).astype(np.int32)
    return indptr, indices, n_bigram


def dense_phi(data, bigram, i, y, nf, K, transitions):
    """Phi(x_i, y) written out from its definition: sum_t psi(x, t) (x) e_{y_t}
    [+ sum_{t>=1} e_{y_{t-1}} (x) e_{y_t}] + sum_{t>=1} beta(x, t) (x) e_{y_{t-1}} (x) e_{y_t}."""
    indptr, indices, sentence_ptr, _ = data
    bindptr, bindices, nbf = bigram
    t0 = sentence_ptr[i]
    phi_w = np.zeros((nf, K))
    phi_t = np.zeros((K, K))
    phi_b = np.zeros((nbf, K, K))
    for t, k in enumerate(y):
        for f in indices[indptr[t0 + t] : indptr[t0 + t + 1]]:
            phi_w[f, k] += 1
        if t >= 1:
            phi_t[y[t - 1], k] += 1
            for g in bindices[bindptr[t0 + t] : bindptr[t0 + t + 1]]:
                phi_b[g, y[t - 1], k] += 1
    parts = [phi_w.ravel()] + ([phi_t.ravel()] if transitions else []) + [phi_b.ravel()]
    return np.concatenate(parts)


def brute_risk(data, bigram, w, nf, K, transitions):
    """(1/n) sum_i max_y [Delta + <w, Phi(y) - Phi(y_i)>] over every output."""
    _, _, sentence_ptr, labels = data
    n = len(sentence_ptr) - 1
    total = 0.0
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi = labels[t0:t1]
        phi_i = dense_phi(data, bigram, i, yi, nf, K, transitions)
        total += max(
            np.sum(np.array(y) != yi) + w @ (dense_phi(data, bigram, i, y, nf, K, transitions) - phi_i)
            for y in itertools.product(range(K), repeat=t1 - t0)
        )
    return total / n


@st.composite
def instance(draw):
    return dict(
        seed=draw(st.integers(0, 2**32 - 1)),
        n=draw(st.integers(1, 4)),
        K=draw(st.integers(1, 3)),
        nf=draw(st.integers(0, 4)),
        nbf=draw(st.integers(0, 3)),
        transitions=draw(st.booleans()),
        integer_w=draw(st.booleans()),
    )


def build(inst, max_len=4, **kw):
    rng = np.random.default_rng(inst["seed"])
    nf, K = inst["nf"], inst["K"]
    data = random_data(rng, inst["n"], max_len, max(nf, 1), K)
    if nf == 0:  # no unigram feature at all
        data = (np.zeros_like(data[0]), np.zeros(0, np.int32), data[2], data[3])
    bigram = random_bigram(rng, data[2], inst["nbf"])
    oracle = SequenceHingeOracle(*data, nf, K, transitions=inst["transitions"], bigram_features=bigram, **kw)
    return rng, data, bigram, oracle


# ------------------------------------------------------------------ Viterbi with position transitions
@st.composite
def positional_chain(draw):
    T = draw(st.integers(0, 5))
    K = draw(st.integers(1, 4))
    vals = st.integers(-2, 2).map(float)  # small integers: many exact ties
    unary = np.array(draw(st.lists(vals, min_size=T * K, max_size=T * K)), dtype=float).reshape(T, K)
    trans = np.array(draw(st.lists(vals, min_size=T * K * K, max_size=T * K * K)), dtype=float).reshape(T, K, K)
    y_true = np.array(draw(st.lists(st.integers(0, K - 1), min_size=T, max_size=T)), dtype=np.int64)
    return unary, trans, y_true


@settings(max_examples=600, deadline=None)
@given(positional_chain())
def test_positional_viterbi_matches_brute_force_with_ties(inst):
    unary, trans, y_true = inst
    assert np.array_equal(viterbi(unary, trans), sequence_argmax(unary, trans))
    assert np.array_equal(viterbi(unary, trans, y_true), sequence_argmax(unary, trans, y_true))


@settings(max_examples=200, deadline=None)
@given(positional_chain())
def test_positional_viterbi_with_equal_matrices_is_the_plain_viterbi(inst):
    unary, trans, y_true = inst
    if unary.shape[0] == 0:
        return
    same = np.broadcast_to(trans[-1], trans.shape).copy()
    assert np.array_equal(viterbi(unary, same, y_true), viterbi(unary, trans[-1], y_true))
    assert sequence_score(unary, same, viterbi(unary, same)) == sequence_score(unary, trans[-1], viterbi(unary, same))


def test_positional_viterbi_reaches_the_maximum_on_real_scores():
    rng = np.random.default_rng(4)
    for _ in range(100):
        T, K = rng.integers(1, 5), rng.integers(1, 4)
        unary, trans = rng.standard_normal((T, K)), rng.standard_normal((T, K, K))
        got = viterbi(unary, trans)
        best = max(sequence_score(unary, trans, y) for y in all_sequences(T, K))
        assert sequence_score(unary, trans, got) == pytest.approx(best, abs=1e-12)


def test_positional_viterbi_checks_the_shape():
    with pytest.raises(InputError, match=r"\(3, 2, 2\)"):
        viterbi(np.zeros((3, 2)), np.zeros((2, 2, 2)))


# ------------------------------------------------------------------ the oracle against brute force
@settings(max_examples=150, deadline=None)
@given(instance())
def test_cut_matches_brute_force_and_dense_phi(inst):
    rng, data, bigram, oracle = build(inst)
    nf, K, tr = inst["nf"], inst["K"], inst["transitions"]
    assert oracle.conditioned and oracle.dim == nf * K + (K * K if tr else 0) + inst["nbf"] * K * K
    w = (rng.integers(-2, 3, oracle.dim) if inst["integer_w"] else rng.standard_normal(oracle.dim)).astype(float)
    res = oracle(w)
    assert res.value == pytest.approx(brute_risk(data, bigram, w, nf, K, tr), abs=1e-9)
    a = slope_to_dense(res.cut.slope, oracle.dim)
    assert res.value == pytest.approx(a @ w + res.cut.offset, abs=1e-12)
    _, _, sentence_ptr, labels = data
    n = len(sentence_ptr) - 1
    a_ref, b_ref = np.zeros(oracle.dim), 0.0
    for i in range(n):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        yi, yh = labels[t0:t1], res.argmax[t0:t1]
        a_ref -= (dense_phi(data, bigram, i, yi, nf, K, tr) - dense_phi(data, bigram, i, yh, nf, K, tr)) / n
        b_ref += np.sum(yi != yh) / n
        # the per-example views: joint feature map, loss-augmented argmax, position transitions
        np.testing.assert_array_equal(
            oracle.joint_feature(i, yh).toarray().ravel(), dense_phi(data, bigram, i, yh, nf, K, tr)
        )
        assert np.array_equal(oracle.loss_augmented_argmax(w, i), yh)
        trans = oracle.position_transitions(w, i)
        assert np.array_equal(yh, sequence_argmax(oracle.unary_scores(w, i), trans, yi))
    np.testing.assert_allclose(a, a_ref, atol=1e-12)
    assert res.cut.offset == pytest.approx(b_ref, abs=1e-12)
    for _ in range(3):  # the subgradient inequality
        v = rng.standard_normal(oracle.dim) * 2
        assert oracle(v).value >= a @ v + res.cut.offset - 1e-9


@settings(max_examples=80, deadline=None)
@given(instance())
def test_plain_decoding_maximises_the_score(inst):
    rng, data, bigram, oracle = build(inst)
    nf, K, tr = inst["nf"], inst["K"], inst["transitions"]
    w = rng.standard_normal(oracle.dim)
    _, _, sentence_ptr, _ = data
    pred = viterbi_decode(w, data[0], data[1], sentence_ptr, nf, K, transitions=tr, bigram_features=bigram)
    for i in range(len(sentence_ptr) - 1):
        t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
        best = max(w @ dense_phi(data, bigram, i, y, nf, K, tr) for y in itertools.product(range(K), repeat=t1 - t0))
        assert w @ dense_phi(data, bigram, i, pred[t0:t1], nf, K, tr) == pytest.approx(best, abs=1e-9)
        assert np.array_equal(oracle.decode(w, i), pred[t0:t1])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_chunks=st.integers(1, 3), m=st.integers(1, 5))
def test_cached_cut_is_the_best_cached_output_and_a_minorant(seed, n_chunks, m):
    inst = dict(seed=seed, n=4, K=3, nf=3, nbf=2, transitions=bool(seed % 2), integer_w=False)
    ex = ThreadExecutor(2) if n_chunks > 1 else None
    try:
        rng, data, bigram, oracle = build(inst, executor=ex, n_chunks=n_chunks)
        nf, K, tr = 3, 3, inst["transitions"]
        seen = [oracle(rng.standard_normal(oracle.dim) * 2).argmax for _ in range(m)]
        w = rng.standard_normal(oracle.dim) * 2
        cc = oracle.cached_cut(w)
        a = slope_to_dense(cc.cut.slope, oracle.dim)
        assert cc.value == pytest.approx(a @ w + cc.cut.offset, abs=1e-12)
        _, _, sentence_ptr, labels = data
        n = len(sentence_ptr) - 1
        ref = 0.0
        for i in range(n):
            t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
            phi_i = dense_phi(data, bigram, i, labels[t0:t1], nf, K, tr)
            cands = [0.0] + [
                np.sum(s[t0:t1] != labels[t0:t1]) + w @ (dense_phi(data, bigram, i, s[t0:t1], nf, K, tr) - phi_i)
                for s in seen[-5:]
            ]
            ref += max(cands) / n
        assert cc.value == pytest.approx(ref, abs=1e-9)
        v = rng.standard_normal(oracle.dim)
        assert a @ v + cc.cut.offset <= brute_risk(data, bigram, v, nf, K, tr) + 1e-9
        exact = oracle(w)
        assert oracle.cached_cut(w).value == pytest.approx(exact.value, abs=1e-9)
    finally:
        if ex is not None:
            ex.close()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), n_chunks=st.integers(1, 12))
def test_any_chunking_gives_the_serial_cut_and_decode(seed, n_chunks):
    """Chunk tasks pickled as for worker processes (rebased, bigram arrays sliced) reproduce one chunk."""

    class PicklingExecutor(SerialExecutor):
        def bind(self, tasks):
            return super().bind([pickle.loads(pickle.dumps(t)) for t in tasks])

    inst = dict(seed=seed, n=25, K=4, nf=30, nbf=6, transitions=True, integer_w=False)
    _, _, _, one = build(inst, max_len=8)
    rng, _, _, many = build(inst, max_len=8, executor=PicklingExecutor(), n_chunks=n_chunks)
    w = rng.standard_normal(one.dim)
    r1, r2 = one(w), many(w)
    assert np.array_equal(r1.argmax, r2.argmax) and r1.cut.offset == r2.cut.offset
    np.testing.assert_array_equal(slope_to_dense(r1.cut.slope), slope_to_dense(r2.cut.slope))
    np.testing.assert_array_equal(one.decode(w), many.decode(w))


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    calls=st.lists(st.sampled_from(["exact", "cached", "decode"]), min_size=1, max_size=10),
)
def test_cuts_updated_from_the_last_cut_equal_cuts_built_afresh(seed, calls):
    """The incremental cut (threshold lowered to 1 token) equals the cut written out densely."""
    import oracles.sequence_chunk as chunk_module

    saved = chunk_module.INCREMENTAL_MIN_TOKENS
    chunk_module.INCREMENTAL_MIN_TOKENS = 1
    try:
        inst = dict(seed=seed, n=8, K=3, nf=5, nbf=3, transitions=bool(seed % 2), integer_w=False)
        rng, data, bigram, oracle = build(inst, max_len=5)
        nf, K, tr = 5, 3, inst["transitions"]
        _, _, sentence_ptr, labels = data
        n = len(sentence_ptr) - 1
        w = rng.standard_normal(oracle.dim)
        for call in calls:
            w = w + rng.standard_normal(oracle.dim) * 0.3 * (rng.random(oracle.dim) < 0.3)
            if call == "decode":
                oracle.decode(w)
                continue
            res = oracle(w) if call == "exact" else oracle.cached_cut(w)
            out = res.argmax if call == "exact" else np.concatenate([t._last_cut[0] for t in oracle.tasks])
            a_ref, b_ref = np.zeros(oracle.dim), 0.0
            for i in range(n):
                t0, t1 = sentence_ptr[i], sentence_ptr[i + 1]
                a_ref -= (
                    dense_phi(data, bigram, i, labels[t0:t1], nf, K, tr)
                    - dense_phi(data, bigram, i, out[t0:t1], nf, K, tr)
                ) / n
                b_ref += np.sum(labels[t0:t1] != out[t0:t1]) / n
            np.testing.assert_allclose(slope_to_dense(res.cut.slope, oracle.dim), a_ref, rtol=0, atol=1e-12)
            assert res.cut.offset == pytest.approx(b_ref, abs=1e-12)
    finally:
        chunk_module.INCREMENTAL_MIN_TOKENS = saved


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), K=st.integers(1, 4))
def test_one_bigram_feature_everywhere_is_the_plain_chain(seed, K):
    """A bare ``B`` is the bigram feature that fires at every token t >= 1: same layout, same
    argmax, value and cut as the plain oracle's transition block."""
    rng = np.random.default_rng(seed)
    nf = 6
    data = random_data(rng, 5, 6, nf, K)
    sentence_ptr = data[2]
    n_tokens = int(sentence_ptr[-1])
    starts = np.zeros(n_tokens, bool)
    starts[sentence_ptr[:-1]] = True
    bindptr = np.concatenate([[0], np.cumsum(~starts)]).astype(np.int64)
    bindices = np.zeros(int(bindptr[-1]), np.int32)
    plain = SequenceHingeOracle(*data, nf, K)
    cond = SequenceHingeOracle(*data, nf, K, transitions=False, bigram_features=(bindptr, bindices, 1))
    assert plain.dim == cond.dim
    for _ in range(3):
        w = rng.standard_normal(plain.dim) * 2
        r1, r2 = plain(w), cond(w)
        assert np.array_equal(r1.argmax, r2.argmax)
        assert r1.value == r2.value and r1.cut.offset == r2.cut.offset
        np.testing.assert_array_equal(slope_to_dense(r1.cut.slope), slope_to_dense(r2.cut.slope))
        assert plain.cached_cut(w).value == cond.cached_cut(w).value


@pytest.mark.parametrize(
    "bad, what",
    [
        (lambda b: (b[0][:-1], b[1], b[2]), "n_tokens"),
        (lambda b: (b[0], b[1] + 10, b[2]), "bigram feature ids"),
        (lambda b: (b[0], b[1]), "triple"),
        (lambda b: (b[0], b[1], -1), ">= 0"),
    ],
)
def test_bad_bigram_arrays_raise_input_error(bad, what):
    rng = np.random.default_rng(0)
    data = random_data(rng, 3, 4, 5, 3)
    bigram = random_bigram(rng, data[2], 2)
    with pytest.raises(InputError, match=what) as err:
        SequenceHingeOracle(*data, 5, 3, bigram_features=bad(bigram))
    assert err.value.field == "bigram_features"


def test_spom_refuses_conditioned_bigrams_clearly():
    from oracles.sequence_examples import SequenceExampleOracle

    inst = dict(seed=1, n=3, K=2, nf=3, nbf=2, transitions=False, integer_w=False)
    _, _, _, oracle = build(inst)
    with pytest.raises(InputError, match="cutting-plane"):
        SequenceExampleOracle(oracle)


def test_the_plain_chain_does_not_load_the_positional_kernels():
    """Templates without input-conditioned bigrams never import (so never compile) the new kernels,
    and the plain kernels keep one specialisation each (the lead's cold-start measure)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from problems.sequence.tagger import SequenceTagger\n"
        "from problems.solvers import CuttingPlane\n"
        "X = [[('a', 'x'), ('b', 'y'), ('a', 'y')], [('b', 'x'), ('a', 'x')]] * 3\n"
        "y = [['A', 'B', 'A'], ['B', 'B']] * 3\n"
        "est = SequenceTagger('U00:%x[0,0]\\nU01:%x[0,1]\\nB\\n', C=10.0, regularizer='ssvm',\n"
        "                     solver=CuttingPlane(eps=0.1)).fit(X, y)\n"
        "est.predict(X)\n"
        "from oracles.sequence_chunk import _decode_chunk, _cut_chunk\n"
        "assert 'oracles.sequence_bigram' not in sys.modules, 'bigram kernels imported'\n"
        "assert 'oracles.viterbi_positional' not in sys.modules, 'positional Viterbi imported'\n"
        "print(len(_decode_chunk.signatures), len(_cut_chunk.signatures))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "1"]
