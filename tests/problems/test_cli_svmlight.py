"""`cutplane train/predict` on SVMlight files as others write them (issue 23): scikit-learn's 0-based
files, the index base kept from training to predict, unseen features ignored and counted, the bias
term, and models refused on data of another task or shape (exit status and message)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from problems.cli.main import main
from problems.io.conll import write_columns
from problems.io.conllu import write_conllu
from problems.linear.svm import LinearSVM
from problems.model_io import load_model
from problems.solvers import CuttingPlane
from problems.synthetic import make_tagging_task
from tests.problems.test_dependency_parser import make_treebank

ROOT = Path(__file__).resolve().parents[2]


def _dense(seed, n, d, n_classes):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    X = np.round(rng.random((n, d)) * 4, 2) + 0.5  # every feature nonzero: a dense file
    X[np.arange(n), y % d] += 3.0
    return X, y


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("svml")
    # scikit-learn's defaults: 0-based, every row has feature 0
    X, y = _dense(0, 80, 6, 3)
    dump_svmlight_file(X, y, str(d / "sk.train.svm"))
    Xt, yt = _dense(1, 30, 6, 3)
    dump_svmlight_file(Xt, yt, str(d / "sk.test.svm"))
    # the same test data without feature 0: alone the file cannot tell its base
    Xn = Xt.copy()
    Xn[:, 0] = 0.0
    dump_svmlight_file(Xn, yt, str(d / "sk.nozero.svm"))
    # a 1-based (SVMlight) file of the same task, and the 64-feature / 30-feature pair of the issue
    dump_svmlight_file(X, y, str(d / "one.train.svm"), zero_based=False)
    Xw, yw = _dense(2, 60, 64, 4)
    dump_svmlight_file(Xw, yw, str(d / "wide64.svm"), zero_based=False)
    Xb, yb = _dense(3, 40, 30, 2)
    dump_svmlight_file(Xb, np.where(yb == 1, 1, -1), str(d / "bin30.svm"), zero_based=False)
    # a sequence model, a segmentation model and a parser: other tasks
    task = make_tagging_task(n_train=30, n_test=5, length=6, n_labels=3, n_informative=2, n_noise=1, seed=3)
    rename = {"L0": "B-NP", "L1": "I-NP", "L2": "O"}
    write_columns(d / "seq.txt", task.X_train, [[rename[t] for t in s] for s in task.y_train])
    ner = [[("B-PER", "I-PER", "O")[i % 3] for i in range(len(s))] for s in task.y_test]
    write_columns(d / "ner.txt", task.X_test, ner)
    (d / "t.tpl").write_text(task.templates)
    seg = ["我们 是 学生", "他 在 北京 大学 学习", "今天 天气 很 好"] * 4
    (d / "seg.txt").write_text("\n".join(seg) + "\n", encoding="utf-8")
    write_conllu(d / "tb.conllu", make_treebank(12, seed=0))
    (d / "parse.tpl").write_text("hp_mp\ndist =\n")
    # a budget the certificate is reached within: the parser's 12 trees at C = 10 take 13 BMRM
    # iterations and 31 of the in-out rule, the structured tasks' default (these files only feed
    # the reader and refusal tests below)
    quick = ["--C", "10", "--eps", "0.5", "--max-iter", "100"]
    for args in (
        ["--task", "multiclass", "--train", d / "sk.train.svm", "--model", d / "sk.npz", "--eps", "1e-4"],
        ["--task", "multiclass", "--train", d / "one.train.svm", "--model", d / "one.npz"],
        ["--task", "multiclass", "--train", d / "wide64.svm", "--model", d / "wide64.npz"],
        ["--task", "binary", "--train", d / "bin30.svm", "--model", d / "bin30.npz"],
        ["--task", "sequence", "--train", d / "seq.txt", "--templates", d / "t.tpl", "--model", d / "seq.npz", *quick],
        ["--task", "segment", "--train", d / "seg.txt", "--model", d / "seg.npz", *quick],
        [
            "--task",
            "parse",
            "--train",
            d / "tb.conllu",
            "--templates",
            d / "parse.tpl",
            "--model",
            d / "parse.npz",
            *quick,
        ],
    ):
        assert main(["train", *map(str, args)]) == 0, args
    return d


def _run(capsys, *args):
    capsys.readouterr()
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


# -- the index base ---------------------------------------------------------------------------------


def test_scikit_learn_files_train_and_predict(d, capsys, tmp_path):
    code, _, _ = _run(capsys, "train", "--task", "multiclass", "--train", d / "sk.train.svm", "--C", "1",
                      "--model", tmp_path / "m.npz", "--report", tmp_path / "r.json")  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["zero_based"] is True and report["n_features"] == 6
    assert load_model(tmp_path / "m.npz").meta["report"]["zero_based"] is True
    # the model is the one trained on scikit-learn's own reading of the file
    X, y = load_svmlight_file(str(d / "sk.train.svm"), zero_based="auto")
    direct = LinearSVM(C=1.0, solver=CuttingPlane(eps=1e-3)).fit(X, y)
    np.testing.assert_allclose(LinearSVM.load(tmp_path / "m.npz").coef_, direct.coef_, atol=1e-6)
    pred = tmp_path / "p.txt"
    code, _, err = _run(capsys, "predict", "--model", tmp_path / "m.npz", "--input", d / "sk.test.svm",
                        "--output", pred, "--report", tmp_path / "pr.json")  # fmt: skip
    assert code == 0 and "accuracy" in err
    Xt, yt = load_svmlight_file(str(d / "sk.test.svm"), zero_based=True, n_features=6)
    assert pred.read_text().split() == [str(int(v)) for v in direct.predict(Xt)]
    rep = json.loads((tmp_path / "pr.json").read_text())
    assert rep["zero_based"] is True and rep["n_samples"] == 30
    assert rep["unseen_features"] == {"distinct_indices": 0, "nonzeros_dropped": 0, "examples": 0}
    assert rep["accuracy"] == pytest.approx(100.0 * float(np.mean(direct.predict(Xt) == yt)))  # percent


def test_an_ambiguous_file_takes_the_models_base(d, capsys, tmp_path):
    # no index 0 in the file: alone it would read as 1-based, shifted by one; the model says 0-based
    pred = tmp_path / "p.txt"
    code, _, _ = _run(capsys, "predict", "--model", d / "sk.npz", "--input", d / "sk.nozero.svm", "--output", pred)
    assert code == 0
    Xn, _ = load_svmlight_file(str(d / "sk.nozero.svm"), zero_based=True, n_features=6)
    expected = LinearSVM.load(d / "sk.npz").predict(Xn)
    assert pred.read_text().split() == [str(int(v)) for v in expected]


def test_a_zero_based_file_on_a_one_based_model_is_refused(d, capsys, tmp_path):
    code, _, err = _run(capsys, "predict", "--model", d / "one.npz", "--input", d / "sk.test.svm")
    assert code == 2
    assert f"error: {d / 'sk.test.svm'}:1: --zero-based: feature index 0: the file is 0-based" in err
    assert f"the model {d / 'one.npz'} (task 'multiclass'" in err and "trained on 1-based indices" in err
    # forcing the base is the user's call
    code, _, _ = _run(capsys, "predict", "--model", d / "one.npz", "--input", d / "sk.test.svm", "--zero-based", "yes")
    assert code == 0


def test_a_forced_base_is_applied_at_train(d, capsys, tmp_path):
    code, _, err = _run(capsys, "train", "--task", "multiclass", "--train", d / "sk.train.svm", "--zero-based", "no",
                        "--model", tmp_path / "m.npz")  # fmt: skip
    assert code == 2 and "sk.train.svm:1: token 2: invalid feature index 0" in err
    code, _, _ = _run(capsys, "train", "--task", "multiclass", "--train", d / "one.train.svm", "--zero-based", "yes",
                      "--model", tmp_path / "m.npz", "--report", tmp_path / "r.json")  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["zero_based"] is True and report["n_features"] == 7  # column 0 never used


# -- unseen features -------------------------------------------------------------------------------


def test_unseen_features_are_ignored_and_counted(d, capsys, tmp_path):
    lines = (d / "sk.test.svm").read_text().splitlines()
    extra = [lines[0] + " 9:1.5 12:2", lines[1] + " 9:0.5", *lines[2:5], lines[5] + " 9:0"]
    wide = tmp_path / "wide.svm"
    wide.write_text("\n".join(extra) + "\n")
    pred, rep = tmp_path / "p.txt", tmp_path / "r.json"
    code, _, err = _run(capsys, "predict", "--model", d / "sk.npz", "--input", wide, "--output", pred, "--report", rep)
    assert code == 0
    assert f"warning: {wide}: 2 feature indices unseen in training (9, 12; the model knows 0..5) ignored" in err
    assert "3 nonzero value(s) dropped in 2 example(s)" in err  # 9:0 drops nothing
    assert json.loads(rep.read_text())["unseen_features"] == {
        "distinct_indices": 2,
        "nonzeros_dropped": 3,
        "examples": 2,
    }
    X, _ = load_svmlight_file(str(wide), zero_based=True)
    expected = LinearSVM.load(d / "sk.npz").predict(X[:, :6])
    assert pred.read_text().split() == [str(int(v)) for v in expected]


# -- bias -----------------------------------------------------------------------------------------


def test_bias_option_trains_and_round_trips(d, capsys, tmp_path):
    model, rep = tmp_path / "b.npz", tmp_path / "r.json"
    code, _, _ = _run(capsys, "train", "--task", "multiclass", "--train", d / "sk.train.svm", "--C", "3",
                      "--eps", "1e-5", "--bias", "2", "--model", model, "--report", rep)  # fmt: skip
    assert code == 0
    assert json.loads(rep.read_text())["bias"] == 2.0
    est = LinearSVM.load(model)
    assert est.bias == 2.0 and np.any(est.intercept_ != 0)
    X, y = load_svmlight_file(str(d / "sk.train.svm"))
    direct = LinearSVM(C=3.0, bias=2.0, solver=CuttingPlane(eps=1e-5)).fit(X, y)
    assert est.objective_ == pytest.approx(direct.objective_, abs=2e-5)
    pred = tmp_path / "p.txt"
    assert _run(capsys, "predict", "--model", model, "--input", d / "sk.train.svm", "--output", pred)[0] == 0
    assert pred.read_text().split() == [str(int(v)) for v in est.predict(X)]
    without = tmp_path / "r0.json"
    assert _run(capsys, "train", "--task", "multiclass", "--train", d / "sk.train.svm", "--model", tmp_path / "n.npz",
                "--report", without)[0] == 0  # fmt: skip
    assert json.loads(without.read_text())["bias"] is None
    assert LinearSVM.load(tmp_path / "n.npz").bias is None


@pytest.mark.parametrize("value", ["0", "-1", "nan", "x"])
def test_bad_bias_is_refused(d, capsys, tmp_path, value):
    code, _, err = _run(capsys, "train", "--task", "binary", "--train", d / "bin30.svm", "--bias", value,
                        "--model", tmp_path / "m.npz")  # fmt: skip
    assert code == 2 and "argument --bias" in err


# -- a model applied to data of another task or shape ----------------------------------------------


def test_the_issues_multiclass_model_on_a_binary_file(d, capsys):
    # 64-feature, 4-class model on a 30-feature binary file (labels -1 / +1): exited 0 with accuracy 0
    code, _, err = _run(capsys, "predict", "--model", d / "wide64.npz", "--input", d / "bin30.svm")
    assert code == 2
    assert f"error: {d / 'bin30.svm'}: labels: 1 of the 2 distinct labels of this file were never seen" in err
    assert f"the model {d / 'wide64.npz'} (task 'multiclass': 4 classes, 64 features)" in err
    assert "another task" in err


def test_a_narrower_file_of_known_labels_is_refused(d, capsys, tmp_path):
    # the labels fit, the shape does not: 30 dense features for a model whose every example reaches 64
    Xb, yb = _dense(4, 40, 30, 4)
    narrow = tmp_path / "narrow.svm"
    dump_svmlight_file(Xb, yb, str(narrow), zero_based=False)
    code, _, err = _run(capsys, "predict", "--model", d / "wide64.npz", "--input", narrow)
    assert code == 2
    assert "the file's 40 examples have features up to index 30, while each of the 60 training examples" in err
    assert f"the model {d / 'wide64.npz'} (task 'multiclass': 4 classes, 64 features)" in err
    assert "has a feature at index 64 or beyond" in err
    # two such examples are not evidence: sparse files often miss the last features
    few = tmp_path / "few.svm"
    few.write_text("".join(narrow.read_text().splitlines(keepends=True)[:2]))
    assert _run(capsys, "predict", "--model", d / "wide64.npz", "--input", few)[0] == 0


def test_labels_of_another_task(d, capsys, tmp_path):
    multi = tmp_path / "multi.svm"
    X, y = _dense(5, 20, 30, 5)
    dump_svmlight_file(X, y + 1, str(multi), zero_based=False)
    code, _, err = _run(capsys, "predict", "--model", d / "bin30.npz", "--input", multi)
    assert code == 2
    assert "4 of the 5 distinct labels of this file were never seen in training ('2', '3', '4', '5')" in err
    assert f"the model {d / 'bin30.npz'} (task 'binary': 2 classes, 30 features) knows the labels '-1', '1'" in err
    # a few unseen labels are scored as wrong, with a warning
    some = tmp_path / "some.svm"
    some.write_text((d / "bin30.svm").read_text() + "7 1:1 30:1\n")
    code, _, err = _run(capsys, "predict", "--model", d / "bin30.npz", "--input", some)
    assert code == 0 and "unseen in training, scored as wrong: '7' (1)" in err and "accuracy" in err
    # one label for all that is not a class: an unlabelled file, no accuracy
    blank = tmp_path / "blank.svm"
    blank.write_text("".join("0 " + line.split(" ", 1)[1] for line in (d / "bin30.svm").read_text().splitlines(True)))
    code, out, err = _run(capsys, "predict", "--model", d / "bin30.npz", "--input", blank)
    assert code == 0 and len(out.split()) == 40 and not any(s.startswith("accuracy") for s in err.splitlines())
    assert "every example has the label 0, which is not a class" in err


@pytest.mark.parametrize(
    "model, data, looks, reads",
    [
        ("seq.npz", "bin30.svm", "an SVMlight file", "CoNLL / CRF++ column files"),
        ("seg.npz", "bin30.svm", "an SVMlight file", "segmented text"),
        ("parse.npz", "bin30.svm", "an SVMlight file", "CoNLL-U treebanks"),
        ("seg.npz", "seq.txt", "a CoNLL / CRF++ column file", "segmented text"),
        ("seg.npz", "tb.conllu", "a CoNLL-U treebank", "segmented text"),
        ("bin30.npz", "seq.txt", "a CoNLL / CRF++ column file", "SVMlight files"),
        ("bin30.npz", "tb.conllu", "a CoNLL-U treebank", "SVMlight files"),
        ("bin30.npz", "seg.txt", "plain or segmented text", "SVMlight files"),
    ],
)
def test_files_of_another_task_are_refused(d, capsys, model, data, looks, reads):
    code, _, err = _run(capsys, "predict", "--model", d / model, "--input", d / data)
    assert code == 2
    assert f"error: {d / data}:1: format: this looks like {looks}" in err
    assert f"but the model {d / model} (task '" in err and f"reads {reads}" in err
    assert err.count("\n") == 1  # one line


def test_evaluate_refuses_another_tasks_file_and_labels(d, capsys):
    code, _, err = _run(capsys, "evaluate", "--model", d / "seq.npz", "--test", d / "bin30.svm")
    assert code == 2 and "this looks like an SVMlight file" in err and "task 'sequence'" in err
    code, _, err = _run(capsys, "evaluate", "--model", d / "seq.npz", "--test", d / "ner.txt")
    assert code == 2
    assert f"{d / 'ner.txt'}: labels: 2 of the 3 distinct labels of this file were never seen" in err
    assert "('B-PER', 'I-PER'); the sequence model knows the labels 'B-NP', 'I-NP', 'O'" in err
    assert _run(capsys, "evaluate", "--model", d / "seq.npz", "--test", d / "seq.txt")[0] == 0


def test_refusal_in_a_subprocess(d, tmp_path):
    """The issue's first case as a user meets it: a sequence model given an SVMlight file."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run = subprocess.run(
        [sys.executable, "-m", "problems.cli.main", "predict", "--model", str(d / "seq.npz"), "--input",
         str(d / "sk.test.svm")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.startswith(f"cutplane: error: {d / 'sk.test.svm'}:1: format: this looks like an SVMlight file")
    assert "task 'sequence'" in run.stderr and "Traceback" not in run.stderr


def test_a_dev_file_is_read_in_the_training_base_with_unseen_features_counted(d, capsys, tmp_path):
    lines = (d / "sk.test.svm").read_text().splitlines()
    dev = tmp_path / "dev.svm"
    dev.write_text("\n".join([lines[0] + " 8:1", *lines[1:]]) + "\n")
    rep = tmp_path / "r.json"
    code, _, err = _run(capsys, "train", "--task", "multiclass", "--train", d / "sk.train.svm", "--C", "1", "10",
                        "--dev", dev, "--model", tmp_path / "m.npz", "--report", rep)  # fmt: skip
    assert code == 0
    assert err.count("feature index unseen in training (8; the model knows 0..5)") == 1
    report = json.loads(rep.read_text())
    assert report["dev"]["unseen_features"] == {"distinct_indices": 1, "nonzeros_dropped": 1, "examples": 1}
    assert report["dev"]["n_samples"] == 30 and report["zero_based"] is True


def test_examples_without_features_are_predicted(d, capsys, tmp_path):
    bare = tmp_path / "bare.svm"
    bare.write_text("1\n-1\n")
    pred = tmp_path / "p.txt"
    code, _, _ = _run(capsys, "predict", "--model", d / "bin30.npz", "--input", bare, "--output", pred)
    assert code == 0
    expected = LinearSVM.load(d / "bin30.npz").predict(np.zeros((2, 30)))
    assert pred.read_text().split() == [str(int(v)) for v in expected]
