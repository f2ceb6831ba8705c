"""``cutplane train --task rank`` / ``evaluate`` on SVMlight files with qid: (issue 40)."""

import json

import numpy as np
import pytest

from problems.cli.main import main
from problems.io.svmlight import read_svmlight_ranking
from problems.linear.rank_svm import RankSVM
from problems.metrics.ranking import ndcg_at_k, pairwise_accuracy


def _write(path, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    q = np.repeat(np.arange(n // 10), 10) + 100
    y = np.clip(np.round(X @ [1.0, -1.0, 0.5, 0.0] + 0.5 * rng.standard_normal(n)), -1, 2) + 1
    lines = [f"{int(y[i])} qid:{q[i]} " + " ".join(f"{j + 1}:{X[i, j]:.5f}" for j in range(4)) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")


def _run(capsys, *args):
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_train_and_evaluate_by_ndcg_and_pairwise_accuracy(tmp_path, capsys):
    train, test, model, report = (tmp_path / n for n in ("train.svm", "test.svm", "m.npz", "r.json"))
    _write(train, 120, 0)
    _write(test, 80, 1)
    code, out, err = _run(
        capsys, "train", "--task", "rank", "--train", train, "--model", model, "--C", "10", "--eps", "1e-4"
    )
    assert code == 0, err
    assert out.startswith("rank: objective")
    code, out, err = _run(capsys, "evaluate", "--model", model, "--test", test, "--report", report)
    assert code == 0, err
    scores = json.loads(report.read_text())
    # the same figures as the estimator and the metrics give directly
    data = read_svmlight_ranking(train)
    est = RankSVM(C=10.0).set_params(solver__eps=1e-4).fit(data.X, data.y, data.qid)
    t = read_svmlight_ranking(test)
    s = est.decision_function(t.X)
    assert scores["ndcg@10"] == pytest.approx(100 * ndcg_at_k(t.y, s, t.qid), abs=0.5)
    assert scores["pairwise_accuracy"] == pytest.approx(100 * pairwise_accuracy(t.y, s, t.qid), abs=0.5)
    assert scores["n_queries"] == 8
    loaded = RankSVM.load(model)
    np.testing.assert_allclose(loaded.coef_, est.coef_, atol=1e-2)


def test_malformed_qid_refused_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.svm"
    bad.write_text("1 qid:1 1:1\n0 qid:one 2:1\n")
    code, _, err = _run(capsys, "train", "--task", "rank", "--train", bad, "--model", tmp_path / "m.npz")
    assert code != 0
    assert f"{bad}:2" in err and "qid" in err
