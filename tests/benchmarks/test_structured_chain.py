"""benchmarks/structured_chain.py on a handful of sentences: the contract's chain model is the built-in one."""

import json

import numpy as np
import pytest

from benchmarks import structured_chain


def _check_run(out, js, n_sentences):
    data = json.loads(js.read_text())
    assert set(data) == {"meta", "rows", "timings", "checks"}
    assert {"command", "date", "machine", "version", "C", "eps"} <= set(data["meta"])
    checks = data["checks"]
    assert checks["same_joint_feature"] and checks["same_risk"]
    assert checks["n_sentences_checked"] == min(20, n_sentences)
    builtin, *contracts = data["rows"]
    assert len(contracts) == 3
    assert {r["status"] for r in data["rows"]} == {"converged"}
    for row in contracts:
        assert structured_chain.agreement((builtin, row))
        assert row["objective_F"] == pytest.approx(builtin["objective_F"], rel=1e-9, abs=1e-9)
    for t in data["timings"]:
        for key in ("builtin", *(f"{k}{s}" for k in ("contract", "batch", "difference") for s in ("", "_unchecked"))):
            assert t[f"{key}_s"] > 0
    assert set(checks["model_parts_at_solution"]) == {
        "argmax_s",
        "joint_feature_s",
        "batch_argmax_s",
        "batch_joint_feature_s",
        "batch_joint_feature_difference_s",
    }
    replay = checks["replay"]
    assert replay["n_queries"] == builtin["n_iter"] - 1  # the built-in run's queries but the last (converged)
    assert all(replay[k] > 0 for k in ("builtin", "contract", "batch", "difference"))
    page = out.read_text()
    assert page.startswith("# A chain model written through the StructuredModel contract")
    assert "Command: `python -m benchmarks.structured_chain --n-sentences" in page
    assert page.count("**agree**") == 3 and "NO" not in page.replace("NOT met", "")
    assert f"first {n_sentences} sentences" in page


def test_generated_sentences(tmp_path):
    from problems.demo_data import make_demo_tagging
    from problems.io.conll import write_columns

    task = make_demo_tagging(n_train=12, n_test=1)
    path = tmp_path / "train.txt"
    rows = [[(row[0], row[1], lab) for row, lab in zip(x, ys)] for x, ys in zip(task.X_train, task.y_train)]
    write_columns(path, rows)  # word, a second column for the templates %x[.,1], the label
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = ["--n-sentences", "12", "--data", str(path), "--C", "1", "--eps", "0.01", "--repeat", "1"]
    assert structured_chain.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    _check_run(out, js, 12)


@pytest.mark.data
def test_conll2000_sentences(tmp_path):
    out, js = tmp_path / "page.md", tmp_path / "page.json"
    argv = ["--n-sentences", "8", "--C", "1", "--eps", "0.01", "--repeat", "1"]
    assert structured_chain.main([*argv, "--out", str(out), "--json", str(js)]) == 0
    _check_run(out, js, 8)


def _random_corpus(rng, lengths, nf, K):
    """Sentences of the given lengths with 0-3 random feature ids per token (sorted) and random
    labels: ``(SequenceFeatures, labels, the built-in SequenceHingeOracle on them)``."""
    from oracles.sequence import SequenceHingeOracle
    from problems.sequence.feature_index import SequenceFeatures

    sentence_ptr = np.concatenate([[0], np.cumsum(lengths)])
    counts = rng.integers(0, 4, sentence_ptr[-1])
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.concatenate([np.sort(rng.integers(0, nf, c)) for c in counts]).astype(np.int32)
    y = rng.integers(0, K, sentence_ptr[-1]).astype(np.int32)
    X = SequenceFeatures(indptr, indices, sentence_ptr, nf, None, None, 0)
    return X, y, SequenceHingeOracle(indptr, indices, sentence_ptr, y, nf, K)


def test_batch_model_gives_the_per_example_answers():
    """ChunkingChainBatch's batch forms (one compiled call over many sentences) against its own
    per-example methods and the built-in oracle, on random sentences (one of them empty)."""
    rng = np.random.default_rng(1)
    nf, K = 9, 3
    X, y, builtin = _random_corpus(rng, [2, 0, 5, 1, 7], nf, K)
    model = structured_chain.ChunkingChainBatch(nf, K)
    _, Ys = structured_chain.examples(X, y)
    Xb = structured_chain.batch_examples(X)
    w = rng.standard_normal(model.dim)
    order = [4, 0, 1, 3]  # any subset, in any order
    Xo, Yo = [Xb[i] for i in order], [Ys[i] for i in order]
    outs = model.batch_loss_augmented_argmax(Xo, Yo, w)
    for x, yy, out in zip(Xo, Yo, outs):
        np.testing.assert_array_equal(out, model.loss_augmented_argmax(x, yy, w))
    for x, out in zip(Xo, model.batch_argmax(Xo, w)):
        np.testing.assert_array_equal(out, model.argmax(x, w))
    others = [rng.integers(0, K, len(yy)).astype(np.int32) for yy in Yo]
    phi = model.batch_joint_feature(Xo, others)
    assert phi.shape == (len(order), model.dim)
    for j, (i, other) in enumerate(zip(order, others)):
        assert (phi[j] != builtin.joint_feature(i, other)).nnz == 0
    np.testing.assert_array_equal(model.batch_loss(Yo, others), [model.loss(a, b) for a, b in zip(Yo, others)])
    from oracles.structured import StructuredOracle

    a = StructuredOracle(model, Xb, Ys)
    assert a.vectorised
    b = StructuredOracle(structured_chain.ChunkingChain(nf, K), structured_chain.examples(X, y)[0], Ys)
    assert a(w).value == pytest.approx(b(w).value, abs=1e-12) == pytest.approx(builtin(w).value, abs=1e-12)


def test_joint_feature_and_argmax_against_the_builtin_oracle():
    """The model's sparse joint feature and loss-augmented Viterbi against SequenceHingeOracle's."""
    rng = np.random.default_rng(0)
    nf, K = 7, 4
    X, y, builtin = _random_corpus(rng, [1, 3, 6], nf, K)
    model = structured_chain.ChunkingChain(nf, K)
    Xs, Ys = structured_chain.examples(X, y)
    w = rng.standard_normal(model.dim)
    for i, (x, yy) in enumerate(zip(Xs, Ys)):
        other = rng.integers(0, K, len(yy)).astype(np.int32)
        for out in (yy, other):
            assert (model.joint_feature(x, out) != builtin.joint_feature(i, out)).nnz == 0
        got = model.loss_augmented_argmax(x, yy, w)
        ref = builtin.loss_augmented_argmax(w, i)

        def value(z, i=i, yy=yy):
            return float(np.sum(z != yy)) + float((builtin.joint_feature(i, z) @ w).sum())

        assert value(got) == pytest.approx(value(ref), abs=1e-9)
