"""Multi-label classification with label-pair potentials: exact by enumeration, then on a tree.

An input ``x`` (a feature vector whose last entry is a constant 1) has ``L`` binary labels
``y in {0, 1}^L`` that are correlated. The model scores a labelling by

    <w, Phi(x, y)> = sum_j y_j <u_j, x>  +  sum_{(j, k) in E} g_jk y_j y_k

(a linear classifier per label plus one weight per pair of labels in the edge set ``E``; with the
per-label biases, ``g_jk y_j y_k`` is as general as any table on ``(y_j, y_k)``), so
``Phi(x, y) = [y (x) x, (y_j y_k)_{(j, k) in E}]``. The loss is the Hamming loss (the contract's
default for array outputs). Two argmax, both exact:

* :class:`EnumeratedMultiLabel`, for few labels: all ``2^L`` labellings scored at once (numpy); any
  edge set, here all pairs.
* :class:`TreeMultiLabel`, for more labels: ``E`` a tree (or forest) over the labels, the argmax by
  max-product (dynamic programming from the leaves to the root and back). The tree is chosen from
  the training labels as Chow and Liu (1968) do: the maximum spanning tree of the labels' pairwise
  mutual information.

The data are synthetic: each label a linear function of ``x`` plus a hidden noise, the noises
correlated along a random tree (so the labels are correlated beyond what ``x`` tells). The pairs
let the argmax choose labels that go together; that shows in the exact-match error more than in
the Hamming error, which is a sum over labels. The script trains, by :class:`problems.StructuredSVM`,
independent labels (no pairs) and the pair model for ``--n-few`` labels (enumeration) and for
``--n-many`` labels (the tree), prints the test Hamming error and the exact-match error of each,
and draws the label correlations with the learnt tree and the errors into
``OUT/structured_multilabel.png``.

Run ``python examples/structured_multilabel.py --out OUT`` from the repository root.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np

from oracles.structured import StructuredModel


# ------------------------------------------------------------------------------ the models
class EnumeratedMultiLabel(StructuredModel):
    """Binary labels with pair potentials on ``edges``; argmax over all ``2^n_labels`` labellings.

    Parameters
    ----------
    n_features, n_labels : int
    edges : list of (int, int)
        The pairs of labels with a potential (any graph).
    """

    def __init__(self, n_features, n_labels, edges=()):
        self.n_features, self.n_labels = n_features, n_labels
        self.edges = np.array(list(edges), dtype=np.int64).reshape(-1, 2)
        self.dim = n_features * n_labels + len(self.edges)
        self.groups = np.r_[np.repeat(np.arange(n_labels), n_features), np.full(len(self.edges), n_labels)]

    def joint_feature(self, x, y):
        y = np.asarray(y, dtype=np.float64)
        return np.concatenate([np.outer(y, x).ravel(), y[self.edges[:, 0]] * y[self.edges[:, 1]]])

    def split(self, w):
        """``(U, g)``: per-label weights (n_labels, n_features) and pair weights (n_edges,)."""
        n = self.n_features * self.n_labels
        return w[:n].reshape(self.n_labels, self.n_features), w[n:]

    def _all(self):
        if not hasattr(self, "_outputs"):  # every labelling and its pair products, once
            self._outputs = np.array(list(itertools.product((0, 1), repeat=self.n_labels)), dtype=np.int64)
            self._pairs = self._outputs[:, self.edges[:, 0]] * self._outputs[:, self.edges[:, 1]]
        return self._outputs, self._pairs

    def _best(self, x, w, extra=0.0):
        U, g = self.split(w)
        outputs, pairs = self._all()
        return outputs[np.argmax(outputs @ (U @ x) + pairs @ g + extra)].copy()

    def argmax(self, x, w):
        return self._best(x, w)

    def loss_augmented_argmax(self, x, y, w):
        outputs, _ = self._all()
        return self._best(x, w, extra=np.count_nonzero(outputs != y, axis=1))


class TreeMultiLabel(EnumeratedMultiLabel):
    """The same model with ``edges`` a forest; the argmax by max-product on it (exact)."""

    def __init__(self, n_features, n_labels, edges=()):
        super().__init__(n_features, n_labels, edges)
        parent, order, seen = np.full(n_labels, -1), [], np.zeros(n_labels, dtype=bool)
        nbrs = {j: [] for j in range(n_labels)}
        for e, (a, b) in enumerate(self.edges):
            nbrs[a].append((b, e))
            nbrs[b].append((a, e))
        self.parent_edge = np.full(n_labels, -1)
        for root in range(n_labels):  # breadth-first order of each tree of the forest
            if seen[root]:
                continue
            seen[root], queue = True, [root]
            while queue:
                j = queue.pop(0)
                order.append(j)
                for k, e in nbrs[j]:
                    if seen[k]:
                        continue
                    seen[k], parent[k], self.parent_edge[k] = True, j, e
                    queue.append(k)
        if len(self.edges) != n_labels - np.count_nonzero(parent < 0):
            raise ValueError("edges must form a forest over the labels (no cycle)")
        self.parent, self.order = parent, order

    def _best(self, x, w, extra=None):
        U, g = self.split(w)
        score = np.zeros((self.n_labels, 2))
        score[:, 1] = U @ x  # score of y_j = 0 and y_j = 1
        if extra is not None:
            score += extra
        choice = np.zeros((self.n_labels, 2), dtype=np.int64)  # best y_j given the parent's value
        for j in reversed(self.order):  # leaves first: send max-marginals to the parent
            p = self.parent[j]
            if p >= 0:
                pair = np.array([[0.0, 0.0], [0.0, g[self.parent_edge[j]]]])  # [y_p, y_j]
                cand = pair + score[j][None, :]
                choice[j] = cand.argmax(axis=1)
                score[p] += cand.max(axis=1)
        y = np.zeros(self.n_labels, dtype=np.int64)
        for j in self.order:  # roots first: decode
            p = self.parent[j]
            y[j] = score[j].argmax() if p < 0 else choice[j, y[p]]
        return y

    def loss_augmented_argmax(self, x, y, w):
        extra = np.zeros((self.n_labels, 2))
        extra[np.arange(self.n_labels), 1 - np.asarray(y)] = 1.0  # Hamming: one per wrong label
        return self._best(x, w, extra)


def chow_liu_tree(Y):
    """The edges of the maximum spanning tree of the labels' pairwise mutual information."""
    from scipy.sparse.csgraph import minimum_spanning_tree

    Y = np.asarray(Y)
    n, L = Y.shape
    mi = np.zeros((L, L))
    for j, k in itertools.combinations(range(L), 2):
        for a, b in itertools.product((0, 1), repeat=2):
            p = (np.count_nonzero((Y[:, j] == a) & (Y[:, k] == b)) + 0.5) / (n + 2.0)
            pj, pk = (
                (np.count_nonzero(Y[:, j] == a) + 0.5) / (n + 1.0),
                (np.count_nonzero(Y[:, k] == b) + 0.5) / (n + 1.0),
            )
            mi[j, k] += p * np.log(p / (pj * pk))
    tree = minimum_spanning_tree(-(mi + 1e-9) * np.triu(np.ones((L, L)), 1)).tocoo()
    return sorted(zip(tree.row.tolist(), tree.col.tolist())), mi + mi.T


# -------------------------------------------------------------------------------- the data
def make_data(n_samples, n_features=10, n_labels=6, rho=0.95, scale=1.5, seed=0):
    """``(X, Y)``: inputs (n_samples, n_features) with a last constant 1, and labels (n_samples, n_labels)
    ``y_j = [<v_j, x> + scale z_j > 0]``, with a hidden Gaussian ``z`` correlated along a random tree
    (``z_j = rho z_parent(j) + sqrt(1 - rho^2) e_j``): the labels are correlated beyond what ``x`` tells."""
    rng = np.random.default_rng(seed)
    X = np.hstack([rng.standard_normal((n_samples, n_features - 1)), np.ones((n_samples, 1))])
    V = rng.standard_normal((n_labels, n_features)) / np.sqrt(n_features)
    parent = [-1] + [int(rng.integers(j)) for j in range(1, n_labels)]
    Z = np.zeros((n_samples, n_labels))
    for j in range(n_labels):
        e = rng.standard_normal(n_samples)
        Z[:, j] = e if parent[j] < 0 else rho * Z[:, parent[j]] + np.sqrt(1 - rho**2) * e
    return X, (X @ V.T + scale * Z > 0).astype(np.int64)


def errors(model, svm, X, Y):
    """``(Hamming error per label, exact-match error)`` of a trained model on ``(X, Y)``."""
    P = np.array(svm.predict(list(X)))
    return float(np.mean(P != Y)), float(np.mean(np.any(P != Y, axis=1)))


def run(n_few=6, n_many=12, n_train=300, n_test=1000, C=10.0, eps=0.01, seed=0):
    """Train the four models; ``{name: dict(svm, hamming, exact_match, n_labels, edges)}`` and the tree's MI."""
    from problems import StructuredSVM
    from problems.solvers import CuttingPlane

    runs, mi = {}, None
    for n_labels in (n_few, n_many):
        X, Y = make_data(n_train + n_test, n_labels=n_labels, seed=seed + n_labels)
        Xtr, Ytr, Xte, Yte = X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]
        if n_labels == n_few:  # few labels: every pair, exact by enumeration
            pairs = list(itertools.combinations(range(n_labels), 2))
            models = {
                f"{n_labels} labels, independent": EnumeratedMultiLabel(X.shape[1], n_labels),
                f"{n_labels} labels, all pairs (enumeration)": EnumeratedMultiLabel(X.shape[1], n_labels, pairs),
            }
        else:  # more labels: a Chow-Liu tree, exact by max-product
            tree, mi = chow_liu_tree(Ytr)
            models = {
                f"{n_labels} labels, independent": TreeMultiLabel(X.shape[1], n_labels),
                f"{n_labels} labels, Chow-Liu tree (max-product)": TreeMultiLabel(X.shape[1], n_labels, tree),
            }
        for name, model in models.items():
            svm = StructuredSVM(model, C=C, solver=CuttingPlane(eps=eps)).fit(list(Xtr), list(Ytr))
            hamming, exact = errors(model, svm, Xte, Yte)
            runs[name] = dict(svm=svm, hamming=hamming, exact_match=exact, n_labels=n_labels, edges=model.edges)
    return runs, mi


def plot(runs, mi, path):
    """Mutual information of the many labels with the learnt tree, and the test errors; the PNG path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13.0, 5.0), gridspec_kw={"width_ratios": [1, 1.5]})
    im = ax.imshow(mi, cmap="Greys")
    tree = next(r["edges"] for name, r in runs.items() if "tree" in name)
    for a, b in tree:
        ax.plot([a, b], [b, a], "o", color="tab:red", ms=5)
    ax.set(
        title="training labels: mutual information\n(red: the Chow-Liu tree's edges)", xlabel="label", ylabel="label"
    )
    fig.colorbar(im, ax=ax, shrink=0.8)
    names = list(runs)
    pos = np.arange(len(names))
    bx.barh(pos - 0.2, [runs[n]["hamming"] for n in names], 0.4, label="Hamming error (per label)")
    bx.barh(pos + 0.2, [runs[n]["exact_match"] for n in names], 0.4, label="exact-match error")
    bx.set_yticks(pos, names, fontsize=8)
    bx.invert_yaxis()
    bx.set(xlabel="test error", title="independent labels against label-pair potentials")
    bx.legend(fontsize=8)
    fig.suptitle("Multi-label classification with label-pair potentials (StructuredModel, in-out BMRM)")
    fig.tight_layout()
    return save_figure(fig, path, dpi=100, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/structured"), help="output folder")
    parser.add_argument("--n-few", type=int, default=6, dest="n_few", help="labels of the enumerated model")
    parser.add_argument("--n-many", type=int, default=12, dest="n_many", help="labels of the tree model")
    parser.add_argument("--n-train", type=int, default=300, dest="n_train")
    parser.add_argument("--n-test", type=int, default=1000, dest="n_test")
    parser.add_argument("--C", type=float, default=10.0)
    parser.add_argument("--eps", type=float, default=0.01, help="certified tolerance on F")
    args = parser.parse_args(argv)
    runs, mi = run(args.n_few, args.n_many, args.n_train, args.n_test, C=args.C, eps=args.eps)
    for name, r in runs.items():
        res = r["svm"].result_
        sys.stdout.write(
            f"{name:42s} Hamming error {r['hamming']:.4f}  exact-match error {r['exact_match']:.4f}  "
            f"objective {r['svm'].objective_:.5f}  lower bound {r['svm'].lower_bound_:.5f}  {res.n_iter} iterations\n"
        )
    sys.stdout.write(f"figure: {plot(runs, mi, args.out / 'structured_multilabel.png')}\n")
    return runs


if __name__ == "__main__":
    main()
