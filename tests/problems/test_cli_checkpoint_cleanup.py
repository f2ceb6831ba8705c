"""Checkpoints after issue 39: removed once the run is certified (with the superseded
``*.interrupted.npz`` of a resumed run), kept when it is not; the progress counter of a resumed
run starts at its checkpoint's iterations; the interrupt message gets a line of its own; sparse
slopes stored with int32 indices, resumed bit for bit."""

import json
import logging
import shutil

import numpy as np
import pytest

from cutplane import minimize
from cutplane.checkpoint import load_checkpoint, save_checkpoint
from cutplane.exceptions import ConvergenceWarning
from cutplane.progress import ProgressReporter
from cutplane.regularizers import L2
from problems.cli.main import main

from ..cutplane.test_engine import make_oracle


def _train(d, *extra):
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
        "0.02",
        "--regularizer",
        "ssvm",
        "--executor",
        "serial",
        "--model",
        str(d / "m.npz"),
        "--report",
        str(d / "r.json"),
        "--checkpoint",
        str(d / "run.ckpt"),
        *extra,
    ]


def test_checkpoint_kept_when_uncertified_removed_after_the_certified_resume(resume_dir, tmp_path, capsys):
    d = tmp_path
    for name in ("train.txt", "t.tpl"):
        shutil.copy(resume_dir / name, d / name)
    assert main(_train(d, "--max-iter", "5", "--allow-uncertified")) == 0
    rep = json.loads((d / "r.json").read_text())
    assert rep["status"] == "max_iter" and rep["removed"] == []
    assert (d / "run.ckpt").is_file()  # to resume with more iterations
    shutil.copy(d / "m.npz", d / "m.interrupted.npz")  # as an interrupted run leaves it
    capsys.readouterr()
    assert main(_train(d, "--resume", "--progress")) == 0
    err = capsys.readouterr().err
    rep = json.loads((d / "r.json").read_text())
    assert rep["status"] == "converged" and rep["iterations"] > 5
    assert rep["removed"] == [str(d / "run.ckpt"), str(d / "m.interrupted.npz")]
    assert not (d / "run.ckpt").exists() and not (d / "m.interrupted.npz").exists()
    assert (d / "m.npz").is_file()
    # the counter went on from the checkpoint's 5 iterations: its first display is at 5, not 0
    first = err.replace("\r", "\n").split("\n")
    counts = [
        line.split(":", 1)[1].split("it", 1)[0].strip()
        for line in first
        if line.startswith(("n-slack", "bmrm", "in-out"))
    ]
    assert counts and counts[0] == "5", err[:400]


def test_a_certified_run_without_resume_removes_its_checkpoint_only(resume_dir, tmp_path):
    d = tmp_path
    for name in ("train.txt", "t.tpl"):
        shutil.copy(resume_dir / name, d / name)
    (d / "m.interrupted.npz").write_bytes(b"an earlier interrupted run's model")
    assert main(_train(d, "--checkpoint-every", "2")) == 0
    rep = json.loads((d / "r.json").read_text())
    assert rep["status"] == "converged" and rep["removed"] == [str(d / "run.ckpt")]
    assert (d / "m.interrupted.npz").read_bytes() == b"an earlier interrupted run's model"  # not this run's


def test_progress_counter_starts_at_initial(capsys):
    rep = ProgressReporter(True, "bmrm", initial=7)
    assert rep._bar.n == 7
    rep.close("converged")
    assert "bmrm [converged]: 7it" in capsys.readouterr().err


def test_the_interrupt_message_is_on_its_own_line(tmp_path, capsys):
    handler = logging.StreamHandler()  # stderr, as the command's logging
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    log = logging.getLogger("cutplane")
    log.addHandler(handler)

    def stop(info):
        if info.iteration == 3:
            raise KeyboardInterrupt

    try:
        res = minimize(make_oracle("hinge", 1, 60, 6, False), L2(), 0.01, eps=1e-9, verbose=True, callback=stop)
    finally:
        log.removeHandler(handler)
    assert res.status == "interrupted"
    err = capsys.readouterr().err
    assert "\ncutplane: interrupted at iteration" in err or err.startswith("cutplane: interrupted at iteration")
    before = err.split("cutplane: interrupted at iteration")[0]
    assert before.endswith("\n")  # the counter ended its line first


def test_sparse_slopes_saved_with_int32_indices_resume_exactly(tmp_path):
    oracle = make_oracle("hinge", 1, 60, 12, True)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        res = minimize(oracle, L2(), 0.01, eps=1e-9, max_iter=6, checkpoint=tmp_path / "c.npz", checkpoint_every=1)
    from cutplane.working_set.state import expand_slopes

    with np.load(tmp_path / "c.npz", allow_pickle=False) as f:
        # stored compactly (format version 2: index gaps of at most 4 bytes), read back as int32
        assert f["ws_gaps"].dtype.itemsize <= 4 and "ws_indices" not in f.files
        assert expand_slopes({k: f[k] for k in f.files}, 12)["ws_indices"].dtype == np.int32
    fp = json.loads(str(np.load(tmp_path / "c.npz")["__meta__"]))["fingerprint"]
    st = load_checkpoint(tmp_path / "c.npz", dim=12, fingerprint=fp)
    save_checkpoint(tmp_path / "again.npz", st, fingerprint=fp, method="bmrm")
    a, b = np.load(tmp_path / "c.npz"), np.load(tmp_path / "again.npz")
    assert set(a.files) == set(b.files)
    for name in a.files:  # every stored array, the compact slopes and w, best_w included
        nan = a[name].dtype.kind == "f"  # the history has NaN columns
        assert np.array_equal(a[name], b[name], equal_nan=nan) and a[name].dtype == b[name].dtype, name
    assert res.n_iter == 6


@pytest.mark.parametrize("dim", [2**31 + 5])
def test_indices_beyond_int32_stay_int64(dim):
    import scipy.sparse as sp

    from cutplane.cuts import Cut
    from cutplane.working_set import WorkingSet, working_set_state

    ws = WorkingSet(dim)
    ws.add(Cut(sp.csr_matrix(([1.0], ([0], [dim - 1])), shape=(1, dim)), 0.5))
    assert working_set_state(ws)["ws_indices"].dtype == np.int64
