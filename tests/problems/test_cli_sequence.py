"""`cutplane train/predict/evaluate` for the sequence and segment tasks, end to end."""

import json

import pytest

from problems.cli.main import main
from problems.io.conll import read_conll, write_columns
from problems.solvers import SPOM
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("seq")
    task = make_tagging_task(n_train=40, n_test=20, length=8, n_labels=3, n_informative=2, n_noise=2, seed=3)
    # chunk-style labels so chunk F1 is meaningful: L0 -> B-NP, L1 -> I-NP, L2 -> O
    rename = {"L0": "B-NP", "L1": "I-NP", "L2": "O"}
    y_tr = [[rename[t] for t in s] for s in task.y_train]
    y_te = [[rename[t] for t in s] for s in task.y_test]
    write_columns(d / "train.txt", task.X_train, y_tr)
    write_columns(d / "test.txt", task.X_test, y_te)
    write_columns(d / "input.txt", task.X_test)
    (d / "t.tpl").write_text(task.templates)
    seg = ["我们 是 学生", "他 在 北京 大学 学习", "今天 天气 很 好", "我们 在 学习"] * 5
    (d / "seg_train.txt").write_text("\n".join(seg) + "\n", encoding="utf-8")
    (d / "seg_test.txt").write_text("他们 是 学生\n今天 很 好\n", encoding="utf-8")
    return d


def test_sequence_train_predict_evaluate(files, capsys):
    d = files
    code = main(
        [
            "train",
            "--task",
            "sequence",
            "--templates",
            str(d / "t.tpl"),
            "--train",
            str(d / "train.txt"),
            "--dev",
            str(d / "test.txt"),
            "--C",
            "10",
            "--regularizer",
            "mtl",
            "--eps",
            "0.05",
            "--model",
            str(d / "m.npz"),
            "--report",
            str(d / "r.json"),
            "--plot",
            str(d / "plots"),
        ]
    )
    assert code == 0
    assert (d / "plots" / "template_weights.png").stat().st_size > 1000
    assert (d / "plots" / "bounds.png").stat().st_size > 1000
    report = json.loads((d / "r.json").read_text())
    for key in (
        "objective",
        "lower_bound",
        "gap",
        "iterations",
        "status",
        "time_s",
        "oracle_time_s",
        "solver_time_s",
        "backend",
        "template_weights",
        "n_active_templates",
        "dev",
    ):
        assert key in report
    assert report["status"] == "converged" and report["gap"] <= 0.05
    assert report["lower_bound"] <= report["objective"]
    assert 0.0 <= report["dev"]["f1"] <= 100.0
    capsys.readouterr()
    assert (
        main(["predict", "--model", str(d / "m.npz"), "--input", str(d / "input.txt"), "--output", str(d / "pred.txt")])
        == 0
    )
    pred = read_conll(d / "pred.txt")
    gold = read_conll(d / "test.txt")
    assert pred.inputs == gold.inputs  # the input columns come back unchanged
    assert (
        main(["evaluate", "--model", str(d / "m.npz"), "--test", str(d / "test.txt"), "--report", str(d / "e.json")])
        == 0
    )
    out = capsys.readouterr().out
    ev = json.loads((d / "e.json").read_text())
    assert f"f1 {ev['f1']:.4f}" in out
    assert ev["f1"] == pytest.approx(report["dev"]["f1"])


def test_segment_train_predict_evaluate(files, capsys):
    d = files
    assert (
        main(
            [
                "train",
                "--task",
                "segment",
                "--train",
                str(d / "seg_train.txt"),
                "--templates",
                "tp1",
                "--C",
                "10",
                "--model",
                str(d / "s.npz"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "predict",
                "--model",
                str(d / "s.npz"),
                "--input",
                str(d / "seg_test.txt"),
                "--output",
                str(d / "seg_pred.txt"),
            ]
        )
        == 0
    )
    lines = (d / "seg_pred.txt").read_text(encoding="utf-8").splitlines()
    assert [ln.replace(" ", "") for ln in lines] == ["他们是学生", "今天很好"]
    capsys.readouterr()
    assert main(["evaluate", "--model", str(d / "s.npz"), "--test", str(d / "seg_test.txt")]) == 0
    assert "f1" in capsys.readouterr().out


def test_errors_are_clean(files, capsys):
    d = files
    assert main(["train", "--task", "sequence", "--train", str(d / "train.txt"), "--model", str(d / "x.npz")]) == 2
    assert "--templates" in capsys.readouterr().err
    bad = d / "bad.tpl"
    bad.write_text("U00:%x[0,0]\nZ99:%x[0\n")
    assert (
        main(
            [
                "train",
                "--task",
                "sequence",
                "--templates",
                str(bad),
                "--train",
                str(d / "train.txt"),
                "--model",
                str(d / "x.npz"),
            ]
        )
        == 2
    )
    assert f"{bad}:2" in capsys.readouterr().err
    assert (
        main(
            [
                "train",
                "--task",
                "sequence",
                "--templates",
                str(d / "t.tpl"),
                "--train",
                str(d / "train.txt"),
                "--regularizer",
                "l1",
                "--model",
                str(d / "x.npz"),
            ]
        )
        == 2
    )
    assert main(["evaluate", "--model", str(d / "missing.npz"), "--test", str(d / "test.txt")]) == 2


def test_sequence_spom_through_the_cli_matches_the_estimator(files, capsys):
    """``--solver spom``: no certificate in the report or the summary line, the same objective
    as the estimator trained directly with the same settings, a model that predicts."""
    from problems.sequence.tagger import SequenceTagger

    d = files
    code = main(
        [
            "train",
            "--task",
            "sequence",
            "--templates",
            str(d / "t.tpl"),
            "--train",
            str(d / "train.txt"),
            "--C",
            "10",
            "--regularizer",
            "mtl",
            "--solver",
            "spom",
            "--epochs",
            "5",
            "--seed",
            "1",
            "--model",
            str(d / "ms.npz"),
            "--report",
            str(d / "rs.json"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "no certificate" in out and "5 epochs" in out
    report = json.loads((d / "rs.json").read_text())
    assert report["gap"] is None and report["lower_bound"] is None
    corpus = read_conll(d / "train.txt")
    est = SequenceTagger(d.joinpath("t.tpl").read_text(), C=10, regularizer="mtl", solver=SPOM(epochs=5, seed=1)).fit(
        corpus.inputs, corpus.labels
    )
    assert report["objective"] == pytest.approx(est.objective_, rel=1e-9)
    assert main(["evaluate", "--model", str(d / "ms.npz"), "--test", str(d / "test.txt")]) == 0
    capsys.readouterr()
    assert (
        main(
            [
                "train",
                "--task",
                "sequence",
                "--templates",
                str(d / "t.tpl"),
                "--train",
                str(d / "train.txt"),
                "--solver",
                "spom",
                "--checkpoint",
                str(d / "ck.npz"),
                "--model",
                str(d / "x.npz"),
            ]
        )
        == 2
    )
    assert "--checkpoint applies to --solver cutting-plane only" in capsys.readouterr().err
