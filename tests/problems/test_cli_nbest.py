"""``cutplane predict --nbest N`` (issue 39, CRF++'s ``-n``): per sentence its N best labellings,
``# RANK SCORE`` then the tokens; the first is ``predict``'s own, the scores do not increase, the
labellings differ; refused for other tasks."""

import itertools

import numpy as np
import pytest

from problems.cli.main import main
from problems.io.conll import write_columns
from problems.sequence.command import nbest_labels
from problems.sequence.tagger import SequenceTagger
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("nbest")
    task = make_tagging_task(n_train=60, n_test=8, length=5, n_labels=3, n_informative=3, n_noise=2, signal=0.5, seed=2)
    write_columns(d / "train.txt", task.X_train, task.y_train)
    write_columns(d / "test.txt", task.X_test)
    (d / "t.tpl").write_text(task.templates)
    argv = ["train", "--task", "sequence", "--train", str(d / "train.txt"), "--templates", str(d / "t.tpl")]
    argv += ["--C", "10", "--executor", "serial", "--model", str(d / "m.npz")]
    assert main(argv) == 0
    return d


def _blocks(text):
    """[(rank, score, [token lines])] in order."""
    out, cur = [], None
    for line in text.splitlines():
        if line.startswith("# "):
            _, rank, score = line.split()
            cur = (int(rank), float(score), [])
            out.append(cur)
        elif line:
            cur[2].append(line)
    return out


def test_nbest_output_follows_crfpp(model, capsys):
    d = model
    capsys.readouterr()
    assert main(["predict", "--model", str(d / "m.npz"), "--input", str(d / "test.txt")]) == 0
    plain = [s.splitlines() for s in capsys.readouterr().out.strip("\n").split("\n\n")]
    assert main(["predict", "--model", str(d / "m.npz"), "--input", str(d / "test.txt"), "--nbest", "4"]) == 0
    blocks = _blocks(capsys.readouterr().out)
    assert len(blocks) == 4 * len(plain)  # 3 labels, 5 tokens: far more than 4 labellings each
    for i, sentence in enumerate(plain):
        ranked = blocks[4 * i : 4 * i + 4]
        assert [b[0] for b in ranked] == [0, 1, 2, 3]
        assert ranked[0][2] == sentence  # the best labelling is predict's
        scores = [b[1] for b in ranked]
        assert scores == sorted(scores, reverse=True)
        assert len({tuple(b[2]) for b in ranked}) == 4
        for b in ranked:  # the input columns are those of the file, the label appended
            assert [line.rsplit(" ", 1)[0] for line in b[2]] == [line.rsplit(" ", 1)[0] for line in sentence]


def test_nbest_scores_are_the_chain_scores_of_brute_force(model):
    """Every labelling of a short sentence scored through the model's own weights: the n best
    found are the n best of the enumeration."""
    from problems.io.conll import read_conll

    est = SequenceTagger.load(model / "m.npz")
    x = read_conll(model / "test.txt", labeled=False).inputs[0][:4]
    (ranked,) = nbest_labels(est, [x], 5)
    index = est.feature_index_
    feats = index.transform([x])
    K = len(est.labels_)
    from oracles.viterbi import split_chain_weights

    W, trans = split_chain_weights(est.coef_, feats.n_features, K, transitions=index.has_transitions)
    unary = np.zeros((len(x), K))
    for t in range(len(x)):
        for f in feats.indices[feats.indptr[t] : feats.indptr[t + 1]]:
            unary[t] += W[f]

    def score(y):
        s = unary[0, y[0]]
        for t in range(1, len(y)):
            s = (s + trans[y[t - 1], y[t]]) + unary[t, y[t]]
        return s

    every = sorted((score(y) for y in itertools.product(range(K), repeat=len(x))), reverse=True)
    assert [s for _, s in ranked] == every[:5]


def test_nbest_is_refused_for_other_tasks(tmp_path, capsys):
    from problems.demo_data import make_binary
    from problems.io.svmlight import write_svmlight

    b = make_binary(n_samples=40, n_features=4, n_test=5, seed=0)
    write_svmlight(tmp_path / "b.svm", b.X_train, b.y_train)
    assert (
        main(["train", "--task", "binary", "--train", str(tmp_path / "b.svm"), "--model", str(tmp_path / "b.npz")]) == 0
    )
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "b.npz"), "--input", str(tmp_path / "b.svm"), "-n", "2"]) == 2
    assert "--nbest applies to sequence models" in capsys.readouterr().err
    assert main(["predict", "--model", str(tmp_path / "b.npz"), "--input", str(tmp_path / "b.svm"), "-n", "0"]) == 2
    assert "argument -n/--nbest: must be >= 1" in capsys.readouterr().err


# ------------------------------------------------------------------ cutplane dump (CRF++'s -t)
def test_dump_writes_every_weight_back_exactly(model, capsys):
    est = SequenceTagger.load(model / "m.npz")
    out = model / "m.txt"
    assert main(["dump", "--model", str(model / "m.npz"), "--output", str(out), "--all"]) == 0
    lines = out.read_text().splitlines()
    header = [line for line in lines if line.startswith("# ")]
    body = [line.split("\t") for line in lines if not line.startswith("# ")]
    assert header[0] == "# task: sequence" and f"# labels: {' '.join(est.labels_.labels)}" in header
    assert sum(h.startswith("# template: ") for h in header) == len(est.feature_index_.templates)
    labels = list(est.labels_.labels)
    K, F = len(labels), est.feature_index_.n_features_
    assert len(body) == est.coef_.size  # --all: one line a weight
    names = est.feature_index_.feature_names()
    unigram = {(f, lab): float(w) for f, lab, w in (r for r in body if len(r) == 3)}
    W = est.coef_[: F * K].reshape(F, K)
    assert all(unigram[(names[i], labels[k])] == W[i, k] for i in range(F) for k in range(K))  # exact
    trans = {(a, b): float(w) for _, a, b, w in (r for r in body if len(r) == 4)}
    T = est.coef_[F * K :].reshape(K, K)
    assert all(trans[(labels[a], labels[b])] == T[a, b] for a in range(K) for b in range(K))
    # without --all: the nonzero weights only, on stdout
    capsys.readouterr()
    assert main(["dump", "--model", str(model / "m.npz")]) == 0
    sparse = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("# ")]
    assert len(sparse) == int(np.count_nonzero(est.coef_))


def test_dump_refuses_a_linear_model(tmp_path, capsys):
    from problems.demo_data import make_binary
    from problems.io.svmlight import write_svmlight

    b = make_binary(n_samples=40, n_features=4, n_test=5, seed=0)
    write_svmlight(tmp_path / "b.svm", b.X_train, b.y_train)
    assert (
        main(["train", "--task", "binary", "--train", str(tmp_path / "b.svm"), "--model", str(tmp_path / "b.npz")]) == 0
    )
    capsys.readouterr()
    assert main(["dump", "--model", str(tmp_path / "b.npz")]) == 2
    assert "dump writes the weights of sequence and segment models" in capsys.readouterr().err
