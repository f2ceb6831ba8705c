"""Sphinx configuration of the cutplane documentation.

Build (warnings are errors, as in ``tests/test_docs.py``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The pages are reStructuredText. The result tables under ``docs/results/*.md`` are written by
the scripts under ``benchmarks/`` (the paper reproductions under ``benchmarks/reproductions/``)
and are read as Markdown by myst-parser; nothing in them is typed by hand.

The API reference is generated from the docstrings at build time: a line
``.. api-modules:: PACKAGE`` in a page under ``api/`` is replaced (on ``source-read``) by one
``automodule`` section per public module of ``PACKAGE`` (modules whose dotted name has no
part starting with ``_``), found by walking the package. A new module therefore appears in
the reference without editing the docs, and nothing is written into the source tree. In the
same way ``.. cutplane-help:: COMMAND`` becomes the ``--help`` text of that subcommand and
``.. registry-keys:: module.NAME`` a bullet list of a registry's names and
``.. string-value:: module.NAME`` a literal block with a string constant (a template set), so
the pages show what the code accepts today.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))

project = "cutplane"
author = "the cutplane developers"
copyright = "the cutplane developers"  # noqa: A001  (Sphinx's name)


def _version():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    match = re.search(r'^version\s*=\s*"([^"]+)"', text, flags=re.M)
    return match.group(1) if match else "unknown"


release = version = _version()

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
templates_path: list[str] = []

# --- autodoc / napoleon: numpydoc-style docstrings, members in source order ----------------
autodoc_default_options = {
    "members": True,
    "member-order": "bysource",
    "show-inheritance": False,
}
autodoc_typehints = "none"  # the docstrings give types with shapes
autodoc_mock_imports = ["mosek", "dask", "distributed"]
autosummary_generate = False  # no stubs written into the source tree
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_ivar = False  # "Attributes" as attribute entries (see _skip_member)
napoleon_use_rtype = False
add_module_names = False
# Types in the docstrings carry shapes ("ndarray of shape (n_samples, dim)"); Sphinx turns
# each word of an attribute's type into a cross-reference, and "dim" or "n_samples" is an
# attribute of several classes. Those ambiguous look-ups are the only ``ref.python``
# warnings (unresolved ones are not reported without nitpicky mode).
suppress_warnings = ["ref.python"]

# --- Markdown (the script-written result tables) -------------------------------------------
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# --- HTML -----------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"cutplane {release}"
html_static_path: list[str] = []
html_theme_options = {"description": "Cutting-plane and bundle solvers with certified gaps"}

# --- the API pages: one automodule section per public module -------------------------------
_API_LINE = re.compile(r"^\.\. api-modules::\s*(\S+)\s*$", flags=re.M)


def public_modules(package: str) -> list[str]:
    """Dotted names of the public modules under ``package`` (itself excluded), sorted.

    A module is public when no part of its dotted name starts with ``_``. Subpackages are
    listed too (their pages show the package docstring only).
    """
    pkg = importlib.import_module(package)
    names = []
    for info in pkgutil.walk_packages(pkg.__path__, package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def _module_section(name: str) -> str:
    # A package's lazy ``__all__`` names are documented in their own modules: docstring only.
    is_package = hasattr(importlib.import_module(name), "__path__")
    title = f"``{name}``"
    options = "   :no-members:\n" if is_package else ""
    return f"{title}\n{'-' * len(title)}\n\n.. automodule:: {name}\n{options}\n"


def _expand_api(app, docname, source):
    if not docname.startswith("api/"):
        return
    source[0] = _API_LINE.sub(lambda m: "".join(_module_section(n) for n in public_modules(m.group(1))), source[0])


# --- text taken from the code at build time, never pasted -----------------------------------
_HELP_LINE = re.compile(r"^\.\. cutplane-help::[ \t]*(\S*)[ \t]*$", flags=re.M)
_KEYS_LINE = re.compile(r"^\.\. registry-keys::[ \t]*(\S+)[ \t]*$", flags=re.M)
_VALUE_LINE = re.compile(r"^\.\. string-value::[ \t]*(\S+)[ \t]*$", flags=re.M)


def cli_help(command: str = "") -> str:
    """The ``--help`` text of ``cutplane`` (``command=""``) or of one subcommand.

    Formatted at a fixed width of 88 columns so the build does not depend on the terminal.
    """
    from problems.cli.main import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"
    try:
        parser = build_parser()
        if command:
            sub = next(
                a
                for a in parser._subparsers._group_actions  # noqa: SLF001
                if hasattr(a, "choices")
            )
            parser = sub.choices[command]
        return parser.format_help()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _literal(text: str) -> str:
    body = "\n".join(("   " + line) if line.strip() else "" for line in text.splitlines())
    return f".. code-block:: text\n\n{body}\n"


def _registry_keys(dotted: str) -> str:
    module, attr = dotted.rsplit(".", 1)
    keys = list(getattr(importlib.import_module(module), attr))
    return "\n".join(f"- ``{k}``" for k in keys) + "\n"


def _string_value(dotted: str) -> str:
    module, attr = dotted.rsplit(".", 1)
    value = getattr(importlib.import_module(module), attr)
    if not isinstance(value, str):
        raise TypeError(f"string-value: {dotted} is a {type(value).__name__}, not a str")
    return _literal(value)


def _expand_generated(app, docname, source):
    text = _HELP_LINE.sub(lambda m: _literal(cli_help(m.group(1))), source[0])
    text = _VALUE_LINE.sub(lambda m: _string_value(m.group(1)), text)
    source[0] = _KEYS_LINE.sub(lambda m: _registry_keys(m.group(1)), text)


_OWN_PACKAGES = ("cutplane", "oracles", "problems")


def _skip_member(app, what, name, obj, skip, options):
    """Skip what the docstrings already describe or what is not ours.

    - NamedTuple fields (``Alias for field number k``): the class's ``Attributes`` section
      documents them;
    - methods that scikit-learn generates on estimators (``set_fit_request``, ...): their
      docstrings refer to scikit-learn's own glossary.
    """
    doc = getattr(obj, "__doc__", None) or ""
    if what == "class" and doc.startswith("Alias for field number"):
        return True
    if what == "class" and callable(obj):
        module = getattr(obj, "__module__", None) or ""
        if module and not module.startswith(_OWN_PACKAGES):
            return True
    return skip


def setup(app):
    """Register the ``api-modules`` expansion and the member filter."""
    app.connect("source-read", _expand_api)
    app.connect("source-read", _expand_generated)
    app.connect("autodoc-skip-member", _skip_member)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
