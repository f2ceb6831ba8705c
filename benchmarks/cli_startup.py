"""Start-up of the ``cutplane`` command (issue 39): wall time of whole subprocesses, best of N.

Each command runs as the user runs it, ``python -m problems.cli ...`` in a fresh interpreter, so
the time is the interpreter's start, the imports and the work:

- ``python -c pass``: the interpreter alone (the floor);
- ``cutplane --version`` and ``cutplane --help`` (target: <= 0.5 s);
- ``cutplane train --help``;
- ``cutplane train --task binary --train absent.svm --model DIR``: a model path that cannot be
  written, refused before any data is read (target: well under 1 s);
- ``cutplane evaluate`` of a small sequence model on 100 sentences (target: <= 1.5 s).

The model is trained once by this tree's ``cutplane train`` on a synthetic tagging task
(:func:`problems.synthetic.make_tagging_task`), in a temporary folder. ``--source DIR`` times the
same commands on another checkout too (its ``cutplane``, ``oracles`` and ``problems`` first on
``PYTHONPATH``; e.g. ``git archive <commit> cutplane oracles problems | tar -x -C DIR``), as a
column of its own: before / after on the same machine, interleaved command by command. The load
average is printed with the table: the machine is shared, and best-of-N is the figure least
disturbed by the other processes.

Usage::

    python -m benchmarks.cli_startup [--repeat 5] [--source DIR [--source-label before]] [--no-write]

writes ``docs/results/cli_startup.md`` unless ``--no-write``; ``--quick`` runs each command once
(the test of this script).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results" / "cli_startup.md"

#: (name, argv after ``python``, target in seconds or None).
COMMANDS = (
    ("python -c pass", ["-c", "pass"], None),
    ("cutplane --version", ["-m", "problems.cli", "--version"], 0.5),
    ("cutplane --help", ["-m", "problems.cli", "--help"], 0.5),
    ("cutplane train --help", ["-m", "problems.cli", "train", "--help"], None),
    (
        "cutplane train --model DIR (refused)",
        ["-m", "problems.cli", "train", "--task", "binary", "--train", "absent.svm", "--model", "adir"],
        1.0,
    ),
    (
        "cutplane evaluate, 100 sentences",
        ["-m", "problems.cli", "evaluate", "--model", "seq.npz", "--test", "test.txt"],
        1.5,
    ),
)
#: Exit statuses each command is expected to end with (the refused model path: 2).
EXPECTED_STATUS = {"cutplane train --model DIR (refused)": 2}


def _env(source: Path | None) -> dict:
    env = dict(os.environ)
    path = str(source if source is not None else ROOT)
    env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "") if env.get("PYTHONPATH") else path
    return env


def prepare(folder: Path) -> None:
    """A small sequence model (``seq.npz``) and 100 labelled test sentences (``test.txt``) in
    ``folder``, trained by this tree's ``cutplane train``; ``adir``, a folder."""
    from problems.io.conll import write_columns
    from problems.synthetic import make_tagging_task

    task = make_tagging_task(
        n_train=200, n_test=100, length=10, n_labels=4, n_informative=3, n_noise=3, signal=0.5, seed=1
    )
    write_columns(folder / "train.txt", task.X_train, task.y_train)
    write_columns(folder / "test.txt", task.X_test, task.y_test)
    (folder / "t.tpl").write_text(task.templates)
    (folder / "adir").mkdir()
    argv = ["-m", "problems.cli", "train", "--task", "sequence", "--train", "train.txt", "--templates", "t.tpl"]
    argv += ["--C", "10", "--max-iter", "60", "--allow-uncertified", "--quiet", "--model", "seq.npz"]
    proc = subprocess.run([sys.executable, *argv], cwd=folder, env=_env(None), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"training the benchmark's model failed: {proc.stderr}")


def run_once(argv, folder: Path, env: dict) -> tuple[float, int, str]:
    """Wall seconds of one subprocess, its exit status and its stderr."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *argv], cwd=folder, env=env, capture_output=True, text=True)
    return time.perf_counter() - t0, proc.returncode, proc.stderr


def measure(folder: Path, sources: dict, repeat: int) -> dict:
    """``{command name: {source label: best seconds}}``; the sources run interleaved, command by
    command and round by round. Raises when a command ends with an unexpected status."""
    best: dict = {name: dict.fromkeys(sources, float("inf")) for name, _, _ in COMMANDS}
    envs = {label: _env(src) for label, src in sources.items()}
    for name, argv, _ in COMMANDS:
        for _ in range(max(1, repeat)):
            for label in sources:
                seconds, status, err = run_once(argv, folder, envs[label])
                if status != EXPECTED_STATUS.get(name, 0):
                    raise RuntimeError(f"{name} ({label}) exited with {status}: {err[-500:]}")
                best[name][label] = min(best[name][label], seconds)
    return best


def page(best: dict, labels: list, repeat: int) -> str:
    """The results page (markdown)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    head = "| command | target (s) | " + " | ".join(f"{lab} (s)" for lab in labels) + " |"
    rule = "|---|---:|" + "---:|" * len(labels)
    rows = []
    for name, _, target in COMMANDS:
        cells = " | ".join(f"{best[name][lab]:.3f}" for lab in labels)
        rows.append(f"| {name} | {'-' if target is None else f'<= {target:g}'} | {cells} |")
    return "\n".join(
        [
            "# Start-up of the `cutplane` command",
            "",
            "Written by `python -m benchmarks.cli_startup` (issue 39): wall time of whole subprocesses "
            f"(`python -m problems.cli ...`), best of {repeat}, on {os.cpu_count()} cores shared with other "
            f"processes (load average {load:.2f} at the end of the run). `python -c pass` is the interpreter "
            "alone. The evaluate row labels 100 sentences of a small synthetic tagging task with a model "
            "trained by this tree.",
            "",
            head,
            rule,
            *rows,
            "",
        ]
    )


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each command; the best is kept (default 5)")
    ap.add_argument("--quick", action="store_true", help="each command once, nothing written (the test)")
    ap.add_argument("--source", type=Path, help="another checkout to time beside this tree")
    ap.add_argument("--source-label", default="before", help="its column's name (default 'before')")
    ap.add_argument("--no-write", action="store_true", help="print the page, do not write it")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"the page (default {RESULTS.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    repeat = 1 if args.quick else args.repeat
    sources: dict = {}
    if args.source is not None:
        sources[args.source_label] = args.source.resolve()
    sources["this tree"] = None
    with tempfile.TemporaryDirectory(prefix="cli_startup.") as tmp:
        folder = Path(tmp)
        prepare(folder)
        best = measure(folder, sources, repeat)
    text = page(best, list(sources), repeat)
    sys.stdout.write(text)
    if not (args.quick or args.no_write):
        args.out.write_text(text)
    return best


if __name__ == "__main__":
    main()
