"""`cutplane train --checkpoint/--resume`: kill -9 mid-training, resume, same objective; bad
checkpoints refused cleanly; the executor and memory options."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from problems.cli.main import byte_size, main
from problems.demo_data import write_demo_files

ROOT = Path(__file__).resolve().parents[2]
EPS = 0.02


def train_args(d, tag, *extra):
    return [
        "train",
        "--task",
        "sequence",
        "--train",
        str(d / "train.txt"),
        "--templates",
        str(d / "t.tpl"),
        "--C",
        "10",
        "--eps",
        str(EPS),
        "--regularizer",
        "ssvm",
        "--model",
        str(d / f"{tag}.npz"),
        "--report",
        str(d / f"{tag}.json"),
        *extra,
    ]


def run_cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "problems.cli.main", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell starting the tests in the background (`cmd &`) ignores SIGINT for them, and Python
        # keeps an ignored SIGINT ignored: the child gets the default, as in a terminal
        preexec_fn=_default_sigint,
    )


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def checkpoint_iterations(path):
    """Iterations recorded in a checkpoint (its JSON metadata), or 0 when not readable yet."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return int(json.loads(str(f["__meta__"]))["n_iter"])
    except (OSError, ValueError, KeyError):
        return 0


def wait_for_checkpoint(proc, ckpt, n_iter, what, timeout=300):
    """Wait until the checkpoint of the run ``proc`` holds ``n_iter`` iterations (or the run
    ends, or ``timeout`` seconds pass); then the run must still be going (``what``: the event it
    is waiting for, for the message)."""
    deadline = time.monotonic() + timeout
    while checkpoint_iterations(ckpt) < n_iter and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, f"the run ended before {what}: " + proc.communicate()[1]


def test_kill_9_then_resume_ends_at_the_same_objective(resume_dir, capsys):
    assert main(train_args(resume_dir, "ref")) == 0
    ref = json.loads((resume_dir / "ref.json").read_text())
    assert ref["status"] == "converged" and ref["iterations"] > 30
    ckpt = resume_dir / "run.ckpt"
    args = train_args(resume_dir, "run", "--checkpoint", str(ckpt), "--checkpoint-every", "1")
    proc = run_cli(args, resume_dir)
    wait_for_checkpoint(proc, ckpt, 8, "it could be killed")
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    done = checkpoint_iterations(ckpt)
    assert 8 <= done < ref["iterations"] and not (resume_dir / "run.json").exists()
    resumed = run_cli([*args, "--resume"], resume_dir)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"(resumed from {ckpt})" in out  # the run says it resumed (issue 23)
    rep = json.loads((resume_dir / "run.json").read_text())
    assert rep["status"] == "converged" and rep["resumed"] is True
    assert abs(rep["objective"] - ref["objective"]) <= EPS
    assert rep["iterations"] > done  # the history carries the iterations before the kill


def test_sigterm_saves_and_ends_with_status_interrupted(resume_dir):
    """SIGTERM mid-training: the state is checkpointed, the exit status is 130 (so that
    ``train && evaluate`` stops), and an earlier model at ``--model`` is left as it was: the best
    point so far goes beside it (issue 23: a half-trained model used to replace a good one)."""
    ckpt = resume_dir / "term.ckpt"
    good = resume_dir / "term.npz"
    good.write_bytes(b"an earlier, finished model")
    proc = run_cli(train_args(resume_dir, "term", "--checkpoint", str(ckpt), "--checkpoint-every", "1"), resume_dir)
    deadline = time.monotonic() + 300
    while checkpoint_iterations(ckpt) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before the signal: " + proc.communicate()[1]
    proc.send_signal(signal.SIGTERM)  # the engine is running: its handler is installed
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted" in err and "--resume" in err
    assert good.read_bytes() == b"an earlier, finished model"
    partial = resume_dir / "term.interrupted.npz"
    rep = json.loads((resume_dir / "term.json").read_text())
    assert rep["status"] == "interrupted" and rep["model_file"] == str(partial)
    assert partial.is_file() and str(partial) in err
    assert checkpoint_iterations(ckpt) == rep["iterations"]  # the saved state is the returned one
    from problems.model_io import load_model

    assert load_model(partial) is not None  # the best point so far, loadable


def test_ctrl_c_keeps_the_model_names_the_state_and_resume_reaches_the_objective(resume_dir):
    """Issue 23's acceptance: SIGINT (Ctrl-C) to ``cutplane train --model M`` with M present: M is
    unchanged, the exit status is 130, the message names the saved state (the checkpoint and the
    best model so far) and the resume command, and resuming reaches the uninterrupted objective."""
    ref_report = resume_dir / "ref.json"
    if not ref_report.exists():
        assert main(train_args(resume_dir, "ref")) == 0
    ref = json.loads(ref_report.read_text())
    ckpt = resume_dir / "int.ckpt"
    model = resume_dir / "int.npz"
    model.write_bytes(b"an earlier, finished model")
    args = train_args(resume_dir, "int", "--checkpoint", str(ckpt), "--checkpoint-every", "1")
    proc = run_cli(args, resume_dir)
    wait_for_checkpoint(proc, ckpt, 3, "the signal")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert model.read_bytes() == b"an earlier, finished model"
    assert str(ckpt) in err and str(resume_dir / "int.interrupted.npz") in err and "--resume" in err
    done = checkpoint_iterations(ckpt)
    assert 3 <= done < ref["iterations"]
    resumed = run_cli([*args, "--resume"], resume_dir)
    out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert f"(resumed from {ckpt})" in out
    rep = json.loads((resume_dir / "int.json").read_text())
    assert rep["status"] == "converged" and rep["resumed"] is True
    assert abs(rep["objective"] - ref["objective"]) <= EPS
    assert model.read_bytes() != b"an earlier, finished model"  # the finished run writes its model


def _first_checkpoint(resume_dir, tag):
    ckpt = resume_dir / f"{tag}.ckpt"
    # stopped early on purpose (to resume): uncertified, accepted with --allow-uncertified
    assert main(train_args(resume_dir, tag, "--checkpoint", str(ckpt), "--max-iter", "4", "--allow-uncertified")) == 0
    assert checkpoint_iterations(ckpt) == 4
    return ckpt


def test_truncated_checkpoint_is_refused_without_traceback(resume_dir):
    ckpt = _first_checkpoint(resume_dir, "trunc")
    data = ckpt.read_bytes()
    ckpt.write_bytes(data[: len(data) // 2])
    proc = run_cli(train_args(resume_dir, "trunc2", "--checkpoint", str(ckpt), "--resume"), resume_dir)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 2
    assert "Traceback" not in err and "truncated or corrupted" in err and str(ckpt) in err


def test_flipped_byte_and_other_data_are_refused(resume_dir, capsys):
    ckpt = _first_checkpoint(resume_dir, "flip")
    data = bytearray(ckpt.read_bytes())
    data[len(data) // 3] ^= 0x10  # inside the stored arrays
    ckpt.write_bytes(bytes(data))
    assert main(train_args(resume_dir, "flip2", "--checkpoint", str(ckpt), "--resume")) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("checksum" in err or "corrupted" in err)
    ckpt = _first_checkpoint(resume_dir, "other")
    assert main(train_args(resume_dir, "other2", "--checkpoint", str(ckpt), "--resume", "--C", "3")) == 2
    assert "different problem" in capsys.readouterr().err


def test_binary_task_resume_and_option_errors(tmp_path, capsys):
    write_demo_files(tmp_path, seed=0)
    train = next(p for p in tmp_path.iterdir() if "binary" in p.name and "train" in p.name)
    base = [
        "train",
        "--task",
        "binary",
        "--train",
        str(train),
        "--C",
        "10",
        "--eps",
        "1e-4",
        "--model",
        str(tmp_path / "m.npz"),
    ]
    ckpt = tmp_path / "c.ckpt"
    assert main([*base, "--report", str(tmp_path / "ref.json")]) == 0
    assert (
        main([*base, "--checkpoint", str(ckpt), "--max-iter", "3", "--memory-limit", "64K", "--allow-uncertified"]) == 0
    )
    assert (
        main(
            [
                *base,
                "--checkpoint",
                str(ckpt),
                "--resume",
                "--memory-limit",
                "64K",
                "--report",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    ref, rep = (json.loads((tmp_path / n).read_text()) for n in ("ref.json", "r.json"))
    assert rep["status"] == "converged" and abs(rep["objective"] - ref["objective"]) <= 1e-4
    assert rep["peak_working_set_bytes"] <= 64 * 1024 + 16 * rep["n_features"] + 24
    capsys.readouterr()
    for extra, code, msg in (
        (["--resume"], 2, "--checkpoint"),
        (["--executor", "threads"], 2, "structured"),
        (["--scheduler", "tcp://x:1"], 2, "dask"),
        (["--memory-limit", "lots"], 2, "512K"),
    ):
        assert main([*base, *extra]) == code
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err


@pytest.mark.parametrize(
    "text,value",
    [("1000", 1000), ("64K", 65536), ("1.5M", 1572864), ("2g", 2**31), ("10kB", 10240), ("3MiB", 3 * 2**20)],
)
def test_byte_sizes(text, value):
    assert byte_size(text) == value


@pytest.mark.parametrize("text", ["", "K", "-5", "0", "1e400", "12Q", "inf"])
def test_bad_byte_sizes(text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        byte_size(text)
