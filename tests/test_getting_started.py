"""The getting-started page, followed as a new user would: its commands, run as written.

Every ``$ ...`` command of ``docs/getting_started.rst`` after the demo is run in a scratch
folder, in page order, with the changes the page itself tells the reader to make on a small
machine: the ``awk`` slices of whole sentences (fewer sentences here, to keep the suite short)
used in place of the ``.gz`` files, and ``--eps 1`` added to ``cutplane train``. The checks
are those of the page's prose: the model, the report (certified), the two plots, the scores
printed and written, the predicted column; then the page's Python block on the same slices.
The install and the demo have their own tests (``tests/test_readme.py``, ``tests/problems/test_demo.py``).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "getting_started.rst"
ROOT = PAGE.parent.parent
SLICE = {"NR<=300": "NR<=40", "NR<=100": "NR<=25"}  # sentences of the train / test slices


def console_commands(text):
    """The ``$ `` commands of the page's console blocks, continuation lines joined."""
    out, cur = [], None
    for line in text.splitlines():
        s = line.strip()
        if cur is not None:
            cur += " " + s.rstrip("\\").strip()
            if not s.endswith("\\"):
                out.append(cur)
                cur = None
        elif s.startswith("$ "):
            cmd = s[2:]
            if cmd.endswith("\\"):
                cur = cmd.rstrip("\\").strip()
            else:
                out.append(cmd)
    return out


def python_block(text):
    """The page's ``.. code-block:: python`` body, dedented."""
    body = text.split(".. code-block:: python", 1)[1].split("\n\n", 1)[1]
    lines = []
    for line in body.splitlines():
        if line and not line.startswith("   "):
            break
        lines.append(line[3:])
    return "\n".join(lines).strip() + "\n"


def _run(cmd, cwd, env):
    cli = shutil.which("cutplane")
    argv = ["bash", "-c", cmd]
    if cmd.startswith("cutplane ") and cli is None:  # not pip-installed: the same program as a module
        argv = ["bash", "-c", f"{sys.executable} -m problems.cli.main {cmd[len('cutplane ') :]}"]
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_page_commands_are_the_ones_checked_here():
    cmds = console_commands(PAGE.read_text())
    heads = [" ".join(c.split()[:2]) for c in cmds]
    assert heads == [
        "pip install",
        "cutplane demo",
        "export CUTPLANE_DATA=/path/to/data",
        "DATA=$CUTPLANE_DATA/conll2000-chunking",
        "gzip -dc",
        "gzip -dc",
        "cutplane train",
        "cutplane evaluate",
        "cutplane predict",
        "cutplane train",
        "cutplane evaluate",
    ]


@pytest.mark.data
def test_a_new_user_trains_evaluates_predicts_and_plots_on_conll2000(data_dir, tmp_path):
    pytest.importorskip("matplotlib")
    text = PAGE.read_text()
    env = dict(
        os.environ,
        CUTPLANE_DATA=str(data_dir),
        DATA=str(data_dir / "conll2000-chunking"),
        MPLBACKEND="Agg",
        PYTHONPATH=str(ROOT),
    )
    cmds = [c for c in console_commands(text) if c.startswith(("gzip", "cutplane")) and c != "cutplane demo"]
    outputs = {}
    for cmd in cmds:
        for a, b in SLICE.items():
            cmd = cmd.replace(a, b)
        if cmd.startswith("cutplane "):
            cmd = cmd.replace("$DATA/train.txt.gz", "train_small.txt").replace("$DATA/test.txt.gz", "test_small.txt")
            if cmd.startswith("cutplane train"):
                cmd += " --eps 1"
        outputs[cmd] = _run(cmd, tmp_path, env)

    # the slices: whole sentences, the sizes asked for
    for name, n in (("train_small.txt", 40), ("test_small.txt", 25)):
        sentences = [s for s in (tmp_path / name).read_text().split("\n\n") if s.strip()]
        assert len(sentences) == n and all(len(tok.split()) == 3 for s in sentences for tok in s.splitlines())

    # 1. train: the model, a certified report, the two plots
    for model, report, plots in (("m.npz", "r.json", "out"), ("ssvm.npz", "ssvm.json", "out_ssvm")):
        assert (tmp_path / model).stat().st_size > 0
        r = json.loads((tmp_path / report).read_text())
        assert r["status"] == "converged" and r["gap"] <= 1.0 and r["lower_bound"] <= r["objective"]
        for png in ("template_weights.png", "bounds.png"):
            assert (tmp_path / plots / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    mtl = json.loads((tmp_path / "r.json").read_text())
    assert set(mtl["active_templates"]) <= set(mtl["template_weights"])

    # 2. evaluate: P/R/F1 printed and written, the same numbers
    ev = json.loads((tmp_path / "eval.json").read_text())
    printed = next(v for k, v in outputs.items() if k.startswith("cutplane evaluate --model m.npz"))
    first, *per_type = printed.splitlines()  # the overall scores, then one line per chunk type
    shown = dict(zip(first.split()[::2], map(float, first.split()[1::2])))
    assert {"precision", "recall", "f1", "accuracy"} <= set(shown), printed
    assert [line.split()[1] for line in per_type] == list(ev["per_type"]) and "NP" in ev["per_type"]
    for line in per_type:
        typed = dict(zip(line.split()[2::2], map(float, line.split()[3::2])))
        assert typed["f1"] == pytest.approx(ev["per_type"][line.split()[1]]["f1"], abs=1e-4)
    for key in ("precision", "recall", "f1", "accuracy"):
        assert 0.0 <= ev[key] <= 100.0 and shown[key] == pytest.approx(ev[key], abs=1e-4)
    p, r = ev["precision"], ev["recall"]
    assert ev["f1"] == pytest.approx(2 * p * r / (p + r), rel=1e-9)

    # 3. predict: the input columns plus the predicted tag, sentence by sentence
    test_lines = (tmp_path / "test_small.txt").read_text().strip().splitlines()
    pred_lines = (tmp_path / "pred.txt").read_text().strip().splitlines()
    assert len(pred_lines) == len(test_lines)
    for t, p in zip(test_lines, pred_lines):
        assert (t.strip() == "") == (p.strip() == "")
        if t.strip():
            assert p.split()[:3] == t.split() and len(p.split()) == 4

    # the page's Python block on the same slices
    scope = {}
    code = python_block(text)
    assert 'read_conll("train_small.txt")' in code
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        exec(compile(code, str(PAGE), "exec"), scope)  # noqa: S102 - our own documentation
    finally:
        os.chdir(cwd)
    assert scope["tagger"].gap_ <= 1.0
