"""SPOM's group weights along the epochs (Martins et al., seed 000, Fig. 3 bottom left).

SPOM (seed 000, Alg. 3) minimises the same ``F(w) = 1/2 (sum_j ||w_j||)^2 + C * mean hinge`` as
MTL^struct, online: one sentence per round, a subgradient step, then the proximity operator of
the squared group norm (Alg. 2), which shrinks every group and sets the weak ones to zero. Its
group weights are ``beta_j = ||w_j|| / sum_k ||w_k||`` (Alg. 3 line 13). This script runs
:class:`problems.sequence.tagger.SequenceTagger` with ``solver=SPOM(...)`` on the generated
tagging task of ``cutplane demo`` and records ``beta`` at the end of every epoch through the
solver's callback (``SPOMInfo.w``: by default the last iterate, as in Alg. 3; ``--averaged``
for the averaged model SPOM returns by default in the estimators).

SPOM certifies nothing, but MTL^struct run on the same task and ``C`` gives a certified lower
bound on the same ``F``: the right panel shows SPOM's objective per epoch against it, i.e. an
upper bound on how far SPOM still is from the optimum.

Writes ``OUT/spom_group_weights.png``. Run ``python examples/teach_spom_group_weights.py --out OUT``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np


class BetaTrace(NamedTuple):
    """What :func:`run` returns.

    Attributes
    ----------
    names, noise : list of str
        Template names (group order) and the noise templates among them.
    epochs : ndarray of shape (n_points,)
        Passes over the data at each record (1, 2, ...).
    beta : ndarray of shape (n_points, n_templates)
        Group weights ``||w_j|| / sum_k ||w_k||``; each row on the simplex.
    objective : ndarray of shape (n_points,)
        ``F`` of the recorded model.
    final_beta : ndarray of shape (n_templates,)
        SPOM's own ``kernel_weights`` of the model it returns.
    mtl_objective, mtl_lower_bound, mtl_gap, eps : float
        MTL^struct on the same ``F``: certified ``objective - lower_bound = gap <= eps``.
    """

    names: list
    noise: list
    epochs: np.ndarray
    beta: np.ndarray
    objective: np.ndarray
    final_beta: np.ndarray
    mtl_objective: float
    mtl_lower_bound: float
    mtl_gap: float
    eps: float


def run(n_train=200, C=10.0, epochs=20, averaged=False, eps=0.05, seed=0) -> BetaTrace:
    """SPOM on the demo task, ``beta`` per epoch; MTL^struct for the certified lower bound."""
    from cutplane.groups import group_norms
    from problems.demo_data import make_demo_tagging
    from problems.sequence.tagger import SequenceTagger
    from problems.solvers import SPOM, CuttingPlane

    task = make_demo_tagging(seed, n_train=n_train, n_test=10)
    spom = SPOM(epochs=epochs, averaged=averaged, seed=seed)
    est = SequenceTagger(task.templates, C=C, regularizer="mtl", solver=spom)
    rows, passes, objective = [], [], []

    def on_epoch(info):
        groups = est.feature_index_.coordinate_groups(len(est.labels_))
        norms = group_norms(info.w, groups, len(est.feature_index_.templates))
        if info.rounds > 0 and norms.sum() > 0:
            rows.append(norms / norms.sum())
            passes.append(info.passes)
            objective.append(C * info.objective)
        return False

    est.fit(task.X_train, task.y_train, callback=on_epoch)
    mtl = SequenceTagger(task.templates, C=C, regularizer="mtl", solver=CuttingPlane(eps=eps))
    mtl.fit(task.X_train, task.y_train)
    return BetaTrace(
        list(est.feature_index_.template_names),
        list(task.noise),
        np.array(passes),
        np.vstack(rows),
        np.array(objective),
        np.asarray(est.result_.kernel_weights, dtype=float),
        float(mtl.objective_),
        float(mtl.lower_bound_),
        float(mtl.gap_),
        float(eps),
    )


def plot(trace, path):
    """``beta_j`` per epoch (log scale; noise templates grey, dashed) and ``F`` against MTL's bound."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12.5, 4.5))
    noise = set(trace.noise)
    colors = iter(plt.cm.tab10.colors)
    floor = 1e-6
    for j, name in enumerate(trace.names):
        y = np.maximum(trace.beta[:, j], floor)
        if name in noise:
            ax1.semilogy(
                trace.epochs, y, "--", color="0.5", lw=1.0, label="noise templates" if name == trace.noise[0] else None
            )
        else:
            ax1.semilogy(trace.epochs, y, "-", color=next(colors), lw=1.6, label=name)
    ax1.set(
        xlabel="epoch",
        ylabel="beta_j = ||w_j|| / sum_k ||w_k||  (0 drawn at 1e-6)",
        title="SPOM group weights along the epochs",
    )
    ax1.legend(fontsize=7, ncol=2)
    ax2.plot(trace.epochs, trace.objective, "r.-", label="SPOM: F(w)")
    ax2.axhline(trace.mtl_lower_bound, color="b", ls=":", label="MTL^struct: certified lower bound on min F")
    ax2.axhline(trace.mtl_objective, color="b", lw=0.8, label=f"MTL^struct: F (gap {trace.mtl_gap:.2g})")
    top = float(np.max(trace.objective[:1])) if trace.objective.size else trace.mtl_objective
    ax2.set_ylim(trace.mtl_lower_bound - 0.02 * abs(trace.mtl_lower_bound), max(top, trace.mtl_objective) * 1.01)
    ax2.set(xlabel="epoch", ylabel="F(w)", title="SPOM's objective against a certified bound")
    ax2.legend(fontsize=8)
    fig.suptitle("SPOM (seed 000, Alg. 3): group weights along the epochs (cf. Fig. 3, bottom left)")
    return save_figure(fig, path, dpi=110, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/teaching"), help="output folder")
    parser.add_argument("--n-train", type=int, default=200, dest="n_train", help="training sentences")
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--averaged", action="store_true", help="record the averaged model instead of the last iterate")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    trace = run(args.n_train, C=args.C, epochs=args.epochs, averaged=args.averaged, seed=args.seed)
    png = plot(trace, args.out / "spom_group_weights.png")
    sys.stdout.write(
        f"SPOM after {int(round(trace.epochs[-1]))} epochs: F = {trace.objective[-1]:.6f}; "
        f"MTL^struct certifies min F >= {trace.mtl_lower_bound:.6f}, so SPOM is within "
        f"{trace.objective[-1] - trace.mtl_lower_bound:.4g} of the optimum\n"
    )
    sys.stdout.write("final beta: " + ", ".join(f"{n} {b:.4f}" for n, b in zip(trace.names, trace.beta[-1])) + "\n")
    sys.stdout.write(f"figure: {png}\n")
    return trace


if __name__ == "__main__":
    main()
