"""The cutplane command end to end: train, predict, demo, and errors without tracebacks."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from problems.cli.main import main
from problems.demo_data import make_binary, make_multiclass
from problems.io.svmlight import read_svmlight, write_svmlight
from problems.linear.svm import LinearSVM
from problems.solvers import CuttingPlane
from tests.png import png_size

ROOT = Path(__file__).resolve().parents[2]
REPORT_KEYS = {
    "objective",
    "lower_bound",
    "gap",
    "iterations",
    "status",
    "time_s",
    "oracle_time_s",
    "solver_time_s",
    "backend",
}


@pytest.fixture
def files(tmp_path):
    b = make_binary(n_samples=300, n_features=8, n_test=50, seed=1)
    m = make_multiclass(n_samples=300, n_features=8, n_classes=3, n_test=50, seed=2)
    out = {}
    for name, data in (("bin", b), ("multi", m)):
        write_svmlight(tmp_path / f"{name}.train.svm", data.X_train, data.y_train)
        write_svmlight(tmp_path / f"{name}.test.svm", data.X_test, data.y_test)
        out[name] = (tmp_path / f"{name}.train.svm", tmp_path / f"{name}.test.svm")
    return out


@pytest.mark.parametrize("task, name", [("binary", "bin"), ("multiclass", "multi")])
def test_train_and_predict(tmp_path, files, capsys, task, name):
    train, test = files[name]
    model, report, pred = tmp_path / "m.npz", tmp_path / "r.json", tmp_path / "p.txt"
    code = main(
        [
            "train",
            "--task",
            task,
            "--train",
            str(train),
            "--C",
            "5",
            "--eps",
            "1e-4",
            "--model",
            str(model),
            "--report",
            str(report),
        ]
    )
    assert code == 0
    rep = json.loads(report.read_text())
    assert REPORT_KEYS <= set(rep)
    assert rep["status"] == "converged" and rep["gap"] <= 1e-4 and rep["task"] == task
    assert rep["objective"] - rep["lower_bound"] == pytest.approx(rep["gap"], abs=1e-12)
    # the report is on the scale of F: the same number as the estimator trained directly
    X, y = read_svmlight(train)
    direct = LinearSVM(C=5.0, solver=CuttingPlane(eps=1e-4)).fit(X, y)
    assert rep["objective"] == pytest.approx(direct.objective_, abs=2e-4)
    assert len(rep["history"]["upper"]) == rep["iterations"]
    assert "objective" in capsys.readouterr().out

    assert main(["predict", "--model", str(model), "--input", str(test), "--output", str(pred)]) == 0
    lines = pred.read_text().splitlines()
    Xt, yt = read_svmlight(test, n_features=X.shape[1])
    expected = LinearSVM.load(model).predict(Xt)
    assert [float(v) for v in lines] == expected.tolist()
    assert all(v == str(int(float(v))) for v in lines)  # labels written as in the file
    assert "accuracy" in capsys.readouterr().err

    assert main(["predict", "--model", str(model), "--input", str(test)]) == 0
    assert capsys.readouterr().out.splitlines() == lines


def test_demo_runs_fast_and_prints_the_table(tmp_path, capsys):
    t0 = time.perf_counter()
    assert main(["demo", "--out-dir", str(tmp_path)]) == 0
    assert time.perf_counter() - t0 < 60
    out = capsys.readouterr().out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("method") and "noise_dropped" in line)
    cols = header.split()
    assert {"objective", "lower_bound", "gap", "test_acc", "active", "noise_dropped", "time_s"} <= set(cols)
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1] in (["MTL^struct"], ["SPOM"], ["SSVM"])}
    assert set(rows) == {"MTL^struct", "SPOM", "SSVM"}
    mtl, spom, ssvm = rows["MTL^struct"], rows["SPOM"], rows["SSVM"]
    n_noise = int(mtl[cols.index("noise_dropped")].split("/")[1])
    assert n_noise > 0
    assert mtl[cols.index("noise_dropped")] == f"{n_noise}/{n_noise}"  # MTL^struct drops every noise template
    assert ssvm[cols.index("noise_dropped")] == f"0/{n_noise}"  # the plain SSVM keeps them all
    for r in (mtl, ssvm):  # certified: objective - lower bound = gap <= eps (0.05), printed to 4 decimals
        obj, low, gap = (float(r[cols.index(c)]) for c in ("objective", "lower_bound", "gap"))
        assert low <= obj and 0 <= gap <= 0.05 and abs(obj - low - gap) <= 1e-4 + 1e-3 * gap
    # SPOM's gap is measured against MTL^struct's lower bound of the same F
    assert float(spom[cols.index("gap")].rstrip("*")) == pytest.approx(
        float(spom[cols.index("objective")]) - float(mtl[cols.index("lower_bound")]), abs=2e-4, rel=1e-3
    )
    assert float(spom[cols.index("objective")]) >= float(mtl[cols.index("lower_bound")])
    for r in rows.values():
        assert float(r[cols.index("test_acc")]) > 80.0  # percent
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["methods"]["mtl"]["noise_dropped"] == rep["noise_templates"]
    for name in ("bounds.png", "template_weights.png", "data/train.txt", "data/test.txt", "data/templates.txt"):
        assert (tmp_path / name).exists() and str(tmp_path / name) in out
    for name in ("bounds.png", "template_weights.png"):  # valid PNGs: chunks, CRCs, pixel rows
        width, height = png_size(tmp_path / name)
        assert width >= 500 and height >= 300
    # what it says it shows is what it shows: the templates MTL^struct keeps and zeroes, by kind,
    # read from the models (the previous-token templates U10-U12 go with the noise ones)
    kinds = rep["template_kinds"]
    mtl_rep = rep["methods"]["mtl"]
    assert [t for t, k in kinds.items() if k == "previous token"] == ["U10", "U11", "U12"]
    assert mtl_rep["active_templates"] == ["U00", "U01", "U02", "B"]
    assert mtl_rep["previous_token_dropped"] == ["U10", "U11", "U12"]
    assert (
        "templates kept by MTL^struct: U00, U01, U02, B; set to zero: all 6 noise templates "
        "(U03, U04, U05, U06, U07, U08) and all 3 previous-token templates (U10, U11, U12)." in out
    )
    assert mtl[cols.index("prev_dropped")] == "3/3" and ssvm[cols.index("prev_dropped")] == "0/3"
    # the time printed is the time measured
    assert f"time:    {rep['total_time_s']:.1f} s, {rep['training_time_s']:.1f} s of it training" in out


def _err(capsys):
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_errors_exit_2_with_a_message(tmp_path, files, capsys):
    train, test = files["multi"]
    bad = tmp_path / "bad.svm"
    bad.write_text("1 1:2\n2 1:3\n1 4:x\n")
    args = ["--model", str(tmp_path / "m.npz")]
    assert main(["train", "--task", "binary", "--train", str(bad)] + args) == 2
    assert f"cutplane: error: {bad}:3: " in _err(capsys)
    empty = tmp_path / "empty.svm"
    empty.write_text("")
    assert main(["train", "--task", "binary", "--train", str(empty)] + args) == 2
    assert "no examples" in _err(capsys)
    assert main(["train", "--task", "binary", "--train", str(train)] + args) == 2
    assert "exactly 2 distinct labels, found 3" in _err(capsys)
    assert main(["train", "--task", "binary", "--train", str(tmp_path / "none.svm")] + args) == 2
    assert "not found" in _err(capsys)
    assert main(["train", "--task", "binary", "--train", str(train), "--C", "0"] + args) == 2
    assert "error: argument --C: must be finite and > 0" in _err(capsys)
    assert main(["train", "--task", "binary", "--train", str(train), "--eps", "-1"] + args) == 2
    assert "error: argument --eps" in _err(capsys)
    assert main(["train", "--task", "nope", "--train", str(train)] + args) == 2
    assert "invalid choice: 'nope'" in _err(capsys)
    assert main(["train", "--task", "multiclass", "--train", str(train), "--method", "simplex"] + args) == 2
    assert "method" in _err(capsys)
    # predict: missing / corrupted model; input with more features than the model (issue 23: ignored
    # and counted with a warning, as SVMlight and liblinear do, where it used to be refused)
    assert main(["predict", "--model", str(tmp_path / "none.npz"), "--input", str(test)]) == 2
    assert "model file not found" in _err(capsys)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04 this is not a zip")
    assert main(["predict", "--model", str(junk), "--input", str(test)]) == 2
    assert "cutplane: error:" in _err(capsys)
    model = tmp_path / "ok.npz"
    assert main(["train", "--task", "multiclass", "--train", str(train), "--model", str(model)]) == 0
    capsys.readouterr()
    wide = tmp_path / "wide.svm"
    wide.write_text("1 1:1\n0 2:1 20:1\n")
    assert main(["predict", "--model", str(model), "--input", str(wide)]) == 0
    err = _err(capsys)
    assert f"warning: {wide}: 1 feature index unseen in training (20; the model knows 1..8) ignored" in err
    assert "1 nonzero value(s) dropped in 1 example(s)" in err


def test_console_module_in_subprocess(tmp_path, files):
    train, test = files["bin"]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run(*a):
        return subprocess.run(
            [sys.executable, "-m", "problems.cli.main", *a],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    model = tmp_path / "m.npz"
    r = run(
        "train",
        "--task",
        "binary",
        "--train",
        str(train),
        "--C",
        "2",
        "--model",
        str(model),
        "--report",
        str(tmp_path / "r.json"),
    )
    assert r.returncode == 0, r.stderr
    r = run("predict", "--model", str(model), "--input", str(test))
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) == 50
    bad = tmp_path / "bad.svm"
    bad.write_text("1 2:1 1:1\n")
    r = run("train", "--task", "binary", "--train", str(bad), "--model", str(model))
    assert r.returncode == 2
    assert r.stderr.startswith(f"cutplane: error: {bad}:1:") and "Traceback" not in r.stderr
