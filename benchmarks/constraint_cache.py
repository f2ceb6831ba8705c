"""The engine's constraint cache (``cache_steps``) against plain BMRM, on CoNLL-2000 chunking (issue 22).

For each regulariser (``ssvm``: ``L2``; ``mtl``: ``MixedNorm`` with ``p = 1`` over the templates),
each ``C`` of ``--C`` and each ``k`` of ``--cache-steps``, one cold :func:`cutplane.minimize` on the
1-slack oracle of ``SequenceTagger`` (CRF++ chunking templates, no feature cutoff, serial executor
unless ``--executor``), its output cache emptied before every run
(:meth:`oracles.sequence.SequenceHingeOracle.clear_cache`). ``k = 0`` is plain BMRM; with
``k > 0`` each exact oracle call is followed by up to ``k`` cuts built from the oracle's cached
outputs while they are violated by more than ``eps`` (the 1-slack solver's constraint cache).

Every run is checked against the ``k = 0`` run at the same ``C``: both objectives within the sum
of the two certified tolerances and each lower bound at most the other's objective (column
"agrees"). The page reports, per run, exact oracle calls, cached cuts, seconds in total, in the
oracle, in reduced solves and building cached cuts, and the time ratio to ``k = 0``.

The page ``--out`` (default ``docs/results/constraint_cache.md``) is written by the script, its
command at the top; ``--json`` keeps the rows and ``--render JSON`` rewrites the page from them.
``--data synthetic`` runs on a generated tagging task, for the test that keeps the script working.

Usage
-----
``python -m benchmarks.constraint_cache --max-sentences 1000 --C 100 1000 10000 --cache-steps 0 2 5``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import cutplane
from cutplane import minimize
from cutplane.exceptions import ConvergenceWarning

ROOT = Path(__file__).resolve().parent.parent


def run(args):
    from benchmarks.c_path import build_task, make_regularizer

    oracle, groups, n_groups, described = build_task(args)
    if args.executor != "serial":
        from cutplane.executors import get_executor

        oracle.executor = get_executor(args.executor, args.workers)
        oracle.clear_cache()
    rows = []
    for name in args.regularizers:
        reg = make_regularizer(name, groups, n_groups)
        for C in args.C:
            for k in args.cache_steps:
                oracle.clear_cache()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    res = minimize(
                        oracle,
                        reg,
                        1.0 / C,
                        eps=args.eps_engine,
                        rtol=args.rtol,
                        max_iter=args.max_iter,
                        time_limit=args.time_limit,
                        cache_steps=k,
                    )
                rows.append(
                    dict(
                        regularizer=name,
                        C=float(C),
                        cache_steps=int(k),
                        status=res.status,
                        n_iter=int(res.n_iter),
                        n_cached_cuts=int(res.n_cached_cuts),
                        seconds=float(res.time_s),
                        cpu_seconds=float(res.history.cpu_time[-1]) if res.n_iter else 0.0,
                        oracle_s=float(res.oracle_time_s),
                        solver_s=float(res.solver_time_s),
                        cache_s=float(res.cache_time_s),
                        objective_F=float(C * res.objective),
                        lower_F=float(C * res.lower_bound),
                        tolerance_F=float(C * res.tolerance),
                    )
                )
                print(
                    f"{name} C={C:g} k={k}: {res.status} {res.n_iter} calls + {res.n_cached_cuts} cached, "
                    f"{res.time_s:.1f} s",
                    flush=True,
                )
    oracle.executor.close()
    return rows, described


def _s(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def _agrees(r, base):
    slack = 1e-9 * max(1.0, abs(base["objective_F"]))
    close = abs(r["objective_F"] - base["objective_F"]) <= r["tolerance_F"] + base["tolerance_F"] + slack
    bounds = r["lower_F"] <= base["objective_F"] + slack and base["lower_F"] <= r["objective_F"] + slack
    return close and bounds and r["status"] == base["status"] == "converged"


def render(rows, meta):
    """The markdown page of the rows."""
    out = [
        "# The constraint cache against plain BMRM (issue 22)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/constraint_cache.py` (never by hand) on {meta['date']}; {meta['machine']}; "
        f"cutplane {meta['version']}; load average before the run {meta.get('load_before')}, after "
        f"{meta.get('load_after')}.",
        "",
        f"Data: {meta['data']}. Engine: BMRM, `lam = 1/C`, {meta['gap']}, `max_iter` {meta['max_iter']}, "
        f"time limit {meta['time_limit']} s per run, executor {meta['executor']}. `k` = `cache_steps`: cuts "
        "from the oracle's cache of recent outputs after each exact oracle call, while violated by more than "
        "eps (k = 0: plain BMRM). Objectives and bounds on the scale of F; seconds are wall seconds of the "
        "engine (oracle, reduced solves, cached cuts, and the rest: working-set updates).",
        "",
    ]
    for name in dict.fromkeys(r["regularizer"] for r in rows):
        out += [f"## {name}", ""]
        out += [
            "| C | k | status | exact calls | cached cuts | s | oracle s | reduced s | cache s | F | lower bound "
            "| agrees with k = 0 | time / k = 0 |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        rs = [r for r in rows if r["regularizer"] == name]
        for C in dict.fromkeys(r["C"] for r in rs):
            base = next((r for r in rs if r["C"] == C and r["cache_steps"] == 0), None)
            for r in (r for r in rs if r["C"] == C):
                agrees = "-" if base is None or r is base else ("yes" if _agrees(r, base) else "NO")
                ratio = "-" if base is None else f"{r['seconds'] / base['seconds']:.2f}"
                out.append(
                    f"| {C:g} | {r['cache_steps']} | {r['status']} | {r['n_iter']} | {r['n_cached_cuts']} | "
                    f"{_s(r['seconds'])} | {_s(r['oracle_s'])} | {_s(r['solver_s'])} | {_s(r['cache_s'])} | "
                    f"{r['objective_F']:.6g} | {r['lower_F']:.6g} | {agrees} | {ratio} |"
                )
        out += ["", *_summary(rs), ""]
    return "\n".join(out)


def _summary(rs):
    """One line per k > 0: at which C it was faster than k = 0, and by how much (time ratios)."""
    lines = []
    for k in sorted({r["cache_steps"] for r in rs} - {0}):
        faster, slower = [], []
        for r in (r for r in rs if r["cache_steps"] == k):
            base = next((b for b in rs if b["C"] == r["C"] and b["cache_steps"] == 0), None)
            if base is None or r["status"] != "converged" or base["status"] != "converged":
                continue
            ratio = r["seconds"] / base["seconds"]
            (faster if ratio < 1 else slower).append(f"C = {r['C']:g} ({ratio:.2f})")
        lines.append(
            f"k = {k}: faster than plain BMRM at {', '.join(faster) or 'no C'}; "
            f"slower or equal at {', '.join(slower) or 'no C'} (time / time of k = 0)."
        )
    return lines


def main(argv=None):
    from benchmarks.c_path import add_data_arguments

    ap = argparse.ArgumentParser(prog="python -m benchmarks.constraint_cache", description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--C", type=float, nargs="+", default=[100.0, 1000.0, 10000.0])
    ap.add_argument("--cache-steps", type=int, nargs="+", default=[0, 2, 5], dest="cache_steps")
    ap.add_argument("--eps-engine", type=float, default=0.01, help="certified gap on the engine's scale F / C")
    ap.add_argument("--rtol", type=float, default=None, help="also a relative gap (cutplane.minimize's rtol)")
    ap.add_argument("--regularizers", nargs="+", choices=("ssvm", "mtl"), default=["ssvm", "mtl"])
    ap.add_argument("--max-iter", type=int, default=5000)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per run")
    ap.add_argument("--executor", default="serial", help="oracle executor (default serial)")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "constraint_cache.md"))
    ap.add_argument("--json", default=None, help="also write the rows as JSON")
    ap.add_argument("--no-write", action="store_true", help="print the page instead of writing it")
    ap.add_argument("--render", default=None, help="only rewrite the page --out from this script's --json file")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        Path(args.out).write_text(render(saved["rows"], saved["meta"]) + "\n")
        return 0
    if any(c <= 0 for c in args.C) or any(k < 0 for k in args.cache_steps):
        ap.error("--C must be positive and --cache-steps >= 0")
    load_before = [round(v, 2) for v in os.getloadavg()]
    rows, described = run(args)
    meta = dict(
        command="python -m benchmarks.constraint_cache " + " ".join(sys.argv[1:] if argv is None else argv),
        date=time.strftime("%Y-%m-%d"),
        machine=f"{platform.machine()}, {platform.system()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        version=cutplane.__version__,
        data=described,
        gap=f"engine gap `{args.eps_engine:g}` (on F: `{args.eps_engine:g} C`)"
        + ("" if args.rtol is None else f" or a relative gap `{args.rtol:g}`, whichever is larger"),
        max_iter=args.max_iter,
        time_limit=args.time_limit,
        executor=args.executor if args.workers is None else f"{args.executor} x {args.workers}",
        load_before=load_before,
        load_after=[round(v, 2) for v in os.getloadavg()],
    )
    page = render(rows, meta)
    if args.json:
        Path(args.json).write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    if args.no_write:
        print(page)
    else:
        Path(args.out).write_text(page + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
