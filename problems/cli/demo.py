"""``cutplane demo``: MTL^struct, SPOM and the plain structural SVM on a generated tagging task.

The task (:func:`problems.demo_data.make_demo_tagging`) has 4 labels drawn from a Markov chain,
3 *informative* columns (a word depends on its own token's label) and 6 *noise* columns (words
independent of the labels), with one CRF++ template per column (``U00``..``U08``), one on the
previous token of each informative column (``U10``..``U12``) and ``B`` (label transitions). The
templates are of four kinds (:func:`template_kinds`): ``informative`` (the current token of an
informative column), ``previous token`` (``U1j``: it only repeats what ``U0j`` at the previous
position and ``B`` already say, since a word depends on its own label alone), ``noise`` and
``transitions`` (``B``). Three learners of :class:`~problems.sequence.tagger.SequenceTagger` on
the same features and oracle:

- MTL^struct (``regularizer="mtl"``, cutting planes): ``F = 1/2 (sum_j ||w_j||)^2 + C mean hinge``,
  certified gap ``<= eps``; it can set whole templates to zero (Mao and Tsang 2013): the noise ones, and
  also the redundant previous-token ones;
- SPOM (``regularizer="mtl"``, ``solver=SPOM(...)``): the same ``F`` by the online proximal method
  (Martins et al. 2011), no certificate of its own; its gap is measured against MTL^struct's certified lower
  bound of the same ``F``;
- SSVM (``regularizer="ssvm"``): ``F = 1/2 ||w||^2 + C mean hinge`` (a different ``F``).

The table, a JSON report, the data files (CoNLL columns and templates, inputs of ``cutplane
train --task sequence``) and two PNGs (bounds per pass, template weights) are written to
``--out-dir`` (default ``./cutplane-demo``). What the table, the closing lines and the plots'
titles say each method kept and set to zero is read from the fitted models, not written in
advance; the run's time is measured and printed.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import numpy as np

from problems.command_options import Command, add_progress_options, show_progress

__all__ = [
    "run_demo",
    "demo_report",
    "format_demo_table",
    "plot_demo",
    "template_kinds",
    "kept_and_zeroed",
    "describe_zeroed",
    "DEMO_C",
    "DEMO_EPS",
    "DEMO_EPOCHS",
    "DEFAULT_OUT_DIR",
    "COMMAND",
]

DEMO_C = 10.0
DEMO_EPS = 0.05
DEMO_EPOCHS = 20
DEFAULT_OUT_DIR = "cutplane-demo"
_ACTIVE_RTOL = 1e-5
_METHODS = (("mtl", "MTL^struct", "mtl"), ("spom", "SPOM", "mtl"), ("ssvm", "SSVM", "ssvm"))
_COLUMNS = (
    "method",
    "objective",
    "lower_bound",
    "gap",
    "passes",
    "test_acc",
    "active",
    "noise_dropped",
    "prev_dropped",
    "noise_share",
    "time_s",
)
#: The kinds of :func:`template_kinds`, in the order they are listed.
KINDS = ("informative", "noise", "previous token", "transitions")
_PLURAL = {
    "informative": "informative templates",
    "noise": "noise templates",
    "previous token": "previous-token templates",
    "transitions": "transition templates",
}


def template_kinds(task) -> dict:
    """The kind of every template of a generated tagging task: ``"informative"`` (a template of
    ``task.informative`` on the current token), ``"previous token"`` (one of ``task.informative``
    on another position: ``U1j:%x[-1,j]``), ``"noise"`` (``task.noise``) or ``"transitions"``
    (``B``); in the order of the template file."""
    kinds = {}
    for line in task.templates.split():
        name = line.split(":", 1)[0]
        if name in task.noise:
            kinds[name] = "noise"
        elif name in task.informative:
            rows = {int(r) for r in re.findall(r"%x\[(-?\d+),", line)}
            kinds[name] = "informative" if rows == {0} else "previous token"
        elif name.startswith("B"):
            kinds[name] = "transitions"
        else:
            kinds[name] = "other"
    return kinds


def kept_and_zeroed(entry, kinds) -> tuple:
    """``(kept, zeroed)`` of one method's report entry: its active templates, and the others
    grouped by kind (kind -> names, in :data:`KINDS` order, kinds with none left out)."""
    kept = [t for t in entry["template_norms"] if t in set(entry["active_templates"])]
    zeroed: dict = {}
    for t in entry["template_norms"]:
        if t not in set(entry["active_templates"]):
            zeroed.setdefault(kinds.get(t, "other"), []).append(t)
    order = {k: i for i, k in enumerate(KINDS)}
    return kept, dict(sorted(zeroed.items(), key=lambda kv: order.get(kv[0], len(order))))


def describe_zeroed(zeroed, kinds, *, names=True) -> str:
    """``"all 6 noise templates (U03, ..) and all 3 previous-token templates (U10, ..)"``, with
    "all n" / "k of n" as the counts say; ``"none"`` when nothing was set to zero."""
    parts = []
    for kind, members in zeroed.items():
        total = sum(1 for k in kinds.values() if k == kind)
        share = f"all {total}" if len(members) == total else f"{len(members)} of {total}"
        parts.append(f"{share} {_PLURAL.get(kind, kind)}" + (f" ({', '.join(members)})" if names else ""))
    return " and ".join(parts) if parts else "none"


def _method_row(key, name, est, task, C, fit_s):
    """The report entry of one fitted tagger (objectives on the scale of F)."""
    norms = est.template_norms_
    total = float(sum(norms.values()))
    noise = [t for t in task.noise if t in norms]
    dropped = [t for t in noise if norms[t] <= _ACTIVE_RTOL * max(norms.values())]
    res = est.result_
    spom = key == "spom"
    previous = [t for t, k in template_kinds(task).items() if k == "previous token" and t in norms]
    entry = {
        "name": name,
        "objective": float(est.objective_),
        "lower_bound": None if spom else float(est.lower_bound_),
        "gap": None if spom else float(est.gap_),
        "status": res.status,
        "iterations": int(est.n_iter_),
        "test_accuracy": 100.0 * float(est.score(task.X_test, task.y_test)),  # percent, as every CLI score
        "n_templates": len(norms),
        "active_templates": list(est.active_templates_),
        "noise_templates": noise,
        "noise_dropped": dropped,
        "noise_share": float(sum(norms[t] for t in noise) / total) if total > 0 else 0.0,
        "previous_token_templates": previous,
        "previous_token_dropped": [t for t in previous if norms[t] <= _ACTIVE_RTOL * max(norms.values())],
        "template_norms": dict(norms),
        "template_weights": dict(est.template_weights_),
        "train_time_s": float(res.time_s) + float(getattr(res, "tune_time_s", 0.0)),
        "fit_time_s": fit_s,
    }
    if spom:
        h = res.history
        entry.update(
            eta0=float(res.eta0),
            tune_time_s=float(res.tune_time_s),
            averaged=bool(res.averaged),
            curve={"passes": h.passes.tolist(), "objective": (C * h.objective).tolist()},
        )
    else:
        h = res.history
        entry.update(
            eps=float(est.solver_options_.eps),
            curve={
                "passes": list(range(1, len(h) + 1)),
                "objective": (C * h.best_upper).tolist(),
                "lower_bound": (C * h.lower).tolist(),
            },
        )
    return entry


def demo_report(*, seed=0, C=DEMO_C, eps=DEMO_EPS, epochs=DEMO_EPOCHS, task=None, verbose=False) -> dict:
    """Train the three learners on the demo task; the comparison as a JSON-ready dict.

    Parameters
    ----------
    seed : int
        Seed of the generated task and of SPOM's epoch orders.
    C, eps : float
        ``F = Omega + C * mean hinge``; certified tolerance of the batch solvers on ``F``.
    epochs : int
        SPOM's passes over the data.
    task : problems.synthetic.TaggingTask, optional
        Default :func:`problems.demo_data.make_demo_tagging` ``(seed)``.
    verbose : bool, default=False
        Show each solver's progress counter (stderr).

    Returns
    -------
    dict
        ``{"seed", "C", "eps", "n_train", ..., "methods": {"mtl": {...}, "spom": {...}, "ssvm": {...}}}``;
        SPOM's ``gap_to_mtl_lower_bound`` is ``F_SPOM - lower_bound_MTL`` (certified: both are the same ``F``).
    """
    from problems.demo_data import make_demo_tagging
    from problems.sequence.tagger import SequenceTagger
    from problems.solvers import SPOM, CuttingPlane

    task = make_demo_tagging(seed) if task is None else task
    methods = {}
    for key, name, regularizer in _METHODS:
        solver = (
            SPOM(epochs=epochs, seed=seed, verbose=verbose) if key == "spom" else CuttingPlane(eps=eps, verbose=verbose)
        )
        est = SequenceTagger(
            task.templates, C=C, regularizer=regularizer, min_count=1, active_rtol=_ACTIVE_RTOL, solver=solver
        )
        t0 = time.perf_counter()
        est.fit(task.X_train, task.y_train)
        methods[key] = _method_row(key, name, est, task, C, time.perf_counter() - t0)
    spom, mtl = methods["spom"], methods["mtl"]
    spom["gap_to_mtl_lower_bound"] = spom["objective"] - mtl["lower_bound"]
    return {
        "seed": int(seed),
        "C": float(C),
        "eps": float(eps),
        "epochs": int(epochs),
        "n_train": len(task.X_train),
        "n_test": len(task.X_test),
        "n_train_tokens": int(sum(len(s) for s in task.X_train)),
        "templates": task.templates.split(),
        "informative_templates": list(task.informative),
        "noise_templates": list(task.noise),
        "template_kinds": template_kinds(task),
        "methods": methods,
    }


def format_demo_table(rep) -> str:
    """The comparison table of :func:`demo_report` as aligned text (one row per method)."""
    rows = []
    for key, m in rep["methods"].items():
        spom = key == "spom"
        gap = m["gap_to_mtl_lower_bound"] if spom else m["gap"]
        rows.append(
            {
                "method": m["name"],
                "objective": f"{m['objective']:.4f}",
                "lower_bound": "-" if spom else f"{m['lower_bound']:.4f}",
                "gap": f"{gap:.4g}" + ("*" if spom else ""),
                "passes": f"{m['iterations']}",
                "test_acc": f"{m['test_accuracy']:.2f}",
                "active": f"{len(m['active_templates'])}/{m['n_templates']}",
                "noise_dropped": f"{len(m['noise_dropped'])}/{len(m['noise_templates'])}",
                "prev_dropped": f"{len(m['previous_token_dropped'])}/{len(m['previous_token_templates'])}",
                "noise_share": f"{m['noise_share']:.4f}",
                "time_s": f"{m['train_time_s']:.2f}",
            }
        )
    cells = [list(_COLUMNS)] + [[r[c] for c in _COLUMNS] for r in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(_COLUMNS))]
    return (
        "\n".join(
            "  ".join(c.rjust(w) if j else c.ljust(w) for j, (c, w) in enumerate(zip(row, widths))) for row in cells
        )
        + "\n"
    )


def plot_demo(rep, out_dir) -> list:
    """``bounds.png`` (objective and bounds per pass; certified gaps) and ``template_weights.png``
    (each template's share ``||w_j|| / sum_k ||w_k||`` per method, noise templates outlined,
    and a title that says which templates MTL^struct kept and set to zero, read from ``rep``)
    in ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out_dir = Path(out_dir)
    m, s, v = (rep["methods"][k] for k in ("mtl", "spom", "ssvm"))
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15.0, 4.2))
    ax1.plot(m["curve"]["passes"], m["curve"]["objective"], "b-", label="MTL^struct: best upper bound")
    ax1.plot(m["curve"]["passes"], m["curve"]["lower_bound"], "b:", label="MTL^struct: certified lower bound")
    ax1.plot(s["curve"]["passes"][1:], s["curve"]["objective"][1:], "r.-", label="SPOM: objective")
    ax1.set_ylim(m["lower_bound"] - 0.5 * abs(m["lower_bound"]), 3.0 * abs(m["objective"]))
    ax1.set(
        xlabel="passes over the data (engine iterations / SPOM epochs)",
        ylabel="F(w)",
        title="MTL^struct and SPOM: the same F",
    )
    ax1.legend(fontsize=7)
    ax2.plot(v["curve"]["passes"], v["curve"]["objective"], "g-", label="SSVM: best upper bound")
    ax2.plot(v["curve"]["passes"], v["curve"]["lower_bound"], "g:", label="SSVM: certified lower bound")
    ax2.set_ylim(v["lower_bound"] - 0.5 * abs(v["lower_bound"]), 3.0 * abs(v["objective"]))
    ax2.set(xlabel="iteration", ylabel="F(w)", title="SSVM (1/2 ||w||^2)")
    ax2.legend(fontsize=7)
    for entry, style, label in ((m, "b-", "MTL^struct"), (v, "g-", "SSVM")):
        gap = np.asarray(entry["curve"]["objective"]) - np.asarray(entry["curve"]["lower_bound"])
        ok = np.isfinite(gap) & (gap > 0)
        ax3.semilogy(np.asarray(entry["curve"]["passes"])[ok], gap[ok], style, label=f"{label}: certified gap")
    sp_gap = np.asarray(s["curve"]["objective"][1:]) - m["lower_bound"]
    ax3.semilogy(s["curve"]["passes"][1:], np.maximum(sp_gap, 1e-12), "r.-", label="SPOM: F - MTL^struct's lower bound")
    ax3.axhline(rep["eps"], color="gray", ls="--", lw=0.8, label="eps")
    ax3.set(xlabel="passes over the data", ylabel="gap", title="certified gaps")
    ax3.legend(fontsize=7)
    fig.suptitle(f"cutplane demo: C = {rep['C']:g}, eps = {rep['eps']:g}, {rep['n_train']} training sentences")
    fig.tight_layout()
    bounds = out_dir / "bounds.png"
    fig.savefig(bounds, dpi=110)
    plt.close(fig)

    names = list(m["template_norms"])
    noise = set(rep["noise_templates"])
    kinds = rep["template_kinds"]
    kept, zeroed = kept_and_zeroed(m, kinds)
    x = np.arange(len(names))
    fig, ax = plt.subplots(figsize=(max(7.0, 0.6 * len(names)), 4.2))
    floor = 1e-6
    for k, (entry, color) in enumerate(((m, "tab:blue"), (s, "tab:red"), (v, "tab:green"))):
        norms = np.array([entry["template_norms"][t] for t in names])
        share = norms / norms.sum() if norms.sum() > 0 else norms
        ax.bar(
            x + (k - 1) * 0.27,
            np.maximum(share, floor),
            width=0.27,
            color=color,
            label=entry["name"],
            edgecolor=[("black" if t in noise else color) for t in names],
        )
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 1.5)
    ax.set_xticks(x)
    tag = {"noise": "\n(noise)", "previous token": "\n(prev.)"}
    ax.set_xticklabels([t + tag.get(kinds.get(t, ""), "") for t in names], fontsize=7)
    ax.set_ylabel("||w_j|| / sum_k ||w_k||  (zero drawn at 1e-6)")
    ax.set_title(
        f"template weights: MTL^struct keeps {', '.join(kept)}\n"
        f"and sets to zero {describe_zeroed(zeroed, kinds, names=False)}",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    weights = out_dir / "template_weights.png"
    fig.savefig(weights, dpi=110)
    plt.close(fig)
    return [bounds, weights]


def run_demo(*, seed=0, out_dir=None, out, verbose=False):
    """Generate the task, train, print the table to ``out``, write report, data and plots; return 0.

    Parameters
    ----------
    seed : int
        Seed of the generated task (and of SPOM).
    out_dir : path, optional
        Output folder (default ``./cutplane-demo``); created when missing.
    out : text stream
        Where the table goes (the CLI passes ``sys.stdout``).
    verbose : bool, default=False
        Show the solvers' progress counters on stderr.
    """
    from problems.demo_data import make_demo_tagging, write_tagging_files
    from problems.plots import matplotlib_available

    t_start = time.perf_counter()
    out_dir = Path(DEFAULT_OUT_DIR if out_dir is None else out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    task = make_demo_tagging(seed)
    files = write_tagging_files(task, out_dir / "data")
    t0 = time.perf_counter()
    rep = demo_report(seed=seed, task=task, verbose=verbose)
    rep["training_time_s"] = time.perf_counter() - t0
    figures = plot_demo(rep, out_dir) if matplotlib_available() else []
    rep["figures"] = [str(f) for f in figures]
    rep["data_files"] = {k: str(p) for k, p in files.items()}
    rep["total_time_s"] = time.perf_counter() - t_start
    report = out_dir / "report.json"
    report.write_text(json.dumps(rep, indent=2) + "\n")

    mtl = rep["methods"]["mtl"]
    kinds = rep["template_kinds"]
    counts = {k: sum(1 for v in kinds.values() if v == k) for k in KINDS}
    kept, zeroed = kept_and_zeroed(mtl, kinds)
    out.write(
        f"cutplane demo: sequence tagging, {rep['n_train']} training sentences "
        f"({rep['n_train_tokens']} tokens), {len(rep['templates'])} templates: {counts['informative']} on the "
        f"current token of an informative column, {counts['previous token']} on its previous token, "
        f"{counts['noise']} on noise columns, and B; C = {rep['C']:g}, eps = {rep['eps']:g}\n"
        f"  MTL^struct and SPOM minimise F = 1/2 (sum_j ||w_j||)^2 + C * mean hinge; "
        f"SSVM minimises 1/2 ||w||^2 + C * mean hinge\n\n"
    )
    out.write(format_demo_table(rep))
    out.write(
        f"\n* SPOM certifies nothing itself: its gap is F_SPOM minus MTL^struct's certified lower bound "
        f"{mtl['lower_bound']:.4f} of the same F.\n"
        f"active: templates with ||w_j|| > {_ACTIVE_RTOL:g} * max_k ||w_k||; noise_dropped, prev_dropped: noise "
        f"and previous-token templates set to zero; noise_share: sum of ||w_j|| over noise templates / sum over "
        f"all.\n"
        f"passes: engine iterations (one oracle call on all sentences) or SPOM epochs; test_acc: token accuracy "
        f"on the {rep['n_test']} test sentences, percent; time_s: training.\n"
        f"templates kept by MTL^struct: {', '.join(kept)}; set to zero: {describe_zeroed(zeroed, kinds)}.\n"
        f"(a previous-token template repeats what the template of the same column at the previous position and B "
        f"already say: each word depends on its own token's label only)\n\n"
    )
    out.write(f"report:  {report}\n")
    if figures:
        out.write("plots:   " + ", ".join(str(f) for f in figures) + "\n")
    else:
        out.write("plots:   not written (matplotlib is not installed)\n")
    out.write(
        f"data:    {files['train']}, {files['test']}, {files['templates']}\n"
        f"time:    {rep['total_time_s']:.1f} s, {rep['training_time_s']:.1f} s of it training the three methods "
        f"(measured on this run, from the data to the plots; start-up and imports not counted)\n"
        f"next:    cutplane train --task sequence --train {files['train']} --templates {files['templates']} "
        f"--C {rep['C']:g} --regularizer mtl --model {out_dir / 'model.npz'} "
        f"--plot {out_dir / 'train-plots'}\n"
    )
    return 0


# ------------------------------------------------------------------------- command
def add_arguments(p):
    """``cutplane demo``'s options."""
    p.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    p.add_argument(
        "--out-dir",
        type=Path,
        dest="out_dir",
        help="folder for the report, plots and generated data (default ./cutplane-demo)",
    )
    add_progress_options(p)


def run(args):
    """``cutplane demo``: :func:`run_demo` on standard output."""
    import sys

    return run_demo(seed=args.seed, out_dir=args.out_dir, out=sys.stdout, verbose=show_progress(args))


#: The ``demo`` subcommand.
COMMAND = Command(
    "MTL^struct vs SPOM vs SSVM on a generated tagging task: certified results and plots", add_arguments, run
)
