"""The README's set-up commands and its code example stay true."""

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_has_exactly_the_two_setup_commands():
    text = README.read_text()
    setup = text.split("## Set-up", 1)[1].split("\n## ", 1)[0]
    commands = [ln.strip() for ln in setup.splitlines() if ln.startswith("    ")]
    assert commands == ["pip install -e . && cutplane demo", 'pip install -e ".[test]" && python -m pytest']


def test_readme_python_example_runs_and_certifies():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README lost its code example"
    scope = {}
    exec(compile(blocks[0], str(README), "exec"), scope)  # noqa: S102 - our own README
    res = scope["res"]
    assert res.status == "converged" and res.gap <= 1e-6
    assert res.lower_bound <= res.objective
