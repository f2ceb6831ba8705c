"""The ``data`` marker is on every test that reads the datasets, and such a test skips with its
reason where the datasets are absent.

A test reads the datasets when it asks for the ``data_dir`` fixture, calls
``problems.datasets.data_home`` / ``dataset_path``, or asks for a fixture of its module that
does; it is marked by ``@pytest.mark.data`` or by its module's ``pytestmark``. Read from the
test files' syntax, so that it holds for every test file without running any.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
_READERS = {"data_home", "dataset_path"}


def _is_data_mark(node) -> bool:
    """``pytest.mark.data`` (possibly called, or in a list of marks)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_is_data_mark(e) for e in node.elts)
    return isinstance(node, ast.Attribute) and node.attr == "data" and ast.unparse(node) == "pytest.mark.data"


def _is_fixture(fn) -> bool:
    return any("fixture" in ast.unparse(d) for d in fn.decorator_list)


def _calls_reader(fn) -> bool:
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in _READERS:
                return True
    return False


def _args(fn):
    return {a.arg for a in fn.args.args + fn.args.kwonlyargs}


def unmarked_data_tests(path, root=ROOT):
    """The test functions of ``path`` that read the datasets without the ``data`` marker
    (``file::name``, the file relative to ``root``)."""
    tree = ast.parse(path.read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    module_marked = any(
        isinstance(n, ast.Assign)
        and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
        and _is_data_mark(n.value)
        for n in tree.body
    )
    readers = {"data_dir"}  # the fixtures that read the datasets, to a fixed point
    changed = True
    while changed:
        changed = False
        for fn in functions:
            if _is_fixture(fn) and fn.name not in readers and (_args(fn) & readers or _calls_reader(fn)):
                readers.add(fn.name)
                changed = True
    out = []
    for fn in functions:
        if not fn.name.startswith("test_") or module_marked:
            continue
        if (_args(fn) & readers or _calls_reader(fn)) and not any(_is_data_mark(d) for d in fn.decorator_list):
            out.append(f"{path.relative_to(root)}::{fn.name}")
    return out


def test_every_test_that_reads_the_datasets_is_marked_data():
    missing = [name for path in sorted(TESTS.rglob("test_*.py")) for name in unmarked_data_tests(path)]
    assert missing == [], "mark these @pytest.mark.data:\n" + "\n".join(missing)


def test_the_guard_sees_fixtures_and_module_marks(tmp_path):
    sample = tmp_path / "test_sample.py"
    sample.write_text(
        "import pytest\n"
        "@pytest.fixture\ndef corpus(data_dir):\n    return data_dir\n"
        "@pytest.fixture(scope='module')\ndef other():\n"
        "    from problems.datasets import data_home\n    return data_home()\n"
        "def test_a(corpus):\n    pass\n"
        "def test_b(other):\n    pass\n"
        "@pytest.mark.data\ndef test_c(data_dir):\n    pass\n"
        "def test_d(tmp_path):\n    pass\n"
    )
    rel = [n.split("::")[1] for n in unmarked_data_tests(sample, tmp_path)]
    assert rel == ["test_a", "test_b"]
    sample.write_text(
        "import pytest\npytestmark = [pytest.mark.slow, pytest.mark.data]\ndef test_a(data_dir):\n    pass\n"
    )
    assert unmarked_data_tests(sample, tmp_path) == []


def test_a_data_test_skips_with_its_reason_without_the_datasets(tmp_path):
    """Where the datasets are absent, a ``data`` test skips (not fails) and says why, even one that
    does not ask for ``data_dir``; the same test runs where they are present."""
    env = dict(os.environ, CUTPLANE_DATA=str(tmp_path / "absent"), PYTHONPATH=str(ROOT))
    test = "tests/benchmarks/test_ocr_chain_mkl.py::test_render_refuses_bad_records"
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 skipped" in r.stdout and "datasets absent: set CUTPLANE_DATA" in r.stdout
