"""Issue 24's acceptance for a cluster that goes away: `cutplane train --executor dask` with one
Dask worker process killed (SIGKILL) mid-run ends with ONE clear error line (status 1, no
traceback) and keeps the checkpoint of the last boundary; `--resume` from it on another executor
(serial) reaches the objective of an uninterrupted serial run."""

import json
import signal
import time

import pytest

from tests.problems.test_cli_resume import EPS, checkpoint_iterations, run_cli, train_args, wait_for_checkpoint

pytest.importorskip("dask.distributed")
psutil = pytest.importorskip("psutil")


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


def test_killed_dask_worker_gives_one_error_and_resume_on_serial_reaches_the_objective(resume_dir):
    ref_proc = run_cli(train_args(resume_dir, "ref", "--executor", "serial"), resume_dir)
    ckpt = resume_dir / "run.ckpt"
    args = train_args(resume_dir, "run", "--checkpoint", str(ckpt), "--checkpoint-every", "1")
    proc = run_cli([*args, "--executor", "dask", "--workers", "2"], resume_dir)
    try:
        wait_for_checkpoint(proc, ckpt, 3, "a worker could be killed", timeout=120)
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
    assert done >= 3 and not (resume_dir / "run.json").exists() and not (resume_dir / "run.npz").exists()

    ref_out, ref_err = ref_proc.communicate(timeout=300)
    assert ref_proc.returncode == 0, ref_err
    ref = json.loads((resume_dir / "ref.json").read_text())
    assert ref["status"] == "converged" and ref["iterations"] > done

    resumed = run_cli([*args, "--executor", "serial", "--resume"], resume_dir)
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert f"(resumed from {ckpt})" in out
    rep = json.loads((resume_dir / "run.json").read_text())
    assert rep["status"] == "converged" and rep["resumed"] is True and rep["executor"] == "serial"
    assert abs(rep["objective"] - ref["objective"]) <= EPS
    assert rep["iterations"] > done  # the history carries the iterations before the kill


def test_chunks_per_worker_option(resume_dir, tmp_path, capsys):
    from problems.cli.main import main
    from problems.demo_data import write_demo_files

    assert (
        main(
            train_args(
                resume_dir,
                "cpw",
                "--executor",
                "threads",
                "--workers",
                "2",
                "--chunks-per-worker",
                "3",
                "--max-iter",
                "2",
                "--allow-uncertified",  # a short run on purpose: only the option's reach is checked
            )
        )
        == 0
    )
    assert json.loads((resume_dir / "cpw.json").read_text())["chunks_per_worker"] == 3
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
    assert main([*train_args(resume_dir, "bad"), "--chunks-per-worker", "0"]) == 2
