"""CoNLL-2000 chunking: MTL^struct vs the 1-slack structural SVM on the CRF++ chunking templates.

Trains on ``conll2000-chunking/train.txt.gz`` and scores chunk F1 (conlleval semantics) on
``test.txt.gz`` from the data folder (``$CUTPLANE_DATA`` or ``../shared/data``), with the
21 U templates + B of ``shared/ANCHORS.md`` (460,638 features, 22 labels in train). For every
method and C it reports the test F1, training time, iterations, the certified gap and, for
MTL, the active templates; the table goes to ``docs/results/conll2000_chunking.md`` (and
JSON beside it) straight from the run.

    python examples/conll2000_chunking.py --C 100 --methods mtl ssvm
    python examples/conll2000_chunking.py --max-sentences 500 --C 10   # a quick look

``--eps`` is the certified absolute tolerance on ``F = Omega + C * mean loss`` as a fraction of
``C`` (SVM^hmm's ``-e`` is the same kind of number: its duality gap is about ``C * e``).
"""
from __future__ import annotations

import argparse
import json
import logging
import platform
import sys
import time
from pathlib import Path

import numpy as np

from problems.datasets import dataset_path
from problems.io.conll import read_conll
from problems.metrics.chunking import chunk_f1
from problems.sequence_labeling import SequenceTagger
from problems.template_sets import CHUNKING

ROOT = Path(__file__).resolve().parent.parent


def run_one(method, C, eps_frac, train, test, args):
    est = SequenceTagger(CHUNKING, C=C, regularizer=method, p=args.p, eps=eps_frac * C, max_iter=args.max_iter,
                         prune_after=args.prune_after,
                         time_limit=args.time_limit, executor=args.executor, n_workers=args.workers,
                         verbose=args.verbose)
    t0 = time.perf_counter()
    est.fit(train.inputs, train.labels)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = est.predict(test.inputs)
    pred_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    est.predict(test.inputs, all_templates=True)
    pred_all_s = time.perf_counter() - t0
    score = chunk_f1(test.labels, pred)
    res = est.result_
    return {
        "method": method if method != "pmtl" else f"pmtl(p={args.p:g})", "C": C, "eps": eps_frac * C,
        "test_f1": score.f1, "precision": score.precision, "recall": score.recall, "accuracy": score.accuracy,
        "train_s": fit_s, "oracle_s": float(res.oracle_time_s), "solver_s": float(res.solver_time_s),
        "iterations": est.n_iter_, "status": res.status, "objective": est.objective_,
        "lower_bound": est.lower_bound_, "gap": est.gap_, "relative_gap": est.gap_ / max(abs(est.objective_), 1e-300),
        "n_templates": len(est.template_weights_), "n_active_templates": est.n_active_templates_,
        "inactive_templates": sorted(set(est.template_weights_) - set(est.active_templates_)),
        "predict_s": pred_s, "predict_all_templates_s": pred_all_s,
        "n_features": int(est.feature_index_.n_features_), "n_labels": len(est.labels_),
    }


def write_table(rows, meta, out):
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "# CoNLL-2000 chunking: MTL^struct vs SSVM",
        "",
        f"Produced by `{meta['command']}` on {meta['date']} ({meta['machine']}, load average before the run "
        f"{meta['load_before']}). Train {meta['n_train']} sentences / {meta['n_train_tokens']} tokens, "
        f"test {meta['n_test']} / {meta['n_test_tokens']}; CRF++ chunking templates (21 U + B). Chunk F1 with "
        "conlleval semantics. Objective, bound and gap on F = Omega(w) + C * mean Hamming loss.",
        "",
        "| method | C | test F1 | P | R | train s | iterations | status | objective | certified gap (rel.) "
        "| active templates | predict s (active / all templates) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['C']:g} | {r['test_f1']:.2f} | {r['precision']:.2f} | {r['recall']:.2f} "
            f"| {r['train_s']:.0f} | {r['iterations']} | {r['status']} | {r['objective']:.4g} "
            f"| {r['gap']:.3g} ({r['relative_gap']:.2%}) | {r['n_active_templates']}/{r['n_templates']} "
            f"| {r['predict_s']:.2f} / {r['predict_all_templates_s']:.2f} |")
    lines += ["", "Inactive templates (weight below 1e-5 of the largest):", ""]
    lines += [f"- {r['method']} C={r['C']:g}: {', '.join(r['inactive_templates']) or 'none'}" for r in rows]
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--C", type=float, nargs="+", default=[100.0])
    ap.add_argument("--methods", nargs="+", default=["mtl", "ssvm"], choices=["mtl", "ssvm", "pmtl"])
    ap.add_argument("--p", type=float, default=1.5)
    ap.add_argument("--eps", type=float, default=0.01, help="certified gap as a fraction of C (default 0.01)")
    ap.add_argument("--max-iter", type=int, default=2000, dest="max_iter")
    ap.add_argument("--time-limit", type=float, default=None, dest="time_limit")
    ap.add_argument("--prune-after", type=int, default=10, dest="prune_after",
                    help="drop cuts whose dual weight stayed zero this many iterations (default 10)")
    ap.add_argument("--max-sentences", type=int, default=None, dest="max_sentences")
    ap.add_argument("--executor", default="threads", choices=["serial", "threads"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "results" / "conll2000_chunking.md")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    train = read_conll(dataset_path("conll2000-chunking", "train.txt.gz"))
    test = read_conll(dataset_path("conll2000-chunking", "test.txt.gz"))
    if args.max_sentences:
        train.inputs, train.labels = train.inputs[: args.max_sentences], train.labels[: args.max_sentences]
    meta = {"command": "python examples/conll2000_chunking.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "date": time.strftime("%Y-%m-%d %H:%M"), "machine": f"{platform.machine()}, {platform.python_version()}",
            "load_before": " ".join(f"{x:.1f}" for x in __import__("os").getloadavg()),
            "n_train": len(train.inputs), "n_train_tokens": int(sum(map(len, train.inputs))),
            "n_test": len(test.inputs), "n_test_tokens": int(sum(map(len, test.inputs)))}
    rows = []
    for C in args.C:
        for method in args.methods:
            row = run_one(method, C, args.eps, train, test, args)
            rows.append(row)
            print(f"{row['method']:>5} C={C:g}: F1 {row['test_f1']:.2f}  train {row['train_s']:.0f} s  "
                  f"{row['iterations']} it  gap {row['gap']:.3g} ({row['relative_gap']:.2%})  "
                  f"active {row['n_active_templates']}/{row['n_templates']}  {row['status']}", flush=True)
            write_table(rows, meta, args.out)
    print(f"table written to {args.out}")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
