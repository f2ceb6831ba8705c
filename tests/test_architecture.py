"""The house rules, checked statically on the source (no import of the code under test).

- The import graph of ``cutplane``, ``oracles`` and ``problems`` has no cycle among modules.
- No module imports a private (underscore) name of another module, neither by ``from m import _x``
  nor by ``m._x`` on an imported module. Importing a private *module*, or public names from it
  (``from cutplane._blas import single_thread_blas``), is fine: the underscore of a module says
  "not public API", not "not importable by the package itself".
- The layers point one way (``problems -> oracles -> cutplane``) and the task subpackages of
  ``problems`` do not import each other (``lint-imports`` checks the same contracts from
  ``pyproject.toml``, transitively; this is the direct-import version, so that ``pytest`` alone
  catches a new edge).
- The result pages and the other docs name commands that exist: every ``python -m MODULE`` is
  a module that can be found, every ``python PATH.py`` and every backquoted script path a file.
- The version is written in one place (``cutplane.__version__``; ``pyproject.toml`` reads it).

Each checker is also run on a planted violation (a small package written to a temporary
folder), so a checker that silently finds nothing fails.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections import defaultdict
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("cutplane", "oracles", "problems")
TASKS = ("problems.sequence", "problems.parsing", "problems.mkl", "problems.linear", "problems.structured")
LAYERS = ("problems", "oracles", "cutplane")  # each may import only the ones after it


# ----------------------------------------------------------------------------- the import graph
def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _modules(root, packages):
    """``{dotted module name: path}`` of every ``.py`` file under the packages."""
    mods = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            mods[".".join(parts)] = path
    return mods


def _type_checking_nodes(tree):
    """Nodes under ``if TYPE_CHECKING:`` (annotations only: not executed, so not edges of the graph)."""
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skip.update(id(n) for n in ast.walk(child))
    return skip


def _dotted(node):
    """``a.b.c`` of an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


class ImportGraph:
    """Static import graph of some packages: module-level and function-level imports alike.

    ``edges[m]`` holds the modules of the packages that ``m`` imports (a ``from pkg import name``
    is an edge to ``pkg.name`` when that is a module, else to ``pkg``); ``private`` lists
    ``(module, imported from, name)`` for every private name taken from another module.
    """

    def __init__(self, root, packages):
        self.packages = tuple(packages)
        self.modules = _modules(Path(root), self.packages)
        self.edges = defaultdict(set)
        self.private = []
        for mod, path in self.modules.items():
            self._scan(mod, path)

    def _ours(self, name):
        return name is not None and name.split(".")[0] in self.packages

    def _resolve(self, mod, node):
        """The absolute module a ``from ... import`` names."""
        if not node.level:
            return node.module
        is_package = self.modules[mod].name == "__init__.py"
        base = mod.split(".") if is_package else mod.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def _edge(self, mod, target, type_only):
        if not type_only and target != mod:
            # the nearest enclosing module that exists (``import a.b.c`` of a name inside a.b.c)
            while target and target not in self.modules:
                target = target.rpartition(".")[0]
            if target and target != mod:
                self.edges[mod].add(target)

    def _scan(self, mod, path):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        type_only = _type_checking_nodes(tree)
        aliases = {}  # local name -> module of ours it is bound to
        for node in ast.walk(tree):
            skip = id(node) in type_only
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if self._ours(alias.name):
                        self._edge(mod, alias.name, skip)
                        if alias.asname:
                            aliases[alias.asname] = alias.name
                        else:  # ``import a.b.c`` binds ``a``
                            aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                target = self._resolve(mod, node)
                if not self._ours(target):
                    continue
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    if full in self.modules:
                        self._edge(mod, full, skip)
                        aliases[alias.asname or alias.name] = full
                    else:
                        self._edge(mod, target, skip)
                        if _is_private(alias.name) and target != mod:
                            self.private.append((mod, target, alias.name))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                owner = _dotted(node.value)
                if owner is None:
                    continue
                head, _, rest = owner.partition(".")
                module = aliases.get(head)
                if module is None:
                    continue
                module = f"{module}.{rest}" if rest else module
                if module in self.modules and module != mod and f"{module}.{node.attr}" not in self.modules:
                    self.private.append((mod, module, node.attr))

    def cycles(self):
        """Strongly connected components with more than one module (Tarjan, iterative)."""
        index, low, on_stack, stack, found = {}, {}, set(), [], []
        counter = 0
        for start in sorted(self.modules):
            if start in index:
                continue
            work = [(start, iter(sorted(self.edges[start])))]
            index[start] = low[start] = counter
            counter += 1
            stack.append(start)
            on_stack.add(start)
            while work:
                v, children = work[-1]
                for w in children:
                    if w not in index:
                        index[w] = low[w] = counter
                        counter += 1
                        stack.append(w)
                        on_stack.add(w)
                        work.append((w, iter(sorted(self.edges[w]))))
                        break
                    if w in on_stack:
                        low[v] = min(low[v], index[w])
                else:
                    work.pop()
                    if work:
                        low[work[-1][0]] = min(low[work[-1][0]], low[v])
                    if low[v] == index[v]:
                        component = []
                        while True:
                            w = stack.pop()
                            on_stack.discard(w)
                            component.append(w)
                            if w == v:
                                break
                        if len(component) > 1:
                            found.append(sorted(component))
        return found

    def upward_edges(self, layers):
        """Imports from a layer to a higher one (``layers`` listed from the top)."""
        rank = {name: i for i, name in enumerate(layers)}
        bad = []
        for mod, targets in self.edges.items():
            for target in targets:
                a, b = rank.get(mod.split(".")[0]), rank.get(target.split(".")[0])
                if a is not None and b is not None and b < a:
                    bad.append((mod, target))
        return sorted(bad)

    def cross_edges(self, siblings):
        """Direct imports between the sibling subpackages (each must be independent of the others)."""

        def owner(name):
            return next((s for s in siblings if name == s or name.startswith(s + ".")), None)

        return sorted(
            (m, t) for m, ts in self.edges.items() for t in ts if owner(m) and owner(t) and owner(m) != owner(t)
        )


@pytest.fixture(scope="module")
def graph():
    return ImportGraph(ROOT, PACKAGES)


def test_graph_sees_the_packages(graph):
    assert {m.split(".")[0] for m in graph.modules} == set(PACKAGES)
    assert "cutplane.engine" in graph.modules and graph.edges["cutplane.engine"]


def test_no_import_cycle(graph):
    cycles = graph.cycles()
    assert not cycles, "import cycles among modules:\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_no_private_name_imported_from_another_module(graph):
    private = sorted(set(graph.private))
    assert not private, "private names imported across modules:\n" + "\n".join(
        f"{m} imports {name} from {src}" for m, src, name in private
    )


def test_layers_point_one_way(graph):
    assert graph.upward_edges(LAYERS) == []


def test_task_subpackages_do_not_import_each_other(graph):
    assert graph.cross_edges(TASKS) == []


def test_import_contracts_cover_the_tree():
    """The import-linter contracts of pyproject.toml name modules that exist, every task subpackage,
    and every module of the shared layer of ``problems`` (a new one must be added to the contract)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    contracts = {c["id"]: c for c in config["contracts"]}
    assert set(config["root_packages"]) == set(PACKAGES)
    assert contracts["layers"]["layers"] == list(LAYERS)
    assert sorted(contracts["tasks-independent"]["modules"]) == sorted(TASKS)
    top = {
        p.stem if p.is_file() else p.name
        for p in (ROOT / "problems").iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    shared = {f"problems.{name}" for name in top} - set(TASKS) - {"problems.cli"}
    assert sorted(contracts["shared-below-tasks"]["source_modules"]) == sorted(shared)
    assert sorted(contracts["shared-below-tasks"]["forbidden_modules"]) == sorted([*TASKS, "problems.cli"])


# ------------------------------------------------------------------ the checker finds violations
def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_checker_finds_planted_violations(tmp_path):
    _write(
        tmp_path,
        {
            "pkga/__init__.py": "from pkga._impl import public_thing\n",  # fine: the package re-exports
            "pkga/_impl.py": "def public_thing():\n    return 1\n\n\ndef _helper():\n    return 2\n",
            "pkga/one.py": "from pkga.two import f\n",
            "pkga/two.py": "def f():\n    from pkga import one\n    return one\n",  # a lazy import closes a cycle
            "pkga/three.py": "from ._impl import _helper\n",  # a private name, relative import
            "pkga/four.py": "import pkga._impl as impl\n\nx = impl._helper()\n",  # a private name by attribute
            "pkga/seven.py": "import pkga._impl\n\nz = pkga._impl._helper\n",  # ... through the package's name
            "pkga/five.py": "from pkga import _impl\nfrom typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkga import six\ny = _impl.public_thing()\n",
            "pkga/six.py": "from pkga.five import y\n",  # no cycle: five imports six for annotations only
            "pkgb/__init__.py": "",
            "pkgb/low.py": "from pkga.one import f\n",  # pkgb is the lower layer: an upward edge
            "pkga/task1/__init__.py": "",
            "pkga/task1/m.py": "from pkga.task2.m import g\n",
            "pkga/task2/__init__.py": "",
            "pkga/task2/m.py": "def g():\n    return 0\n",
        },
    )
    g = ImportGraph(tmp_path, ("pkga", "pkgb"))
    assert g.cycles() == [["pkga.one", "pkga.two"]]
    assert sorted(set(g.private)) == [
        ("pkga.four", "pkga._impl", "_helper"),
        ("pkga.seven", "pkga._impl", "_helper"),
        ("pkga.three", "pkga._impl", "_helper"),
    ]
    assert g.upward_edges(("pkga", "pkgb")) == [("pkgb.low", "pkga.one")]
    assert g.cross_edges(("pkga.task1", "pkga.task2")) == [("pkga.task1.m", "pkga.task2.m")]


def test_checker_accepts_a_clean_package(tmp_path):
    _write(
        tmp_path,
        {
            "pkga/__init__.py": "from pkga._impl import public_thing\n__all__ = ['public_thing']\n",
            "pkga/_impl.py": "def public_thing():\n    return _local()\n\n\ndef _local():\n    return 1\n",
            "pkga/user.py": "import pkga._impl\nfrom pkga import _impl\n\n"
            "x = _impl.public_thing() + pkga._impl.__name__.count('.')\n",
        },
    )
    g = ImportGraph(tmp_path, ("pkga",))
    assert g.cycles() == [] and g.private == []


# ------------------------------------------------------------- commands named by the docs exist
COMMAND = re.compile(r"python3? -m ([A-Za-z_][\w.]*)|python3? ((?:[\w.-]+/)*[\w.-]+\.py)\b")
SCRIPT_PATH = re.compile(r"`+((?:examples|benchmarks)/[\w/.-]+\.py)`+")


def missing_commands(text, root=ROOT):
    """The ``python -m`` modules and the script paths named in ``text`` that do not exist."""
    missing = []
    for m in COMMAND.finditer(text):
        module, path = m.groups()
        if module is not None:
            if module.split(".")[0] in ("pytest", "pip", "sphinx", "venv", "cProfile", "build"):
                continue
            module = module.rstrip(".")  # ``python -m benchmarks.reproductions.<name>``: the package must exist
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:
                found = False
            if not found:
                missing.append(f"python -m {module}")
        elif not (root / path).is_file():
            missing.append(f"python {path}")
    missing += [f"`{p}`" for p in SCRIPT_PATH.findall(text) if not (root / p).is_file()]
    return missing


def _doc_pages():
    pages = sorted((ROOT / "docs").rglob("*.md")) + sorted((ROOT / "docs").rglob("*.rst"))
    return [p for p in pages if "_build" not in p.parts] + [ROOT / "README.md"]


def test_results_pages_exist():
    assert sorted((ROOT / "docs" / "results").glob("*.md"))


@pytest.mark.parametrize("page", _doc_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_name_commands_that_exist(page):
    assert missing_commands(page.read_text(encoding="utf-8")) == []


def test_command_check_finds_a_missing_command():
    text = (
        "Produced by `python -m benchmarks.reproductions.no_such_script --C 1` and "
        "`python examples/no_such_example.py`; written by `benchmarks/no_such_benchmark.py`. "
        "Fine: `python -m benchmarks.reproductions.conll2000_chunking --C 1`, `python -m pytest -q`, "
        "`python examples/teach_kelley_1d.py --out OUT`, `python -m benchmarks.reproductions.<name>`; "
        "not: `python -m benchmarks.no_such_package.<name>`."
    )
    assert missing_commands(text) == [
        "python -m benchmarks.reproductions.no_such_script",
        "python examples/no_such_example.py",
        "python -m benchmarks.no_such_package",
        "`benchmarks/no_such_benchmark.py`",
    ]


# -------------------------------------------------------------------------- one version string
def test_version_is_written_once():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "cutplane.__version__"}
    init = ast.parse((ROOT / "cutplane" / "__init__.py").read_text(encoding="utf-8"))
    versions = [
        n.value.value
        for n in init.body
        if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "__version__" for t in n.targets)
    ]
    assert len(versions) == 1 and re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", versions[0])
    import cutplane

    assert cutplane.__version__ == versions[0]
