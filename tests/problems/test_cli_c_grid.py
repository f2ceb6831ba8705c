"""`cutplane train` with a grid of C (issue 21): --C with several values or auto, --dev,
--dev-fraction, --time-limit, the report's path table, the path plot and the bad inputs."""

import json

import pytest

from problems.cli.main import main
from problems.demo_data import write_demo_files
from problems.io.conll import write_columns
from problems.io.conllu import write_conllu
from problems.synthetic import make_tagging_task
from problems.template_learning import DEFAULT_C_GRIDS
from tests.problems.test_dependency_parser import make_treebank

RENAME = {"L0": "B-NP", "L1": "I-NP", "L2": "O"}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cgrid")
    task = make_tagging_task(n_train=40, n_test=20, length=8, n_labels=3, n_informative=2, n_noise=2, seed=3)
    y_tr = [[RENAME[t] for t in s] for s in task.y_train]
    y_te = [[RENAME[t] for t in s] for s in task.y_test]
    write_columns(d / "train.txt", task.X_train, y_tr)
    write_columns(d / "dev.txt", task.X_test, y_te)
    write_columns(d / "one.txt", task.X_train[:1], y_tr[:1])
    write_columns(d / "unseen.txt", task.X_test, [["B-XX" if t == "B-NP" else t for t in s] for s in y_te])
    (d / "t.tpl").write_text(task.templates)
    tr, dev = make_treebank(24, seed=0), make_treebank(10, seed=1)
    write_conllu(d / "tr.conllu", tr, [s.heads for s in tr])
    write_conllu(d / "dev.conllu", dev, [s.heads for s in dev])
    write_demo_files(d)
    return d


def _train(d, *extra, task="sequence", train="train.txt"):
    args = ["train", "--task", task, "--train", str(d / train), "--model", str(d / "m.npz")]
    if task == "sequence":
        args += ["--templates", str(d / "t.tpl")]
    return main(args + [str(a) for a in extra])


def _report(d):
    return json.loads((d / "r.json").read_text())


def test_several_C_with_a_dev_file(files, capsys):
    d = files
    code = _train(d, "--C", "1", "10", "100", "--dev", d / "dev.txt", "--report", d / "r.json", "--plot", d / "p")
    assert code == 0
    out = capsys.readouterr().out
    assert "chosen among 1, 10, 100" in out
    report = _report(d)
    for key in ("C", "C_grid", "path", "validation", "objective", "lower_bound", "gap", "status", "dev"):
        assert key in report
    path = report["path"]
    assert path["C"] == report["C_grid"] == [1.0, 10.0, 100.0]
    assert report["C"] in report["C_grid"]
    best = path["C"].index(report["C"])
    assert report["objective"] == pytest.approx(path["objective"][best])
    assert report["gap"] == pytest.approx(path["gap"][best]) and report["status"] == path["status"][best]
    assert report["lower_bound"] <= report["objective"]
    assert report["validation"]["source"] == "data" and report["validation"]["metric"] == "chunk_f1"
    # every score of the report in percent: the chosen point's validation score is the dev file's F1
    assert report["validation"]["score"] == pytest.approx(report["dev"]["f1"])
    assert report["validation"]["score"] == max(path["validation_score"])
    assert report["eps"] == pytest.approx(0.01 * report["C"])  # no --eps: 0.01 * C at each point
    assert (d / "p" / "path.png").stat().st_size > 1000
    assert str(d / "p" / "path.png") in report["plots"]


def test_auto_is_the_default(files, capsys):
    d = files
    assert _train(d, "--report", d / "r.json") == 0
    report = _report(d)
    assert tuple(report["C_grid"]) == DEFAULT_C_GRIDS["mtl"]
    assert report["validation"]["source"] == "fraction" and report["validation"]["n_examples"] == 4
    assert _train(d, "--C", "auto", "--regularizer", "ssvm", "--report", d / "r.json") == 0
    assert tuple(_report(d)["C_grid"]) == DEFAULT_C_GRIDS["ssvm"]
    capsys.readouterr()


def test_dev_fraction_and_seed(files, capsys):
    d = files
    assert _train(d, "--C", "1", "10", "--dev-fraction", "0.25", "--dev-seed", "3", "--report", d / "r.json") == 0
    val = _report(d)["validation"]
    assert val["source"] == "fraction" and val["n_examples"] == 10 and val["seed"] == 3
    # C chosen on the held-out sentences, then the model refitted at it on all of them
    assert val["refit"] is True and val["n_examples_refit"] == 40
    assert "refitted at that C on all 40 training examples" in capsys.readouterr().out


def test_time_limit_for_the_whole_run(files, capsys):
    d = files
    (d / "m.npz").unlink(missing_ok=True)
    code = _train(d, "--C", "1", "10", "100", "1000", "--dev", d / "dev.txt", "--time-limit", "0.001")
    # the model is written, but it is not certified: exit status 3 and a line naming the gap and eps
    assert code == 3 and (d / "m.npz").exists()
    err = capsys.readouterr().err
    assert "not_run" in err and "cutplane: warning:" in err and "Traceback" not in err
    assert "is not certified: status time_limit, certified gap" in err and "against eps" in err
    assert "--allow-uncertified" in err
    code = _train(
        d, "--C", "1", "10", "100", "1000", "--dev", d / "dev.txt", "--time-limit", "0.001", "--allow-uncertified"
    )
    assert code == 0 and "is not certified" in capsys.readouterr().err


def test_single_C_with_dev_as_before(files, capsys):
    d = files
    assert _train(d, "--C", "10", "--dev", d / "dev.txt", "--report", d / "r.json") == 0
    report = _report(d)
    assert report["C"] == 10.0 and report["C_grid"] == [10.0] and report["eps"] == 0.1
    assert report["validation"] is None and "f1" in report["dev"]
    assert "chosen among" not in capsys.readouterr().out


def test_verbose_progress_names_the_running_C(files, capsys):
    d = files
    assert _train(d, "--C", "1", "10", "--dev", d / "dev.txt", "--verbose") == 0
    err = capsys.readouterr().err
    assert "C=1 (1 of 2)" in err and "C=10 (2 of 2)" in err and "lower=" in err


def test_linear_and_parse_tasks(files, capsys):
    d = files
    code = _train(
        d,
        "--C",
        "0.01",
        "1",
        "--dev",
        d / "binary.test.svm",
        "--report",
        d / "r.json",
        task="binary",
        train="binary.train.svm",
    )
    assert code == 0
    report = _report(d)
    assert report["C_grid"] == [0.01, 1.0] and report["validation"]["metric"] == "accuracy"
    assert report["dev"]["accuracy"] == pytest.approx(report["validation"]["score"])
    assert _train(d, "--report", d / "r.json", task="binary", train="binary.train.svm") == 0
    assert _report(d)["C_grid"] == [1.0]  # the linear tasks keep C = 1
    code = _train(  # held out of a sparse SVMlight matrix, then refitted on all of it (its rows counted, not len)
        d,
        "--C",
        "0.01",
        "1",
        "--dev-fraction",
        "0.25",
        "--report",
        d / "r.json",
        task="binary",
        train="binary.train.svm",
    )
    assert code == 0
    refit = _report(d)["validation"]
    assert refit["refit"] and refit["n_examples_refit"] > refit["n_examples"] > 0
    code = _train(
        d, "--C", "1", "10", "--dev-fraction", "0.25", "--report", d / "r.json", task="parse", train="tr.conllu"
    )
    assert code == 0
    assert _report(d)["validation"]["metric"] == "uas" and _report(d)["validation"]["n_examples"] == 6
    code = _train(d, "--dev", d / "dev.conllu", "--report", d / "r.json", task="parse", train="tr.conllu")
    assert code == 0 and _report(d)["validation"]["source"] == "data"
    capsys.readouterr()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--C"], "expected at least one argument"),
        (["--C", "0"], "must be finite and > 0"),
        (["--C", "10", "-1", "--dev", "DEV"], "must be finite and > 0"),
        (["--C", "10", "abc", "--dev", "DEV"], "expected a number > 0 or 'auto'"),
        (["--C", "auto", "10"], "--C auto stands alone"),
        (["--C", "10", "10", "--dev", "DEV"], "duplicate"),
        (["--C", "10", "100"], "need held-out data"),
        (["--dev", "DEV", "--dev-fraction", "0.1"], "not both"),
        (["--dev-fraction", "1"], "strictly between 0 and 1"),
        (["--checkpoint", "CKPT"], "one value of C"),
    ],
)
def test_bad_grids_exit_2_with_one_message(files, capsys, extra, message):
    d = files
    extra = [str(d / "dev.txt") if a == "DEV" else str(d / "c.ckpt") if a == "CKPT" else a for a in extra]
    assert _train(d, *extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.count("error:") == 1


@pytest.mark.parametrize("extra", [["--dev-fraction", "0.5"], ["--C", "10", "--dev-fraction", "0.5"], []])
def test_nothing_to_hold_out_of_a_one_sentence_file(files, capsys, extra):
    d = files
    assert _train(d, *extra, train="one.txt") == 2
    err = capsys.readouterr().err
    assert err.startswith("cutplane: error: ") and "1 sentence: nothing to hold out" in err
    assert str(d / "one.txt") in err


def test_auto_is_for_the_structured_tasks(files, capsys):
    d = files
    assert _train(d, "--C", "auto", task="binary", train="binary.train.svm") == 2
    assert "structured tasks" in capsys.readouterr().err


def test_a_dev_file_with_unseen_labels_is_scored_with_one_warning(files, capsys):
    d = files
    assert _train(d, "--C", "1", "10", "--dev", d / "unseen.txt", "--report", d / "r.json") == 0
    err = capsys.readouterr().err
    assert err.count("unseen in training") == 1 and "B-XX" in err and str(d / "unseen.txt") in err
    assert all(s < 100.0 for s in _report(d)["path"]["validation_score"])  # percent


@pytest.mark.parametrize(
    "extra, expected",
    [((), 2), (("--regularizer", "ssvm"), 1), (("--min-count", "auto"), 2), (("--min-count", "3"), 3)],
)
def test_min_count_default_is_auto(files, extra, expected):
    d = files
    assert _train(d, "--C", "10", "--report", d / "r.json", *extra) == 0
    assert _report(d)["min_count"] == expected


@pytest.mark.parametrize("bad", ["0", "two", "1.5"])
def test_bad_min_count_is_one_error(files, capsys, bad):
    d = files
    assert _train(d, "--C", "10", "--min-count", bad) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "--min-count" in err and "'auto'" in err and "Traceback" not in err


def test_rtol_option(files):
    d = files
    assert (
        _train(
            d, "--C", "10", "100", "--dev", d / "dev.txt", "--eps", "1e-9", "--rtol", "0.05", "--report", d / "r.json"
        )
        == 0
    )
    report = _report(d)
    assert report["rtol"] == 0.05 and report["status"] == "converged"
    assert report["gap"] <= 0.05 * report["objective"] * (1 + 1e-9)
    path = report["path"]
    for gap, obj, status in zip(path["gap"], path["objective"], path["status"]):
        assert status == "converged" and gap <= 0.05 * obj * (1 + 1e-9)


def test_cache_steps_option(files):
    d = files
    assert _train(d, "--C", "100", "--cache-steps", "5", "--eps", "0.01", "--report", d / "r.json") == 0
    report = _report(d)
    assert report["status"] == "converged" and report["n_cached_cuts"] > 0
