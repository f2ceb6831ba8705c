"""``cutplane compare``: batch MTL^struct against online SPOM on the same data, regulariser and C.

::

    cutplane compare --task sequence --templates T --train train.txt --test test.txt --C 10 \\
        [--epochs 20] [--eps 0.1] [--eta0 X] [--max-train N] [--max-test N] --report R.json --out DIR

Both solvers minimise the same ``F(w) = Omega(w) + C * (1/n) sum_i L_i(w)`` (``Omega`` the
template-group norm of ``--regularizer``, ``L_i`` the structured hinge with Hamming loss) with
the same features and oracle (:class:`problems.sequence.tagger.SequenceTagger` with
``solver=CuttingPlane(...)`` and ``solver=SPOM(...)``). The report puts side by side:

- the final objective ``F`` of each, MTL^struct's certified lower bound and gap;
- the *target* ``F_MTL``, MTL^struct's final (eps-optimal, certified) objective, and the time
  each method first reached an objective ``<= F_MTL`` (SPOM: "not reached" and its objective
  after the epochs when it never does), and the ratio of those times;
- the training times (feature extraction, shared, excluded; SPOM's eta0 tuning included and
  also given alone; objective and test-metric evaluations excluded from both);
- the test metric (chunk F1 when the labels are IOB chunks, else token accuracy);
- template sparsity (templates whose weight norm is <= 1e-5 times the largest), for SPOM's
  returned model and its last iterate.

Curves (both from the same runs as the table): objective vs training time, objective vs passes
over the data (an engine iteration is one pass: one oracle call on all sentences; SPOM: rounds
/ n), test metric vs time. MTL^struct's curve is its best upper bound, with its lower bound.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from cutplane.exceptions import InputError
from problems.command_options import Command, add_progress_options, positive_float, positive_int, show_progress
from problems.sequence.template_sets import TEMPLATE_SETS

__all__ = ["compare_sequence", "write_comparison", "plot_comparison", "comparison_markdown", "COMMAND"]

_ACTIVE_RTOL = 1e-5


def _is_iob(labels) -> bool:
    tags = {t for seq in labels for t in seq}
    return any(t[:2] in ("B-", "I-") for t in tags) and all(t == "O" or t[:2] in ("B-", "I-", "E-", "S-") for t in tags)


class _TestScorer:
    """The test metric of a weight vector, for a tagger whose feature index is fitted."""

    def __init__(self, est, X_test, y_test):
        self.est, self.y_test = est, y_test
        self.iob = _is_iob(y_test)
        self.name = "chunk_f1" if self.iob else "accuracy"
        self._feats = None
        self._X = X_test

    def __call__(self, w) -> float:
        from oracles.sequence import viterbi_decode
        from problems.metrics.accuracy import token_accuracy
        from problems.metrics.chunking import chunk_f1

        est = self.est
        if self._feats is None:
            self._feats = est.feature_index_.transform(self._X)
        f = self._feats
        codes = viterbi_decode(
            w,
            f.indptr,
            f.indices,
            f.sentence_ptr,
            f.n_features,
            len(est.labels_),
            transitions=est.feature_index_.has_transitions,
            bigram_features=f.bigram_features,
        )
        ptr = f.sentence_ptr
        pred = [est.labels_.decode(codes[ptr[i] : ptr[i + 1]]) for i in range(len(self._X))]
        return float(chunk_f1(self.y_test, pred).f1) if self.iob else float(token_accuracy(self.y_test, pred))


def _geometric_grid(limit=100000):
    out, k = set(), 1.0
    while k < limit:
        out.add(int(k))
        k *= 1.25
    return out


def _sparsity(norms):
    norms = np.asarray(norms, dtype=np.float64)
    top = float(norms.max()) if norms.size else 0.0
    active = int(np.count_nonzero(norms > _ACTIVE_RTOL * top)) if top > 0 else 0
    return {"n_templates": int(norms.size), "n_active": active, "n_inactive": int(norms.size) - active}


def _first_reach(times, values, target):
    """First time an objective is <= target (relative slack 1e-12 for the C * (F / C) round trip)."""
    hit = np.flatnonzero(np.asarray(values) <= target + 1e-12 * abs(target))
    return (float(np.asarray(times)[hit[0]]), int(hit[0])) if hit.size else (None, None)


def compare_sequence(
    X_train,
    y_train,
    X_test,
    y_test,
    templates,
    *,
    C=1.0,
    regularizer="mtl",
    p=1.5,
    eps=0.1,
    max_iter=1000,
    epochs=20,
    eta0=None,
    averaged=True,
    seed=0,
    time_limit=None,
    executor=None,
    n_workers=None,
    verbose=False,
) -> dict:
    """Train MTL^struct (cutting planes) and SPOM on the same task; the comparison as a dict.

    Parameters
    ----------
    X_train, y_train, X_test, y_test : lists of sentences and label sequences
    templates : str
        CRF++ templates.
    C, regularizer, p, eps, max_iter : as :class:`~problems.sequence.tagger.SequenceTagger`
    epochs, eta0, averaged, seed : SPOM's options
    time_limit : float, optional
        Per method, seconds.

    Returns
    -------
    dict
        ``{"task", "C", ..., "methods": {"mtl": {...}, "spom": {...}}, "target_objective",
        "time_ratio", ...}`` with the curves under ``methods[*]["curve"]`` (JSON-ready).
    """
    from problems.sequence.tagger import SequenceTagger
    from problems.solvers import SPOM, CuttingPlane

    common = dict(C=C, regularizer=regularizer, p=p, min_count=1, active_rtol=_ACTIVE_RTOL)
    run = dict(time_limit=time_limit, executor=executor, n_workers=n_workers, verbose=verbose)
    # ---------------------------------------------------------------- batch
    mtl = SequenceTagger(templates, solver=CuttingPlane(eps=eps, max_iter=max_iter, **run), **common)
    scorer = _TestScorer(mtl, X_test, y_test)
    grid, rows, cb_time, cb_cpu = _geometric_grid(), [], [0.0], [0.0]

    def on_iteration(info):
        c0, p0 = time.perf_counter(), time.process_time()
        metric = scorer(info.w) if info.iteration in grid else None
        rows.append((info.iteration, info.elapsed - cb_time[0], metric))
        cb_time[0] += time.perf_counter() - c0
        cb_cpu[0] += time.process_time() - p0
        return False

    t0, p0 = time.perf_counter(), time.process_time()
    mtl.fit(X_train, y_train, callback=on_iteration)
    mtl_wall = time.perf_counter() - t0
    mtl_cpu = time.process_time() - p0 - cb_cpu[0]
    res = mtl.result_
    mtl_time = float(res.time_s) - cb_time[0]
    # the engine does not call back on its last (stopping) iteration: bounds from the history,
    # times from the callbacks, the end at the total training time
    hist = res.history
    times = [r[1] for r in rows][: len(hist)] + [mtl_time] * (len(hist) - len(rows))
    metric = [[r[1], r[2]] for r in rows if r[2] is not None]
    if len(rows) < len(hist) or rows[-1][2] is None:
        metric.append([mtl_time, scorer(mtl.coef_)])
    target = float(mtl.objective_)
    mtl_curve = {
        "passes": list(range(1, len(hist) + 1)),
        "time_s": times,
        "objective": (C * hist.best_upper).tolist(),
        "lower_bound": (C * hist.lower).tolist(),
        "test_metric": metric,
    }
    mtl_reach, _ = _first_reach(mtl_curve["time_s"], mtl_curve["objective"], target)
    from cutplane.groups import group_norms

    groups = mtl.feature_index_.coordinate_groups(len(mtl.labels_))
    n_groups = len(mtl.feature_index_.template_names)
    out_mtl = {
        "solver": "cutting-plane",
        "objective": target,
        "lower_bound": float(mtl.lower_bound_),
        "gap": float(mtl.gap_),
        "status": res.status,
        "iterations": int(mtl.n_iter_),
        "train_time_s": mtl_time,
        "wall_time_s": mtl_wall,
        "cpu_time_s": mtl_cpu,
        "time_to_target_s": mtl_reach,
        "oracle_time_s": float(res.oracle_time_s),
        "reduced_solver_time_s": float(res.solver_time_s),
        "test_metric": scorer(mtl.coef_),
        "sparsity": _sparsity(group_norms(mtl.coef_, groups, n_groups)),
        "template_norms": mtl.template_norms_,
        "curve": mtl_curve,
    }
    # ---------------------------------------------------------------- online
    spom = SequenceTagger(
        templates, solver=SPOM(epochs=epochs, eta0=eta0, averaged=averaged, seed=seed, **run), **common
    )
    s_rows, s_cpu = [], [0.0]

    def on_epoch(info):
        p0 = time.process_time()
        s_rows.append((info.passes, info.train_time, C * info.objective, scorer(info.w)))
        s_cpu[0] += time.process_time() - p0
        return False

    t0, p0 = time.perf_counter(), time.process_time()
    spom.fit(X_train, y_train, callback=on_epoch)
    spom_wall = time.perf_counter() - t0
    spom_cpu = time.process_time() - p0 - s_cpu[0]
    sres = spom.result_
    tune = float(sres.tune_time_s)
    h = sres.history
    s_curve = {
        "passes": h.passes.tolist(),
        "time_s": (tune + h.train_time).tolist(),
        "objective": (C * h.objective).tolist(),
        "test_metric": [[tune + r[1], r[3]] for r in s_rows],
    }
    reach, idx = _first_reach(s_curve["time_s"], s_curve["objective"], target)
    out_spom = {
        "solver": "spom",
        "objective": float(spom.objective_),
        "status": sres.status,
        "epochs": int(sres.epochs),
        "eta0": float(sres.eta0),
        "eta0_tuning": {str(k): v for k, v in sres.tuning.items()},
        "tune_time_s": tune,
        "train_time_s": tune + float(sres.time_s),
        "eval_time_s": float(sres.eval_time_s),
        "wall_time_s": spom_wall,
        "cpu_time_s": spom_cpu,
        "time_to_target_s": reach,
        "passes_to_target": None if idx is None else float(h.passes[idx]),
        "reached_target": reach is not None,
        "relative_gap_to_mtl_lower_bound": (float(spom.objective_) - out_mtl["lower_bound"])
        / abs(out_mtl["lower_bound"]),
        "test_metric": scorer(spom.coef_),
        "averaged": bool(averaged),
        "sparsity": _sparsity(sres.group_norms),
        "sparsity_last_iterate": _sparsity(group_norms(sres.w_last, groups, n_groups)),
        "template_norms": spom.template_norms_,
        "curve": s_curve,
    }
    if reach is not None and mtl_reach:
        ratio, ratio_kind = reach / mtl_reach, "spom_time_to_target / mtl_time_to_target"
    else:
        ratio = out_spom["train_time_s"] / mtl_reach if mtl_reach else None
        ratio_kind = "lower bound: spom_total_time / mtl_time_to_target (SPOM never reached the target)"
    return {
        "task": "sequence",
        "C": float(C),
        "regularizer": regularizer,
        "eps": float(eps),
        "n_train_sentences": len(X_train),
        "n_test_sentences": len(X_test),
        "n_features": int(mtl.feature_index_.n_features_),
        "n_labels": len(mtl.labels_),
        "dim": int(mtl.coef_.size),
        "metric": scorer.name,
        "score_unit": "percent",  # test_metric: chunk F1 or token accuracy, as the other commands' scores
        "target_objective": target,
        "time_ratio": ratio,
        "time_ratio_kind": ratio_kind,
        "methods": {"mtl": out_mtl, "spom": out_spom},
    }


def _fmt(v, spec=".6g"):
    return "n/a" if v is None else (format(v, spec) if isinstance(v, float) else str(v))


def comparison_markdown(rep) -> str:
    """The side-by-side table of a :func:`compare_sequence` report, as Markdown."""
    m, s = rep["methods"]["mtl"], rep["methods"]["spom"]
    reach = (
        _fmt(s["time_to_target_s"], ".3g")
        if s["reached_target"]
        else f"not reached (F = {s['objective']:.6g} after {s['epochs']} epochs)"
    )
    lines = [
        f"# Batch MTL^struct vs online SPOM ({rep['regularizer']}, C = {rep['C']:g})",
        "",
        f"{rep['n_train_sentences']} training / {rep['n_test_sentences']} test sentences, "
        f"{rep['n_features']} features, {rep['n_labels']} labels, dim {rep['dim']}. Target: MTL^struct's "
        f"final objective F = {rep['target_objective']:.6g} (certified gap {m['gap']:.3g} <= eps {rep['eps']:g}).",
        "",
        "| | MTL^struct (cutting planes) | SPOM (online) |",
        "|---|---|---|",
        f"| final objective F | {m['objective']:.6g} | {s['objective']:.6g} |",
        f"| certified lower bound | {m['lower_bound']:.6g} | - |",
        f"| (F - lower bound) / lower bound | {m['gap'] / abs(m['lower_bound']):.3g} | "
        f"{s['relative_gap_to_mtl_lower_bound']:.3g} |",
        f"| time to target (s) | {_fmt(m['time_to_target_s'], '.3g')} | {reach} |",
        f"| training time (s) | {m['train_time_s']:.3g} ({m['iterations']} iterations; oracle "
        f"{m['oracle_time_s']:.3g}, reduced solver {m['reduced_solver_time_s']:.3g}) | {s['train_time_s']:.3g} "
        f"({s['epochs']} epochs, eta0 {s['eta0']:.3g}, tuning {s['tune_time_s']:.3g} s) |",
        f"| process CPU s of the fit (all threads; test scoring excluded, SPOM's objective evaluations "
        f"included) | {_fmt(m.get('cpu_time_s'), '.3g')} | {_fmt(s.get('cpu_time_s'), '.3g')} |",
        f"| test {rep['metric']} | {m['test_metric']:.2f} | {s['test_metric']:.2f} |",
        f"| active templates (> 1e-5 rel.) | {m['sparsity']['n_active']}/{m['sparsity']['n_templates']} | "
        f"{s['sparsity']['n_active']}/{s['sparsity']['n_templates']} "
        f"(last iterate {s['sparsity_last_iterate']['n_active']}) |",
        "",
        f"Time ratio ({rep['time_ratio_kind']}): {_fmt(rep['time_ratio'], '.3g')}",
        "",
    ]
    if rep.get("command"):
        lines += [f"Produced by `{rep['command']}` on {rep.get('date', '?')} ({rep.get('machine', '?')}).", ""]
    return "\n".join(lines)


def write_comparison(rep, json_path) -> tuple:
    """Write the report as JSON and its Markdown table beside it (same name, ``.md``)."""
    json_path = Path(json_path)
    json_path.write_text(json.dumps(rep, indent=2, allow_nan=True) + "\n")
    md = json_path.with_suffix(".md")
    md.write_text(comparison_markdown(rep))
    return json_path, md


def plot_comparison(rep, out_dir) -> list:
    """PNG curves into ``out_dir`` (objective vs time, vs passes; test metric vs time); [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    m, s = rep["methods"]["mtl"]["curve"], rep["methods"]["spom"]["curve"]
    files = []
    for x, name, label in (
        ("time_s", "objective_vs_time.png", "training time (s)"),
        ("passes", "objective_vs_passes.png", "passes over the data"),
    ):
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(m[x], m["objective"], "b-", label="MTL^struct: objective (best upper bound)")
        ax.plot(m[x], m["lower_bound"], "b:", label="MTL^struct: certified lower bound")
        ax.plot(s[x][1:], s["objective"][1:], "r.-", label="SPOM: objective")
        ax.axhline(rep["target_objective"], color="gray", lw=0.8, ls="--", label="target (MTL final)")
        lo = min(min(m["lower_bound"][-1:] or [0]), rep["target_objective"])
        top = max(s["objective"][1:] + m["objective"][:1]) if s["objective"][1:] else m["objective"][0]
        ax.set_ylim(lo - 0.05 * abs(lo), min(top, 3 * abs(rep["target_objective"])))
        ax.set_xlabel(label)
        ax.set_ylabel("F(w)")
        ax.set_xscale("log" if x == "time_s" else "linear")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out_dir / name, dpi=120)
        plt.close(fig)
        files.append(out_dir / name)
    fig, ax = plt.subplots(figsize=(6, 4))
    for curve, style, label in ((m, "b.-", "MTL^struct"), (s, "r.-", "SPOM")):
        pts = np.asarray(curve["test_metric"], dtype=float).reshape(-1, 2)
        ax.plot(pts[:, 0], pts[:, 1], style, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("training time (s)")
    ax.set_ylabel(f"test {rep['metric']} (percent)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "test_metric_vs_time.png", dpi=120)
    plt.close(fig)
    files.append(out_dir / "test_metric_vs_time.png")
    return files


# ------------------------------------------------------------------------- command
def add_arguments(p):
    """``compare``'s options."""
    p.add_argument("--task", required=True, choices=["sequence"], help="what to compare on")
    p.add_argument("--templates", required=True, help="CRF++ template file, or a set name: " + ", ".join(TEMPLATE_SETS))
    p.add_argument("--train", required=True, type=Path, help="labelled CoNLL / CRF++ columns (may be .gz)")
    p.add_argument("--test", required=True, type=Path, help="labelled test file in the same format")
    p.add_argument("--C", type=positive_float, default=1.0, help="F = Omega + C * mean loss (default 1)")
    p.add_argument(
        "--regularizer",
        choices=["mtl", "ssvm", "pmtl"],
        default="mtl",
        help="Omega of both methods: mtl (default), ssvm or pmtl",
    )
    p.add_argument("--p", type=positive_float, default=1.5, help="p of the p-block norm for pmtl")
    p.add_argument("--eps", type=positive_float, default=0.1, help="MTL^struct's certified tolerance on F")
    p.add_argument(
        "--max-iter",
        type=positive_int,
        default=1000,
        dest="max_iter",
        metavar="N",
        help="MTL^struct's iteration budget (default 1000)",
    )
    p.add_argument("--epochs", type=positive_int, default=20, help="SPOM passes (default 20)")
    p.add_argument("--eta0", type=positive_float, default=None, help="SPOM eta0 (default: tuned on a subsample)")
    p.add_argument(
        "--last-iterate",
        action="store_true",
        dest="last_iterate",
        help="SPOM returns its last iterate instead of the averaged model",
    )
    p.add_argument("--seed", type=int, default=0, help="SPOM's seed")
    p.add_argument(
        "--max-train", type=positive_int, default=None, dest="max_train", help="use only the first N training sentences"
    )
    p.add_argument(
        "--max-test", type=positive_int, default=None, dest="max_test", help="use only the first N test sentences"
    )
    p.add_argument("--time-limit", type=positive_float, default=None, dest="time_limit", help="seconds per method")
    p.add_argument(
        "--executor",
        choices=["serial", "threads"],
        default=None,
        help="map of the oracle over sentences, for both methods (default serial)",
    )
    p.add_argument("--workers", type=positive_int, default=None, help="workers of --executor threads")
    p.add_argument("--report", type=Path, help="write the comparison as JSON (and Markdown beside it)")
    p.add_argument("--out", type=Path, help="write the PNG curves into this folder")
    add_progress_options(p)


def _provenance(argv) -> dict:
    """The command line, the date and the machine (cores, load average) of this run."""
    import os
    import platform
    import shlex

    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {
        "command": "cutplane " + shlex.join(argv),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
    }


def run(args):
    """Train both, write the report / curves, print the Markdown table."""
    from problems.io.conll import read_conll
    from problems.sequence.command import templates_text

    templates = templates_text(args.templates, "chunking")
    train, test = read_conll(args.train), read_conll(args.test)
    assert train.labels is not None and test.labels is not None  # read_conll reads the label column
    Xtr, ytr = train.inputs[: args.max_train], train.labels[: args.max_train]
    Xte, yte = test.inputs[: args.max_test], test.labels[: args.max_test]
    if not Xtr or not Xte:
        raise InputError("no sentences to train or test on", path=args.train if not Xtr else args.test)
    rep = compare_sequence(
        Xtr,
        ytr,
        Xte,
        yte,
        templates,
        C=args.C,
        regularizer=args.regularizer,
        p=args.p,
        eps=args.eps,
        max_iter=args.max_iter,
        epochs=args.epochs,
        eta0=args.eta0,
        averaged=not args.last_iterate,
        seed=args.seed,
        time_limit=args.time_limit,
        executor=args.executor,
        n_workers=args.workers,
        verbose=show_progress(args),
    )
    rep.update(train_file=str(args.train), test_file=str(args.test), **_provenance(args.argv))
    if args.report is not None:
        write_comparison(rep, args.report)
    if args.out is not None:
        rep["figures"] = [str(f) for f in plot_comparison(rep, args.out)]
        if args.report is not None:
            write_comparison(rep, args.report)
    sys.stdout.write(comparison_markdown(rep))
    return 0


#: The ``compare`` subcommand.
COMMAND = Command("train MTL^struct (batch) and SPOM (online) on the same task and compare", add_arguments, run)
