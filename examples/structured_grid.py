"""A grid model for image denoising, its argmax by max-sum diffusion (an LP relaxation).

Each example is a small noisy image ``x`` (``rows x cols`` grey values) and its output the clean
image ``y``, one of ``K`` grey levels per pixel. The model scores a labelling by unary and pairwise
terms on the 4-connected grid,

    <w, Phi(x, y)> = sum_v <u_{y_v}, f(x_v)>  +  sum_{(u, v) horizontal} P_h[y_u, y_v]
                                              +  sum_{(u, v) vertical} P_v[y_u, y_v]

with the pixel features ``f(x_v) = (1, x_v, x_v^2)``; so ``Phi(x, y)`` holds, per level, the sum of
the features of the pixels at that level, and, per direction, the counts of the pairs of levels of
neighbours. The loss is the Hamming loss (wrong pixels; the contract's default for array outputs).

The argmax on a loopy grid is the MAP problem of Franc et al. (2012, sec. 1.4); :class:`GridModel`
solves it with :func:`oracles.mapinference.max_sum_diffusion` (the Hamming loss added to the unary
scores for the loss-augmented argmax), which minimises an upper bound, the LP relaxation's dual,
and decodes a labelling. When the relaxation is tight the labelling is the exact MAP; when it is
not, it is only a good labelling. The model therefore declares ``approximate = True``: the adapter
then accepts an output worse than the truth (it keeps the truth instead) and the solver's results say
``exact=False``, so the certified gap is relative to the approximation, never a silent wrong gap. The
model counts how many of its argmax calls were tight.

The script trains the grid model and, for comparison, the same model without the pairwise terms
(independent pixels, whose argmax is exact) by :class:`problems.StructuredSVM`, prints the test
pixel error of each, the share of tight argmax calls and the certificate, and draws a few test
images (clean, noisy, independent, grid) into ``OUT/structured_grid.png``.

Run ``python examples/structured_grid.py --out OUT`` from the repository root.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from oracles.mapinference import grid_edges, max_sum_diffusion
from oracles.structured import StructuredModel


class GridModel(StructuredModel):
    """``K`` levels on a ``rows x cols`` grid; ``x`` and ``y`` arrays of shape (rows, cols).

    Parameters
    ----------
    rows, cols, n_levels : int
    pairwise : bool, default=True
        Include the pairwise terms (False: independent pixels, an exact argmax).
    max_iter : int, default=300
        Sweeps of max-sum diffusion per argmax.
    """

    n_pixel_features = 3

    def __init__(self, rows, cols, n_levels, pairwise=True, max_iter=300):
        self.rows, self.cols, self.n_levels, self.pairwise, self.max_iter = rows, cols, n_levels, pairwise, max_iter
        self.edges = np.asarray(grid_edges(rows, cols))
        self.horizontal = (self.edges[:, 1] - self.edges[:, 0]) == 1  # else vertical
        n_unary = n_levels * self.n_pixel_features
        self.dim = n_unary + (2 * n_levels * n_levels if pairwise else 0)
        self.approximate = pairwise  # a relaxation may not be tight; without pairs, exact
        self.n_calls = self.n_tight = 0

    def features(self, x):
        x = np.asarray(x, dtype=np.float64).ravel()
        return np.stack([np.ones_like(x), x, x * x], axis=1)  # (n_pixels, 3)

    def joint_feature(self, x, y):
        K, y = self.n_levels, np.asarray(y).ravel()
        unary = np.eye(K)[y].T @ self.features(x)  # (K, 3): features summed per level
        if not self.pairwise:
            return unary.ravel()
        pairs = np.zeros((2, K, K))
        np.add.at(pairs, (1 - self.horizontal.astype(int), y[self.edges[:, 0]], y[self.edges[:, 1]]), 1.0)
        return np.concatenate([unary.ravel(), pairs.ravel()])

    def _map(self, x, w, extra=0.0):
        K = self.n_levels
        n_unary = K * self.n_pixel_features
        unary = self.features(x) @ w[:n_unary].reshape(K, -1).T + extra  # (n_pixels, K)
        if not self.pairwise:
            return unary.argmax(axis=1).reshape(self.rows, self.cols)
        P = w[n_unary:].reshape(2, K, K)
        tables = np.where(self.horizontal[:, None, None], P[0], P[1])  # (n_edges, K, K)
        res = max_sum_diffusion(unary, tables, self.edges, max_iter=self.max_iter)
        self.n_calls += 1
        self.n_tight += bool(res.tight)
        return np.asarray(res.labels).reshape(self.rows, self.cols)

    def argmax(self, x, w):
        return self._map(x, w)

    def loss_augmented_argmax(self, x, y, w):
        return self._map(x, w, extra=(np.arange(self.n_levels)[None, :] != np.asarray(y).reshape(-1, 1)))


def make_images(n_images, rows=10, cols=10, n_levels=3, noise=0.3, seed=0):
    """``(X, Y)``: noisy grey images and their clean labellings: a background (level 0), a
    rectangle (level 1) and a disc (level 2), the grey value ``level / (n_levels - 1)`` plus
    Gaussian noise."""
    rng = np.random.default_rng(seed)
    rr, cc = np.mgrid[:rows, :cols]
    X, Y = [], []
    for _ in range(n_images):
        y = np.zeros((rows, cols), dtype=np.int64)
        r0, c0 = rng.integers(0, rows - 4), rng.integers(0, cols - 4)
        y[r0 : r0 + rng.integers(3, rows - r0), c0 : c0 + rng.integers(3, cols - c0)] = 1
        cr, ccen, rad = rng.uniform(2, rows - 2), rng.uniform(2, cols - 2), rng.uniform(1.5, 3.0)
        y[(rr - cr) ** 2 + (cc - ccen) ** 2 <= rad**2] = min(2, n_levels - 1)
        X.append(y / (n_levels - 1) + noise * rng.standard_normal((rows, cols)))
        Y.append(y)
    return X, Y


def run(n_train=12, n_test=8, C=3.0, eps=0.05, seed=0):
    """Train both models; ``{name: dict(model, svm, error, predictions)}`` and the test images."""
    from problems import StructuredSVM
    from problems.solvers import CuttingPlane

    X, Y = make_images(n_train + n_test, seed=seed)
    runs = {}
    for name, pairwise in (("independent pixels", False), ("grid (max-sum diffusion)", True)):
        model = GridModel(10, 10, 3, pairwise=pairwise)
        svm = StructuredSVM(model, C=C, solver=CuttingPlane(eps=eps)).fit(X[:n_train], Y[:n_train])
        tight = (model.n_tight, model.n_calls)
        pred = svm.predict(X[n_train:])
        error = float(np.mean([np.mean(p != y) for p, y in zip(pred, Y[n_train:])]))
        runs[name] = dict(model=model, svm=svm, error=error, predictions=pred, tight=tight)
    return runs, (X[n_train:], Y[n_train:])


def plot(runs, test, path, n_show=4):
    """Clean, noisy and both denoised versions of ``n_show`` test images; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from problems.plots import save_figure

    X, Y = test
    names = list(runs)
    fig, axes = plt.subplots(n_show, 2 + len(names), figsize=(2.2 * (2 + len(names)), 2.2 * n_show))
    for i in range(n_show):
        panels = [("clean", Y[i]), ("noisy input", X[i])]
        panels += [(f"{n}\n(test error {runs[n]['error']:.3f})", runs[n]["predictions"][i]) for n in names]
        for ax, (title, img) in zip(axes[i], panels):
            ax.imshow(img, cmap="gray", vmin=0, vmax=2 if img is not X[i] else None)
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(title, fontsize=8)
    fig.suptitle("Denoising on a grid: StructuredModel with max-sum diffusion as its argmax")
    return save_figure(fig, path, dpi=100, make_dirs=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/structured"), help="output folder")
    parser.add_argument("--n-train", type=int, default=12, dest="n_train", help="training images")
    parser.add_argument("--n-test", type=int, default=8, dest="n_test", help="test images")
    parser.add_argument("--C", type=float, default=3.0)
    parser.add_argument("--eps", type=float, default=0.05, help="certified tolerance on F")
    args = parser.parse_args(argv)
    runs, test = run(args.n_train, args.n_test, C=args.C, eps=args.eps)
    for name, r in runs.items():
        res, (tight, calls) = r["svm"].result_, r["tight"]
        argmax = f"argmax tight in {tight} of {calls} calls" if r["model"].approximate else "argmax exact"
        sys.stdout.write(
            f"{name:26s} test pixel error {r['error']:.4f}  objective {r['svm'].objective_:.5f}  lower bound "
            f"{r['svm'].lower_bound_:.5f}  exact certificate {res.exact}  {argmax}\n"
        )
    sys.stdout.write(f"figure: {plot(runs, test, args.out / 'structured_grid.png')}\n")
    return runs


if __name__ == "__main__":
    main()
