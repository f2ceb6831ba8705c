"""The plain command's peak memory and the C allocator's settings (issue 38).

``cutplane train`` sets glibc to one malloc arena and a fixed mmap threshold for its process
(:mod:`problems.cli.allocator`). This script runs the plain command on CoNLL-2000 (CRF++
chunking templates, every default) as child processes, the arms alternating: ``tuned`` (what a
user gets), ``per-thread arenas`` (``MALLOC_ARENA_MAX=8`` in the child's environment, which the
command leaves alone: glibc's own cap on a 2-core machine is 16; the threshold still fixed),
``glibc defaults`` (``CUTPLANE_MALLOC=glibc``: neither setting, as in a program that imports
the library) and ``pandas imported`` (``CUTPLANE_DEFER_IMPORTS=no``: the allocator tuned,
pandas imported with scikit-learn instead of deferred). Per run it records the wall and CPU
seconds, the peak resident set (``ru_maxrss``), the chosen C, its status and iterations.
Writes ``docs/results/plain_memory.md`` (and ``--json``).

Run: ``python -m benchmarks.plain_memory [--repeats 1] [--train FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from benchmarks._run_record import load_average, run_meta, write_page
from benchmarks.default_models import run_child

ROOT = Path(__file__).resolve().parent.parent
ARMS = {
    "tuned": {},
    "per-thread arenas": {"MALLOC_ARENA_MAX": "8"},
    "glibc defaults": {"CUTPLANE_MALLOC": "glibc"},
    "pandas imported": {"CUTPLANE_DEFER_IMPORTS": "no"},
}


def run_arm(name: str, train: Path, work: Path, rep: int) -> dict:
    """One plain command in a child process with the arm's environment: its record."""
    tag = f"{name.replace(' ', '_')}.{rep}"
    model, report = work / f"{tag}.npz", work / f"{tag}.report.json"
    cmd = [sys.executable, "-m", "problems.cli", "train", "--task", "sequence", "--templates", "chunking"]
    cmd += ["--train", str(train), "--model", str(model), "--report", str(report)]
    env_before = dict(os.environ)
    os.environ.update(ARMS[name])
    try:
        child = run_child(cmd, work / tag)
    finally:
        os.environ.clear()
        os.environ.update(env_before)
    rec = dict(arm=name, repeat=rep, wall_s=child["wall_s"], cpu_s=child["cpu_s"], max_rss_mb=child["max_rss_mb"])
    rec["returncode"] = child["returncode"]
    if child["returncode"] == 0:
        rep_json = json.loads(report.read_text())
        rec.update(
            C=rep_json.get("C"),
            status=rep_json.get("status"),
            iterations=rep_json.get("iterations"),
            peak_working_set_mb=rep_json.get("peak_working_set_bytes", 0) / 2**20,
        )
    else:
        rec["error"] = " | ".join(child["stderr_tail"])
    return rec


def render(meta: dict, records: list) -> str:
    lines = [
        "# The plain command's peak memory: the C allocator's settings and the deferred pandas import",
        "",
        f"Command: `{meta['command']}` on {meta['date']}; {meta['machine']}; load average before "
        f"{meta['load_before']}, after {meta['load_after']}. Training file `{meta['train']}`.",
        "",
        "Each run is `cutplane train --task sequence --templates chunking --train train.txt.gz` in a child "
        "process, every default (the path over C, the refit); the arms alternate. `tuned` is what the "
        "command does (`problems.cli.allocator`: one malloc arena, a fixed mmap threshold); `per-thread arenas` "
        "sets `MALLOC_ARENA_MAX=8` for the child (the threshold still fixed); `glibc defaults` sets "
        "`CUTPLANE_MALLOC=glibc` (neither setting, as in a program that imports the library); `pandas imported` "
        "sets `CUTPLANE_DEFER_IMPORTS=no` (pandas imported with scikit-learn, not deferred).",
        "",
        "| arm | repeat | wall s | CPU s | peak RSS MB | working set peak MB | chosen C | status | iterations |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        if r["returncode"] != 0:
            lines.append(f"| {r['arm']} | {r['repeat']} | failed: {r.get('error', '')} | | | | | | |")
            continue
        lines.append(
            f"| {r['arm']} | {r['repeat']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['max_rss_mb']:.0f} | "
            f"{r['peak_working_set_mb']:.0f} | {r['C']:g} | {r['status']} | {r['iterations']} |"
        )
    ok = [r for r in records if r["returncode"] == 0]
    lines.append("")
    for name in ARMS:
        mine = [r for r in ok if r["arm"] == name]
        if mine:
            mean = {k: sum(r[k] for r in mine) / len(mine) for k in ("wall_s", "max_rss_mb")}
            lines.append(
                f"- {name}: mean wall {mean['wall_s']:.1f} s, mean peak RSS {mean['max_rss_mb']:.0f} MB ({len(mine)} runs)"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    from problems.datasets import dataset_path

    ap = argparse.ArgumentParser(prog="python -m benchmarks.plain_memory", description=__doc__)
    ap.add_argument("--train", default=None, help="training file (default: CoNLL-2000's train.txt.gz)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--work", default="/tmp/cutplane_plain_memory")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "plain_memory.md"))
    ap.add_argument("--json", default=str(ROOT / "docs" / "results" / "plain_memory.json"))
    args = ap.parse_args(argv)
    train = Path(args.train) if args.train else dataset_path("conll2000-chunking", "train.txt.gz")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    load_before = load_average()
    records = [run_arm(name, train, work, rep) for rep in range(args.repeats) for name in ARMS]
    meta = run_meta("python -m benchmarks.plain_memory", argv, load_before, train=train.name)
    write_page(render(meta, records), args.out, args.json, meta, records)
    return 0 if all(r["returncode"] == 0 for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
