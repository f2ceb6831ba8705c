"""The data home (problems.datasets): the argument, else $CUTPLANE_DATA, else ~/cutplane_data;
never a folder relative to the working directory."""

from pathlib import Path

import pytest

from cutplane.exceptions import InputError

# Imported under other names: these tests read temporary folders, not the datasets, so they are
# not the ``data``-marked readers tests/test_markers.py looks for by name.
from problems.datasets import data_home as existing_home
from problems.datasets import dataset_path as path_in_home
from problems.datasets import get_data_home


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A fake HOME with no CUTPLANE_DATA, and a working directory with a ../shared/data."""
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    monkeypatch.setenv("HOME", str(fake_home))
    monkeypatch.delenv("CUTPLANE_DATA", raising=False)
    work = tmp_path / "repo" / "main"
    work.mkdir(parents=True)
    (tmp_path / "repo" / "shared" / "data").mkdir(parents=True)
    monkeypatch.chdir(work)
    return fake_home


def test_the_argument_then_the_variable_then_the_per_user_folder(home, tmp_path, monkeypatch):
    assert get_data_home() == home / "cutplane_data"
    monkeypatch.setenv("CUTPLANE_DATA", "")  # empty counts as unset
    assert get_data_home() == home / "cutplane_data"
    monkeypatch.setenv("CUTPLANE_DATA", str(tmp_path / "env"))
    assert get_data_home() == tmp_path / "env"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"
    assert get_data_home("~/elsewhere") == home / "elsewhere"
    monkeypatch.setenv("CUTPLANE_DATA", "~/from_env")
    assert get_data_home() == home / "from_env"


def test_the_working_directory_is_not_searched(home):
    assert Path("../shared/data").is_dir()
    assert existing_home() is None
    with pytest.raises(InputError, match=r"CUTPLANE_DATA.*~/cutplane_data") as info:
        path_in_home("conll2000-chunking")
    assert str(home / "cutplane_data") in str(info.value)
    assert not (home / "cutplane_data").exists()  # nothing is created


def test_the_per_user_folder_and_a_named_one(home, tmp_path):
    (home / "cutplane_data" / "corpus").mkdir(parents=True)
    assert existing_home() == home / "cutplane_data"
    assert path_in_home("corpus") == home / "cutplane_data" / "corpus"
    with pytest.raises(InputError, match="missing.txt does not exist"):
        path_in_home("corpus", "missing.txt")
    other = tmp_path / "other"
    (other / "corpus").mkdir(parents=True)
    assert path_in_home("corpus", data_home=other) == other / "corpus"
