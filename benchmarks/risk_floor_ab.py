"""A/B of the cut ``R(w) >= 0`` in BMRM with the L2 regulariser (the 1-slack SSVM), on NER and CWS.

The engine adds an oracle's floor ``R >= 0`` as a cut only for regularisers whose ``risk_floor_cut``
is True; ``L2`` says False since session 6 (the cut slowed BMRM on Chinese word segmentation), while
on Spanish NER the cut helped a lot. This script runs, per task and C, ``minimize(oracle, L2(), 1/C)``
twice on the same oracle object, without (the L2 default) and with ``risk_lower_bound=0.0``, to the
certified gap ``eps x C`` on the scale of ``F = 1/2 ||w||^2 + C R`` (engine eps ``eps``, as the
estimators pass ``eps / C``), or until ``--max-iter`` / ``--time-limit`` per fit.

Tasks
-----
ner
    The first ``--n-sentences`` sentences of CoNLL-2002 ``esp.train``, the 134 templates,
    features seen at least ``--min-count`` times (default 2).
cws-pku, cws-cityu
    SIGHAN 2005 gold file split 80/20 by sentence with ``--seed`` (``benchmarks/reproductions/cws_segmentation.py``:
    ``load_corpus``, ``split_sentences``, ``to_tagged``), tags BIE, templates TP1, the 80% part,
    ``--min-count`` (default 1, the CWS page's setting).

Records per fit
---------------
Status, iterations, wall / oracle / reduced-solver seconds, final best upper bound, lower bound and
gap (scale of F), the bounds at iterations 50, 100, ..., 1600, and the dual weight of the zero cut
(its share of ``sum(alpha)``, read from each reduced solution by a wrapper of the reduced solver made
here; the library is not changed), including the iteration at which pruning dropped it.
``--prune-after`` defaults to 10, the value of ``benchmarks/reproductions/sequence_experiment.py`` with which the CWS
page (the session-6 evidence) and the NER pages were produced; the estimators' default is 50.
Executor "serial" (one core for the oracle). Rows are merged into ``--out``'s JSON (same task, seed,
size, C, cut and prune_after replaced) and the page is rewritten after every fit.

Arms (``--arms``, default ``no-cut cut``): ``no-cut`` (the L2 default), ``cut``
(``risk_lower_bound=0.0``), and hybrids that start with the cut and drop it from the working set
before a reduced solve: ``hybrid:iter:K`` at solve K; ``hybrid:A`` at the first solve where the
reduced problem without it (its offsets and Gram block, same backends) has a dual value >= 0;
``hybrid:share:x`` once its dual share fell below x. Dropping a valid cut only lowers the reduced
value; the engine keeps the running maximum of the certified lower bounds.

Usage
-----
``python -m benchmarks.risk_floor_ab --task cws-pku --C 1000 100 --max-iter 3000 --time-limit 600``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import cutplane
from cutplane import minimize
from cutplane.reduced.registry import make_reduced_solver
from cutplane.regularizers import L2

ROOT = Path(__file__).resolve().parent.parent

MARKS = (50, 100, 200, 400, 800, 1600)
KEY = ("task", "seed", "n_sentences", "C", "cut", "prune_after", "arm")


def _arm(r):
    return r.get("arm") or ("cut" if r["cut"] else "no-cut")


def _key(r):
    return tuple(_arm(r) if k == "arm" else r[k] for k in KEY)


def build_oracle(args):
    """The 1-slack oracle of the task (executor "serial") and a description of its data."""
    from problems import SequenceTagger
    from problems.solvers import CuttingPlane

    if args.task == "ner":
        from problems.datasets import dataset_path
        from problems.io.conll import read_conll
        from problems.sequence.template_sets import NER134

        data = read_conll(dataset_path("conll2002-ner-es", "esp.train.gz"))
        X, y, templates = data.inputs[: args.n_sentences], data.labels[: args.n_sentences], NER134
        desc = f"first {len(X)} sentences of esp.train, 134 templates, min_count {args.min_count}"
    else:
        from benchmarks.reproductions.cws_segmentation import load_corpus, split_sentences, to_tagged
        from problems.sequence.template_sets import TP1

        split = split_sentences(load_corpus(args.task[4:]), args.seed, 0.8)
        (X, y), templates = to_tagged(split.train, "BIE"), TP1
        desc = f"seed {args.seed} 80% part ({len(X)} sentences), BIE, TP1, min_count {args.min_count}"
    oracle = SequenceTagger(templates, min_count=args.min_count, solver=CuttingPlane(executor="serial")).make_oracle(
        X, y
    )
    return oracle, len(X), f"{desc}; dim {oracle.dim}"


class FloorTrace:
    """Wraps a reduced solver: after each solve, the zero cut's share of the duals (None once gone)."""

    def __init__(self, inner, floor):
        self.inner, self.floor, self.share = inner, floor, []

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def solve(self, ws, lam, warm_start=None):
        sol = self.inner.solve(ws, lam, warm_start=warm_start)
        if self.floor is not None:
            idx = np.flatnonzero(np.asarray(ws.offsets) == self.floor)
            if idx.size > 1:  # an oracle cut with offset exactly 0: keep the zero-slope one
                idx = idx[np.diag(ws.gram())[idx] == 0.0]
            a = np.asarray(sol.alpha, dtype=float)
            self.share.append(float(a[idx[0]] / a.sum()) if idx.size else None)
        return sol


def _floor_index(ws, floor):
    """Index of the zero-slope cut with offset ``floor`` in the working set, or None."""
    idx = np.flatnonzero(np.asarray(ws.offsets) == floor)
    idx = idx[np.diag(ws.gram())[idx] == 0.0]  # zero slope: never an oracle cut that happens to have offset 0
    return int(idx[0]) if idx.size else None


class HybridFloor(FloorTrace):
    """FloorTrace that also drops the zero cut from the working set before a solve, by ``rule``:

    ``"A"``: at the first solve where the reduced problem without the zero cut (the other cuts'
    offsets b' and Gram block G', solved by the same backends) has dual value
    ``b'^T a' - a'^T G' a' / (2 lam) >= 0``; ``"iter:K"``: at solve K; ``"share:x"``: at the first
    solve after one where the zero cut's dual share was below x. Dropping a valid cut only lowers
    the reduced value; the engine keeps the running max of the lower bounds (bounds.update_lower).
    """

    def __init__(self, inner, floor, rule):
        super().__init__(inner, floor)
        self.rule, self.n_solves, self.removed_at, self.check_s = rule, 0, None, 0.0
        self.free_values = []  # the floor-free reduced value per solve while the zero cut is present (rule A)

    def _free_value(self, ws, f, lam, warm_start):
        t0 = time.perf_counter()
        keep = np.arange(ws.n_cuts) != f
        G, b = ws.gram()[np.ix_(keep, keep)], np.asarray(ws.offsets, dtype=float)[keep]
        warm = None
        if warm_start is not None and np.shape(warm_start) == (ws.n_cuts,):
            warm = np.asarray(warm_start)[keep]
        a = self.inner.solve_gram(G, b, float(lam), warm)[0]  # closed form for one or two cuts
        val = float(b @ a - a @ G @ a / (2.0 * lam))
        self.check_s += time.perf_counter() - t0
        return val, a, keep

    def solve(self, ws, lam, warm_start=None):
        self.n_solves += 1
        f = _floor_index(ws, self.floor) if self.removed_at is None else None
        if f is not None:
            drop, a = False, None
            if self.rule == "A":
                val, a, keep = self._free_value(ws, f, lam, warm_start)
                self.free_values.append(val)
                drop = val >= 0.0
            elif self.rule.startswith("iter:"):
                drop = self.n_solves >= int(self.rule[5:])
            elif self.rule.startswith("share:"):
                drop = bool(self.share) and self.share[-1] is not None and self.share[-1] < float(self.rule[6:])
            if drop:
                keep = np.arange(ws.n_cuts) != f
                warm = a if a is not None else (None if warm_start is None else np.asarray(warm_start)[keep])
                ws._keep(keep)  # WorkingSet's own row/Gram compaction (cutplane/working_set/limited_memory.py)
                self.removed_at = self.n_solves
                self.removed_share = self.share[-1] if self.share else None
                warm_start = warm
        return super().solve(ws, lam, warm_start=warm_start)


def fit(oracle, C, cut, args, arm=None):
    """One BMRM run; the row of the page (bounds on the scale of F = C x the engine's)."""
    reg, floor = L2(), (0.0 if cut else None)
    trace = {}
    hybrid = arm is not None and arm.startswith("hybrid:")
    wrap = (lambda s: HybridFloor(s, floor, arm[7:])) if hybrid else (lambda s: FloorTrace(s, floor))
    trace["t"] = wrap(make_reduced_solver(reg))
    load0, t0 = os.getloadavg()[0], time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = minimize(
            oracle,
            reg,
            1.0 / C,
            eps=args.eps,
            max_iter=args.max_iter,
            time_limit=args.time_limit,
            prune_after=args.prune_after,
            risk_lower_bound=floor,
            solver=trace["t"],
        )
    wall, h, share = time.perf_counter() - t0, res.history, trace["t"].share
    marks = {
        str(k): {
            "upper": C * float(h.best_upper[k - 1]),
            "lower": C * float(h.lower[k - 1]),
            "floor_share": share[k - 1] if cut else None,
        }
        for k in MARKS
        if k <= res.n_iter
    }
    gone = next((i + 1 for i, s in enumerate(share) if s is None), None) if cut else None
    return {
        "C": C,
        "cut": cut,
        "prune_after": args.prune_after,
        "eps": args.eps * C,
        "status": res.status,
        "converged": res.status == "converged",
        "iterations": int(res.n_iter),
        "wall_s": wall,
        "oracle_s": float(res.oracle_time_s),
        "solver_s": float(res.solver_time_s),
        "upper": C * res.objective,
        "lower": C * res.lower_bound,
        "gap": C * res.gap,
        "relative_gap": res.gap / max(abs(res.objective), 1e-300),
        "marks": marks,
        "floor_share_final": share[-1] if cut and share else None,
        "floor_pruned_at": gone,
        "floor_share_mean": float(np.mean([s or 0.0 for s in share])) if cut and share else None,
        "max_cuts": int(np.max(h.n_cuts)),
        "load_before": load0,
        "load_after": os.getloadavg()[0],
        "max_iter": args.max_iter,
        "time_limit": args.time_limit,
        "arm": arm or ("cut" if cut else "no-cut"),
        "floor_removed_at": trace["t"].removed_at if hybrid else None,
        "floor_share_at_removal": getattr(trace["t"], "removed_share", None) if hybrid else None,
        "free_check_s": trace["t"].check_s if hybrid else None,
        "free_values": trace["t"].free_values if hybrid else None,
        "marks_lower_free": {
            str(k): C * trace["t"].free_values[k - 1] for k in MARKS if hybrid and k <= len(trace["t"].free_values)
        },
    }


def _g(x, spec=".4g"):
    return "-" if x is None else format(x, spec)


def _cell(r, k):
    m = r["marks"].get(str(k))
    return "-" if m is None else f"{m['upper']:.4g} / {m['lower']:.4g}"


def reading(rows):
    """Computed comparisons per C: iterations and seconds when both certified, else gaps at the last common mark."""
    out = []
    for C in sorted({r["C"] for r in rows}):
        pair = {r["cut"]: r for r in rows if r["C"] == C and _arm(r) in ("cut", "no-cut")}
        if len(pair) < 2:
            continue
        a, b = pair[True], pair[False]
        head = f"- C = {C:g} (prune_after {a['prune_after']}): "
        if a["converged"] and b["converged"]:
            out.append(
                head + f"both certified; with the cut {a['iterations']} iterations / {a['wall_s']:.0f} s, "
                f"without {b['iterations']} / {b['wall_s']:.0f} s (cut / no cut: iterations "
                f"x{a['iterations'] / b['iterations']:.2f}, seconds x{a['wall_s'] / b['wall_s']:.2f})."
            )
            continue
        common = [k for k in MARKS if str(k) in a["marks"] and str(k) in b["marks"]]
        done = "; ".join(
            f"{'with' if r['cut'] else 'without'} the cut: {r['status']} after {r['iterations']} "
            f"iterations / {r['wall_s']:.0f} s, gap {r['gap']:.4g} ({r['relative_gap']:.2%})"
            for r in (a, b)
        )
        if common:
            k = common[-1]
            ga, gb = (r["marks"][str(k)]["upper"] - r["marks"][str(k)]["lower"] for r in (a, b))
            done += f"; gap at iteration {k}: {ga:.4g} with, {gb:.4g} without"
        out.append(head + done + ".")
    return out


def write_page(data, out):
    lines = [
        "# BMRM with L2 (1-slack SSVM): the cut R(w) >= 0 or not",
        "",
        "Generated by `benchmarks/risk_floor_ab.py` (see its docstring). Each pair of rows is the same oracle "
        "object run without the cut (the current L2 default, `risk_floor_cut = False`) and with "
        "`risk_lower_bound=0.0`. Bounds on the scale of F = 1/2 ||w||^2 + C R (mean loss R); certified gap "
        "eps x C; 'floor share' is the zero cut's fraction of the reduced problem's dual weight.",
        "",
    ]
    for i, run in enumerate(data["runs"], 1):
        lines.append(
            f"{i}. `{run['command']}` on {run['date']} ({run['machine']}), load average before "
            f"{run['load_before']}, after {run.get('load_after', '?')}; library {run['library']}"
        )
    for task in sorted({r["task"] for r in data["rows"]}):
        rows = sorted(
            (r for r in data["rows"] if r["task"] == task), key=lambda r: (-r["C"], r["prune_after"], _arm(r))
        )
        lines += [
            "",
            f"## {task}",
            "",
            rows[0]["data"],
            "",
            "| C | cut | prune | status | iterations | wall s (oracle s) | best upper | lower | gap (rel.) "
            "| floor share final / mean | floor pruned at | load 1-min | run |",
            "|" + "---|" * 13,
        ]
        for r in rows:
            lines.append(
                f"| {r['C']:g} | {_arm(r)} | {r['prune_after']} | {r['status']} "
                f"| {r['iterations']} | {r['wall_s']:.0f} ({r['oracle_s']:.0f}) | {r['upper']:.6g} "
                f"| {r['lower']:.6g} | {r['gap']:.4g} ({r['relative_gap']:.2%}) "
                f"| {_g(r['floor_share_final'], '.3f')} / {_g(r['floor_share_mean'], '.3f')} "
                f"| {_g(r['floor_pruned_at'], 'd')}{'' if r.get('floor_removed_at') is None else ' (removed ' + str(r['floor_removed_at']) + ')'} | {r['load_before']:.1f} -> {r['load_after']:.1f} | {r.get('run', '-')} |"
            )
        lines += [
            "",
            "Best upper / lower bound at iteration:",
            "",
            "| C | cut | prune | " + " | ".join(map(str, MARKS)) + " |",
            "|" + "---|" * (3 + len(MARKS)),
        ]
        lines += [
            f"| {r['C']:g} | {_arm(r)} | {r['prune_after']} | " + " | ".join(_cell(r, k) for k in MARKS) + " |"
            for r in rows
        ]
        shares = [r for r in rows if r["cut"]]
        lines += [
            "",
            "Floor share at iteration: "
            + "; ".join(
                f"C = {r['C']:g} (prune {r['prune_after']}): "
                + ", ".join(
                    f"{k}: {_g((r['marks'].get(str(k)) or {}).get('floor_share'), '.3f')}"
                    for k in MARKS
                    if str(k) in r["marks"]
                )
                for r in shares
            ),
            "",
            "Computed comparison:",
            "",
        ]
        for p in sorted({r["prune_after"] for r in rows}):
            lines += reading([r for r in rows if r["prune_after"] == p])
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", choices=["ner", "cws-pku", "cws-cityu"], default="ner")
    ap.add_argument("--C", type=float, nargs="+", default=[1e4])
    ap.add_argument("--eps", type=float, default=0.01, help="certified gap as a fraction of C (CWS page: 0.01)")
    ap.add_argument("--max-iter", type=int, default=3000, dest="max_iter")
    ap.add_argument("--time-limit", type=float, default=None, dest="time_limit", help="seconds per fit")
    ap.add_argument("--prune-after", type=int, default=10, dest="prune_after")
    ap.add_argument("--n-sentences", type=int, default=2000, dest="n_sentences", help="ner only")
    ap.add_argument("--seed", type=int, default=0, help="cws only: the 80/20 split")
    ap.add_argument("--min-count", type=int, default=None, dest="min_count", help="default 2 (ner), 1 (cws)")
    ap.add_argument(
        "--arms", nargs="+", default=["no-cut", "cut"], help="no-cut, cut, hybrid:A, hybrid:iter:K, hybrid:share:x"
    )
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "risk_floor_ab.md")
    args = ap.parse_args(argv)
    if args.min_count is None:
        args.min_count = 2 if args.task == "ner" else 1
    np.seterr(all="ignore")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    stamp = ROOT / ".git_commit"  # a snapshot made by `git archive` (not a checkout) names its commit here
    commit = head.stdout.strip() or (stamp.read_text().strip() if stamp.exists() else "unknown commit")
    run = {
        "command": "python -m benchmarks.risk_floor_ab " + " ".join(sys.argv[1:] if argv is None else argv),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "library": f"{Path(cutplane.__file__).parent.parent} at {commit}",
    }
    t0 = time.perf_counter()
    oracle, n, desc = build_oracle(args)
    with warnings.catch_warnings():  # compile the numba kernels before timing
        warnings.simplefilter("ignore")
        minimize(oracle, L2(), 1.0 / args.C[0], max_iter=3, prune_after=args.prune_after)
    print(f"{args.task}: {desc}; setup {time.perf_counter() - t0:.0f} s", flush=True)
    jpath = args.out.with_suffix(".json")
    jpath.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(jpath.read_text()) if jpath.exists() else {"runs": [], "rows": []}
    data["runs"].append(run)
    for C in args.C:
        for arm in args.arms:
            cut = arm != "no-cut"
            row = fit(oracle, C, cut, args, arm if arm.startswith("hybrid:") else None)
            row.update(
                task=args.task,
                seed=None if args.task == "ner" else args.seed,
                n_sentences=n,
                data=desc,
                min_count=args.min_count,
                run=len(data["runs"]),
            )
            key = _key(row)
            data["rows"] = [r for r in data["rows"] if _key(r) != key] + [row]
            print(
                f"{args.task} C={C:g} arm={row['arm']}: {row['status']} {row['iterations']} it "
                f"{row['wall_s']:.0f} s upper {row['upper']:.5g} lower {row['lower']:.5g} floor share "
                f"{_g(row['floor_share_final'], '.3f')} removed at {row['floor_removed_at']}",
                flush=True,
            )
            run["load_after"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
            jpath.write_text(json.dumps(data, indent=1) + "\n")
            write_page(json.loads(jpath.read_text()), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
