"""cutplane.npz_io.write_npz_atomic: the archive round-trips; a failure mid-write leaves the old
file as it was and no temporary file; the file and its folder are fsync-ed before it counts."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from cutplane import npz_io
from cutplane.npz_io import write_npz_atomic


def _arrays():
    return {"w": np.arange(5, dtype=np.float64), "names": np.array(["a", "bc"]), "flag": np.array(True)}


@pytest.mark.parametrize("compress", [False, True])
def test_round_trip_and_permissions(tmp_path, compress):
    target = tmp_path / "model.npz"
    assert write_npz_atomic(target, _arrays(), compress=compress) == target
    with np.load(target, allow_pickle=False) as data:
        assert sorted(data.files) == ["flag", "names", "w"]
        np.testing.assert_array_equal(data["w"], np.arange(5.0))
        assert data["names"].tolist() == ["a", "bc"]
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert os.listdir(tmp_path) == ["model.npz"]


def test_a_relative_path_in_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_npz_atomic("plain.npz", _arrays())
    assert os.listdir(tmp_path) == ["plain.npz"]


def _half_write_then(exc):
    def save(f, **arrays):
        f.write(b"PK\x03\x04 half an archive")
        raise exc

    return save


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failure_mid_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path, monkeypatch, exc):
    target = tmp_path / "model.npz"
    write_npz_atomic(target, {"w": np.ones(3)})
    before = target.read_bytes()
    monkeypatch.setattr(npz_io.np, "savez", _half_write_then(exc))
    with pytest.raises(type(exc)):
        write_npz_atomic(target, {"w": np.zeros(3)})
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.npz"]


def test_a_failed_fsync_or_rename_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "model.npz"
    write_npz_atomic(target, {"w": np.ones(3)})
    before = target.read_bytes()

    def fail(*args):
        raise OSError(5, "Input/output error")

    for name in ("fsync", "replace"):
        with monkeypatch.context() as m:
            m.setattr(npz_io.os, name, fail)
            with pytest.raises(OSError):
                write_npz_atomic(target, {"w": np.zeros(3)})
        assert target.read_bytes() == before
        assert os.listdir(tmp_path) == ["model.npz"]


def test_no_old_file_and_a_failure_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(npz_io.np, "savez_compressed", _half_write_then(OSError(28, "No space left on device")))
    with pytest.raises(OSError):
        write_npz_atomic(tmp_path / "new.npz", {"w": np.zeros(3)}, compress=True)
    assert os.listdir(tmp_path) == []


def test_the_file_and_the_folder_are_fsynced_before_the_rename_counts(tmp_path, monkeypatch):
    target = tmp_path / "model.npz"
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        kind = "folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        events.append(f"fsync {kind}")
        real_fsync(fd)

    def replace(src, dst):
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(npz_io.os, "fsync", fsync)
    monkeypatch.setattr(npz_io.os, "replace", replace)
    write_npz_atomic(target, _arrays())
    assert events == ["fsync file", "replace", "fsync folder"]


def test_a_missing_folder_is_an_oserror(tmp_path):
    with pytest.raises(OSError):
        write_npz_atomic(tmp_path / "absent" / "model.npz", _arrays())
