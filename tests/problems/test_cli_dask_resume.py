"""Issue 24's acceptance for a cluster that goes away: `cutplane train --executor dask` with one
Dask worker process killed (SIGKILL) mid-run ends with ONE clear error line (status 1, no
traceback) and keeps the checkpoint of the last boundary; `--resume` from it on another executor
(serial) reaches the objective of an uninterrupted serial run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from problems.io.conll import write_columns
from problems.synthetic import make_tagging_task

pytest.importorskip("dask.distributed")
psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[2]
EPS = 0.02


@pytest.fixture(scope="module")
def seq(tmp_path_factory):
    d = tmp_path_factory.mktemp("dask_resume")
    task = make_tagging_task(
        n_train=120, n_test=5, length=10, n_labels=4, n_informative=3, n_noise=3, signal=0.5, seed=1
    )
    write_columns(d / "train.txt", task.X_train, task.y_train)
    (d / "t.tpl").write_text(task.templates)
    return d


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


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "problems.cli.main", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,  # the default SIGINT, as in a terminal (see test_cli_resume.py)
    )


def checkpoint_iterations(path):
    """Iterations recorded in a checkpoint (its JSON metadata), or 0 when not readable yet."""
    try:
        with np.load(path, allow_pickle=False) as f:
            return int(json.loads(str(f["__meta__"]))["n_iter"])
    except (OSError, ValueError, KeyError):
        return 0


def dask_worker_processes(pid):
    """The Dask worker processes of the CLI process ``pid``: the LocalCluster's nannies start them
    with multiprocessing's spawn (the resource tracker is the other child)."""
    out = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            cmd = " ".join(child.cmdline())
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if "spawn_main" in cmd and "resource_tracker" not in cmd:
            out.append(child)
    return out


def test_killed_dask_worker_gives_one_error_and_resume_on_serial_reaches_the_objective(seq):
    ref_proc = run_cli(train_args(seq, "ref", "--executor", "serial"), seq)
    ckpt = seq / "run.ckpt"
    args = train_args(seq, "run", "--checkpoint", str(ckpt), "--checkpoint-every", "1")
    proc = run_cli([*args, "--executor", "dask", "--workers", "2"], seq)
    try:
        deadline = time.monotonic() + 120
        while checkpoint_iterations(ckpt) < 3 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before a worker could be killed: " + proc.communicate()[1]
        workers = dask_worker_processes(proc.pid)
        assert len(workers) == 2, [w.cmdline() for w in workers]
        workers[0].send_signal(signal.SIGKILL)
        t_kill = time.monotonic()
        out, err = proc.communicate(timeout=60)
        seconds = time.monotonic() - t_kill
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 1, err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("cutplane: error:")]
    assert len(errors) == 1, err
    assert "Dask worker was lost" in errors[0] and "--resume" in errors[0]
    assert seconds < 30, f"the error took {seconds:.1f} s after the kill"
    done = checkpoint_iterations(ckpt)
    assert done >= 3 and not (seq / "run.json").exists() and not (seq / "run.npz").exists()

    ref_out, ref_err = ref_proc.communicate(timeout=300)
    assert ref_proc.returncode == 0, ref_err
    ref = json.loads((seq / "ref.json").read_text())
    assert ref["status"] == "converged" and ref["iterations"] > done

    resumed = run_cli([*args, "--executor", "serial", "--resume"], seq)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"(resumed from {ckpt})" in out
    rep = json.loads((seq / "run.json").read_text())
    assert rep["status"] == "converged" and rep["resumed"] is True and rep["executor"] == "serial"
    assert abs(rep["objective"] - ref["objective"]) <= EPS
    assert rep["iterations"] > done  # the history carries the iterations before the kill


def test_chunks_per_worker_option(seq, tmp_path, capsys):
    from problems.cli.main import main
    from problems.demo_data import write_demo_files

    assert (
        main(
            train_args(
                seq, "cpw", "--executor", "threads", "--workers", "2", "--chunks-per-worker", "3", "--max-iter", "2"
            )
        )
        == 0
    )
    assert json.loads((seq / "cpw.json").read_text())["chunks_per_worker"] == 3
    write_demo_files(tmp_path, seed=0)
    train = next(p for p in tmp_path.iterdir() if "binary" in p.name and "train" in p.name)
    capsys.readouterr()
    code = main(
        [
            "train",
            "--task",
            "binary",
            "--train",
            str(train),
            "--C",
            "1",
            "--chunks-per-worker",
            "2",
            "--model",
            str(tmp_path / "m.npz"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--chunks-per-worker" in err and "Traceback" not in err
    assert main([*train_args(seq, "bad"), "--chunks-per-worker", "0"]) == 2
