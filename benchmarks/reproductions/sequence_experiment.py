"""Shared driver of the sequence-labelling reproductions (CoNLL-2000 chunking, CoNLL-2002 NER).

One row per (method, C): train a :class:`problems.SequenceTagger` on the training file, score
the task metric (chunk F1 with conlleval semantics) on the development file (if any) and the
test file, and record the training time, iterations, certified gap, active templates, the
working set's peak and the process's peak resident memory. The Markdown table (and JSON beside
it) is rewritten after every row, straight from the run.

Methods: ``mtl`` (MTL^struct, p = 1, QCQP), ``ssvm`` (1-slack structural SVM), ``pmtl``
(p-block norm, ``--p``), ``spom`` (the online proximal solver on the MTL objective; no
certificate, its objective is compared with MTL^struct's certified lower bound when both ran).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

from problems.metrics.chunking import chunk_f1
from problems.sequence.tagger import SequenceTagger
from problems.solvers import SPOM, CuttingPlane

ROOT = Path(__file__).resolve().parents[2]  # the repository root
METHODS = ("mtl", "ssvm", "pmtl", "spom")


def peak_rss_bytes() -> int:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def make_tagger(method, C, templates, args):
    """The estimator of one row (keyword arguments from the command line)."""
    run = dict(time_limit=args.time_limit, executor=args.executor, n_workers=args.workers, verbose=args.verbose)
    if method == "spom":
        return SequenceTagger(
            templates, C=C, regularizer="mtl", min_count=args.min_count, solver=SPOM(epochs=args.epochs, **run)
        )
    return SequenceTagger(
        templates,
        C=C,
        regularizer=method,
        p=args.p,
        min_count=args.min_count,
        solver=CuttingPlane(
            eps=args.eps * C,
            max_iter=args.max_iter,
            prune_after=args.prune_after,
            memory_limit=args.memory_limit,
            **run,
        ),
    )


def run_one(method, C, train, test, dev, templates, args):
    est = make_tagger(method, C, templates, args)
    t0 = time.perf_counter()
    est.fit(train.inputs, train.labels)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = est.predict(test.inputs)
    pred_s = time.perf_counter() - t0
    score = chunk_f1(test.labels, pred)
    dev_f1 = chunk_f1(dev.labels, est.predict(dev.inputs)).f1 if dev is not None else None
    train_f1 = chunk_f1(train.labels, est.predict(train.inputs)).f1  # fit vs generalisation
    res = est.result_
    name = {"pmtl": f"pmtl(p={args.p:g})", "spom": "spom(mtl)"}.get(method, method)
    gap = est.gap_
    return {
        "method": name,
        "C": C,
        "eps": args.eps * C,
        "test_f1": score.f1,
        "precision": score.precision,
        "recall": score.recall,
        "dev_f1": dev_f1,
        "train_f1": train_f1,
        "train_s": fit_s,
        "oracle_s": float(getattr(res, "oracle_time_s", float("nan"))),
        "solver_s": float(getattr(res, "solver_time_s", float("nan"))),
        "iterations": est.n_iter_,
        "status": res.status,
        "objective": est.objective_,
        "lower_bound": est.lower_bound_,
        "gap": gap,
        "relative_gap": None if gap is None else gap / max(abs(est.objective_), 1e-300),
        "n_templates": len(est.template_weights_),
        "n_active_templates": est.n_active_templates_,
        "inactive_templates": sorted(set(est.template_weights_) - set(est.active_templates_)),
        "template_weights": {k: float(v) for k, v in est.template_weights_.items()},
        "template_norms": {k: float(v) for k, v in est.template_norms_.items()},
        "predict_s": pred_s,
        "n_features": int(est.feature_index_.n_features_),
        "n_labels": len(est.labels_),
        "peak_working_set_bytes": int(getattr(res, "peak_working_set_bytes", 0) or 0),
        "peak_rss_bytes": peak_rss_bytes(),
    }


def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def _target_lines(rows, meta):
    """The target check, computed from the rows: the best test F1 of the target method, whether
    it reaches the target and whether that row is certified (converged)."""
    target = meta.get("target")
    if not target:
        return []
    method, value = target["method"], float(target["f1"])
    mine = [r for r in rows if r["method"] == method]
    if not mine:
        return []
    best = max(mine, key=lambda r: r["test_f1"])
    certified = [r for r in mine if r["status"] == "converged" and r["test_f1"] >= value]
    verdict = (
        "reached"
        if certified
        else "reached only by a run that did not converge"
        if best["test_f1"] >= value
        else "not reached"
    )
    return [
        "",
        f"Target ({target['source']}): {method} test F1 >= {value:g}: {verdict}; best {method} row "
        f"C={best['C']:g}: F1 {best['test_f1']:.2f} ({best['status']}).",
    ]


def _dev_choice_lines(rows):
    """Per method, the row whose dev F1 is best (C chosen on dev, never on test), when several C were run."""
    out = []
    for method in dict.fromkeys(r["method"] for r in rows):
        mine = [r for r in rows if r["method"] == method and r.get("dev_f1") is not None]
        if len({r["C"] for r in mine}) < 2:
            continue
        best = max(mine, key=lambda r: r["dev_f1"])
        out.append(
            f"- {method}: C = {best['C']:g} by dev F1 ({best['dev_f1']:.2f}, among C = "
            + ", ".join(f"{r['C']:g}" for r in sorted(mine, key=lambda r: r["C"]))
            + f"): test F1 {best['test_f1']:.2f} ({best['status']})."
        )
    return ["", "C chosen on the dev set (per method):", ""] + out if out else []


def _online_vs_batch_lines(rows):
    """SPOM's final objective against MTL^struct's certified lower bound at the same C (same objective)."""
    out = []
    for r in rows:
        if not r["method"].startswith("spom"):
            continue
        ref = next((m for m in rows if m["method"] == "mtl" and m["C"] == r["C"] and m.get("lower_bound")), None)
        if ref is not None:
            out.append(
                f"- {r['method']} C={r['C']:g}: objective {r['objective']:.6g} after {r['iterations']} epochs, "
                f"{(r['objective'] - ref['lower_bound']) / abs(ref['lower_bound']):.1%} above MTL^struct's "
                f"certified lower bound {ref['lower_bound']:.6g} (MTL^struct: objective {ref['objective']:.6g}, "
                f"{ref['status']}, {ref['train_s']:.0f} s; SPOM {r['train_s']:.0f} s)."
            )
    return ["", "The online solver against the certified batch one (same objective F):", ""] + out if out else []


def sources_note(meta):
    """Header words naming the other runs merged into the page and the re-rendering command."""
    text = "".join(
        f"; with the rows of `{m['command']}` on {m['date']} (load average before {m['load_before']})"
        for m in meta.get("also", [])
    )
    r = meta.get("rendered")
    if not r:
        return text
    return (
        text
        + f"; page rendered from the runs' JSON by `{r['command']}` on {r['date']}"
        + (
            f"; {len(r['replaced'])} rows of earlier runs replaced by a later run of the same fit "
            f"({'; '.join(r['replaced'])})"
            if r.get("replaced")
            else ""
        )
    )


def merge_rows(paths, datas, key, fill=None):
    """The rows of several runs in file order; a fit present in several runs (same ``key(row)``)
    keeps the row of the last file, in the place of the first. Returns ``(rows, replaced)``,
    ``replaced`` naming each replaced fit as ``"<file>: <key>"``; ``fill(row, meta)`` completes
    a row from its run's settings before its key is taken (older runs' rows lack some keys)."""
    rows, where, replaced = [], {}, []
    for path, data in zip(paths, datas):
        for r in data["rows"]:
            r = fill(r, data["meta"]) if fill is not None else r
            k = key(r)
            if k in where:
                rows[where[k]] = r
                replaced.append(f"{Path(path).name}: " + " ".join(str(v) for v in k if v is not None))
            else:
                where[k] = len(rows)
                rows.append(r)
    return rows, replaced


def read_runs(paths):
    """The runs' JSON (``{"meta": ..., "rows": [...]}`` each), or one InputError naming the file."""
    from cutplane.exceptions import InputError

    datas = []
    for path in paths:
        try:
            datas.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError) as e:
            raise InputError(f"cannot read a run's JSON: {e}", path=str(path)) from None
        if not isinstance(datas[-1], dict) or "meta" not in datas[-1] or "rows" not in datas[-1]:
            raise InputError("not a run's JSON (expected keys 'meta' and 'rows')", path=str(path))
    return datas


def merged_meta(datas, script, argv):
    """The first run's settings, the other runs' commands (``also``) and the rendering command (``rendered``)."""
    first = {k: v for k, v in datas[0]["meta"].items() if k != "rendered"}
    also = list(first.get("also", []))
    for data in datas[1:]:
        m = data["meta"]
        also += [{k: m[k] for k in ("command", "date", "load_before")}] + list(m.get("also", []))
    return dict(
        first,
        also=also,
        rendered={
            "command": f"python -m benchmarks.reproductions.{Path(script).stem} "
            + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M"),
        },
    )


def fit_key(row):
    """What identifies one fit in a sequence page: method, C and p (pMTL)."""
    return row["method"], row["C"], row.get("p")


#: run settings that must agree for rows of several runs to share a page
MERGE_KEYS = ("n_train", "n_test", "min_count", "templates", "selected", "memory_limit")


def render(paths, out, argv, script, title, description, target=None, target_source="issue"):
    """Rewrite a page from the rows of previous runs' JSON (no training): ``--render A.json [B.json ...]``.

    The first file gives the settings; the others must agree on those of :data:`MERGE_KEYS` that
    both recorded (same data, features and templates), else :class:`cutplane.exceptions.InputError`
    names the file and field. A fit run again (same :func:`fit_key`) keeps the later run's row and
    the page says which rows were replaced.
    """
    from cutplane.exceptions import InputError

    datas = read_runs(paths)
    meta = merged_meta(datas, script, argv)
    for path, data in zip(paths[1:], datas[1:]):
        m = data["meta"]
        for key in MERGE_KEYS:  # a setting both runs recorded (older runs did not record every key)
            if key in m and key in meta and m[key] != meta[key]:
                raise InputError(
                    f"run differs from {paths[0]}: {key} = {m[key]!r}, expected {meta[key]!r}",
                    path=str(path),
                    field=key,
                )
    rows, meta["rendered"]["replaced"] = merge_rows(paths, datas, fit_key)
    if target is not None:  # --target-f1 given to the rendering
        meta["target"] = {"method": "mtl", "f1": float(target), "source": target_source}
    write_table(rows, meta, Path(out), title, meta.get("description", description))
    print(f"table written to {out}")
    return 0


def write_table(rows, meta, out, title, description):
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"# {title}",
        "",
        f"Produced by `{meta['command']}` on {meta['date']} ({meta['machine']}, load average before the run "
        f"{meta['load_before']}){sources_note(meta)}. Train {meta['n_train']} sentences / {meta['n_train_tokens']} tokens, "
        f"test {meta['n_test']} / {meta['n_test_tokens']}{meta.get('dev_text', '')}. {description} "
        "Objective, bound and gap on F = Omega(w) + C * mean Hamming loss; memory limit of the working set: "
        f"{meta['memory_limit']}; features seen fewer than {meta.get('min_count', 1)} times dropped"
        f"{' (none)' if meta.get('min_count', 1) <= 1 else ''}.",
        "",
        "| method | C | test F1 | P | R | dev F1 | train F1 | train s | iterations | status | objective | certified gap (rel.) "
        "| active templates | features | working-set peak MiB | process peak RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        gap = "-" if r["gap"] is None else f"{r['gap']:.3g} ({r['relative_gap']:.2%})"
        lines.append(
            f"| {r['method']} | {r['C']:g} | {r['test_f1']:.2f} | {r['precision']:.2f} | {r['recall']:.2f} "
            f"| {_fmt(r['dev_f1'], '.2f')} | {_fmt(r.get('train_f1'), '.2f')} | {r['train_s']:.0f} | {r['iterations']} | {r['status']} "
            f"| {r['objective']:.4g} | {gap} | {r['n_active_templates']}/{r['n_templates']} | {r['n_features']} "
            f"| {r['peak_working_set_bytes'] / 2**20:.0f} | {r['peak_rss_bytes'] / 2**20:.0f} |"
        )
    lines += _target_lines(rows, meta) + _dev_choice_lines(rows) + _online_vs_batch_lines(rows)
    lines += ["", "Inactive templates (weight below 1e-5 of the largest):", ""]
    lines += [f"- {r['method']} C={r['C']:g}: {', '.join(r['inactive_templates']) or 'none'}" for r in rows]
    lines += [
        "",
        "Share of each template in sum_j ||w_j|| (MTL^struct's weight mu_j at its optimum), largest first:",
        "",
    ]
    for r in rows:
        norms = r.get("template_norms") or {}
        total = sum(norms.values())
        if total > 0:
            lines.append(
                f"- {r['method']} C={r['C']:g}: "
                + ", ".join(f"{k} {v / total:.3f}" for k, v in sorted(norms.items(), key=lambda kv: -kv[1]))
            )
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


def parser(description, default_out, default_C=(100.0,), default_methods=("mtl", "ssvm")):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--C", type=float, nargs="+", default=list(default_C))
    ap.add_argument("--methods", nargs="+", default=list(default_methods), choices=METHODS)
    ap.add_argument("--p", type=float, default=1.5, help="p of pmtl (default 1.5)")
    ap.add_argument("--eps", type=float, default=0.01, help="certified gap as a fraction of C (default 0.01)")
    ap.add_argument("--max-iter", type=int, default=2000, dest="max_iter")
    ap.add_argument("--epochs", type=int, default=20, help="SPOM epochs (default 20)")
    ap.add_argument("--time-limit", type=float, default=None, dest="time_limit")
    ap.add_argument(
        "--prune-after",
        type=int,
        default=10,
        dest="prune_after",
        help="drop cuts whose dual weight stayed zero this many iterations (default 10)",
    )
    ap.add_argument(
        "--memory-limit",
        type=float,
        default=None,
        dest="memory_limit",
        help="bytes for the working set (aggregation of the oldest cuts beyond it)",
    )
    ap.add_argument("--max-sentences", type=int, default=None, dest="max_sentences")
    ap.add_argument(
        "--min-count",
        type=int,
        default=1,
        dest="min_count",
        help="keep features seen at least this often in training (CRF++'s -f; default 1: all)",
    )
    ap.add_argument("--executor", default="threads", choices=["serial", "threads"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument(
        "--target-f1",
        type=float,
        default=None,
        dest="target_f1",
        help="check the MTL^struct rows against this test F1 (a line under the table)",
    )
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument(
        "--render",
        nargs="+",
        default=None,
        metavar="JSON",
        help="only rewrite the page (--out) from the rows of previous runs' JSON (no training)",
    )
    return ap


def run(args, argv, script, train, test, dev, templates, title, description):
    """Train every (C, method), print a line each and rewrite the table after each row."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    if args.memory_limit is not None:
        args.memory_limit = int(args.memory_limit)
    if args.max_sentences:
        train.inputs, train.labels = train.inputs[: args.max_sentences], train.labels[: args.max_sentences]
    meta = {
        "command": f"python -m benchmarks.reproductions.{Path(script).stem} "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "n_train": len(train.inputs),
        "n_train_tokens": int(sum(map(len, train.inputs))),
        "n_test": len(test.inputs),
        "n_test_tokens": int(sum(map(len, test.inputs))),
        "memory_limit": "none" if args.memory_limit is None else f"{args.memory_limit / 2**20:.0f} MiB",
        "min_count": args.min_count,
        "templates": getattr(args, "templates", None),
        "selected": getattr(args, "selected", None),
        "description": description,
    }
    if getattr(args, "target_f1", None) is not None:
        meta["target"] = {"method": "mtl", "f1": args.target_f1, "source": getattr(args, "target_source", "issue")}
    if dev is not None:
        meta["dev_text"] = f", dev {len(dev.inputs)} / {int(sum(map(len, dev.inputs)))}"
    rows = []
    np.seterr(all="ignore")
    for C in args.C:
        for method in args.methods:
            row = run_one(method, C, train, test, dev, templates, args)
            rows.append(row)
            gap = "-" if row["gap"] is None else f"{row['gap']:.3g} ({row['relative_gap']:.2%})"
            print(
                f"{row['method']:>9} C={C:g}: F1 {row['test_f1']:.2f}  train {row['train_s']:.0f} s  "
                f"{row['iterations']} it  gap {gap}  active {row['n_active_templates']}/{row['n_templates']}  "
                f"{row['status']}  peak RSS {row['peak_rss_bytes'] / 2**20:.0f} MiB",
                flush=True,
            )
            write_table(rows, meta, args.out, title, description)
    print(f"table written to {args.out}")
    return 0
