"""The documentation site builds with warnings as errors, and holds what it promises.

One ``sphinx-build -W --keep-going -b html docs OUT`` per test session (module fixture),
then checks on its output: the build succeeded, every result table written by the scripts
is a page, every public module is in the API reference, the CLI help and the tutorial's
source were pulled in from the code. Skipped only when Sphinx (or myst-parser) is not
importable; the ``test`` extra installs both.
"""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("sphinx", reason="sphinx is not installed (pip install -e '.[docs]')")
pytest.importorskip("myst_parser", reason="myst-parser is not installed (pip install -e '.[docs]')")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BUILD_TIMEOUT_S = 600  # the build itself takes ~20 s of CPU; the margin is for a loaded machine


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Build the site once into a temporary folder; return (completed process, output dir)."""
    out = tmp_path_factory.mktemp("docs_html")
    cmd = [
        sys.executable,
        "-m",
        "sphinx",
        "-W",
        "--keep-going",
        "-b",
        "html",
        "-d",
        str(out / ".doctrees"),
        str(DOCS),
        str(out),
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    return proc, out


def _conf():
    """Sphinx's configuration file (a file, not a module of a package): its globals."""
    return SimpleNamespace(**runpy.run_path(str(DOCS / "conf.py"), run_name="cutplane_docs_conf"))


def test_build_has_no_warning(built):
    proc, out = built
    assert proc.returncode == 0, f"sphinx-build -W failed:\n{proc.stderr[-6000:]}"
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-6000:]
    assert (out / "index.html").is_file()


def test_every_result_table_is_a_page(built):
    proc, out = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    tables = sorted((DOCS / "results").glob("*.md"))
    assert tables, "docs/results holds no table"
    index = (out / "results" / "index.html").read_text(encoding="utf-8")
    for table in tables:
        page = out / "results" / f"{table.stem}.html"
        assert page.is_file(), f"{table.name} was not built"
        assert f'href="{table.stem}.html"' in index, f"{table.name} is not linked from results/index"
        # The first Markdown table row's first cell reaches the HTML unchanged.
        header = next(line for line in table.read_text(encoding="utf-8").splitlines() if line.startswith("|"))
        first_cell = header.strip("|").split("|")[0].strip()
        assert first_cell in page.read_text(encoding="utf-8")


def test_api_reference_covers_every_public_module(built):
    proc, out = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    conf = _conf()
    for package in ("cutplane", "oracles", "problems"):
        modules = conf.public_modules(package)
        assert modules, package
        assert not any(part.startswith("_") for m in modules for part in m.split("."))
        html = (out / "api" / f"{package}.html").read_text(encoding="utf-8")
        missing = [m for m in modules if f'id="module-{m}"' not in html]
        assert not missing, f"not in api/{package}.html: {missing}"
    engine = (out / "api" / "cutplane.html").read_text(encoding="utf-8")
    assert 'id="cutplane.engine.minimize"' in engine  # autodoc documented a member


def test_generated_text_comes_from_the_code(built):
    proc, out = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    conf = _conf()
    cli = (out / "user_guide" / "cli.html").read_text(encoding="utf-8")
    for command in ("train", "evaluate", "predict", "compare", "demo"):
        usage = conf.cli_help(command).splitlines()[0]  # "usage: cutplane train ..."
        assert usage.split("[")[0].strip() in cli, command
    from problems.sequence.template_sets import TEMPLATE_SETS

    templates = (out / "user_guide" / "templates.html").read_text(encoding="utf-8")
    for name in TEMPLATE_SETS:
        assert f'<span class="pre">{name}</span>' in templates, name
    tutorial = (out / "tutorials" / "write_your_own_risk.html").read_text(encoding="utf-8")
    assert "PairwiseRankingRisk" in tutorial and "epsilon_insensitive_risk" in tutorial


def test_public_modules_walks_subpackages_and_skips_private():
    conf = _conf()
    modules = conf.public_modules("cutplane")
    assert "cutplane.engine" in modules and "cutplane.reduced.qp" in modules
    assert "cutplane.online" in modules  # a subpackage: listed, shown with its docstring only
    assert all(not part.startswith("_") for m in modules for part in m.split("."))
    assert modules == sorted(modules)


def test_architecture_page_is_built_and_linked(built):
    """The architecture page (layers, one ``fit`` call end to end) is a page of the site's index."""
    proc, out = built
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = (out / "architecture.html").read_text(encoding="utf-8")
    assert "The layers" in page and "call, end to end" in page and "SequenceTagger.fit" in page
    assert 'href="architecture.html"' in (out / "index.html").read_text(encoding="utf-8")
