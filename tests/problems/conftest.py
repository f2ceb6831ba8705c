"""Fixtures shared by the tests of ``problems``."""

import pytest

from problems.io.conll import write_columns
from problems.synthetic import make_tagging_task


@pytest.fixture(scope="module")
def resume_dir(tmp_path_factory):
    """A folder with a small tagging corpus (``train.txt``) and its templates (``t.tpl``) that
    trains in a few dozen iterations: the checkpoint / resume command-line tests
    (``test_cli_resume.py``, ``test_cli_dask_resume.py``); one per test module."""
    d = tmp_path_factory.mktemp("resume")
    task = make_tagging_task(
        n_train=120, n_test=5, length=10, n_labels=4, n_informative=3, n_noise=3, signal=0.5, seed=1
    )
    write_columns(d / "train.txt", task.X_train, task.y_train)
    (d / "t.tpl").write_text(task.templates)
    return d
