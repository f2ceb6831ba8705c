"""Hierarchical classification with a tree loss: the input copied into every node on the path.

The classes are the leaves of a tree (a taxonomy). Following Cai and Hofmann (2004), the joint feature
copies the input into the block of every node on the path from the root to the leaf,

    Phi(x, y) = sum_{v in path(y)} e_v (x) x,

so the score of a leaf is the sum of the scores of its ancestors, and leaves that share ancestors
share weights. The loss is the tree distance between leaves (the number of edges on the path from one
to the other): predicting a sibling costs 2, a leaf in another branch up to twice the depth. The
argmax enumerates the leaves (one matrix product per input), the loss-augmented argmax adds the loss
row of the true leaf. :class:`HierarchyModel` is written against
:class:`oracles.structured.StructuredModel` only; its output is an int (the leaf), so the contract's
default loss would be 0/1, which this model replaces by the tree distance.

The script trains three models on synthetic data whose class means are built down the tree (each
node on the path adds a random offset, so leaves that share ancestors are close), with few examples
per class and much noise: flat features with the 0/1 loss (a multiclass SVM), flat features with
the tree loss, and path features with the tree loss. Each is a :class:`problems.StructuredSVMCV`:
its C is chosen along a certified path on validation data, by its own loss. The script prints the
test 0/1 error and mean tree distance of each and draws the errors and the confusion matrix of the
path model into ``OUT/structured_hierarchy.png``.

Run ``python examples/structured_hierarchy.py --out OUT`` from the repository root.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from oracles.structured import StructuredModel


def balanced_tree(branching=(3, 2, 3)):
    """Parent of every node of a tree with ``branching[d]`` children per node at depth ``d``
    (node 0 is the root; nodes numbered level by level)."""
    parent, level = [-1], [0]
    for b in branching:
        nxt = []
        for p in level:
            for _ in range(b):
                parent.append(p)
                nxt.append(len(parent) - 1)
        level = nxt
    return np.array(parent)


class HierarchyModel(StructuredModel):
    """Leaves of a tree as classes, path (or flat) features, tree-distance (or 0/1) loss.

    Parameters
    ----------
    parent : ndarray of shape (n_nodes,)
        Parent of each node, -1 at the root; the leaves (nodes with no child) are the classes,
        numbered ``0 .. n_leaves - 1`` in node order.
    n_features : int
    features : {"path", "leaf"}
        ``"path"``: ``x`` copied into every node on the path from the root (the root excluded: its
        block would be added to every leaf alike); ``"leaf"``: into the leaf's block only (flat).
    loss : {"tree", "zero_one"}
        Tree distance between the true and the predicted leaf, or 0/1.
    """

    def __init__(self, parent, n_features, features="path", loss="tree"):
        parent = np.asarray(parent)
        n_nodes = len(parent)
        self.leaves = np.setdiff1d(np.arange(n_nodes), parent[parent >= 0])
        paths = np.zeros((len(self.leaves), n_nodes))  # paths[i, v] = 1 if node v is on leaf i's path
        for i, v in enumerate(self.leaves):
            while v > 0:
                paths[i, v], v = 1.0, parent[v]
        depth = paths.sum(axis=1)
        self.distance = depth[:, None] + depth[None, :] - 2 * paths @ paths.T  # edges between leaves
        self.nodes = paths if features == "path" else np.eye(len(self.leaves))
        self.n_features, self.tree_loss = n_features, loss == "tree"
        self.dim = self.nodes.shape[1] * n_features

    def joint_feature(self, x, y):
        return np.kron(self.nodes[y], x)

    def scores(self, x, w):
        """Score of every leaf: the sum of its nodes' scores ``<w_v, x>``."""
        return self.nodes @ (w.reshape(-1, self.n_features) @ x)

    def argmax(self, x, w):
        return int(np.argmax(self.scores(x, w)))

    def loss(self, y, y_hat):
        return float(self.distance[y, y_hat]) if self.tree_loss else float(y != y_hat)

    def loss_augmented_argmax(self, x, y, w):
        extra = self.distance[y] if self.tree_loss else (np.arange(len(self.leaves)) != y)
        return int(np.argmax(self.scores(x, w) + extra))


def make_data(parent, n_samples, n_features=30, spread=(1.0, 1.0, 1.0), noise=2.0, seed=0):
    """``(X, y)``: inputs (n_samples, n_features) with a last constant 1 and leaf indices; the mean
    of a leaf is the sum of offsets drawn for the nodes on its path (scale ``spread[depth - 1]``)."""
    rng = np.random.default_rng(seed)
    depth = np.zeros(len(parent), dtype=int)
    for v in range(1, len(parent)):
        depth[v] = depth[parent[v]] + 1
    offsets = (
        rng.standard_normal((len(parent), n_features - 1)) * np.r_[0.0, np.asarray(spread)[depth[1:] - 1]][:, None]
    )
    model = HierarchyModel(parent, n_features)
    means = model.nodes @ offsets
    y = rng.integers(len(model.leaves), size=n_samples)
    X = means[y] + noise * rng.standard_normal((n_samples, n_features - 1))
    return np.hstack([X, np.ones((n_samples, 1))]), y


def run(n_train=180, n_val=360, n_test=2000, Cs=(0.3, 1.0, 3.0, 10.0, 30.0), eps=0.01, seed=0):
    """Train the three models, each at its C chosen on validation data;
    ``{name: dict(model, svm, C, error, tree_distance, y_pred)}`` and the test labels."""
    from problems import StructuredSVMCV
    from problems.solvers import CuttingPlane

    parent = balanced_tree()
    X, y = make_data(parent, n_train + n_val + n_test, seed=seed)
    Xtr, ytr = list(X[:n_train]), list(y[:n_train])
    Xval, yval = list(X[n_train : n_train + n_val]), list(y[n_train : n_train + n_val])
    Xte, yte = list(X[n_train + n_val :]), y[n_train + n_val :]
    variants = {
        "flat features, 0/1 loss": ("leaf", "zero_one"),
        "flat features, tree loss": ("leaf", "tree"),
        "path features, tree loss": ("path", "tree"),
    }
    runs = {}
    for name, (features, loss) in variants.items():
        model = HierarchyModel(parent, X.shape[1], features, loss)
        svm = StructuredSVMCV(model, Cs=list(Cs), solver=CuttingPlane(eps=eps))
        svm.fit(Xtr, ytr, validation_data=(Xval, yval))  # C chosen by the model's own loss
        pred = np.array(svm.predict(Xte))
        runs[name] = dict(
            model=model,
            svm=svm,
            C=svm.C_,
            error=float(np.mean(pred != yte)),
            tree_distance=float(np.mean(model.distance[yte, pred])),
            y_pred=pred,
        )
    return runs, yte


def plot(runs, y_test, path):
    """Errors of the three models and the confusion matrix of the path model; the PNG path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(12.5, 5.0))
    names = list(runs)
    pos = np.arange(len(names))
    ax.bar(pos - 0.2, [runs[n]["error"] for n in names], 0.4, label="0/1 error")
    ax.bar(pos + 0.2, [runs[n]["tree_distance"] for n in names], 0.4, label="mean tree distance (edges)")
    ax.set_xticks(pos, [n.replace(", ", "\n") for n in names], fontsize=9)
    ax.set(title="test errors", ylabel="error")
    ax.legend(fontsize=8)
    model, pred = runs["path features, tree loss"]["model"], runs["path features, tree loss"]["y_pred"]
    n = len(model.leaves)
    conf = np.zeros((n, n))
    np.add.at(conf, (y_test, pred), 1.0)
    bx.imshow(conf / conf.sum(axis=1, keepdims=True), cmap="Blues")
    bx.set(title="path features, tree loss: confusion (rows: true leaf)", xlabel="predicted leaf", ylabel="true leaf")
    fig.suptitle("Hierarchical classification (3 x 2 x 3 tree) with the tree loss (StructuredModel, in-out BMRM)")
    fig.tight_layout()
    return save_figure(fig, path, dpi=100, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/structured"), help="output folder")
    parser.add_argument("--n-train", type=int, default=180, dest="n_train", help="training examples (10 per leaf)")
    parser.add_argument("--n-val", type=int, default=360, dest="n_val", help="validation examples (to choose C)")
    parser.add_argument("--n-test", type=int, default=2000, dest="n_test")
    parser.add_argument("--Cs", type=float, nargs="+", default=[0.3, 1.0, 3.0, 10.0, 30.0], help="grid of C")
    parser.add_argument("--eps", type=float, default=0.01, help="certified tolerance on F")
    args = parser.parse_args(argv)
    runs, y_test = run(args.n_train, args.n_val, args.n_test, Cs=args.Cs, eps=args.eps)
    for name, r in runs.items():
        res = r["svm"].result_
        sys.stdout.write(
            f"{name:26s} C {r['C']:<5g} 0/1 error {r['error']:.4f}  mean tree distance {r['tree_distance']:.4f}  "
            f"objective {r['svm'].objective_:.5f}  lower bound {r['svm'].lower_bound_:.5f}  {res.n_iter} iterations\n"
        )
    sys.stdout.write(f"figure: {plot(runs, y_test, args.out / 'structured_hierarchy.png')}\n")
    return runs


if __name__ == "__main__":
    main()
