"""``problems.cli.deferred_imports``: the command line defers pandas (which scikit-learn imports)
until it is used, and a deferred module is whole at its first use."""

import os
import subprocess
import sys

import pytest

from problems.cli import deferred_imports

pytest.importorskip("pandas")

_CHILD = """
import sys
from problems.cli.deferred_imports import defer_unused_imports
print(defer_unused_imports()["pandas"])
import sklearn.base, sklearn.utils.validation
print("pandas.core" in sys.modules)
import pandas
frame = pandas.DataFrame({"a": [1.0, 2.0]})
from sklearn.utils.validation import check_array
print("pandas.core" in sys.modules, check_array(frame).shape)
"""


def _child(env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "CUTPLANE_DEFER_IMPORTS"}
    env.update(env_extra or {})
    out = subprocess.run([sys.executable, "-c", _CHILD], check=True, env=env, capture_output=True, text=True)
    return out.stdout.split("\n")


def test_pandas_deferred_until_used_then_whole():
    deferred, loaded_by_sklearn, used = _child()[:3]
    assert deferred == "True"
    assert loaded_by_sklearn == "False"  # scikit-learn's import statement ran no pandas code
    assert used == "True (2, 1)"  # the first use loads it all: a data frame works as usual


def test_the_user_can_say_no():
    deferred, loaded_by_sklearn, _ = _child({"CUTPLANE_DEFER_IMPORTS": "no"})[:3]
    assert deferred == "False" and loaded_by_sklearn == "True"


def test_nothing_deferred_once_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", sys.modules.get("pandas") or __import__("pandas"))
    before = list(sys.meta_path)
    assert deferred_imports.defer_import("pandas") is False
    assert sys.meta_path == before


def test_not_installed_is_not_deferred():
    before = list(sys.meta_path)
    assert deferred_imports.defer_import("no_such_module_cutplane") is False
    assert sys.meta_path == before


@pytest.mark.parametrize("executor, deferred", [("serial", True), ("dask", False)])
def test_the_command_defers_except_with_dask(monkeypatch, tmp_path, executor, deferred):
    """``cutplane train`` defers pandas, except with ``--executor dask`` (its client thread may
    import pandas, and the lazy loader is not thread-safe before Python 3.12)."""
    from problems.cli import main as cli_main

    calls = []
    monkeypatch.setattr(cli_main, "defer_unused_imports", lambda: calls.append(1) or {})
    missing = tmp_path / "absent.txt"
    args = ["train", "--task", "sequence", "--train", str(missing), "--model", str(tmp_path / "m.npz")]
    code = cli_main.main([*args, "--executor", executor])
    assert code != 0  # the training file is missing: the command stops after the setting
    assert bool(calls) == deferred
