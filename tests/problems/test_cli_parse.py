"""`cutplane train/predict/evaluate --task parse`, end to end on CoNLL-U files."""

import json
from pathlib import Path

import numpy as np
import pytest

from oracles.parsing import is_projective, is_tree
from problems.cli.main import main
from problems.io.conllu import read_conllu, write_conllu
from problems.metrics.parsing import uas
from problems.parsing.parser import DependencyParser
from problems.solvers import SPOM
from tests.problems.test_dependency_parser import make_treebank

TEMPLATE_FILE = """# POS only: the synthetic heads follow POS
hp_mp
between = hp_bp_mp
dist =
hw   # noise
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("parse")
    write_conllu(d / "train.conllu", make_treebank(40, seed=0))
    write_conllu(d / "test.conllu", make_treebank(30, seed=1))
    test = read_conllu(d / "test.conllu")
    for s in test:  # raw input: no heads
        s.heads = None
    write_conllu(d / "input.conllu", test)
    (d / "t.txt").write_text(TEMPLATE_FILE)
    return d


def test_train_predict_evaluate(files, capsys):
    d = files
    code = main(
        [
            "train",
            "--task",
            "parse",
            "--train",
            str(d / "train.conllu"),
            "--templates",
            str(d / "t.txt"),
            "--dev",
            str(d / "test.conllu"),
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
        "template_weights",
        "n_active_templates",
        "active_templates",
        "dev",
        "train_uas",
    ):
        assert key in report
    assert report["task"] == "parse"
    assert report["status"] == "converged" and report["gap"] <= 0.05
    assert report["lower_bound"] <= report["objective"]
    assert set(report["template_weights"]) == {"hp_mp", "between", "dist", "hw"}
    assert report["single_root"] is True and report["projective"] is False
    assert sorted(Path(f).name for f in report["plots"]) == ["bounds.png", "template_weights.png"]
    assert all(Path(f).stat().st_size > 0 for f in report["plots"])
    capsys.readouterr()

    assert (
        main(
            [
                "predict",
                "--model",
                str(d / "m.npz"),
                "--input",
                str(d / "input.conllu"),
                "--output",
                str(d / "pred.conllu"),
            ]
        )
        == 0
    )
    pred = read_conllu(d / "pred.conllu")
    gold = read_conllu(d / "test.conllu")
    assert [s.forms for s in pred] == [s.forms for s in gold]
    assert [s.upos for s in pred] == [s.upos for s in gold]
    for s in pred:
        assert is_tree(np.concatenate(([-1], s.heads)), single_root=True)
    # the written heads are the estimator's predictions
    est = DependencyParser.load(d / "m.npz")
    assert all(np.array_equal(a, b.heads) for a, b in zip(est.predict(gold), pred))

    assert (
        main(["evaluate", "--model", str(d / "m.npz"), "--test", str(d / "test.conllu"), "--report", str(d / "e.json")])
        == 0
    )
    out = capsys.readouterr().out
    ev = json.loads((d / "e.json").read_text())
    ref = uas(gold, [s.heads for s in pred])
    # the CLI reports every score in percent (the metric's fractions times 100)
    assert ev["uas"] == pytest.approx(100 * ref.uas)
    assert ev["uas_punct"] == pytest.approx(100 * ref.uas_punct)
    assert ev["complete"] == pytest.approx(100 * ref.complete)
    assert f"uas {ev['uas']:.4f}" in out and f"complete {ev['complete']:.4f}" in out
    assert ev["uas"] == pytest.approx(report["dev"]["uas"])


def test_predict_to_stdout_and_projective_ssvm(files, capsys):
    d = files
    assert (
        main(
            [
                "train",
                "--task",
                "parse",
                "--train",
                str(d / "train.conllu"),
                "--regularizer",
                "ssvm",
                "--projective",
                "--C",
                "1",
                "--model",
                str(d / "p.npz"),
            ]
        )
        == 0
    )
    assert DependencyParser.load(d / "p.npz").decoder.projective is True
    capsys.readouterr()
    assert main(["predict", "--model", str(d / "p.npz"), "--input", str(d / "input.conllu")]) == 0
    out = capsys.readouterr().out
    (d / "stdout.conllu").write_text(out, encoding="utf-8")
    pred = read_conllu(d / "stdout.conllu")
    assert len(pred) == 30
    assert all(is_projective(np.concatenate(([-1], s.heads))) for s in pred)


def test_bad_input(files, capsys):
    d = files
    (d / "bad.conllu").write_text("1\tA\ta\tNOUN\t_\t_\t2\tdep\t_\t_\n2\tB\tb\tVERB\t_\t_\t1\tdep\t_\t_\n\n")
    assert main(["train", "--task", "parse", "--train", str(d / "bad.conllu"), "--model", str(d / "x.npz")]) == 2
    err = capsys.readouterr().err
    assert "bad.conllu" in err and "cycle" in err
    (d / "bad_t.txt").write_text("hp_mp\nhq\n")
    assert (
        main(
            [
                "train",
                "--task",
                "parse",
                "--train",
                str(d / "train.conllu"),
                "--templates",
                str(d / "bad_t.txt"),
                "--model",
                str(d / "x.npz"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "bad_t.txt" in err and ":2" in err
    assert (
        main(
            [
                "train",
                "--task",
                "parse",
                "--train",
                str(d / "train.conllu"),
                "--regularizer",
                "l2",
                "--model",
                str(d / "x.npz"),
            ]
        )
        == 2
    )
    assert "--regularizer" in capsys.readouterr().err
    assert not (d / "x.npz").exists()


@pytest.mark.data
def test_danish_dev_subset(data_dir, tmp_path, capsys):
    from problems.datasets import dataset_path

    folder = dataset_path("ud-danish-ddt")
    dev = read_conllu(folder / "da_ddt-ud-dev.conllu.gz")
    write_conllu(tmp_path / "train.conllu", dev[:100])
    write_conllu(tmp_path / "held.conllu", dev[400:500])
    assert (
        main(
            [
                "train",
                "--task",
                "parse",
                "--train",
                str(tmp_path / "train.conllu"),
                "--C",
                "2",
                "--regularizer",
                "mtl",
                "--eps",
                "0.1",
                "--model",
                str(tmp_path / "m.npz"),
                "--report",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["gap"] <= 0.1 and report["n_templates"] == 24
    capsys.readouterr()
    assert (
        main(
            [
                "evaluate",
                "--model",
                str(tmp_path / "m.npz"),
                "--test",
                str(tmp_path / "held.conllu"),
                "--report",
                str(tmp_path / "e.json"),
            ]
        )
        == 0
    )
    ev = json.loads((tmp_path / "e.json").read_text())
    assert f"uas {ev['uas']:.4f}" in capsys.readouterr().out
    # far above attaching every word to its left neighbour (the chance-level baseline here)
    held = read_conllu(tmp_path / "held.conllu")
    left = uas(held, [np.arange(len(s)) for s in held])
    assert ev["uas"] > 100 * left.uas + 10  # percent


def test_spom_solver_trains_reports_and_predicts(files, capsys):
    """``--solver spom`` (options shared with the sequence tasks): the model is the estimator's SPOM
    fit, the report has no certificate and SPOM's own figures, predict / evaluate work on it."""
    d = files
    args = [
        "train",
        "--task",
        "parse",
        "--train",
        str(d / "train.conllu"),
        "--templates",
        str(d / "t.txt"),
        "--C",
        "1",
        "--regularizer",
        "mtl",
        "--solver",
        "spom",
        "--epochs",
        "6",
        "--eta0",
        "0.1",
        "--seed",
        "3",
        "--dev",
        str(d / "test.conllu"),
        "--model",
        str(d / "s.npz"),
        "--report",
        str(d / "s.json"),
        "--plot",
        str(d / "splots"),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "no certificate" in out and "6 epochs" in out
    report = json.loads((d / "s.json").read_text())
    assert report["solver"] == "spom" and report["status"] == "completed" and report["converged"] is False
    assert report["lower_bound"] is None and report["gap"] is None
    assert report["iterations"] == report["epochs"] == 6 and report["eta0"] == 0.1 and report["seed"] == 3
    assert report["averaged"] is True and "backend" not in report and "solver_time_s" not in report
    hist = report["history"]
    assert len(hist["passes"]) == len(hist["objective"]) and hist["passes"][-1] == pytest.approx(6.0)
    assert [Path(f).name for f in report["plots"]] == ["template_weights.png"]
    # the same fit through the estimator: same objective, same trees
    est = DependencyParser(
        {"hp_mp": "hp_mp", "between": "hp_bp_mp", "dist": "", "hw": "hw"},
        C=1.0,
        regularizer="mtl",
        solver=SPOM(epochs=6, eta0=0.1, seed=3),
    ).fit(read_conllu(d / "train.conllu"))
    assert report["objective"] == pytest.approx(est.objective_, rel=1e-9)
    model = DependencyParser.load(d / "s.npz")
    assert isinstance(model.solver, SPOM) and model.solver.seed == 3 and model.gap_ is None
    gold = read_conllu(d / "test.conllu")
    assert all(np.array_equal(a, b) for a, b in zip(model.predict(gold), est.predict(gold)))
    assert main(["evaluate", "--model", str(d / "s.npz"), "--test", str(d / "test.conllu")]) == 0
    assert "uas" in capsys.readouterr().out


def test_solver_options_refused_where_they_do_not_apply(files, capsys, tmp_path):
    d = files
    base = [
        "train",
        "--task",
        "parse",
        "--train",
        str(d / "train.conllu"),
        "--solver",
        "spom",
        "--model",
        str(tmp_path / "x.npz"),
    ]
    for extra, opt in (
        (["--checkpoint", str(tmp_path / "c.npz")], "--checkpoint"),
        (["--memory-limit", "1M"], "--memory-limit"),
    ):
        assert main(base + extra) == 2
        err = capsys.readouterr().err
        assert opt in err and "cutting-plane" in err and "Traceback" not in err
    assert main(base[:-2] + ["--solver", "newton", "--model", str(tmp_path / "x.npz")]) == 2
    assert "--solver" in capsys.readouterr().err
    svm = tmp_path / "a.svm"
    svm.write_text("1 1:1\n-1 1:-1\n1 1:2\n-1 1:-2\n")
    assert (
        main(["train", "--task", "binary", "--train", str(svm), "--solver", "spom", "--model", str(tmp_path / "x.npz")])
        == 2
    )
    assert "--solver" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists() and not (tmp_path / "c.npz").exists()


def test_checkpoint_resume_through_the_cli(files, tmp_path, capsys):
    """--checkpoint / --resume / --executor reach the parser: a run stopped by --max-iter resumes to
    the same objective as an uninterrupted one."""
    d = files
    base = [
        "train",
        "--task",
        "parse",
        "--train",
        str(d / "train.conllu"),
        "--templates",
        str(d / "t.txt"),
        "--C",
        "10",
        "--eps",
        "0.01",
    ]
    assert main(base + ["--model", str(tmp_path / "full.npz"), "--report", str(tmp_path / "full.json")]) == 0
    full = json.loads((tmp_path / "full.json").read_text())
    ckpt = tmp_path / "c.npz"
    assert (
        main(
            base
            + [
                "--model",
                str(tmp_path / "a.npz"),
                "--checkpoint",
                str(ckpt),
                "--max-iter",
                "3",
                "--allow-uncertified",  # stopped early on purpose, to resume
                "--report",
                str(tmp_path / "a.json"),
            ]
        )
        == 0
    )
    first = json.loads((tmp_path / "a.json").read_text())
    assert first["status"] == "max_iter" and ckpt.exists() and full["iterations"] > 3
    assert (
        main(
            base
            + [
                "--model",
                str(tmp_path / "b.npz"),
                "--checkpoint",
                str(ckpt),
                "--resume",
                "--executor",
                "threads",
                "--workers",
                "2",
                "--report",
                str(tmp_path / "b.json"),
            ]
        )
        == 0
    )
    resumed = json.loads((tmp_path / "b.json").read_text())
    assert resumed["resumed"] is True and resumed["status"] == "converged"
    assert resumed["iterations"] > first["iterations"]
    assert abs(resumed["objective"] - full["objective"]) <= 0.01
    capsys.readouterr()


@pytest.mark.slow
def test_kill_9_then_resume_ends_at_the_same_objective(tmp_path, capsys):
    """Issue 9's acceptance for the parse task: SIGKILL mid-training, ``--resume``, same objective
    (~30 s in a subprocess; the short versions: test_checkpoint_resume_through_the_cli and the
    estimator's interrupt test in test_dependency_parser.py)."""
    import signal

    from tests.problems.test_cli_resume import checkpoint_iterations, run_cli, wait_for_checkpoint

    write_conllu(tmp_path / "train.conllu", make_treebank(80, seed=0))
    eps = 0.01

    def args(tag, *extra):
        return [
            "train",
            "--task",
            "parse",
            "--train",
            str(tmp_path / "train.conllu"),
            "--C",
            "10",
            "--eps",
            str(eps),
            "--regularizer",
            "ssvm",
            "--model",
            str(tmp_path / f"{tag}.npz"),
            "--report",
            str(tmp_path / f"{tag}.json"),
            *extra,
        ]

    assert main(args("ref")) == 0
    ref = json.loads((tmp_path / "ref.json").read_text())
    assert ref["status"] == "converged" and ref["iterations"] > 40
    ckpt = tmp_path / "run.ckpt"
    run = args("run", "--checkpoint", str(ckpt), "--checkpoint-every", "1")
    proc = run_cli(run, tmp_path)
    wait_for_checkpoint(proc, ckpt, 8, "it could be killed")
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    done = checkpoint_iterations(ckpt)
    assert 8 <= done < ref["iterations"] and not (tmp_path / "run.json").exists()
    resumed = run_cli([*run, "--resume"], tmp_path)
    _, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    rep = json.loads((tmp_path / "run.json").read_text())
    assert rep["status"] == "converged" and rep["resumed"] is True and rep["iterations"] > done
    assert abs(rep["objective"] - ref["objective"]) <= eps
    capsys.readouterr()
