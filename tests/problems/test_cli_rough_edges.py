"""Issue 39's rough edges of the ``cutplane`` command: output paths checked before any data is
read, one-line option errors, a closed pipe, start-up without the heavy modules."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from problems.cli.main import main
from problems.demo_data import make_binary
from problems.io.svmlight import write_svmlight

ROOT = Path(__file__).resolve().parents[2]
ENV = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _cli(*args, cwd, timeout=120, **kw):
    return subprocess.run(
        [sys.executable, "-m", "problems.cli", *map(str, args)],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


@pytest.fixture
def binary_file(tmp_path):
    b = make_binary(n_samples=200, n_features=6, n_test=50, seed=3)
    write_svmlight(tmp_path / "train.svm", b.X_train, b.y_train)
    write_svmlight(tmp_path / "test.svm", b.X_test, b.y_test)
    return tmp_path / "train.svm"


def _unwritable(path: Path):
    """Make ``path`` (an existing file) unwritable: read-only, and immutable when run as root (root
    writes read-only files). Returns a function undoing it, or None when it cannot be done."""
    path.chmod(0o444)
    if os.geteuid() != 0:
        return lambda: path.chmod(0o644)
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode != 0:
        return None
    return lambda: subprocess.run([chattr, "-i", str(path)], check=True)


# ------------------------------------------------------------------ item 1: output paths first
@pytest.mark.parametrize("case", ["directory", "missing folder", "unwritable file", "under a file"])
def test_train_refuses_an_unwritable_model_path_at_once(tmp_path, binary_file, case):
    """Before any data is read (the training file is not even there), within a second, naming the
    path given, and nothing is left behind."""
    undo = None
    if case == "directory":
        (tmp_path / "adir").mkdir()
        model, why = "adir", "is a folder"
    elif case == "missing folder":
        model, why = str(tmp_path / "missing" / "dir" / "m.npz"), "does not exist"
    elif case == "under a file":
        model, why = "train.svm/m.npz", "is not a folder"
    else:
        keep = tmp_path / "keep.npz"
        keep.write_bytes(b"an earlier model")
        undo = _unwritable(keep)
        if undo is None:
            pytest.skip("cannot make a file unwritable for root here (no chattr)")
        model, why = "keep.npz", "cannot be written"
    before = sorted(p.name for p in tmp_path.iterdir())
    try:
        t0 = time.perf_counter()
        proc = _cli(
            "train", "--task", "binary", "--train", "absent.svm", "--model", model, "--report", "r.json", cwd=tmp_path
        )
        elapsed = time.perf_counter() - t0
    finally:
        if undo is not None:
            undo()
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"cutplane: error: {model}: --model: "), proc.stderr
    assert why in proc.stderr and "Traceback" not in proc.stderr
    assert "absent.svm" not in proc.stderr  # no data was read: the missing training file is not reached
    assert elapsed < 1.0, f"{elapsed:.2f} s"
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no .tmp, no report, no probe
    if case == "unwritable file":
        assert (tmp_path / "keep.npz").read_bytes() == b"an earlier model"


def test_train_checks_report_checkpoint_and_plot_paths(tmp_path, binary_file, capsys):
    base = ["train", "--task", "binary", "--train", str(binary_file), "--model", str(tmp_path / "m.npz")]
    (tmp_path / "d").mkdir()
    assert main(base + ["--report", str(tmp_path / "d")]) == 2
    assert f"{tmp_path / 'd'}: --report: is a folder" in capsys.readouterr().err
    assert main(base + ["--checkpoint", str(tmp_path / "no" / "c.npz")]) == 2
    assert "--checkpoint: its folder" in capsys.readouterr().err
    assert main(base + ["--plot", str(binary_file)]) == 2
    assert "--plot: is a file; give a folder" in capsys.readouterr().err
    # the model over the training file: refused, the training file kept
    text = binary_file.read_text()
    assert main(["train", "--task", "binary", "--train", str(binary_file), "--model", str(binary_file)]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert binary_file.read_text() == text
    assert not (tmp_path / "m.npz").exists()


def test_predict_and_evaluate_check_their_outputs_first(tmp_path, binary_file, capsys):
    model = tmp_path / "m.npz"
    assert main(["train", "--task", "binary", "--train", str(binary_file), "--model", str(model)]) == 0
    test = tmp_path / "test.svm"
    capsys.readouterr()
    for argv, flag in (
        (["predict", "--model", str(model), "--input", str(test), "--output", str(tmp_path)], "--output"),
        (["predict", "--model", str(model), "--input", str(test), "--report", str(tmp_path / "x" / "r")], "--report"),
        (["evaluate", "--model", str(model), "--test", str(test), "--report", str(tmp_path)], "--report"),
    ):
        assert main(argv) == 2
        assert f": {flag}: " in capsys.readouterr().err
    text = test.read_text()
    assert main(["predict", "--model", str(model), "--input", str(test), "--output", str(test)]) == 2
    assert "is the input file" in capsys.readouterr().err
    assert test.read_text() == text


# ------------------------------------------------------------------ item 8: one-line option errors
@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--task", "binary", "--train", "x.svm", "--C", "-1", "--model", "m.npz"], "argument --C: must be"),
        (["train", "--task", "binary", "--train", "x.svm"], "the following arguments are required: --model"),
        (["train", "--task", "binary", "--executor", "nope"], "argument --executor: invalid choice: 'nope'"),
        (["predict", "--model"], "argument --model: expected one argument"),
    ],
)
def test_a_bad_option_is_one_line_with_a_hint(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    command = argv[0]
    assert lines == [f"cutplane {command}: error: {lines[0].split('error: ', 1)[1]}"], captured.err
    assert message in lines[0] and lines[0].endswith(f"(see cutplane {command} --help)")
    assert "usage:" not in captured.err and captured.out == ""


def test_a_missing_or_unknown_command_is_one_line(capsys):
    assert main([]) == 2
    assert (
        capsys.readouterr().err
        == "cutplane: error: the following arguments are required: COMMAND (see cutplane --help)\n"
    )
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid choice: 'frobnicate'" in err


# ------------------------------------------------------------------ item 2: start-up
def test_help_and_version_import_no_task_and_no_scikit_learn(tmp_path):
    """``cutplane --help`` / ``--version`` / a refused ``train --model`` load neither scikit-learn,
    scipy, the solvers nor the tasks' estimators (what made them take seconds)."""
    heavy = ("sklearn", "scipy", "cvxpy", "numba", "cutplane.engine", "problems.sequence.tagger", "problems.linear.svm")
    code = (
        "import sys\n"
        "from problems.cli.main import main\n"
        "codes = []\n"
        "for argv in (['--version'], ['--help'], ['train', '--task', 'binary', '--train', 'x', '--model', '.']):\n"
        "    try:\n"
        "        codes.append(main(argv))\n"
        "    except SystemExit as e:\n"
        "        codes.append(e.code)\n"
        f"loaded = [m for m in {heavy!r} if m in sys.modules]\n"
        "print(codes, loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[0, 0, 2] []", proc.stdout
    assert proc.stdout.startswith("cutplane ")  # the version, on stdout


# ------------------------------------------------------------------ item 6: a reader gone away
def test_predict_into_a_closed_pipe_exits_quietly(tmp_path, binary_file):
    """``cutplane predict ... | head -3``: status 141 (a Unix tool killed by SIGPIPE), nothing on
    stderr; it used to end with ``cutplane: error: Broken pipe`` and status 2."""
    model = tmp_path / "m.npz"
    assert main(["train", "--task", "binary", "--train", str(binary_file), "--model", str(model)]) == 0
    big = make_binary(n_samples=10, n_features=6, n_test=60000, seed=4)  # > 64 KiB of labels: a pipe's buffer
    write_svmlight(tmp_path / "big.svm", big.X_test, big.y_test)
    proc = subprocess.Popen(
        [sys.executable, "-m", "problems.cli", "predict", "--model", str(model), "--input", "big.svm"],
        cwd=tmp_path,
        env={k: v for k, v in ENV.items() if k != "PYTHONUNBUFFERED"},  # unbuffered, a partial write is lost
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        bufsize=0,  # read three lines, no more, as head does
    )
    head = [proc.stdout.readline() for _ in range(3)]
    proc.stdout.close()  # head -3 exits
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141, err
    assert all(line.strip() in (b"1", b"-1") for line in head)
    assert "error" not in err and "Traceback" not in err and "Broken pipe" not in err, err


# ------------------------------------------------------------------ item 7: --plot for the linear tasks
def test_plot_draws_the_bounds_of_a_linear_task(tmp_path, binary_file):
    """``train --task binary --plot DIR`` used to ignore --plot without a word: it draws what applies
    to a linear SVM (the bounds per iteration; no template weights) and lists it in the report."""
    pytest.importorskip("matplotlib")
    import json

    from tests.png import png_size

    out, report = tmp_path / "plots", tmp_path / "r.json"
    argv = ["train", "--task", "binary", "--train", str(binary_file), "--model", str(tmp_path / "m.npz")]
    assert main(argv + ["--plot", str(out), "--report", str(report)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["bounds.png"]
    assert json.loads(report.read_text())["plots"] == [str(out / "bounds.png")]
    width, height = png_size(out / "bounds.png")
    assert width > 100 and height > 100
