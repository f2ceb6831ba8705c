"""Chinese word segmentation on SIGHAN 2005 PKU and CityU: MTL^struct (and SSVM) with TP1 and TP2.

Mao & Tsang (seed 004) Tables 3-4: characters are tagged ``B``/``I``/``E`` (sec. 3.2; ``--scheme
BMES`` for four labels), features come from the templates TP1 and TP2 of Table 2
(:data:`problems.sequence.template_sets.TP1`, ``TP2``: TP2 adds the seven bi-grams U10-U16), and the
paper's point is that MTL^struct does not lose F1 going from TP1 to TP2 (redundant templates
do not hurt it). The data folder holds only the gold *test* files and the training word lists
(``sighan2005-cws/README.md``), so each seed splits the gold file 80/20 by sentence (the paper
splits train + test, about ten times more sentences); R_iv is the recall of gold words seen in
that seed's 80% training part. Per dataset, one table of mean and standard deviation over the
seeds of P / R / F1 / R_iv, training time, iterations, certified gap and active templates.

    python -m benchmarks.reproductions.cws_segmentation                       # 5 seeds x TP1, TP2 x PKU, CityU, MTL
    python -m benchmarks.reproductions.cws_segmentation --seeds 0 1 --methods mtl ssvm --C 1000
    python -m benchmarks.reproductions.cws_segmentation --max-sentences 300 --seeds 0 --max-iter 30   # a quick look

The table goes to ``docs/results/cws_segmentation.md`` (JSON with every seed's row beside it),
rewritten after every fit, so an interrupted run still leaves the rows it finished.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from benchmarks.reproductions.sequence_experiment import (
    ROOT,
    make_tagger,
    merge_rows,
    merged_meta,
    parser,
    peak_rss_bytes,
    read_runs,
    sources_note,
)
from problems.datasets import dataset_path
from problems.io.segmentation import read_segmented, read_word_list, tags_to_words, words_to_tags
from problems.metrics.segmentation import segmentation_scores
from problems.sequence.template_sets import TP1, TP2

DATASETS = {
    "pku": ("PKU", "pku_test_gold.utf8.gz", "pku_training_words.utf8.gz"),
    "cityu": ("CityU", "cityu_test_gold.utf8.gz", "cityu_training_words.utf8.gz"),
}
TEMPLATE_SETS = {"tp1": TP1, "tp2": TP2}
#: Sentences the paper trains on per split: 80% of train + test of its Table 1.
PAPER_TRAIN_SENTENCES = {"pku": int(0.8 * (19054 + 1944)), "cityu": int(0.8 * (53019 + 1492))}
#: Mao & Tsang Table 3 (mean over five 80/20 splits), TP1 / TP2: (R, P, F1, R_iv).
PAPER_TABLE3 = {
    "pku": {
        "MTL^hmm": ((97.1, 96.7, 96.9, 98.0), (97.2, 96.8, 97.0, 98.1)),
        "SVM^hmm": ((96.6, 96.7, 96.6, 97.4), (96.5, 96.5, 96.5, 97.2)),
    },
    "cityu": {
        "MTL^hmm": ((97.6, 97.4, 97.5, 98.4), (97.7, 97.5, 97.6, 98.4)),
        "SVM^hmm": ((97.0, 97.1, 97.0, 97.6), (96.9, 96.8, 96.8, 97.4)),
    },
}
#: Mao & Tsang Table 4 (trained on the bakeoff training file, tested on the gold file used here), F1 TP1 / TP2.
PAPER_TABLE4_F1 = {
    "pku": {"MTL^hmm": (93.6, 93.8), "SVM^hmm": (93.2, 93.2)},
    "cityu": {"MTL^hmm": (94.7, 94.8), "SVM^hmm": (94.2, 93.8)},
}
METRICS = ("precision", "recall", "f1", "r_iv")


class Split(NamedTuple):
    """One seeded 80/20 split of a segmented corpus (sentences as lists of words)."""

    train: list
    test: list
    train_ids: np.ndarray
    test_ids: np.ndarray


def split_sentences(sentences, seed, train_fraction=0.8) -> Split:
    """Random split by sentence with ``np.random.default_rng(seed)``.

    Parameters
    ----------
    sentences : list of list of str
    seed : int
    train_fraction : float, default=0.8

    Returns
    -------
    Split
        ``train_ids`` and ``test_ids`` (sorted ndarrays of int) partition ``range(len(sentences))``.
    """
    n = len(sentences)
    perm = np.random.default_rng(seed).permutation(n)
    n_train = int(round(train_fraction * n))
    tr, te = np.sort(perm[:n_train]), np.sort(perm[n_train:])
    return Split([sentences[i] for i in tr], [sentences[i] for i in te], tr, te)


def to_tagged(sentences, scheme):
    """Character rows ``[(c,), ...]`` and tag lists of segmented sentences."""
    inputs, labels = [], []
    for words in sentences:
        chars, tags = words_to_tags(words, scheme)
        inputs.append([(c,) for c in chars])
        labels.append(tags)
    return inputs, labels


def load_corpus(name, max_sentences=None):
    """Gold sentences of dataset ``name`` (``"pku"`` or ``"cityu"``), optionally the first ``max_sentences``."""
    sentences = read_segmented(dataset_path("sighan2005-cws", DATASETS[name][1]))
    return sentences[:max_sentences] if max_sentences else sentences


def oov_rates(name, sentences, seeds, train_fraction=0.8):
    """Share of test-part gold words outside the training part, and outside the official training word list.

    The second is what a model trained on the bakeoff's training corpus (as in the paper) faces.

    Returns
    -------
    dict
        ``split`` and ``official``: lists of float (one per seed, fractions).
    """
    official = read_word_list(dataset_path("sighan2005-cws", DATASETS[name][2]))
    out = {"split": [], "official": []}
    for seed in seeds:
        split = split_sentences(sentences, seed, train_fraction)
        vocab = {w for words in split.train for w in words}
        test = [w for words in split.test for w in words]
        out["split"].append(sum(w not in vocab for w in test) / len(test))
        out["official"].append(sum(w not in official for w in test) / len(test))
    return out


def fit_and_score(method, C, templates, split, args, p=None):
    """Train one tagger on ``split.train`` and score its segmentation of ``split.test``.

    Returns
    -------
    dict
        Scores (percent), the solver's figures and the template weights; JSON-ready.
    """
    if p is not None:
        args = argparse.Namespace(**{**vars(args), "p": p})
    X, y = to_tagged(split.train, args.scheme)
    Xt, _ = to_tagged(split.test, args.scheme)
    est = make_tagger(method, C, templates, args)
    t0 = time.perf_counter()
    est.fit(X, y)
    fit_s = time.perf_counter() - t0
    pred = [tags_to_words([row[0] for row in x], tags, args.scheme) for x, tags in zip(Xt, est.predict(Xt))]
    vocab = {w for words in split.train for w in words}
    score = segmentation_scores(split.test, pred, vocab)
    res, gap = est.result_, est.gap_
    mu = np.array(list(est.template_weights_.values()), dtype=float)
    return {
        "C": C,
        "eps": args.eps * C,
        "precision": score.precision,
        "recall": score.recall,
        "f1": score.f1,
        "r_iv": score.r_iv,
        "r_oov": score.r_oov,
        "n_correct": score.n_correct,
        "n_gold": score.n_gold,
        "n_pred": score.n_pred,
        "n_gold_iv": score.n_gold_iv,
        "train_fraction": args.train_fraction,
        "n_train": len(split.train),
        "n_test": len(split.test),
        "n_train_chars": int(sum(len(x) for x in X)),
        "n_test_chars": int(sum(len(x) for x in Xt)),
        "train_s": fit_s,
        "iterations": est.n_iter_,
        "status": getattr(res, "status", "spom"),
        "objective": est.objective_,
        "lower_bound": est.lower_bound_,
        "gap": gap,
        "relative_gap": None if gap is None else gap / max(abs(est.objective_), 1e-300),
        "n_templates": len(est.template_weights_),
        "n_active_templates": est.n_active_templates_,
        "inactive_templates": sorted(set(est.template_weights_) - set(est.active_templates_)),
        "template_weights": est.template_weights_,
        "template_norms": est.template_norms_,
        "n_mu_above_1e-5": int(np.sum(mu > 1e-5 * mu.max())) if mu.size and mu.max() > 0 else 0,
        "n_features": int(est.feature_index_.n_features_),
        "n_labels": len(est.labels_),
        "peak_rss_bytes": peak_rss_bytes(),
    }


def mean_std(values):
    """Mean and sample standard deviation (ddof=1; 0 for a single value) of the non-None values."""
    v = np.array([x for x in values if x is not None], dtype=float)
    if v.size == 0:
        return None, None
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def _frac(row):
    return row.get("train_fraction", 0.8)


def summarize(rows):
    """Aggregate per-seed rows by (dataset, templates, method, C, training fraction): mean and std."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["templates"], r["method"], r["C"], _frac(r)), []).append(r)
    out = []
    for (ds, tp, method, C, frac), rs in groups.items():
        s = {
            "dataset": ds,
            "templates": tp,
            "method": method,
            "C": C,
            "train_fraction": frac,
            "seeds": [r["seed"] for r in rs],
        }
        for key in METRICS + ("r_oov", "n_train", "train_s", "iterations", "relative_gap", "gap", "n_active_templates"):
            s[key], s[key + "_std"] = mean_std([r[key] for r in rs])
        s["n_templates"] = rs[0]["n_templates"]
        statuses = [r["status"] for r in rs]
        s["status"] = ", ".join(f"{st} {statuses.count(st)}/{len(rs)}" for st in sorted(set(statuses)))
        out.append(s)
    return out


def tp_deltas(rows):
    """Paired F1(TP2) - F1(TP1) over the seeds that ran both, per (dataset, method, C, training fraction)."""
    by = {}
    for r in rows:
        by[(r["dataset"], r["method"], r["C"], _frac(r), r["seed"], r["templates"])] = r["f1"]
    out = []
    for key in sorted({(r["dataset"], r["method"], r["C"], _frac(r)) for r in rows}):
        d = [
            by[key + (s, "tp2")] - by[key + (s, "tp1")]
            for s in sorted({r["seed"] for r in rows})
            if key + (s, "tp1") in by and key + (s, "tp2") in by
        ]
        if d:
            m, sd = mean_std(d)
            out.append(
                {
                    "dataset": key[0],
                    "method": key[1],
                    "C": key[2],
                    "train_fraction": key[3],
                    "n_seeds": len(d),
                    "delta_f1": m,
                    "delta_f1_std": sd,
                    "deltas": d,
                }
            )
    return out


def _part(x):
    """Label of a training fraction, empty for the default 80%."""
    f = x.get("train_fraction", 0.8)
    return "" if abs(f - 0.8) < 1e-12 else f", training part {f:.0%}"


def _pm(s, key, spec=".2f"):
    return "-" if s[key] is None else f"{s[key]:{spec}} ± {s[key + '_std']:{spec}}"


def findings(ds, summ, deltas, meta):
    """Sentences computed from the run: data size against the paper's, convergence, TP1 -> TP2, SSVM."""
    mine = [s for s in summ if s["dataset"] == ds]
    n_train = meta["n_train"][ds]
    lines = [
        f"- Training data: {n_train} sentences per split (80% of the {meta['n_sentences'][ds]} gold "
        f"sentences), against about {PAPER_TRAIN_SENTENCES[ds]} in the paper (80% of its train + test); "
        "this alone is expected to cost F1 and R_iv, since far fewer words are seen in training."
    ]
    if "oov" in meta and ds in meta["oov"]:
        o = meta["oov"][ds]
        main_frac = meta.get("train_fraction", 0.8)
        r_oov, _ = mean_std([s["r_oov"] for s in mine if abs(s["train_fraction"] - main_frac) < 1e-12])
        lines.append(
            f"- Test words unseen in training: {100 * np.mean(o['split']):.1f}% of the test part here, "
            f"against {100 * np.mean(o['official']):.1f}% outside the official training word list (the corpus "
            "the paper trains on; its random split of train + test should see even fewer)"
            + ("" if r_oov is None else f"; mean R_oov over the fits above: {r_oov:.1f}%")
            + "."
        )
    unconverged = [s for s in mine if not s["status"].startswith("converged") or "," in s["status"]]
    if unconverged:
        lines.append(
            "- Not every fit converged: "
            + "; ".join(
                f"{s['method']} {s['templates'].upper()} C={s['C']:g}{_part(s)}: {s['status']}" for s in unconverged
            )
            + " (their certified gap is in the table)."
        )
    else:
        lines.append(f"- Every fit converged to a certified gap of at most eps = {meta['eps']:g} x C.")
    for d in (d for d in deltas if d["dataset"] == ds):
        verdict = (
            "holds"
            if d["delta_f1"] >= 0
            else "holds within the seed noise"
            if d["delta_f1"] + d["delta_f1_std"] >= 0
            else "does NOT hold"
        )
        head = (
            f"- TP1 -> TP2, {d['method']} C={d['C']:g}{_part(d)}: F1 changes by {d['delta_f1']:+.2f} ± "
            f"{d['delta_f1_std']:.2f} (paired over {d['n_seeds']} seeds); "
        )
        if d["method"] == "mtl":
            lines.append(head + f"the paper's point, no loss for MTL^struct: {verdict}.")
        else:
            a, b = PAPER_TABLE3[ds]["SVM^hmm"]
            lines.append(head + f"the paper's SVM^hmm changes by {b[2] - a[2]:+.1f} (Table 3).")
    for tp, C, frac in sorted({(s["templates"], s["C"], s["train_fraction"]) for s in mine}):
        m = [s for s in mine if (s["templates"], s["C"], s["train_fraction"]) == (tp, C, frac)]
        mtl = next((s for s in m if s["method"] == "mtl"), None)
        svm = next((s for s in m if s["method"] == "ssvm"), None)
        if mtl and svm:
            ref_m, ref_s = PAPER_TABLE3[ds]["MTL^hmm"][tp == "tp2"], PAPER_TABLE3[ds]["SVM^hmm"][tp == "tp2"]
            lines.append(
                f"- {tp.upper()} C={C:g}{_part(mtl)}: MTL^struct minus SSVM: F1 {mtl['f1'] - svm['f1']:+.2f}, "
                f"R_iv {mtl['r_iv'] - svm['r_iv']:+.2f} (the paper, MTL^hmm minus SVM^hmm: "
                f"F1 {ref_m[2] - ref_s[2]:+.1f}, R_iv {ref_m[3] - ref_s[3]:+.1f})."
            )
    for method, tp, C in sorted({(s["method"], s["templates"], s["C"]) for s in mine}):
        curve = sorted(
            (s for s in mine if (s["method"], s["templates"], s["C"]) == (method, tp, C)), key=lambda s: s["n_train"]
        )
        if len(curve) > 1:
            a, b = curve[0], curve[-1]
            per = (b["f1"] - a["f1"]) / np.log2(b["n_train"] / a["n_train"])
            lines.append(
                f"- Learning curve, {method} {tp.upper()} C={C:g}: F1 "
                + ", ".join(f"{s['f1']:.2f} with {s['n_train']:.0f} training sentences" for s in curve)
                + f" (each tested on the rest of the gold file): {per:+.2f} F1 per doubling of the training part; "
                f"{np.log2(PAPER_TRAIN_SENTENCES[ds] / b['n_train']):.1f} "
                "more doublings separate the largest part here from the paper's training set."
            )
    return lines


def rendered_note(meta):
    """Header words for a page re-rendered from runs' JSON (``--render``): the runs merged, the
    rendering command (:func:`sequence_experiment.sources_note`), recomputed statistics, replaced rows."""
    r = meta.get("rendered") or {}
    return sources_note(meta) + (
        " (the OOV rates, data statistics, recomputed from the files and seeds)" if r.get("oov_recomputed") else ""
    )


def fit_key(row):
    """What identifies one fit in a page: data, task, method, templates, seed, C, training part, p."""
    return tuple(row.get(k) for k in ("dataset", "task", "method", "templates", "seed", "C", "train_fraction", "p"))


def render_from_json(paths, out, script, argv, write, data_stats=True):
    """Rewrite the Markdown page from the rows previous runs saved (no training): ``--render A.json [B.json ...]``.

    The first file gives the page's settings; the rows of the others are appended (each keeps its own
    training fraction) and their commands are named in the header. A fit present in several files
    (same :func:`fit_key`) keeps the row of the last file, and the page says which rows were replaced.
    """
    datas = read_runs(paths)
    rows, replaced = merge_rows(
        paths,
        datas,
        fit_key,
        fill=lambda r, m: dict(r, train_fraction=r.get("train_fraction", m.get("train_fraction", 0.8))),
    )
    meta = merged_meta(datas, script, argv)
    meta["rendered"]["replaced"] = replaced
    if "seeds" in meta:
        meta["seeds"] = sorted({s for data in datas for s in data["meta"].get("seeds", [])})  # every run's seeds
        if len(datas) > 1:
            meta.pop("oov", None)  # recomputed below for all of them
    # data statistics only (no model): the seeds and the files suffice
    if datas[0]["meta"].get("rendered", {}).get("oov_recomputed"):
        meta["rendered"]["oov_recomputed"] = True  # an earlier rendering computed them
    if data_stats and "oov" not in meta and "n_sentences" in meta:
        frac = meta.get("train_fraction", 0.8)
        meta["oov"] = {
            ds: oov_rates(ds, load_corpus(ds, n), meta["seeds"], frac) for ds, n in meta["n_sentences"].items()
        }
        meta["rendered"]["oov_recomputed"] = True
    write(rows, meta, out)
    print(f"table written to {out}")
    return 0


def write_table(rows, meta, out):
    """The Markdown page (one table per dataset) and the JSON of every row."""
    summ, deltas = summarize(rows), tp_deltas(rows)
    lines = [
        "# Chinese word segmentation: MTL^struct with TP1 and TP2 (MTL Tables 3-4)",
        "",
        f"Produced by `{meta['command']}` on {meta['date']} ({meta['machine']}, load average before the run "
        f"{meta['load_before']}){rendered_note(meta)}. Seeds {meta['seeds']}: each splits the SIGHAN 2005 gold test "
        f"file by sentence (`np.random.default_rng(seed)`) into a training part (80%, or the fraction in the "
        f"'train' column) and a test part; the training files are not in the data folder. "
        f"Tags {meta['scheme']} per character; templates TP1 (10 + B) and TP2 (17 + B) of the paper's Table 2. "
        f"F = Omega(w) + C * mean Hamming loss, certified gap eps = {meta['eps']:g} x C, time limit per fit "
        f"{meta['time_limit']}, {meta['executor']} executor with {meta['workers']} workers. C is fixed "
        f"(`--C`), not tuned: the paper picks C from n x {{0.01, ..., 100}} (n training sentences; here C / n = "
        + ", ".join(
            f"{C / meta['n_train'][ds]:.2g} on {DATASETS[ds][0]}"
            for ds in meta["n_train"]
            for C in sorted({r["C"] for r in rows})
        )
        + "). Mean ± standard deviation "
        "(ddof=1) over the seeds; P, R, F1, R_iv in percent; R_iv counts gold words seen in the seed's "
        "training part.",
        "",
    ]
    for ds in [d for d in DATASETS if any(s["dataset"] == d for s in summ)]:
        lines += [
            f"## {DATASETS[ds][0]}",
            "",
            "| method | templates | C | train | seeds | P | R | F1 | R_iv | train s | iterations | status "
            "| mean certified gap (rel.) | active templates |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for s in (s for s in summ if s["dataset"] == ds):
            gap = "-" if s["relative_gap"] is None else f"{s['gap']:.3g} ({s['relative_gap']:.2%})"
            lines.append(
                f"| {s['method']} | {s['templates'].upper()} | {s['C']:g} "
                f"| {s['train_fraction']:.0%} ({s['n_train']:.0f}) "
                f"| {len(s['seeds'])} | {_pm(s, 'precision')} "
                f"| {_pm(s, 'recall')} | {_pm(s, 'f1')} | {_pm(s, 'r_iv')} | {_pm(s, 'train_s', '.0f')} "
                f"| {_pm(s, 'iterations', '.0f')} | {s['status']} | {gap} "
                f"| {_pm(s, 'n_active_templates', '.1f')} of {s['n_templates']} |"
            )
        ref = PAPER_TABLE3[ds]
        lines += [
            "",
            "The paper's Table 3 (TP1 / TP2, mean over its five splits): "
            + "; ".join(
                f"{name} R {a[0]} / {b[0]}, P {a[1]} / {b[1]}, F1 {a[2]} / {b[2]}, R_iv {a[3]} / {b[3]}"
                for name, (a, b) in ref.items()
            )
            + ". Its Table 4 (the standard split: the whole training file, "
            "tested on the gold file split here), F1 TP1 / TP2: "
            + "; ".join(f"{name} {a} / {b}" for name, (a, b) in PAPER_TABLE4_F1[ds].items())
            + " (the random splits of Table 3 score higher than this standard split).",
            "",
            "What this run shows:",
            "",
        ]
        lines += findings(ds, summ, deltas, meta) + [""]
    inactive = [
        f"- {r['dataset']} {r['templates'].upper()} {r['method']} C={r['C']:g}{_part(r)} seed {r['seed']}: "
        f"{', '.join(r['inactive_templates']) or 'none'}"
        for r in rows
    ]
    lines += ["## Inactive templates", "", "Weight norm below 1e-5 of the largest, per fit:", ""] + inactive
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out.with_suffix(".json").write_text(
        json.dumps({"meta": meta, "summary": summ, "tp1_to_tp2": deltas, "rows": rows}, indent=2) + "\n",
        encoding="utf-8",
    )


def add_common_arguments(ap):
    """Options shared with ``pmtl_table8.py``: data slice, tag scheme, seeds and the default time limit."""
    ap.add_argument(
        "--scheme", choices=["BIE", "BMES"], default="BIE", help="character tags (default BIE, the paper's sec. 3.2)"
    )
    ap.add_argument("--train-fraction", type=float, default=0.8, dest="train_fraction")
    # --render JSON [JSON ...] comes with the shared parser (sequence_experiment.parser)
    ap.set_defaults(time_limit=1200.0)
    return ap


def make_meta(args, argv, script, corpora):
    return {
        "command": f"python -m benchmarks.reproductions.{Path(script).stem} "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {platform.python_version()}",
        "load_before": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "seeds": list(args.seeds),
        "scheme": args.scheme,
        "eps": args.eps,
        "executor": args.executor,
        "workers": args.workers,
        "time_limit": "none" if args.time_limit is None else f"{args.time_limit:g} s",
        "n_sentences": {ds: len(s) for ds, s in corpora.items()},
        "n_train": {ds: int(round(args.train_fraction * len(s))) for ds, s in corpora.items()},
        "train_fraction": args.train_fraction,
        "oov": {ds: oov_rates(ds, s, args.seeds, args.train_fraction) for ds, s in corpora.items()},
    }


def main(argv=None):
    ap = parser(
        __doc__.splitlines()[0],
        ROOT / "docs" / "results" / "cws_segmentation.md",
        default_C=(1000.0,),
        default_methods=("mtl",),
    )
    add_common_arguments(ap)
    ap.add_argument("--datasets", nargs="+", choices=list(DATASETS), default=list(DATASETS))
    ap.add_argument("--templates", nargs="+", choices=list(TEMPLATE_SETS), default=list(TEMPLATE_SETS))
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    args = ap.parse_args(argv)
    if args.render is not None:
        return render_from_json(args.render, args.out, "cws_segmentation.py", argv, write_table)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    np.seterr(all="ignore")
    corpora = {ds: load_corpus(ds, args.max_sentences) for ds in args.datasets}
    meta = make_meta(args, argv, "cws_segmentation.py", corpora)
    rows = []
    for ds in args.datasets:
        for seed in args.seeds:
            split = split_sentences(corpora[ds], seed, args.train_fraction)
            for tp in args.templates:
                for C in args.C:
                    for method in args.methods:
                        row = fit_and_score(method, C, TEMPLATE_SETS[tp], split, args)
                        row.update(dataset=ds, templates=tp, method=method, seed=seed)
                        rows.append(row)
                        gap = "-" if row["gap"] is None else f"{row['gap']:.3g} ({row['relative_gap']:.2%})"
                        print(
                            f"{DATASETS[ds][0]:>5} seed {seed} {tp.upper()} {method:>4} C={C:g}: F1 {row['f1']:.2f} "
                            f"R_iv {row['r_iv'] or float('nan'):.2f}  train {row['train_s']:.0f} s  "
                            f"{row['iterations']} it  gap {gap}  active {row['n_active_templates']}/"
                            f"{row['n_templates']}  {row['status']}",
                            flush=True,
                        )
                        write_table(rows, meta, args.out)
    print(f"table written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
