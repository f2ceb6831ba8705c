"""A warm-started path over C against cold runs at each C, on CoNLL-2000 chunking (issue 21).

For each regulariser (``ssvm``: ``L2``; ``mtl``: ``MixedNorm`` with ``p = 1`` over the templates,
SequenceTagger's default) the script runs, on the 1-slack oracle of ``SequenceTagger`` with the
CRF++ chunking templates (serial executor):

- a cold :func:`cutplane.minimize` at every ``C`` of ``--C``;
- :func:`cutplane.regularization_path` over the same ``C`` in each ``--orders`` direction
  (``decreasing``: decreasing ``lam = 1/C``, i.e. increasing ``C``; ``increasing``: the reverse).

The engine minimises ``F / C`` (``lam = 1/C``) to the engine gap ``eps_F / C``, as the estimators
do (``eps_F = --eps``, 0.1 by default, SequenceTagger's default on the scale of
``F = Omega(w) + C R(w)``). Every point of a path is checked against the cold run at its ``C``:
``|objective_path - objective_cold| <= eps_path + eps_cold`` and the path's lower bound at most the
cold objective (the columns "agrees" and "lower <= cold"). The acceptance line of issue 21: the
whole path costs at most 1.5 times the cold run at the largest ``C`` alone (seconds and
iterations).

The page ``--out`` (default ``docs/results/c_path.md``) is written by the script, its command at
the top; ``--json`` keeps the raw rows and ``--render JSON`` rewrites the page from them. ``--data synthetic`` runs on a generated tagging task
(:func:`problems.synthetic.make_tagging_task`), for the test that keeps the script working.

Usage
-----
``python -m benchmarks.c_path --max-sentences 1000 --C 10 100 1000 10000``
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import warnings
from pathlib import Path

import cutplane
from cutplane import minimize, regularization_path
from cutplane.exceptions import ConvergenceWarning

ROOT = Path(__file__).resolve().parent.parent
ACCEPT = 1.5


def build_task(args):
    """(oracle, groups, n_groups, description) of the chosen data."""
    from problems import SequenceTagger
    from problems.solvers import CuttingPlane

    if args.data == "synthetic":
        from problems.synthetic import make_tagging_task

        task = make_tagging_task(n_train=args.max_sentences or 60, n_test=1, seed=args.seed)
        X, y, templates = task.X_train, task.y_train, task.templates
        described = f"generated tagging task (make_tagging_task, seed {args.seed}), {len(X)} sentences"
    else:
        from problems.datasets import dataset_path
        from problems.io.conll import read_conll
        from problems.sequence.template_sets import CHUNKING

        data = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
        n = args.max_sentences or len(data.inputs)
        X, y, templates = data.inputs[:n], data.labels[:n], CHUNKING
        described = (
            f"CoNLL-2000 chunking train.txt.gz, first {len(X)} of {len(data.inputs)} sentences, "
            "CRF++ chunking templates (problems.sequence.template_sets.CHUNKING)"
        )
    tagger = SequenceTagger(templates, min_count=1, solver=CuttingPlane(executor="serial"))
    oracle = tagger.make_oracle(X, y)
    groups = tagger.feature_index_.coordinate_groups(len(tagger.labels_))
    n_groups = len(tagger.feature_index_.template_names)
    return oracle, groups, n_groups, f"{described}; dim {oracle.dim}"


def make_regularizer(name, groups, n_groups):
    from problems.template_learning import make_regularizer as make

    return make(name, 1.0, groups, n_groups)


def _point(res, C):
    return dict(
        status=res.status,
        n_iter=int(res.n_iter),
        seconds=float(res.time_s),
        objective_F=float(res.objective * C),
        lower_F=float(res.lower_bound * C),
        gap_F=float(res.gap * C),
    )


def run(args):
    oracle, groups, n_groups, described = build_task(args)
    Cs = [float(c) for c in args.C]
    lams = [1.0 / c for c in Cs]
    eps = [args.eps / c if args.eps_engine is None else args.eps_engine for c in Cs]
    common = dict(max_iter=args.max_iter, prune_after=args.prune_after, rtol=args.rtol, cache_steps=args.cache_steps)
    rows = []
    for name in args.regularizers:
        reg = make_regularizer(name, groups, n_groups)
        cold = {}
        for C, lam, e in zip(Cs, lams, eps):
            oracle.clear_cache()  # every run starts from an empty output cache (cache_steps)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                res = minimize(oracle, reg, lam, eps=e, time_limit=args.time_limit, **common)
            cold[C] = res
            rows.append(dict(regularizer=name, arm="cold", C=C, **_point(res, C)))
            print(f"{name} cold C={C:g}: {res.status} {res.n_iter} it {res.time_s:.1f} s", flush=True)
        for order in args.orders:
            oracle.clear_cache()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                path = regularization_path(
                    oracle, reg, lams, eps=eps, order=order, time_limit=args.time_limit, **common
                )
            for i in path.run_order:
                C, res = Cs[i], path.results[i]
                c = cold[C]
                agrees = abs(res.objective - c.objective) <= res.tolerance + c.tolerance + 1e-9 * max(
                    1.0, abs(c.objective)
                )
                valid = res.lower_bound <= c.objective + 1e-9 * max(1.0, abs(c.objective))
                rows.append(
                    dict(
                        regularizer=name,
                        arm=f"path-{order}",
                        C=C,
                        rank=path.run_order.index(i),
                        agrees=bool(agrees and c.converged and res.converged),
                        lower_valid=bool(valid),
                        **_point(res, C),
                    )
                )
            rows.append(
                dict(
                    regularizer=name,
                    arm=f"path-{order}",
                    C=None,
                    status=path.status,
                    n_iter=path.n_iter,
                    seconds=float(path.seconds),
                )
            )
            print(f"{name} path {order}: {path.status} {path.n_iter} it {path.seconds:.1f} s", flush=True)
    return rows, described


def _fmt_s(x):
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def render(rows, meta):
    """The markdown page of the rows."""
    out = [
        "# A certified path over C vs cold runs (issue 21)",
        "",
        f"Command: `{meta['command']}`",
        "",
        f"Written by `benchmarks/c_path.py` (never by hand) on {meta['date']}; {meta['machine']}; "
        f"cutplane {meta['version']}.",
        "",
        f"Data: {meta['data']}. Engine: BMRM, `lam = 1/C`, {meta['gap']}, `max_iter` {meta['max_iter']}, "
        f"`prune_after` {meta['prune_after']}, time limit {meta['time_limit']} s per cold run and per path, "
        "serial oracle. A path runs the C values in the direction of its name (`decreasing` = decreasing lam "
        "= increasing C), each point warm-started from the working set and the best w of the point before, "
        "each run to its own certified gap. Objectives and bounds below are on the scale of F.",
        "",
    ]
    for name in dict.fromkeys(r["regularizer"] for r in rows):
        rs = [r for r in rows if r["regularizer"] == name]
        cold = {r["C"]: r for r in rs if r["arm"] == "cold"}
        arms = [a for a in dict.fromkeys(r["arm"] for r in rs) if a != "cold"]
        Cs = sorted(cold)
        out += [f"## {name}", ""]
        head = "| C | cold: status, it, s, F |" + "".join(f" {a}: status, it, s, agrees, lower <= cold |" for a in arms)
        out += [head, "|" + "---|" * (2 + len(arms))]
        for C in Cs:
            c = cold[C]
            line = f"| {C:g} | {c['status']}, {c['n_iter']}, {_fmt_s(c['seconds'])}, {c['objective_F']:.6g} |"
            for a in arms:
                p = next((r for r in rs if r["arm"] == a and r["C"] == C), None)
                if p is None:
                    line += " not run |"
                else:
                    line += (
                        f" {p['status']}, {p['n_iter']}, {_fmt_s(p['seconds'])}, {'yes' if p['agrees'] else 'NO'}, "
                        f"{'yes' if p['lower_valid'] else 'NO'} |"
                    )
            out.append(line)
        total_it = sum(cold[C]["n_iter"] for C in Cs)
        total_s = sum(cold[C]["seconds"] for C in Cs)
        top = cold[Cs[-1]]
        line = f"| all C | {total_it} it, {_fmt_s(total_s)} s |"
        for a in arms:
            t = next(r for r in rs if r["arm"] == a and r["C"] is None)
            line += f" {t['status']}: {t['n_iter']} it, {_fmt_s(t['seconds'])} s |"
        out.append(line)
        out += [
            "",
            f"Against the cold run at the largest C alone ({Cs[-1]:g}: {top['n_iter']} it, "
            f"{_fmt_s(top['seconds'])} s; acceptance: path <= {ACCEPT}x):",
            "",
        ]
        out += [
            "| run | iterations / cold at largest C | seconds / cold at largest C | within 1.5x |",
            "|---|---|---|---|",
        ]
        out.append(
            f"| cold at every C | {total_it / top['n_iter']:.2f} | {total_s / top['seconds']:.2f} | "
            f"{'yes' if total_s <= ACCEPT * top['seconds'] else 'no'} |"
        )
        for a in arms:
            t = next(r for r in rs if r["arm"] == a and r["C"] is None)
            ri, rsec = t["n_iter"] / top["n_iter"], t["seconds"] / top["seconds"]
            out.append(f"| {a} | {ri:.2f} | {rsec:.2f} | {'yes' if rsec <= ACCEPT else 'no'} |")
        out.append("")
    return "\n".join(out)


def add_data_arguments(ap):
    """``--data``, ``--max-sentences`` and ``--seed``: the task :func:`build_task` builds."""
    ap.add_argument("--data", choices=("conll2000", "synthetic"), default="conll2000")
    ap.add_argument("--max-sentences", type=int, default=None, help="first N training sentences (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the synthetic task")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.c_path", description=__doc__.split("\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--C", type=float, nargs="+", default=[10.0, 100.0, 1000.0, 10000.0])
    gap = ap.add_mutually_exclusive_group()
    gap.add_argument("--eps", type=float, default=0.1, help="certified gap on the scale of F (engine: eps / C)")
    gap.add_argument(
        "--eps-engine",
        type=float,
        default=None,
        help="certified gap on the engine's scale F / C at every C instead (eps_F = eps_engine * C)",
    )
    ap.add_argument(
        "--rtol",
        type=float,
        default=None,
        help="also a relative gap at every run: stop once the gap is at most rtol * F (cutplane.minimize's rtol)",
    )
    ap.add_argument(
        "--cache-steps",
        type=int,
        default=0,
        dest="cache_steps",
        help="cuts from the oracle's cache per exact call (cutplane.minimize's cache_steps; default 0: off)",
    )
    ap.add_argument("--regularizers", nargs="+", choices=("ssvm", "mtl"), default=["ssvm", "mtl"])
    ap.add_argument("--orders", nargs="+", choices=("decreasing", "increasing"), default=["decreasing", "increasing"])
    ap.add_argument("--max-iter", type=int, default=5000)
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per cold run and per whole path")
    ap.add_argument("--prune-after", type=int, default=50)
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "c_path.md"))
    ap.add_argument("--json", default=None, help="also write the rows as JSON")
    ap.add_argument("--no-write", action="store_true", help="print the page instead of writing it")
    ap.add_argument("--render", default=None, help="only rewrite the page --out from this script's --json file")
    args = ap.parse_args(argv)
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        Path(args.out).write_text(render(saved["rows"], saved["meta"]) + "\n")
        print(f"wrote {args.out}")
        return 0
    if any(c <= 0 for c in args.C) or len(set(args.C)) != len(args.C):
        ap.error("--C: distinct positive values")
    args.C = sorted(args.C)
    rows, described = run(args)
    meta = dict(
        command="python -m benchmarks.c_path " + " ".join(sys.argv[1:] if argv is None else argv),
        date=time.strftime("%Y-%m-%d"),
        machine=f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        version=cutplane.__version__,
        data=described,
        gap=(
            f"engine gap `eps_F / C` with `eps_F = {args.eps:g}` on the scale of `F = Omega(w) + C R(w)` "
            "(SequenceTagger's default)"
            if args.eps_engine is None
            else f"engine gap `{args.eps_engine:g}` at every C (on the scale of `F`: `{args.eps_engine:g} C`)"
        )
        + (
            ""
            if args.rtol is None
            else f", or a relative gap `rtol = {args.rtol:g}` (a run stops at `max(eps, rtol |F|)`), whichever is larger"
        )
        + ("" if not args.cache_steps else f", up to {args.cache_steps} cached cuts per oracle call (`cache_steps`)"),
        max_iter=args.max_iter,
        prune_after=args.prune_after,
        time_limit=args.time_limit,
    )
    page = render(rows, meta)
    if args.no_write:
        print(page)
    else:
        Path(args.out).write_text(page + "\n")
        print(f"wrote {args.out}")
    if args.json:
        Path(args.json).write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
