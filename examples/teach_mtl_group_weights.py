"""MTL^struct's template weights ``mu`` iteration by iteration (Mao & Tsang, seed 004, Alg. 1).

MTL^struct minimises ``F(w) = 1/2 (sum_j ||w_j||)^2 + C * mean structured hinge`` over template
groups ``w_j``. Each cutting-plane iteration solves the QCQP (6) whose duals are the template
weights ``mu`` on the simplex, and ``w_j = mu_j v_j`` (eq. 7): a template whose ``mu_j`` is zero
is switched off. This script trains :class:`problems.sequence.tagger.SequenceTagger`
(``regularizer="mtl"``) on the generated tagging task of ``cutplane demo`` (informative and
noise templates) and draws ``mu`` after every iteration.

Where ``mu`` comes from: the engine's per-iteration callback gets the query point ``w_t``, which
for BMRM is the minimiser of the previous reduced problem; for the squared ``l_{2,1}`` norm that
minimiser satisfies ``mu_j = ||w_j|| / sum_k ||w_k||`` (the weights of the gradient of the
conjugate ``1/2 max_j ||v_j||^2``), so ``mu`` of reduced problem ``t - 1`` is read from ``w_t``.
The last point is the engine's own ``result_.mu`` (the final QCQP's group weights). (The engine
does not pass ``mu`` to the callback; the one reduced problem between the last callback and the
end is therefore not drawn.)

Writes ``OUT/mtl_group_weights.png``. Run ``python examples/teach_mtl_group_weights.py --out OUT``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np


class MuTrace(NamedTuple):
    """What :func:`run` returns.

    Attributes
    ----------
    names : list of str
        Template names, in group order.
    noise : list of str
        The templates built on noise columns.
    reduced_index : ndarray of shape (n_points,)
        Which reduced problem each row of ``mu`` belongs to (1-based engine iteration).
    mu : ndarray of shape (n_points, n_templates)
        Template weights; each row is on the simplex.
    upper, lower : ndarray of shape (n_iter,)
        Best upper and certified lower bound per iteration, on the scale of ``F``.
    objective, lower_bound, gap, eps : float
        At exit.
    status : str
    """

    names: list
    noise: list
    reduced_index: np.ndarray
    mu: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    objective: float
    lower_bound: float
    gap: float
    eps: float
    status: str


def run(n_train=200, C=10.0, eps=0.05, seed=0) -> MuTrace:
    """Train MTL^struct on the demo task (``n_train`` sentences), recording ``mu`` per iteration."""
    from cutplane.groups import group_norms
    from problems.demo_data import make_demo_tagging
    from problems.sequence.tagger import SequenceTagger
    from problems.solvers import CuttingPlane

    task = make_demo_tagging(seed, n_train=n_train, n_test=10)
    est = SequenceTagger(task.templates, C=C, regularizer="mtl", solver=CuttingPlane(eps=eps))
    rows, index = [], []
    state = {}

    def on_iteration(info):
        if "groups" not in state:  # the feature index is fitted before the first iteration
            state["groups"] = est.feature_index_.coordinate_groups(len(est.labels_))
            state["n"] = len(est.feature_index_.templates)
        norms = group_norms(info.w, state["groups"], state["n"])
        if norms.sum() > 0 and info.iteration > 1:
            rows.append(norms / norms.sum())
            index.append(info.iteration - 1)
        return False

    est.fit(task.X_train, task.y_train, callback=on_iteration)
    res = est.result_
    rows.append(np.asarray(res.mu, dtype=float))
    index.append(res.n_iter)
    h = res.history
    return MuTrace(
        list(est.feature_index_.template_names),
        list(task.noise),
        np.array(index),
        np.vstack(rows),
        C * h.best_upper,
        C * h.lower,
        float(est.objective_),
        float(est.lower_bound_),
        float(est.gap_),
        float(eps),
        res.status,
    )


def plot(trace, path):
    """``mu_j`` per iteration, one line per template (noise templates grey, dashed); returns the path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12.5, 4.5))
    noise = set(trace.noise)
    colors = iter(plt.cm.tab10.colors)
    for j, name in enumerate(trace.names):
        if name in noise:
            ax1.plot(
                trace.reduced_index,
                trace.mu[:, j],
                "--",
                color="0.4",
                lw=1.0,
                zorder=3,
                label="noise templates" if name == trace.noise[0] else None,
            )
        else:
            ax1.plot(trace.reduced_index, trace.mu[:, j], "-", color=next(colors), lw=1.6, label=name)
    ax1.set(
        xlabel="cutting-plane iteration (reduced problem)",
        ylabel="mu_j",
        title="template weights mu (QCQP (6) duals)",
        ylim=(-0.02, 1.0),
    )
    ax1.legend(fontsize=7, ncol=2)
    it = np.arange(1, len(trace.upper) + 1)
    gap = trace.upper - trace.lower
    ok = np.isfinite(gap) & (gap > 0)
    ax2.semilogy(it[ok], gap[ok], "k.-", label="certified gap")
    ax2.axhline(trace.eps, color="gray", ls="--", lw=0.8, label="eps")
    ax2.set(xlabel="iteration", ylabel="F(w) - lower bound", title=f"{trace.status}: gap {trace.gap:.3g}")
    ax2.legend(fontsize=8)
    fig.suptitle("MTL^struct: template weights during training (seed 004, Alg. 1)")
    return save_figure(fig, path, dpi=110, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/teaching"), help="output folder")
    parser.add_argument("--n-train", type=int, default=200, dest="n_train", help="training sentences")
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--eps", type=float, default=0.05, help="certified tolerance on F")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    trace = run(args.n_train, C=args.C, eps=args.eps, seed=args.seed)
    png = plot(trace, args.out / "mtl_group_weights.png")
    sys.stdout.write(
        f"{trace.status}: F = {trace.objective:.6f}, lower bound {trace.lower_bound:.6f}, "
        f"gap {trace.gap:.3g} (eps {trace.eps:g}), {len(trace.upper)} iterations\n"
    )
    sys.stdout.write("final mu: " + ", ".join(f"{n} {m:.3f}" for n, m in zip(trace.names, trace.mu[-1])) + "\n")
    sys.stdout.write(f"figure: {png}\n")
    return trace


if __name__ == "__main__":
    main()
